/* opt_nlp_attention.c — level all: scaled dot-product attention into
 * hetrt.Attention(Q, KT, V[, mask]; scale):
 *   MatMul(Q', KT) -> [Div|Mul by a scalar] -> [Add mask] -> Softmax(last
 *   axis) -> MatMul(., V), where Q' may itself be Q divided or multiplied
 *   by a scalar (torch's export pre-scales Q).  Q, KT and V must share
 *   rank and leading (batch) dims, so the MatMuls broadcast nothing; the
 *   mask must broadcast into the scores without growing them.  float32.
 * A rank-3 Attention whose Q, KT, V come from Transposes and whose output
 * goes into one (torch's multi-head export) then takes those over
 * (layout 1, see kernels/nlp_attention.c), and then the Reshapes and
 * Slices that cut Q, K and V out of one packed projection (attribute qkv).
 */
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"
#include "optimizer/opt_nlp.h"

/* v = Div(u, c) or Mul(u, c) / Mul(c, u) with c a nonzero float32 scalar
 * constant and v read once (not pinned): the node (or -1), *u and the
 * factor. */
static int nlp_scaled(const het_opt *o, int v, int *u, float *f) {
  const het_graph *g = o->g;
  float c;
  int n = het_opt_nlp_producer(o, v, "Div");
  if (n >= 0) {
    const het_node *d = &g->nodes[n];
    if (d->n_inputs != 2 || !het_opt_nlp_scalar(g, d->inputs[1], &c) ||
        c == 0.0f)
      return -1;
    *u = d->inputs[0];
    *f = 1.0f / c;
  } else if ((n = het_opt_nlp_producer(o, v, "Mul")) >= 0) {
    const het_node *m = &g->nodes[n];
    if (m->n_inputs != 2)
      return -1;
    if (het_opt_nlp_scalar(g, m->inputs[1], &c))
      *u = m->inputs[0];
    else if (het_opt_nlp_scalar(g, m->inputs[0], &c))
      *u = m->inputs[1];
    else
      return -1;
    *f = c;
  } else {
    return -1;
  }
  return het_opt_uses(o, v) == 1 ? n : -1;
}

/* v = [scale](MatMul(Q', KT)): the MatMul (or -1); *post = scale node. */
static int nlp_scores(const het_opt *o, int v, int *post, float *scale) {
  int u;
  *post = -1;
  *scale = 1.0f;
  int mm = het_opt_nlp_producer(o, v, "MatMul");
  if (mm >= 0)
    return o->g->nodes[mm].n_inputs == 2 ? mm : -1;
  if ((*post = nlp_scaled(o, v, &u, scale)) < 0 || het_opt_uses(o, u) != 1)
    return -1;
  mm = het_opt_nlp_producer(o, u, "MatMul");
  return mm >= 0 && o->g->nodes[mm].n_inputs == 2 ? mm : -1;
}

static bool nlp_dim_same(const het_dim *a, const het_dim *b) {
  if (a->value >= 0 || b->value >= 0)
    return a->value == b->value;
  return a->symbol && b->symbol && strcmp(a->symbol, b->symbol) == 0;
}

/* Q, KT, V: float32, one rank >= 2, the same leading dims. */
static bool nlp_attn_operands(const het_graph *g, const int *in) {
  for (int i = 0; i < 3; i++)
    if (!het_opt_nlp_f32(g, in[i]))
      return false;
  const het_shape *q = &g->values[in[0]].shape;
  if (q->rank < 2)
    return false;
  for (int i = 1; i < 3; i++) {
    const het_shape *s = &g->values[in[i]].shape;
    if (s->rank != q->rank)
      return false;
    for (int d = 0; d < q->rank - 2; d++)
      if (!nlp_dim_same(&q->dims[d], &s->dims[d]))
        return false;
  }
  return true;
}

