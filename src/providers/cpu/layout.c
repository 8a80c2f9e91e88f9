/* layout.c — the CPU provider's layout pass: which rank-4 float32 values
 * (and uint8/int8 ones around QLinearConv) of a compiled subgraph are
 * stored NHWC (channels-last) instead of NCHW.  oneDNN's channels-last
 * convolutions run ~1.5x faster than im2col on NCHW, its int8 ones run
 * channels-last only, and keeping whole chains channels-last saves a
 * reorder on each side of every Conv.  Values joined by an op that needs
 * one layout on all its rank-4 operands (elementwise without broadcast or
 * with one value per image and channel, per-tensor
 * QuantizeLinear/DequantizeLinear, hetrt.QLinearAdd and QLinearLut, pooling
 * (float32, and 8-bit MaxPool), Concat on channels, depthwise Conv,
 * FusedConv's residual and output) form a group;
 * a group goes NHWC when every value in it is produced and read only by
 * nodes of this subgraph that can take NHWC, is no graph output, has
 * known C, H and W (the batch may be symbolic), and the group touches a
 * oneDNN Conv.  Everything else
 * stays NCHW, so subgraph edges are NCHW and only Convs reorder.
 * Values with H*W == 1 are the same bytes in both layouts: never marked.
 */
#include "providers/cpu/layout.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/linalg_conv_dw.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_dnnl_api.h"

typedef enum {
  RULE_PLAIN, /* NCHW only */
  RULE_SAME,  /* rank-4 operands share one layout (either) */
  RULE_FREE,  /* X and Y each in either layout (oneDNN Conv) */
} layout_rule;

static int node_output(const het_node *n, int i) {
  return i < n->n_outputs ? n->outputs[i] : -1;
}

static bool is_rank4_f32(const het_graph *g, int v) {
  return v >= 0 && g->values[v].dtype == HET_DTYPE_FLOAT32 &&
         g->values[v].shape.rank == 4;
}

/* Rank 4, float32 or a quantized activation (uint8, int8). */
static bool is_rank4_act(const het_graph *g, int v) {
  het_dtype t = v >= 0 ? g->values[v].dtype : HET_DTYPE_UNDEFINED;
  return (t == HET_DTYPE_FLOAT32 || t == HET_DTYPE_UINT8 ||
          t == HET_DTYPE_INT8) &&
         g->values[v].shape.rank == 4;
}

static bool in_list(const char *op, const char *const *list) {
  for (; *list; list++)
    if (strcmp(op, *list) == 0)
      return true;
  return false;
}

/* Elementwise ops whose output has the shape of input 0 and whose other
 * inputs are scalars (Clip's bounds). */
static const char *const unary_ops[] = {
    "Relu",      "LeakyRelu",  "Clip",     "Sigmoid", "HardSigmoid",
    "HardSwish", "Tanh",       "Elu",      "Selu",    "Softplus",
    "Softsign",  "Neg",        "Abs",      "Exp",     "Log",
    "Sqrt",      "Erf",        "Identity", "Floor",   "Ceil",
    "Round",     "Reciprocal", "Celu",     "Mish",    NULL};
static const char *const binary_ops[] = {"Add", "Sub", "Mul",  "Div", "Max",
                                         "Min", "Sum", "Mean", "Pow", NULL};
static const char *const pool_ops[] = {
    "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", NULL};

/* Every input has the output's shape (symbolic dims alike) or holds one
 * element: no broadcasting that would depend on the layout. */
static bool no_broadcast(const het_graph *g, const het_node *n) {
  int y = node_output(n, 0);
  if (y < 0)
    return false;
  for (int i = 0; i < n->n_inputs; i++) {
    int v = n->inputs[i];
    const het_shape *s = v >= 0 ? &g->values[v].shape : NULL;
    if (s && !het_shape_same(s, &g->values[y].shape) && het_shape_count(s) != 1)
      return false;
  }
  return true;
}

/* Add, Sub, Mul or Div whose inputs have the output's shape or hold one
 * value per image and channel at most ([N or 1, C or 1, 1, 1], or fewer
 * dims ending in 1, 1): a squeeze-excitation gate.  Such an input has the
 * same bytes in both layouts, and the kernel (het_ew_binary) broadcasts
 * it over an NHWC X in the stored order. */
