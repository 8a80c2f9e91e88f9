/* roofline.c — the core's cost of an op: FLOP and byte counts of one
 * node from its load-time shapes and the roofline time of that work on a
 * device (roofline.h).  Unknown dims (and unknown ranks) count as 1 and
 * unknown dtypes as 4 bytes, so a count is never negative or NaN.
 */
#include "core/roofline.h"

#include <math.h>
#include <string.h>

/* Dim i of value v (negative i counts from the end); 1 when unknown. */
static double het_work_dim(const het_graph *g, int v, int i) {
  if (v < 0 || v >= g->n_values)
    return 1;
  const het_value *val = &g->values[v];
  int rank = val->shape.rank;
  const het_tensor *init = val->initializer;
  if (rank < 0 && init) {
    rank = init->rank;
    if (i < 0)
      i += rank;
    return i >= 0 && i < rank && init->dims[i] >= 0 ? (double)init->dims[i]
                                                    : 1;
  }
  if (i < 0)
    i += rank;
  if (i < 0 || i >= rank || val->shape.dims[i].value < 0)
    return 1;
  return (double)val->shape.dims[i].value;
}

static int het_work_rank(const het_graph *g, int v) {
  if (v < 0 || v >= g->n_values)
    return 0;
  const het_value *val = &g->values[v];
  if (val->shape.rank < 0 && val->initializer)
    return val->initializer->rank;
  return val->shape.rank < 0 ? 0 : val->shape.rank;
}

/* Product of dims [from, rank) of v. */
static double het_work_prod(const het_graph *g, int v, int from) {
  double p = 1;
  for (int i = from; i < het_work_rank(g, v); i++)
    p *= het_work_dim(g, v, i);
  return p;
}

static double het_work_numel(const het_graph *g, int v) {
  return v < 0 ? 0 : het_work_prod(g, v, 0);
}

double het_roofline_value_bytes(const het_graph *g, int v) {
  if (v < 0 || v >= g->n_values)
    return 0;
  size_t size = het_dtype_size(g->values[v].dtype);
  return het_work_numel(g, v) * (double)(size ? size : 4);
}

static bool het_op_in(const char *op, const char *const *list) {
  for (; *list; list++)
    if (strcmp(op, *list) == 0)
      return true;
  return false;
}

/* Ops that only change the shape: their output aliases their input (or
 * is metadata), no element is moved. */
static const char *const het_view_ops[] = {
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape",
    "Size", NULL};

static const char *const het_movement_ops[] = {
    "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements",
    "GatherND", "Scatter", "ScatterND", "ScatterElements", "Expand", "Tile",
    "Pad", "Constant", "ConstantOfShape", "Cast", "CastLike", "DepthToSpace",
    "SpaceToDepth", "Compress", "ReverseSequence", "Dropout", "SequenceAt",
    "SequenceConstruct", "SplitToSequence", "ConcatFromSequence", "Optional",
    "OptionalGetElement", "OptionalHasElement", "EyeLike", NULL};

static const char *const het_normalize_ops[] = {
    "Softmax", "LogSoftmax", "Hardmax", "LayerNormalization",
    "BatchNormalization", "InstanceNormalization", "LpNormalization",
    "GroupNormalization", "MeanVarianceNormalization", "LRN", "LayerNorm",
    NULL};

/* Elementwise ops built on exp, log or trigonometry: ~8 operations per
 * element (a polynomial and a scaling), where the others take one. */
static const char *const het_transcendental_ops[] = {
    "Sigmoid", "Tanh", "Exp", "Log", "Erf", "Gelu", "Softplus", "Elu",
    "Selu", "Celu", "Mish", "Pow", "Sin", "Cos", "Tan", "Asin", "Acos",
    "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", NULL};

static const char *const het_pool_ops[] = {"MaxPool", "AveragePool",
                                           "LpPool", NULL};

static const char *const het_global_ops[] = {
    "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "ArgMax", "ArgMin",
    NULL};

