/* opt_concat.c — level all: a Concat along channels whose only reader is
 * a pooling node or a Conv is taken apart, so the channel copy goes:
 *  - pool(Concat(A1..An)) → Concat(pool(A1)..pool(An)): pooling works per
 *    channel, so the Concat moves below it, onto the (smaller) pooled
 *    values, where the next rule may remove it;
 *  - Conv(Concat(A1..An), W, B) → a chain of Convs over the channel
 *    groups: Conv(A1, W1, B) → s1, hetrt.FusedConv(A2, W2, -, s1) → s2,
 *    ..., the last one writing the Conv's output with its activation
 *    (hetrt_act*); Wi = W[:, ci : ci + Ci] (new initializers).  Each extra
 *    Conv reads and writes Y once more where the Concat read and wrote X
 *    once, so only Convs with (n - 1) * |Y| <= |X| / 2 per batch item are
 *    split: SqueezeNet's squeeze Convs (X 128-512 channels, Y 16-64), not
 *    its 512 → 1000 classifier.
 * Runs last in a round: it adds nodes (het_opt_add_node), which the
 * round's other passes would not visit.
 */
#include <stdio.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "optimizer/opt_internal.h"

/* The Concat node writing v, when it joins float32 values along axis 1
 * (channels) of rank >= 3 and v has no other reader; -1 otherwise. */
static int channel_concat(const het_opt *o, int v) {
  const het_graph *g = o->g;
  if (v < 0 || het_opt_uses(o, v) != 1 || g->values[v].producer < 0)
    return -1;
  int c = g->values[v].producer;
  const het_node *cat = &g->nodes[c];
  int rank = g->values[v].shape.rank;
  if (o->dead[c] || *cat->domain || strcmp(cat->op_type, "Concat") != 0 ||
      cat->n_inputs < 2 || cat->n_outputs != 1 || rank < 3 ||
      g->values[v].dtype != HET_DTYPE_FLOAT32)
    return -1;
  int64_t axis = het_node_attr_int(cat, "axis", 0);
  if (axis != 1 && axis != 1 - rank)
    return -1;
  for (int i = 0; i < cat->n_inputs; i++)
    if (cat->inputs[i] < 0 || g->values[cat->inputs[i]].shape.rank != rank)
      return -1;
  return c;
}

/* True when n has a tensor-valued attribute: the rewrites share a node's
 * attributes with its replacements, and compaction frees the tensors of
 * the dead original. */
static bool has_tensor_attr(const het_node *n) {
  for (int a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].t || n->attrs[a].tensors)
      return true;
  return false;
}

static bool is_pool(const het_node *n) {
  static const char *const ops[] = {"MaxPool", "AveragePool",
                                    "GlobalMaxPool", "GlobalAveragePool"};
  if (*n->domain || n->n_inputs != 1 || has_tensor_attr(n))
    return false;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(n->op_type, ops[i]) == 0)
      return true;
  return false;
}

/* "<name>_part<i>" in the arena; NULL when out of memory. */
static const char *part_name(het_graph *g, const char *name, int i) {
  char buf[256];
  snprintf(buf, sizeof buf, "%.200s_part%d", name, i);
  return het_arena_strdup(&g->arena, buf);
}

static het_status oom(void) {
  return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
}

/* pool(Concat(A1..An)) → Concat(pool(A1)..pool(An)) writing the pool's
 * output; both old nodes die, n + 1 new ones take their names. */
static het_status push_pool(het_opt *o, int c, int p) {
  het_graph *g = o->g;
  het_node cat = g->nodes[c], pool = g->nodes[p];
  int y = pool.outputs[0];
  int *parts = het_arena_calloc(&g->arena, (size_t)cat.n_inputs, sizeof *parts);
  if (!parts)
    return oom();
  het_opt_kill_node(o, c);
  het_opt_kill_node(o, p);
  g->values[y].producer = -1;
  for (int i = 0; i < cat.n_inputs; i++) {
    het_node n = pool;
    int *io = het_arena_calloc(&g->arena, 2, sizeof *io);
    n.name = part_name(g, pool.name, i);
    if (!io || !n.name)
      return oom();
    HET_TRY(het_graph_fresh_value(g, n.name, &parts[i]));
    io[0] = cat.inputs[i];
    io[1] = parts[i];
    n.inputs = &io[0];
    n.outputs = &io[1];
    n.n_outputs = 1;
    HET_TRY(het_opt_add_node(o, &n));
  }
  int *out = het_arena_calloc(&g->arena, 1, sizeof *out);
  if (!out)
    return oom();
  *out = y;
  cat.inputs = parts;
  cat.outputs = out;
  return het_opt_add_node(o, &cat);
}

/* The Conv reading Concat c's output, when it can be split: float32
 * constant weights over all the Concat's channels (known), not grouped,
 * constant or no bias, no residual; and small enough an output. */