static bool per_channel(const het_graph *g, const het_node *n) {
  static const char *const ops[] = {"Add", "Sub", "Mul", "Div", NULL};
  int y = node_output(n, 0);
  if (!in_list(n->op_type, ops) || n->n_inputs != 2 || y < 0 ||
      g->values[y].shape.rank != 4)
    return false;
  for (int i = 0; i < 2; i++) {
    int v = n->inputs[i];
    const het_shape *s = v >= 0 ? &g->values[v].shape : NULL;
    if (!s || s->rank < 0 || s->rank > 4)
      return false;
    if (het_shape_same(s, &g->values[y].shape))
      continue;
    for (int d = s->rank - 2; d < s->rank; d++)
      if (d >= 0 && s->dims[d].value != 1)
        return false;
  }
  return true;
}

static bool is_depthwise(const het_graph *g, const het_node *n) {
  int w = het_node_input(n, 1);
  const het_tensor *t = w >= 0 ? g->values[w].initializer : NULL;
  return t &&
         het_lk_conv_is_dw(het_node_attr_int(n, "group", 1), t->rank,
                           t->dims) &&
         t->dims[0] == het_node_attr_int(n, "group", 1);
}

/* Ops of any activation type whose operands share one layout as long as
 * nothing broadcasts (a per-axis scale does). */
static const char *const quant_ops[] = {"QuantizeLinear", "DequantizeLinear",
                                        NULL};

static layout_rule node_rule(const het_graph *g, const het_node *n,
                             uint8_t limit) {
  bool onnx = !*n->domain, hetrt = strcmp(n->domain, "hetrt") == 0;
  bool q4 = is_rank4_act(g, het_node_input(n, 0));
  if (limit == HET_CPU_LAYOUT_NCHW || !q4)
    ; /* below: plain */
#ifdef HETRT_HAVE_DNNL
  else if (onnx && strcmp(n->op_type, "QLinearConv") == 0)
    return limit == HET_CPU_LAYOUT_ANY && het_dnnl_qconv_takes(g, n)
               ? RULE_FREE
               : RULE_PLAIN;
#endif
  else if ((onnx && in_list(n->op_type, quant_ops)) ||
           (hetrt && strcmp(n->op_type, "QLinearAdd") == 0))
    return no_broadcast(g, n) ? RULE_SAME : RULE_PLAIN;
  else if (hetrt && strcmp(n->op_type, "QLinearLut") == 0)
    return RULE_SAME; /* per element; input 1, the table, is not rank 4 */
  else if (onnx && strcmp(n->op_type, "MaxPool") == 0 &&
           !is_rank4_f32(g, het_node_input(n, 0))) /* uint8/int8 */
    return node_output(n, 1) < 0 ? RULE_SAME : RULE_PLAIN;
  bool x4 = is_rank4_f32(g, het_node_input(n, 0));
  if ((onnx && strcmp(n->op_type, "Conv") == 0) ||
      (hetrt && (strcmp(n->op_type, "FusedConv") == 0 ||
                 strcmp(n->op_type, "FusedConvDw") == 0 ||
                 strcmp(n->op_type, "FusedConvPool") == 0))) {
    if (!x4 || limit == HET_CPU_LAYOUT_NCHW)
      return RULE_PLAIN;
#ifdef HETRT_HAVE_DNNL
    if (limit == HET_CPU_LAYOUT_ANY && het_dnnl_conv_takes(g, n))
      return RULE_FREE;
#endif
    if (is_depthwise(g, n) && strcmp(n->op_type, "FusedConvPool") != 0)
      /* the direct kernel: one layout in and out */
      return het_node_input(n, 3) < 0 ? RULE_SAME : RULE_PLAIN;
    return RULE_PLAIN;
  }
  if (!onnx || !x4 || limit == HET_CPU_LAYOUT_NCHW)
    return RULE_PLAIN;
  if (in_list(n->op_type, unary_ops) || in_list(n->op_type, binary_ops))
    return no_broadcast(g, n) || per_channel(g, n) ? RULE_SAME : RULE_PLAIN;
  if (in_list(n->op_type, pool_ops))
    return node_output(n, 1) < 0 ? RULE_SAME : RULE_PLAIN;
  if (strcmp(n->op_type, "Concat") == 0) {
    int64_t axis = het_node_attr_int(n, "axis", 0);
    return axis == 1 || axis == -3 ? RULE_SAME : RULE_PLAIN;
  }
  return RULE_PLAIN;
}