/* mask m (float32) broadcasts into the scores shape s unchanged: each of
 * its dims is 1 or the scores' own (the same size, or the same name where
 * the sizes are open, as in a dynamic-axes export). */
static bool nlp_mask_fits(const het_graph *g, int m, const het_shape *s) {
  if (!het_opt_nlp_f32(g, m) || s->rank < 0)
    return false;
  const het_shape *ms = &g->values[m].shape;
  if (ms->rank < 0 || ms->rank > s->rank)
    return false;
  for (int d = 0; d < ms->rank; d++)
    if (ms->dims[d].value != 1 &&
        !nlp_dim_same(&ms->dims[d], &s->dims[d + s->rank - ms->rank]))
      return false;
  return true;
}

/* The scores feeding Softmax input s, possibly through Add(mask). */
static int nlp_attn_head(const het_opt *o, int s, int *post, float *scale,
                         int *add, int *mask) {
  const het_graph *g = o->g;
  *add = *mask = -1;
  int mm = nlp_scores(o, s, post, scale);
  if (mm >= 0)
    return mm;
  int a = het_opt_nlp_producer(o, s, "Add");
  if (a < 0 || g->nodes[a].n_inputs != 2)
    return -1;
  for (int i = 0; i < 2; i++) {
    int v = g->nodes[a].inputs[i], m = g->nodes[a].inputs[1 - i];
    if (het_opt_uses(o, v) != 1 || (mm = nlp_scores(o, v, post, scale)) < 0)
      continue;
    if (!nlp_mask_fits(g, m, &g->values[v].shape))
      return -1;
    *add = a;
    *mask = m;
    return mm;
  }
  return -1;
}

static het_status nlp_fuse_attention_at(het_opt *o, int sm) {
  het_graph *g = o->g;
  const het_node *node = &g->nodes[sm];
  int s = het_node_input(node, 0);
  int rank = s >= 0 ? g->values[s].shape.rank : -1;
  int64_t axis = het_node_attr_int(node, "axis", node->opset < 13 ? 1 : -1);
  if (rank < 2 || (axis < 0 ? axis + rank : axis) != rank - 1 ||
      het_opt_uses(o, s) != 1)
    return HET_OK;
  int post, add, mask, pre, q;
  float scale, pre_f = 1.0f;
  int mm = nlp_attn_head(o, s, &post, &scale, &add, &mask);
  if (mm < 0)
    return HET_OK;
  int q1 = g->nodes[mm].inputs[0];
  if ((pre = nlp_scaled(o, q1, &q, &pre_f)) < 0)
    q = q1;
  int mm2 = het_opt_nlp_reader(o, node->outputs[0], "MatMul");
  if (mm2 < 0 || g->nodes[mm2].n_inputs != 2 ||
      g->nodes[mm2].inputs[0] != node->outputs[0])
    return HET_OK;
  int in[4] = {q, g->nodes[mm].inputs[1], g->nodes[mm2].inputs[1], mask};
  if (!nlp_attn_operands(g, in))
    return HET_OK;
  het_attr *at = het_arena_calloc(&g->arena, 1, sizeof *at);
  if (!at)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  *at = (het_attr){.name = "scale", .type = HET_ATTR_FLOAT,
                   .f = scale * pre_f};
  int kill[] = {pre, mm, post, add, sm};
  for (int i = 0; i < 5; i++)
    if (kill[i] >= 0)
      het_opt_kill_node(o, kill[i]);
  HET_TRY(het_opt_nlp_rewrite(o, mm2, "Attention", in, mask >= 0 ? 4 : 3, at,
                              1));
  if (o->stats)
    o->stats->attentions_fused++;
  return HET_OK;
}