/* hetrt.Attention (kernels/nlp_attention.c): per batch entry an S x T
 * score matrix, Q @ KT (D deep), a softmax (~5 per score) and @ V (E
 * wide).  Layout 0: Q [..,S,D], KT [..,D,T]; layout 1: Q [S,B,D],
 * K [T,B,D]; with qkv = {.., L, heads, D, E} Q, K and V are one packed
 * [rows, L] projection (T = rows).  Y [..,E] either way. */
static double het_work_attention(const het_graph *g, const het_node *n) {
  int q = het_node_input(n, 0), k = het_node_input(n, 1);
  int y = n->n_outputs ? n->outputs[0] : -1;
  size_t nq = 0;
  const int64_t *qkv = het_node_attr_ints(n, "qkv", &nq);
  double e = het_work_dim(g, y, -1), d = het_work_dim(g, q, -1), t;
  if (het_node_attr_int(n, "layout", 0) == 0) {
    t = het_work_dim(g, k, -1);
  } else if (qkv && nq == 7 && qkv[3] > 0 && qkv[5] > 0) {
    d = (double)qkv[5];
    t = het_work_numel(g, q) / (double)qkv[3];
  } else {
    t = het_work_dim(g, k, 0);
  }
  double scores = het_work_numel(g, y) / (e > 0 ? e : 1) * t;
  return scores * (2 * d + 2 * e + 5);
}

/* Conv-like and matrix products; false when op is not one of them. */
static bool het_work_products(const het_graph *g, const het_node *n,
                              double *flops) {
  const char *op = n->op_type;
  int x = het_node_input(n, 0), y = n->n_outputs ? n->outputs[0] : -1;
  if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvInteger") == 0 ||
      strcmp(op, "FusedConv") == 0) {
    *flops = 2 * het_work_numel(g, y) * het_work_prod(g, het_node_input(n, 1), 1);
  } else if (strcmp(op, "FusedConvPool") == 0) {
    /* the Conv's output: about the pooled Y times the pool's strides */
    size_t ns = 0;
    const int64_t *ps = het_node_attr_ints(n, "hetrt_pool_strides", &ns);
    double up = ns == 2 ? (double)(ps[0] * ps[1]) : 1.0;
    *flops = 2 * het_work_numel(g, y) * up *
             het_work_prod(g, het_node_input(n, 1), 1);
  } else if (strcmp(op, "FusedConvDw") == 0) { /* 1x1 over X, depthwise */
    *flops = 2 * het_work_numel(g, x) * het_work_dim(g, het_node_input(n, 1), 0) +
             2 * het_work_numel(g, y) * het_work_prod(g, het_node_input(n, 3), 1);
  } else if (strcmp(op, "QLinearConv") == 0) {
    *flops = 2 * het_work_numel(g, y) * het_work_prod(g, het_node_input(n, 3), 1);
  } else if (strcmp(op, "ConvTranspose") == 0) {
    *flops = 2 * het_work_numel(g, x) * het_work_prod(g, het_node_input(n, 1), 1);
  } else if (strcmp(op, "MatMul") == 0 || strcmp(op, "MatMulInteger") == 0 ||
             strcmp(op, "QLinearMatMul") == 0 ||
             strcmp(op, "FusedMatMul") == 0) {
    *flops = 2 * het_work_numel(g, y) * het_work_dim(g, x, -1);
  } else if (strcmp(op, "Gemm") == 0) {
    int k_axis = het_node_attr_int(n, "transA", 0) ? 0 : 1;
    *flops = 2 * het_work_numel(g, y) * het_work_dim(g, x, k_axis);
  } else if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0 ||
             strcmp(op, "RNN") == 0) {
    int w = het_node_input(n, 1), r = het_node_input(n, 2);
    *flops = 2 * het_work_dim(g, x, 0) * het_work_dim(g, x, 1) *
             het_work_dim(g, w, 0) * het_work_dim(g, w, 1) *
             (het_work_dim(g, w, 2) + het_work_dim(g, r, 2));
  } else if (strcmp(op, "Attention") == 0) {
    *flops = het_work_attention(g, n);
  } else {
    return false;
  }
  return true;
}