/* ---- union-find over value ids ---- */

static int uf_find(int *parent, int v) {
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

static void uf_union(int *parent, int a, int b) {
  a = uf_find(parent, a);
  b = uf_find(parent, b);
  if (a != b)
    parent[a] = b;
}

/* A value a subgraph reads by name may not be NHWC: the layout pass
 * cannot see that reader. */
static het_status mark_outer_read(void *ok, int v) {
  ((bool *)ok)[v] = false;
  return HET_OK;
}

typedef struct layout_pass {
  const het_graph *g;
  int *parent;  /* per value */
  bool *ok;     /* per value: may be NHWC (only meaningful at roots too) */
  bool *conv;   /* per value: touches a oneDNN Conv (roots) */
  bool *in_sub; /* per graph node */
} layout_pass;

/* C, H and W known (the batch may be symbolic). */
static bool chw_known(const het_shape *s) {
  return s->rank == 4 && het_shape_item_count(s) >= 0;
}

/* A value that may be NHWC: rank-4 float32, uint8 or int8, C, H, W
 * known, H*W > 1, produced in the subgraph, not a graph output. */
static bool value_candidate(const layout_pass *p, int v) {
  const het_value *val = &p->g->values[v];
  if (!is_rank4_act(p->g, v) || !chw_known(&val->shape) || val->producer < 0 ||
      !p->in_sub[val->producer] ||
      (val->flags & (HET_VALUE_GRAPH_OUTPUT | HET_VALUE_GRAPH_INPUT)) ||
      val->initializer)
    return false;
  return val->shape.dims[2].value * val->shape.dims[3].value > 1;
}

static bool neutral(const het_graph *g, int v) {
  const het_shape *s = &g->values[v].shape;
  return chw_known(s) && s->dims[2].value * s->dims[3].value == 1;
}

/* Applies one compiled node's rule to the groups. */
static void apply_rule(layout_pass *p, const het_node *n, layout_rule r) {
  const het_graph *g = p->g;
  int y = node_output(n, 0);
  if (r == RULE_FREE) {
    /* a FusedConv's residual (input 3) has Y's layout; QLinearConv's
     * and FusedConvDw's input 3 is a weight */
    bool residual = strcmp(n->op_type, "QLinearConv") != 0 &&
                    strcmp(n->op_type, "FusedConvDw") != 0;
    int x = het_node_input(n, 0), z = residual ? het_node_input(n, 3) : -1;
    p->conv[x] = p->conv[y] = true;
    if (z >= 0 && !neutral(g, z))
      uf_union(p->parent, z, y);
    for (int i = 1; i < n->n_outputs; i++)
      if (n->outputs[i] >= 0)
        p->ok[n->outputs[i]] = false;
    return;
  }
  /* SAME: the rank-4 operands join one group; neutral ones (a global
   * pool's 1x1 output) stay out of it, and so do a depthwise Conv's
   * weights (only X and Y are activations). */
  int anchor = -1;
  int n_in = strcmp(n->op_type, "Conv") == 0 ? 1 : n->n_inputs;
  for (int i = 0; i < n->n_inputs + n->n_outputs; i++) {
    if (i >= n_in && i < n->n_inputs)
      continue;
    int v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
    if (v < 0 || neutral(g, v))
      continue;
    if (r == RULE_PLAIN || !is_rank4_act(g, v))
      p->ok[v] = false; /* scalars of SAME ops are not rank 4: harmless */
    else if (anchor < 0)
      anchor = v;
    else
      uf_union(p->parent, v, anchor);
  }
}

static void pass_free(layout_pass *p) {
  free(p->parent);
  free(p->ok);
  free(p->conv);
  free(p->in_sub);
}

static bool pass_init(layout_pass *p, const het_graph *g, const int *nodes,
                      int n_nodes) {
  memset(p, 0, sizeof *p);
  p->g = g;
  int nv = g->n_values > 0 ? g->n_values : 1;
  p->parent = malloc((size_t)nv * sizeof *p->parent);
  p->ok = malloc((size_t)nv * sizeof *p->ok);
  p->conv = calloc((size_t)nv, sizeof *p->conv);
  p->in_sub = calloc((size_t)g->n_nodes + 1, sizeof *p->in_sub);
  if (!p->parent || !p->ok || !p->conv || !p->in_sub)
    return false;
  for (int i = 0; i < n_nodes; i++)
    p->in_sub[nodes[i]] = true;
  for (int v = 0; v < g->n_values; v++) {
    p->parent[v] = v;
    p->ok[v] = value_candidate(p, v);
  }
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    for (int i = 0; !p->in_sub[n] && i < node->n_inputs; i++)
      if (node->inputs[i] >= 0)
        p->ok[node->inputs[i]] = false; /* read outside the subgraph */
    for (int a = 0; a < node->n_attrs; a++)
      if (node->attrs[a].type == HET_ATTR_GRAPH && node->attrs[a].g)
        (void)het_graph_outer_reads(g, node->attrs[a].g, mark_outer_read,
                                    p->ok);
  }
  return true;
}