/* v = Transpose(u, perm) read only here, perm of rank 3: u, else -1. */
static int nlp_transposed(const het_opt *o, int v, int p0, int p1, int p2) {
  int n = het_opt_nlp_producer(o, v, "Transpose");
  size_t np;
  if (n < 0 || het_opt_uses(o, v) != 1)
    return -1;
  const int64_t *perm = het_node_attr_ints(&o->g->nodes[n], "perm", &np);
  if (!perm || np != 3 || perm[0] != p0 || perm[1] != p1 || perm[2] != p2)
    return -1;
  return het_node_input(&o->g->nodes[n], 0);
}

/* A layout-0 rank-3 Attention between Transposes (Q, V, Y: perm 1,0,2;
 * KT: perm 1,2,0), as torch exports multi-head attention: the Transposes
 * go and the Attention (now layout 1) writes the output Transpose's value. */
static het_status nlp_absorb_transposes(het_opt *o, int n) {
  het_graph *g = o->g;
  const het_node *a = &g->nodes[n];
  if (het_node_find_attr(a, "layout") || a->n_inputs < 3 ||
      a->n_outputs < 1 || a->inputs[0] < 0 ||
      g->values[a->inputs[0]].shape.rank != 3)
    return HET_OK;
  int q = nlp_transposed(o, a->inputs[0], 1, 0, 2);
  int k = nlp_transposed(o, a->inputs[1], 1, 2, 0);
  int v = nlp_transposed(o, a->inputs[2], 1, 0, 2);
  int ty = het_opt_nlp_reader(o, a->outputs[0], "Transpose");
  size_t np;
  const int64_t *perm =
      ty >= 0 ? het_node_attr_ints(&g->nodes[ty], "perm", &np) : NULL;
  if (q < 0 || k < 0 || v < 0 || !perm || np != 3 || perm[0] != 1 ||
      perm[1] != 0 || perm[2] != 2)
    return HET_OK;
  het_attr *at = het_arena_calloc(&g->arena, 2, sizeof *at);
  if (!at)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  at[0] = (het_attr){.name = "scale", .type = HET_ATTR_FLOAT,
                     .f = het_node_attr_float(a, "scale", 1.0f)};
  at[1] = (het_attr){.name = "layout", .type = HET_ATTR_INT, .i = 1};
  int in[4] = {q, k, v, het_node_input(a, 3)};
  int n_in = a->n_inputs > 3 ? 4 : 3;
  for (int i = 0; i < 3; i++)
    het_opt_kill_node(o, g->values[a->inputs[i]].producer);
  het_opt_kill_node(o, n);
  return het_opt_nlp_rewrite(o, ty, "Attention", in, n_in, at, 2);
}

/* Constant int64 input i of node holding one value (absent: dflt). */
static bool nlp_const_i64(const het_graph *g, const het_node *n, int i,
                          int64_t dflt, int64_t *out) {
  int v = het_node_input(n, i);
  *out = dflt;
  if (v < 0)
    return i >= 3; /* only axes and steps may be omitted */
  if (!het_opt_is_constant(g, v))
    return false;
  const het_tensor *t = g->values[v].initializer;
  if (t->dtype != HET_DTYPE_INT64 || het_tensor_count(t) != 1)
    return false;
  *out = ((const int64_t *)t->data)[0];
  return true;
}

/* x = Reshape(Slice(P, [a, a + n) on P's last axis, step 1)) read only
 * by the Attention, x of concrete shape [rows, ., .] with rows * L ==
 * P's size: P (or -1), *off = a, *L = P's last dim. */