static bool splittable_conv(const het_opt *o, int c, const het_node *conv) {
  const het_graph *g = o->g;
  const het_node *cat = &g->nodes[c];
  int x = cat->outputs[0], y = conv->outputs[0];
  int w = het_node_input(conv, 1), b = het_node_input(conv, 2);
  if (*conv->domain || strcmp(conv->op_type, "Conv") != 0 ||
      conv->n_outputs != 1 || y < 0 || conv->n_inputs > 3 ||
      has_tensor_attr(conv) ||
      het_node_attr_int(conv, "group", 1) != 1 ||
      !het_opt_is_constant(g, w) || (b >= 0 && !het_opt_is_constant(g, b)))
    return false;
  const het_tensor *wt = g->values[w].initializer;
  if (wt->dtype != HET_DTYPE_FLOAT32 || wt->rank != g->values[x].shape.rank)
    return false;
  int64_t ch = 0;
  for (int i = 0; i < cat->n_inputs; i++) {
    int64_t ci = g->values[cat->inputs[i]].shape.dims[1].value;
    if (ci <= 0 || g->values[cat->inputs[i]].dtype != HET_DTYPE_FLOAT32)
      return false;
    ch += ci;
  }
  int64_t nx = het_shape_item_count(&g->values[x].shape);
  int64_t ny = het_shape_item_count(&g->values[y].shape);
  return ch == wt->dims[1] && nx > 0 && ny > 0 &&
         2 * (int64_t)(cat->n_inputs - 1) * ny <= nx;
}

/* W[:, off : off + ch] of the [M, C, k...] float32 weights w. */
static het_status weight_slice(const het_tensor *w, int64_t off, int64_t ch,
                               het_tensor **out) {
  int64_t dims[HET_MAX_RANK];
  memcpy(dims, w->dims, sizeof(int64_t) * (size_t)w->rank);
  dims[1] = ch;
  HET_TRY(het_tensor_create_empty(HET_DTYPE_FLOAT32, dims, w->rank, out));
  int64_t m = w->dims[0], c = w->dims[1];
  int64_t per = m > 0 && c > 0 ? het_tensor_count(w) / (m * c) : 0;
  const float *src = w->data;
  float *dst = (*out)->data;
  for (int64_t i = 0; i < m; i++)
    memcpy(dst + i * ch * per, src + (i * c + off) * per,
           sizeof(float) * (size_t)(ch * per));
  return HET_OK;
}

/* Conv p over Concat c → the chain of partial Convs (see the header). */
static het_status split_conv(het_opt *o, int c, int p) {
  het_graph *g = o->g;
  het_node cat = g->nodes[c], conv = g->nodes[p];
  const het_tensor *w = g->values[conv.inputs[1]].initializer;
  int y = conv.outputs[0], prev = -1;
  het_attr *plain = het_arena_calloc(&g->arena, (size_t)conv.n_attrs + 1,
                                     sizeof *plain);
  if (!plain)
    return oom();
  int n_plain = 0;
  for (int a = 0; a < conv.n_attrs; a++)
    if (strncmp(conv.attrs[a].name, "hetrt_act", 9) != 0)
      plain[n_plain++] = conv.attrs[a];
  het_opt_kill_node(o, c);
  het_opt_kill_node(o, p);
  g->values[y].producer = -1;
  int64_t off = 0;
  for (int i = 0; i < cat.n_inputs; i++) {
    bool last = i == cat.n_inputs - 1;
    int64_t ch = g->values[cat.inputs[i]].shape.dims[1].value;
    het_node n = conv;
    int *io = het_arena_calloc(&g->arena, 5, sizeof *io);
    n.name = last ? conv.name : part_name(g, conv.name, i);
    if (!io || !n.name)
      return oom();
    het_tensor *wi;
    char base[256];
    snprintf(base, sizeof base, "%.200s_w", n.name);
    HET_TRY(weight_slice(w, off, ch, &wi));
    HET_TRY(het_graph_add_constant(g, base, wi, &io[1]));
    off += ch;
    io[0] = cat.inputs[i];
    io[2] = i == 0 ? het_node_input(&conv, 2) : -1;
    io[3] = prev;
    if (last)
      io[4] = y;
    else
      HET_TRY(het_graph_fresh_value(g, n.name, &io[4]));
    n.inputs = io;
    n.n_inputs = i == 0 ? 3 : 4;
    n.outputs = &io[4];
    n.n_outputs = 1;
    if (!last) {
      n.attrs = plain;
      n.n_attrs = n_plain;
    }
    if (i > 0) {
      n.op_type = "FusedConv";
      n.domain = "hetrt";
      n.opset = 1;
    }
    HET_TRY(het_opt_add_node(o, &n));
    prev = io[4];
  }
  return HET_OK;
}

het_status het_opt_split_concats(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < o->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || node->n_inputs < 1)
      continue;
    int c = channel_concat(o, node->inputs[0]);
    if (c < 0)
      continue;
    if (is_pool(node) && node->n_outputs >= 1 && node->outputs[0] >= 0 &&
        (node->n_outputs < 2 || node->outputs[1] < 0 ||
         het_opt_uses(o, node->outputs[1]) == 0)) {
      HET_TRY(push_pool(o, c, n));
      if (o->stats)
        o->stats->pools_below_concat++;
    } else if (splittable_conv(o, c, node)) {
      HET_TRY(split_conv(o, c, n));
      if (o->stats)
        o->stats->concat_convs_split++;
    }
  }
  return HET_OK;
}