void het_roofline_work(const het_graph *g, int node, double *flops,
                       double *bytes) {
  const het_node *n = &g->nodes[node];
  const char *op = n->op_type;
  double b = 0, out_max = 0;
  for (int k = 0; k < n->n_inputs; k++)
    b += het_roofline_value_bytes(g, n->inputs[k]);
  for (int k = 0; k < n->n_outputs; k++) {
    b += het_roofline_value_bytes(g, n->outputs[k]);
    double e = het_work_numel(g, n->outputs[k]);
    out_max = e > out_max ? e : out_max;
  }
  *bytes = b;
  double f = 0, in0 = het_work_numel(g, het_node_input(n, 0));
  if (het_work_products(g, n, &f)) {
    /* f set */
  } else if (het_op_in(op, het_movement_ops) || het_op_in(op, het_view_ops)) {
    f = 0;
  } else if (het_op_in(op, het_pool_ops)) {
    size_t nk = 0;
    const int64_t *ks = het_node_attr_ints(n, "kernel_shape", &nk);
    f = out_max;
    for (size_t i = 0; i < nk; i++)
      f *= ks[i] > 0 ? (double)ks[i] : 1;
  } else if (het_op_in(op, het_global_ops) || strncmp(op, "Reduce", 6) == 0) {
    f = in0;
  } else if (het_op_in(op, het_normalize_ops)) {
    f = 5 * (in0 > out_max ? in0 : out_max);
  } else if (het_op_in(op, het_transcendental_ops)) {
    f = 8 * out_max;
  } else {
    f = out_max; /* elementwise and everything else: one op per element */
  }
  *flops = f;
}

het_roofline_class het_roofline_op_class(const het_graph *g, int node) {
  const het_node *n = &g->nodes[node];
  const char *op = n->op_type;
  double unused;
  if ((strcmp(op, "Conv") == 0 || strcmp(op, "FusedConv") == 0) &&
      het_node_attr_int(n, "group", 1) > 1 &&
      het_work_rank(g, het_node_input(n, 1)) >= 3 &&
      het_work_dim(g, het_node_input(n, 1), 1) == 1)
    return HET_ROOFLINE_DEPTHWISE;
  if (strcmp(op, "LSTM") == 0 || strcmp(op, "GRU") == 0 ||
      strcmp(op, "RNN") == 0)
    return HET_ROOFLINE_RECURRENT;
  if (het_work_products(g, n, &unused))
    return HET_ROOFLINE_GEMM;
  if (het_op_in(op, het_view_ops))
    return HET_ROOFLINE_VIEW;
  if (het_op_in(op, het_movement_ops))
    return HET_ROOFLINE_MOVEMENT;
  return HET_ROOFLINE_ELEMENTWISE;
}

het_dtype het_roofline_dtype(const het_graph *g, const het_node *n) {
  for (int k = 0; k < n->n_outputs; k++)
    if (n->outputs[k] >= 0 && g->values[n->outputs[k]].dtype)
      return g->values[n->outputs[k]].dtype;
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].dtype)
      return g->values[n->inputs[k]].dtype;
  return HET_DTYPE_FLOAT32;
}

double het_roofline_time(const het_device_info *info, het_dtype dtype,
                         double flops, double bytes) {
  double peak = info ? info->peak_flops_f32 : 0;
  if (info && (dtype == HET_DTYPE_FLOAT16 || dtype == HET_DTYPE_BFLOAT16) &&
      info->peak_flops_f16 > 0)
    peak = info->peak_flops_f16;
  if (info && (dtype == HET_DTYPE_INT8 || dtype == HET_DTYPE_UINT8) &&
      info->peak_flops_i8 > 0)
    peak = info->peak_flops_i8;
  if (!(peak > 0))
    peak = HET_ROOFLINE_DEFAULT_PEAK;
  double bw = info && info->memory_bandwidth > 0 ? info->memory_bandwidth
                                                 : HET_ROOFLINE_DEFAULT_BANDWIDTH;
  return fmax(flops / peak, bytes / bw);
}

double het_roofline_node(const het_graph *g, int node,
                         const het_device_info *info) {
  double flops, bytes;
  het_roofline_work(g, node, &flops, &bytes);
  return het_roofline_time(info, het_roofline_dtype(g, &g->nodes[node]), flops,
                           bytes);
}