static int nlp_packed(const het_opt *o, int x, int64_t *off, int64_t *L) {
  const het_graph *g = o->g;
  int r = het_opt_nlp_producer(o, x, "Reshape");
  if (r < 0 || het_opt_uses(o, x) != 1)
    return -1;
  int sv = het_node_input(&g->nodes[r], 0);
  int sl = het_opt_nlp_producer(o, sv, "Slice");
  if (sl < 0 || het_opt_uses(o, sv) != 1 || g->nodes[sl].opset < 10)
    return -1;
  const het_node *n = &g->nodes[sl];
  int p = het_node_input(n, 0);
  if (p < 0)
    return -1;
  const het_shape *ps = &g->values[p].shape, *xs = &g->values[x].shape;
  int64_t a, e, ax, st;
  if (!het_shape_is_concrete(ps) || !het_shape_is_concrete(xs) ||
      ps->rank < 1 || xs->rank != 3 || !nlp_const_i64(g, n, 1, 0, &a) ||
      !nlp_const_i64(g, n, 2, 0, &e) || !nlp_const_i64(g, n, 3, 0, &ax) ||
      !nlp_const_i64(g, n, 4, 1, &st))
    return -1;
  *L = ps->dims[ps->rank - 1].value;
  if ((ax != -1 && ax != ps->rank - 1) || st != 1 || a < 0 || e > *L ||
      e - a != xs->dims[1].value * xs->dims[2].value ||
      xs->dims[0].value * *L != het_shape_count(ps))
    return -1;
  *off = a;
  return p;
}

/* A layout-1 Attention whose Q, K, V are Reshapes of Slices of one
 * packed projection P [.., L] (torch's in-proj output) reads P directly:
 * attribute qkv = {q offset, k offset, v offset, L, heads, D, E}. */
static het_status nlp_absorb_packed(het_opt *o, int n) {
  het_graph *g = o->g;
  const het_node *a = &g->nodes[n];
  if (het_node_attr_int(a, "layout", 0) != 1 || het_node_find_attr(a, "qkv") ||
      a->n_inputs < 3)
    return HET_OK;
  int64_t qkv[7], L[3];
  int p[3];
  for (int i = 0; i < 3; i++)
    if ((p[i] = nlp_packed(o, a->inputs[i], &qkv[i], &L[i])) < 0 ||
        p[i] != p[0])
      return HET_OK;
  const het_shape *qs = &g->values[a->inputs[0]].shape,
                  *vs = &g->values[a->inputs[2]].shape;
  qkv[3] = L[0];
  qkv[4] = qs->dims[1].value;
  qkv[5] = qs->dims[2].value;
  qkv[6] = vs->dims[2].value;
  het_attr *at = het_arena_calloc(&g->arena, 3, sizeof *at);
  int64_t *ints = het_arena_calloc(&g->arena, 7, sizeof *ints);
  if (!at || !ints)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  memcpy(ints, qkv, sizeof qkv);
  at[0] = (het_attr){.name = "scale", .type = HET_ATTR_FLOAT,
                     .f = het_node_attr_float(a, "scale", 1.0f)};
  at[1] = (het_attr){.name = "layout", .type = HET_ATTR_INT, .i = 1};
  at[2] = (het_attr){.name = "qkv", .type = HET_ATTR_INTS, .ints = ints,
                     .n = 7};
  int in[4] = {p[0], p[0], p[0], het_node_input(a, 3)};
  int n_in = a->n_inputs > 3 ? 4 : 3;
  for (int i = 0; i < 3; i++) {
    int r = g->values[a->inputs[i]].producer;
    het_opt_kill_node(o, g->values[g->nodes[r].inputs[0]].producer);
    het_opt_kill_node(o, r);
  }
  return het_opt_nlp_rewrite(o, n, "Attention", in, n_in, at, 3);
}

het_status het_opt_fuse_attention(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (!o->dead[n] && !*node->domain && strcmp(node->op_type, "Softmax") == 0 &&
        node->n_inputs == 1 && node->n_outputs == 1)
      HET_TRY(nlp_fuse_attention_at(o, n));
  }
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (!o->dead[n] && strcmp(node->domain, "hetrt") == 0 &&
        strcmp(node->op_type, "Attention") == 0)
      HET_TRY(nlp_absorb_transposes(o, n));
  }
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (!o->dead[n] && strcmp(node->domain, "hetrt") == 0 &&
        strcmp(node->op_type, "Attention") == 0)
      HET_TRY(nlp_absorb_packed(o, n));
  }
  return HET_OK;
}