static uint32_t value_bits(const layout_pass *p, const bool *nhwc,
                           const int *ids, int n) {
  uint32_t bits = 0;
  for (int i = 0; i < n && i < 32; i++)
    if (ids[i] >= 0 && nhwc[uf_find(p->parent, ids[i])] &&
        !neutral(p->g, ids[i]))
      bits |= 1u << i;
  return bits;
}

het_status het_cpu_layout_plan(const het_graph *g, const int *nodes,
                               int n_nodes, const uint8_t *limit,
                               het_cpu_layout *out) {
  layout_pass p;
  bool *nhwc = NULL;
  memset(out, 0, (size_t)n_nodes * sizeof *out);
  if (!pass_init(&p, g, nodes, n_nodes) ||
      !(nhwc = calloc((size_t)g->n_values + 1, sizeof *nhwc))) {
    pass_free(&p);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu layout pass: out of memory");
  }
  for (int i = 0; i < n_nodes; i++) {
    const het_node *n = &g->nodes[nodes[i]];
    apply_rule(&p, n, node_rule(g, n, limit[i]));
  }
  /* A group is NHWC when all its values may be and one touches a Conv. */
  for (int v = 0; v < g->n_values; v++)
    nhwc[v] = true;
  for (int v = 0; v < g->n_values; v++) {
    int r = uf_find(p.parent, v);
    nhwc[r] = nhwc[r] && p.ok[v];
  }
  bool *conv = calloc((size_t)g->n_values + 1, sizeof *conv);
  if (!conv) {
    free(nhwc);
    pass_free(&p);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu layout pass: out of memory");
  }
  for (int v = 0; v < g->n_values; v++)
    conv[uf_find(p.parent, v)] |= p.conv[v];
  for (int v = 0; v < g->n_values; v++)
    nhwc[v] = nhwc[v] && conv[v];
  for (int i = 0; i < n_nodes; i++) {
    const het_node *n = &g->nodes[nodes[i]];
    out[i].nhwc_in = value_bits(&p, nhwc, n->inputs, n->n_inputs);
    out[i].nhwc_out = value_bits(&p, nhwc, n->outputs, n->n_outputs);
  }
  free(conv);
  free(nhwc);
  pass_free(&p);
  return HET_OK;
}

uint8_t het_cpu_layout_back_off(const het_graph *g, const het_node *n,
                                uint8_t was) {
  bool conv = !*n->domain && strcmp(n->op_type, "Conv") == 0;
  return was == HET_CPU_LAYOUT_ANY && conv && is_depthwise(g, n)
             ? HET_CPU_LAYOUT_NO_STATE
             : HET_CPU_LAYOUT_NCHW;
}
