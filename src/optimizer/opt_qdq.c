/* opt_qdq.c — QDQ islands into quantized operators: DequantizeLinear(x)
 * and DequantizeLinear(constant int8 weight) feeding a Conv (or MatMul)
 * whose output, maybe through a Relu or Clip, goes only to a
 * QuantizeLinear, become one QLinearConv (QLinearMatMul) from the
 * quantized x to the quantized y: integer accumulation, one
 * requantisation, no float round trip.  DQ(a) + DQ(b) -> Add [-> act] ->
 * Q with a and b of one shape becomes hetrt.QLinearAdd (one pass over
 * bytes), and a Gemm island a 1x1 QLinearConv between two Reshapes (it
 * has a bias, which QLinearMatMul has not).  Before that, per-tensor Q
 * and DQ move through data-movement ops (het_opt_move_qdq, at the end) so
 * that a Flatten or Transpose does not split an island.  The activation is dropped only when the output's range
 * already implies it (a Relu before a Q whose zero point is the type's
 * minimum clamps nothing the saturation would not).  A Conv bias is the
 * int32 DequantizeLinear of scale x_scale * w_scale (what quantizers
 * write), or a float32 constant quantized here into that scale; a bias
 * DequantizeLinear of another scale keeps the island float.  Given
 * estimates (het_optimize_int8.estimate), each island that can fuse is
 * weighed first, its float form against a probe of the fused operator,
 * and stays float when that is cheaper; a policy rule decides without
 * weighing.  Runs before
 * constant folding, which would otherwise turn the weights' DequantizeLinear into
 * float weights.  Results may differ from the float island by one step
 * where the float and the integer sums round to different sides.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/kernel.h"
#include "optimizer/opt_internal.h"
#include "optimizer/opt_nlp.h"

static bool qdq_is_int8(het_dtype t) {
  return t == HET_DTYPE_UINT8 || t == HET_DTYPE_INT8;
}

/* A live DequantizeLinear making v from a (u)int8 input, with constant
 * scale and zero point (absent = 0); -1 otherwise. */
static int qdq_dq(const het_opt *o, int v) {
  int d = het_opt_nlp_producer(o, v, "DequantizeLinear");
  if (d < 0)
    return -1;
  const het_node *n = &o->g->nodes[d];
  int zp = het_node_input(n, 2);
  if (het_node_input(n, 0) < 0 ||
      !het_opt_const_tensor(o->g, het_node_input(n, 1)) ||
      (zp >= 0 && !het_opt_const_tensor(o->g, zp)))
    return -1;
  return d;
}

static bool qdq_scalar(const het_tensor *t) {
  return t && het_tensor_count(t) == 1 && t->dtype == HET_DTYPE_FLOAT32;
}

/* Scale and zero point of a per-tensor DQ/Q node n (inputs 1, 2). */
static bool qdq_params(const het_graph *g, const het_node *n, float *scale,
                       int32_t *zp, het_dtype type) {
  const het_tensor *s = het_opt_const_tensor(g, het_node_input(n, 1));
  const het_tensor *z = het_opt_const_tensor(g, het_node_input(n, 2));
  if (!qdq_scalar(s) || (z && (het_tensor_count(z) != 1 || z->dtype != type)))
    return false;
  *scale = *(const float *)s->data;
  *zp = z ? (int32_t)het_tensor_get_i64(z, 0) : 0;
  return *scale > 0 && isfinite(*scale);
}

/* The activation between the op and the Q is implied by the Q's range:
 * Relu when the zero point is the type's minimum; Clip(lo, hi) when the
 * representable range lies inside [lo, hi]. */
static bool qdq_act_implied(const het_graph *g, const het_node *a,
                            float scale, int32_t zp, het_dtype type) {
  double qmin = type == HET_DTYPE_INT8 ? -128 : 0;
  double qmax = type == HET_DTYPE_INT8 ? 127 : 255;
  double lo = scale * (qmin - zp), hi = scale * (qmax - zp);
  if (strcmp(a->op_type, "Relu") == 0)
    return zp == qmin;
  if (strcmp(a->op_type, "Clip") != 0)
    return false;
  float cmin = -INFINITY, cmax = INFINITY;
  if (a->opset < 11) {
    cmin = het_node_attr_float(a, "min", -INFINITY);
    cmax = het_node_attr_float(a, "max", INFINITY);
  } else {
    int vmin = het_node_input(a, 1), vmax = het_node_input(a, 2);
    const het_tensor *tmin = het_opt_const_tensor(g, vmin);
    const het_tensor *tmax = het_opt_const_tensor(g, vmax);
    if ((vmin >= 0 && !qdq_scalar(tmin)) || (vmax >= 0 && !qdq_scalar(tmax)))
      return false;
    if (tmin)
      cmin = *(const float *)tmin->data;
    if (tmax)
      cmax = *(const float *)tmax->data;
  }
  return lo >= cmin && hi <= cmax;
}

/* A constant int32 bias behind DequantizeLinear with scale x_scale *
 * w_scale[c] and zero point 0: its int32 value id, or -1. */
static int qdq_bias(const het_opt *o, int b, float xs, const het_tensor *ws,
                    int64_t channels) {
  int d = qdq_dq(o, b);
  if (d < 0)
    return -1;
  const het_node *n = &o->g->nodes[d];
  const het_tensor *q = het_opt_const_tensor(o->g, het_node_input(n, 0));
  const het_tensor *s = het_opt_const_tensor(o->g, het_node_input(n, 1));
  const het_tensor *z = het_opt_const_tensor(o->g, het_node_input(n, 2));
  if (!q || q->dtype != HET_DTYPE_INT32 || het_tensor_count(q) != channels ||
      !s || s->dtype != HET_DTYPE_FLOAT32)
    return -1;
  int64_t ns = het_tensor_count(s), nw = het_tensor_count(ws);
  if ((ns != 1 && ns != channels) || (nw != 1 && nw != channels))
    return -1;
  for (int64_t c = 0; c < channels; c++) {
    double want = (double)xs * ((const float *)ws->data)[nw == 1 ? 0 : c];
    double got = ((const float *)s->data)[ns == 1 ? 0 : c];
    int64_t zi = !z || ns == 1 || het_tensor_count(z) == 1 ? 0 : c;
    if (fabs(got - want) > 1e-6 * fabs(want) ||
        (z && het_tensor_get_i64(z, zi)))
      return -1;
  }
  return het_node_input(n, 0);
}

/* A float32 bias as int32 in the accumulator's scale x_scale *
 * w_scale[c]: rounding it moves the sum by at most half an accumulator
 * step, far below one output step.  *id is the new constant. */
static het_status qdq_bias_quantize(het_opt *o, const het_tensor *bf,
                                    float xs, const het_tensor *ws, int *id) {
  het_tensor *t;
  int64_t n = het_tensor_count(bf), nw = het_tensor_count(ws);
  HET_TRY(het_tensor_create_empty(HET_DTYPE_INT32, &n, 1, &t));
  for (int64_t c = 0; c < n; c++) {
    double s = (double)xs * ((const float *)ws->data)[nw == 1 ? 0 : c];
    double r = nearbyint(((const float *)bf->data)[c] / s);
    ((int32_t *)t->data)[c] = (int32_t)(r > INT32_MAX   ? INT32_MAX
                                        : r < -INT32_MAX ? -INT32_MAX
                                        : isfinite(r)    ? r : 0);
  }
  return het_graph_add_constant(o->g, "qdq_bias", t, id);
}

/* The weight's DQ: constant (u)int8 data, float32 scales (one, or one per
 * channel along axis `axis` of a rank-`rank` weight), matching zero
 * points; fills in[3..5] (w, w_scale, w_zero_point). */
static bool qdq_weight(het_opt *o, int w_dq, int axis, int *in,
                       const het_tensor **ws) {
  int d = qdq_dq(o, w_dq);
  if (d < 0)
    return false;
  const het_node *n = &o->g->nodes[d];
  const het_tensor *q = het_opt_const_tensor(o->g, het_node_input(n, 0));
  const het_tensor *s = het_opt_const_tensor(o->g, het_node_input(n, 1));
  if (!q || !qdq_is_int8(q->dtype) || !s || s->dtype != HET_DTYPE_FLOAT32 ||
      het_node_input(n, 2) < 0)
    return false;
  int64_t ns = het_tensor_count(s);
  if (ns != 1) {
    int64_t dq_axis = het_node_attr_int(n, "axis", 1);
    if (dq_axis < 0)
      dq_axis += q->rank;
    if (s->rank != 1 || dq_axis != axis || q->dims[axis] != ns)
      return false;
  }
  in[3] = het_node_input(n, 0);
  in[4] = het_node_input(n, 1);
  in[5] = het_node_input(n, 2);
  *ws = s;
  return true;
}

/* The weight in[3] (zero points in[5]) is what the fast int8 kernels
 * take: int8 with all-zero zero points (symmetric, as quantizers write
 * weights).  Others would run on the reference kernels, slower than the
 * float island they replace. */
static bool qdq_fast_weight(const het_graph *g, const int *in) {
  const het_tensor *w = het_opt_const_tensor(g, in[3]);
  const het_tensor *z = het_opt_const_tensor(g, in[5]);
  if (!w || w->dtype != HET_DTYPE_INT8 || !z)
    return false;
  for (int64_t i = 0; i < het_tensor_count(z); i++)
    if (het_tensor_get_i64(z, i) != 0)
      return false;
  return true;
}

/* A zero point (0 of type) for a DQ that has none. */
static het_status qdq_zero_point(het_opt *o, het_dtype type, int *id) {
  het_tensor *t;
  HET_TRY(het_tensor_create_empty(type, NULL, 0, &t));
  *(uint8_t *)t->data = 0;
  return het_graph_add_constant(o->g, "qdq_zero_point", t, id);
}

/* A policy rule's word on the island of operator c and QuantizeLinear
 * qn: 1 int8, 0 float, -1 none.  The operator's rule, else the Q's. */
static int qdq_rule(const het_opt *o, int c, int qn) {
  const het_optimize_int8 *x = o->int8;
  int at_q = -1;
  for (int i = 0; x && i < x->n_names; i++) {
    if (strcmp(x->names[i], o->g->nodes[c].name) == 0)
      return x->int8[i];
    if (strcmp(x->names[i], o->g->nodes[qn].name) == 0)
      at_q = i;
  }
  return at_q >= 0 ? x->int8[at_q] : -1;
}

/* Every dim of value v known (v < 0: nothing to know). */
static bool qdq_known(const het_graph *g, int v) {
  if (v < 0)
    return true;
  const het_shape *s = &g->values[v].shape;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i].value < 0)
      return false;
  return s->rank >= 0;
}

static bool qdq_node_known(const het_graph *g, const het_node *n) {
  for (int i = 0; i < n->n_inputs; i++)
    if (!qdq_known(g, n->inputs[i]))
      return false;
  for (int i = 0; i < n->n_outputs; i++)
    if (!qdq_known(g, n->outputs[i]))
      return false;
  return true;
}

/* Seconds of the island's float form: the DequantizeLinears of operator
 * c's inputs that read no constant (a weight's is folded) and feed only c,
 * c itself, and the QuantizeLinear qn (an activation between fuses into
 * c, so it is not counted). */
static het_status qdq_float_seconds(const het_opt *o, int c, int qn,
                                    double *out) {
  const het_optimize_int8 *x = o->int8;
  const het_graph *g = o->g;
  double t;
  HET_TRY(x->estimate(x->ctx, g, c, false, &t));
  *out = t;
  HET_TRY(x->estimate(x->ctx, g, qn, false, &t));
  *out += t;
  const het_node *n = &g->nodes[c];
  for (int k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k], d = qdq_dq(o, v);
    if (d < 0 || het_opt_uses(o, v) != 1 ||
        het_opt_const_tensor(g, het_node_input(&g->nodes[d], 0)))
      continue;
    HET_TRY(x->estimate(x->ctx, g, d, false, &t));
    *out += t;
  }
  return HET_OK;
}

/* Whether the island of operator c ending at QuantizeLinear qn becomes
 * the fused operator op (inputs in, attributes attrs): a policy rule
 * decides, else the estimates when there are some (float only when its
 * form is cheaper), else yes.  The fused form is estimated on a probe,
 * op written in place of qn and undone. */
static het_status qdq_pays(het_opt *o, int c, int qn, const char *domain,
                           const char *op, const int *in, int n_in,
                           het_attr *attrs, int n_attrs, bool *fuse) {
  het_graph *g = o->g;
  const het_optimize_int8 *x = o->int8;
  int rule = qdq_rule(o, c, qn);
  *fuse = rule != 0;
  if (rule >= 0 || !x || !x->estimate)
    return HET_OK;
  het_optimize_island w = {.name = g->nodes[c].name, .graph = g, .node = c};
  w.unknown_dims = !qdq_node_known(g, &g->nodes[c]) ||
                   !qdq_node_known(g, &g->nodes[qn]);
  for (int i = 0; i < n_in; i++)
    w.unknown_dims |= !qdq_known(g, in[i]);
  if (!o->weighing && x->prepare)
    HET_TRY(x->prepare(x->ctx, g));
  o->weighing = true;
  HET_TRY(qdq_float_seconds(o, c, qn, &w.float_seconds));
  het_node was = g->nodes[qn];
  int changes = o->changes;
  int opset = domain[0] ? 1 : (int)het_graph_opset(g, "");
  HET_TRY(het_opt_rewrite(o, qn, domain, opset, op, in, n_in, attrs, n_attrs));
  het_status st = x->estimate(x->ctx, g, qn, true, &w.int8_seconds);
  HET_TRY(het_opt_rewrite(o, qn, was.domain, was.opset, was.op_type,
                          was.inputs, was.n_inputs, was.attrs, was.n_attrs));
  o->changes = changes;
  HET_TRY(st);
  *fuse = w.fused = !(w.float_seconds < w.int8_seconds);
  if (!*fuse && o->stats)
    o->stats->qdq_kept_float++;
  return x->weighed ? x->weighed(x->ctx, &w) : HET_OK;
}

/* Node qn, rewritten into the fused operator, takes the name of the
 * operator c it replaces (which is dead, and gone at the compaction):
 * reports and policy rules know the island by the model's name for it. */
static void qdq_take_name(het_opt *o, int qn, int c) {
  o->g->nodes[qn].name = o->g->nodes[c].name;
}

/* DQ(a) + DQ(b) -> Add [-> act] -> Q(y) (node qn) into hetrt.QLinearAdd
 * when a, b and y are per-tensor 8-bit of one type and a and b have one
 * shape (symbolic dims alike: no broadcasting at run time). */
static het_status qdq_add(het_opt *o, int qn, int add, int act) {
  het_graph *g = o->g;
  const het_node *q = &g->nodes[qn], *n = &g->nodes[add];
  het_dtype yt = g->values[het_node_input(q, 2)].dtype;
  int in[8];
  for (int k = 0; k < 2; k++) {
    int d = qdq_dq(o, het_node_input(n, k));
    if (d < 0)
      return HET_OK;
    const het_node *dq = &g->nodes[d];
    int x = het_node_input(dq, 0);
    float s;
    int32_t z;
    if (g->values[x].dtype != yt || het_node_input(dq, 2) < 0 ||
        !qdq_params(g, dq, &s, &z, yt))
      return HET_OK;
    in[3 * k] = x;
    in[3 * k + 1] = het_node_input(dq, 1);
    in[3 * k + 2] = het_node_input(dq, 2);
  }
  const het_shape *sa = &g->values[in[0]].shape, *sb = &g->values[in[3]].shape;
  if (!het_shape_same(sa, sb))
    return HET_OK;
  in[6] = het_node_input(q, 1);
  in[7] = het_node_input(q, 2);
  bool fuse;
  HET_TRY(qdq_pays(o, add, qn, "hetrt", "QLinearAdd", in, 8, NULL, 0, &fuse));
  if (!fuse)
    return HET_OK;
  het_opt_kill_node(o, add);
  if (act >= 0)
    het_opt_kill_node(o, act);
  HET_TRY(het_opt_rewrite(o, qn, "hetrt", 1, "QLinearAdd", in, 8, NULL, 0));
  qdq_take_name(o, qn, add);
  if (o->stats)
    o->stats->qdq_fused++;
  return HET_OK;
}

/* An int64 constant of n values. */
static het_status qdq_shape_const(het_opt *o, const int64_t *v, int64_t n,
                                  int *id) {
  het_tensor *t;
  HET_TRY(het_tensor_create_empty(HET_DTYPE_INT64, &n, 1, &t));
  memcpy(t->data, v, sizeof(int64_t) * (size_t)n);
  return het_graph_add_constant(o->g, "qdq_shape", t, id);
}

/* Gemm's int8 weight (K x N, or N x K with transB) as an N x K x 1 x 1
 * QLinearConv weight: a new constant replacing in[3]. */
static het_status qdq_gemm_weight(het_opt *o, bool trans_b, int *in) {
  const het_tensor *w = het_opt_const_tensor(o->g, in[3]);
  int64_t n = trans_b ? w->dims[0] : w->dims[1];
  int64_t k = trans_b ? w->dims[1] : w->dims[0];
  int64_t dims[4] = {n, k, 1, 1};
  het_tensor *t;
  HET_TRY(het_tensor_create_empty(w->dtype, dims, 4, &t));
  const uint8_t *src = w->data;
  uint8_t *dst = t->data;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < k; j++)
      dst[i * k + j] = trans_b ? src[i * k + j] : src[j * n + i];
  return het_graph_add_constant(o->g, "qdq_gemm_weight", t, &in[3]);
}

/* A new node op(in) -> out named name (in the arena), opset of the
 * default domain. */
static het_status qdq_add_node(het_opt *o, const char *name, const char *op,
                               const int *in, int n_in, int out) {
  het_graph *g = o->g;
  int *io = het_arena_calloc(&g->arena, (size_t)n_in + 1, sizeof *io);
  const char *nm = het_arena_strdup(&g->arena, name);
  if (!io || !nm)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  memcpy(io, in, sizeof(int) * (size_t)n_in);
  io[n_in] = out;
  het_node n = {.name = nm,
                .op_type = op,
                .domain = "",
                .opset = (int)het_graph_opset(g, ""),
                .n_inputs = n_in,
                .inputs = io,
                .n_outputs = 1,
                .outputs = io + n_in};
  return het_opt_add_node(o, &n);
}

/* DQ(x) -> Gemm(DQ(int8 W), bias) [-> act] -> Q (node qn, Gemm c, in[0..2]
 * x's quantized value, scale and zero point) into
 * Reshape(x, [0, K, 1, 1]) -> QLinearConv 1x1 (named after the Gemm) ->
 * Reshape(.., [0, N]), the Q node becoming the last Reshape: Gemm with
 * alpha = beta = 1, no transA, a 2-D x and a bias of N values. */
static het_status qdq_gemm(het_opt *o, int qn, int c, int act, int *in,
                           float xs) {
  het_graph *g = o->g;
  const het_node *op = &g->nodes[c];
  bool trans_b = het_node_attr_int(op, "transB", 0) != 0;
  int wv = het_node_input(op, 1), bv = het_node_input(op, 2);
  const het_tensor *ws = NULL;
  if (het_node_attr_float(op, "alpha", 1.0f) != 1.0f ||
      (bv >= 0 && het_node_attr_float(op, "beta", 1.0f) != 1.0f) ||
      het_node_attr_int(op, "transA", 0) != 0 ||
      g->values[het_node_input(op, 0)].shape.rank != 2 || wv < 0 ||
      g->values[wv].shape.rank != 2 ||
      !qdq_weight(o, wv, trans_b ? 0 : 1, in, &ws) ||
      !qdq_fast_weight(g, in))
    return HET_OK;
  in[6] = het_node_input(&g->nodes[qn], 1);
  in[7] = het_node_input(&g->nodes[qn], 2);
  const het_tensor *w = het_opt_const_tensor(g, in[3]);
  int64_t n = trans_b ? w->dims[0] : w->dims[1];
  int64_t k = trans_b ? w->dims[1] : w->dims[0];
  int n_in = bv >= 0 ? 9 : 8;
  const het_tensor *bf = NULL;
  if (bv >= 0 && (in[8] = qdq_bias(o, bv, xs, ws, n)) < 0) {
    bf = het_opt_const_tensor(g, bv);
    if (!bf || bf->dtype != HET_DTYPE_FLOAT32 || het_tensor_count(bf) != n)
      return HET_OK;
  }
  /* weighed as the QLinearMatMul it amounts to (same products and bytes) */
  bool fuse;
  HET_TRY(qdq_pays(o, c, qn, "", "QLinearMatMul", in, 8, NULL, 0, &fuse));
  if (!fuse)
    return HET_OK;
  if (bf)
    HET_TRY(qdq_bias_quantize(o, bf, xs, ws, &in[8]));
  if (in[2] < 0)
    HET_TRY(qdq_zero_point(o, g->values[in[0]].dtype, &in[2]));
  HET_TRY(qdq_gemm_weight(o, trans_b, in));
  const char *name = g->nodes[c].name;
  char buf[256];
  int64_t s4[4] = {0, k, 1, 1}, s2[2] = {0, n};
  int shape4, shape2, x4, y4;
  HET_TRY(qdq_shape_const(o, s4, 4, &shape4));
  HET_TRY(qdq_shape_const(o, s2, 2, &shape2));
  snprintf(buf, sizeof buf, "%.200s_x4", name);
  HET_TRY(het_graph_fresh_value(g, buf, &x4));
  snprintf(buf, sizeof buf, "%.200s_y4", name);
  HET_TRY(het_graph_fresh_value(g, buf, &y4));
  int r4[2] = {in[0], shape4};
  snprintf(buf, sizeof buf, "%.200s_to_4d", g->nodes[c].name);
  HET_TRY(qdq_add_node(o, buf, "Reshape", r4, 2, x4));
  in[0] = x4;
  name = g->nodes[c].name; /* g->nodes may have moved */
  HET_TRY(qdq_add_node(o, name, "QLinearConv", in, n_in, y4));
  het_opt_kill_node(o, c);
  if (act >= 0)
    het_opt_kill_node(o, act);
  int r2[2] = {y4, shape2};
  HET_TRY(het_opt_rewrite(o, qn, "", (int)het_graph_opset(g, ""), "Reshape",
                          r2, 2, NULL, 0));
  if (o->stats)
    o->stats->qdq_fused++;
  return HET_OK;
}

/* Tries the island ending at QuantizeLinear node qn. */
static het_status qdq_try(het_opt *o, int qn) {
  het_graph *g = o->g;
  const het_node *q = &g->nodes[qn];
  int y = het_node_input(q, 0);
  int yzv = het_node_input(q, 2);
  const het_tensor *yz = het_opt_const_tensor(g, yzv);
  if (!yz || !qdq_is_int8(yz->dtype) || y < 0 ||
      g->values[y].dtype != HET_DTYPE_FLOAT32)
    return HET_OK;
  float ys;
  int32_t yzp;
  if (!qdq_params(g, q, &ys, &yzp, yz->dtype))
    return HET_OK;
  /* op [-> act] -> y, each read only by the next */
  int c = g->values[y].producer, act = -1;
  if (c < 0 || het_opt_uses(o, y) != 1 || g->nodes[c].domain[0])
    return HET_OK;
  if (strcmp(g->nodes[c].op_type, "Relu") == 0 ||
      strcmp(g->nodes[c].op_type, "Clip") == 0) {
    if (!qdq_act_implied(g, &g->nodes[c], ys, yzp, yz->dtype))
      return HET_OK;
    act = c;
    int ay = het_node_input(&g->nodes[act], 0);
    c = ay >= 0 ? g->values[ay].producer : -1;
    if (c < 0 || het_opt_uses(o, ay) != 1 || g->nodes[c].domain[0])
      return HET_OK;
  }
  const het_node *op = &g->nodes[c];
  if (qdq_rule(o, c, qn) == 0)
    return HET_OK;
  if (strcmp(op->op_type, "Add") == 0)
    return qdq_add(o, qn, c, act);
  bool conv = strcmp(op->op_type, "Conv") == 0;
  bool gemm = strcmp(op->op_type, "Gemm") == 0;
  if ((!conv && !gemm && strcmp(op->op_type, "MatMul") != 0) || o->dead[c] ||
      !het_kernels_int8_fast())
    return HET_OK;
  int xd = qdq_dq(o, het_node_input(op, 0));
  if (xd < 0)
    return HET_OK;
  const het_node *dqx = &g->nodes[xd];
  int xq = het_node_input(dqx, 0);
  float xs;
  int32_t xzp;
  if (!qdq_is_int8(g->values[xq].dtype) ||
      !qdq_params(g, dqx, &xs, &xzp, g->values[xq].dtype))
    return HET_OK;
  int in[9] = {xq, het_node_input(dqx, 1), het_node_input(dqx, 2)};
  if (gemm)
    return qdq_gemm(o, qn, c, act, in, xs);
  const het_tensor *ws = NULL;
  /* 1-D and 2-D Convs, 2-D MatMul weights: what the fast kernels take */
  int wv = het_node_input(op, 1);
  int w_rank = wv >= 0 ? g->values[wv].shape.rank : -1;
  if ((conv ? w_rank < 3 || w_rank > 4 : w_rank != 2) ||
      !qdq_weight(o, wv, conv ? 0 : w_rank - 1, in, &ws) ||
      !qdq_fast_weight(g, in))
    return HET_OK;
  in[6] = het_node_input(q, 1);
  in[7] = yzv;
  int b = conv ? het_node_input(op, 2) : -1, n_in = b >= 0 ? 9 : 8;
  const het_tensor *bf = NULL;
  if (b >= 0) {
    /* the weight may be a Constant node's, not an initializer */
    int64_t channels = het_opt_const_tensor(g, in[3])->dims[0];
    if ((in[8] = qdq_bias(o, b, xs, ws, channels)) < 0) {
      bf = het_opt_const_tensor(g, b);
      if (!bf || bf->dtype != HET_DTYPE_FLOAT32 ||
          het_tensor_count(bf) != channels)
        return HET_OK;
    }
  }
  const char *fused = conv ? "QLinearConv" : "QLinearMatMul";
  bool fuse;
  HET_TRY(qdq_pays(o, c, qn, "", fused, in, 8, conv ? op->attrs : NULL,
                   conv ? op->n_attrs : 0, &fuse));
  if (!fuse)
    return HET_OK;
  if (bf)
    HET_TRY(qdq_bias_quantize(o, bf, xs, ws, &in[8]));
  if (in[2] < 0)
    HET_TRY(qdq_zero_point(o, g->values[xq].dtype, &in[2]));
  /* The Q node becomes the fused op (its output stays); the op and the
   * activation go; unread DequantizeLinears go with remove_dead. */
  int n_attrs = conv ? op->n_attrs : 0;
  het_attr *attrs = n_attrs ? het_arena_calloc(&g->arena, (size_t)n_attrs,
                                               sizeof *attrs)
                            : NULL;
  if (n_attrs && !attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  if (n_attrs)
    memcpy(attrs, op->attrs, (size_t)n_attrs * sizeof *attrs);
  het_opt_kill_node(o, c);
  if (act >= 0)
    het_opt_kill_node(o, act);
  HET_TRY(het_opt_rewrite(o, qn, "", (int)het_graph_opset(g, ""), fused, in,
                          n_in, attrs, n_attrs));
  qdq_take_name(o, qn, c);
  if (o->stats)
    o->stats->qdq_fused++;
  return HET_OK;
}

het_status het_opt_fuse_qdq(het_opt *o) {
  het_graph *g = o->g;
  if (het_graph_opset(g, "") < 10)
    return HET_OK;
  o->weighing = false;
  for (int k = 0; k < o->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || node->domain[0] ||
        strcmp(node->op_type, "QuantizeLinear") != 0)
      continue;
    HET_TRY(qdq_try(o, n));
  }
  return HET_OK;
}

/* ---- moving Q/DQ through data-movement ops ---- */

/* Ops that move or pick elements of input 0 without computing on them:
 * any element type, and the output's shape does not depend on it.  all:
 * also those that drop elements (Slice, Gather, and a 2-D MaxPool from
 * opset 12, which takes 8-bit types: a maximum commutes with a
 * dequantization, whose scale is positive, and its padding is no value),
 * which a Q is not hoisted above (it would quantize what they drop). */
static bool qdq_movable(const het_opt *o, int n, bool all) {
  static const char *const keep[] = {"Reshape", "Flatten", "Transpose",
                                     "Squeeze", "Unsqueeze", NULL};
  static const char *const drop[] = {"Slice", "Gather", NULL};
  if (n < 0 || o->dead[n])
    return false;
  const het_node *node = &o->g->nodes[n];
  if (node->domain[0] || node->n_outputs != 1 || node->n_inputs < 1 ||
      node->inputs[0] < 0 || node->outputs[0] < 0)
    return false;
  for (const char *const *p = keep; *p; p++)
    if (strcmp(node->op_type, *p) == 0)
      return true;
  for (const char *const *p = drop; all && *p; p++)
    if (strcmp(node->op_type, *p) == 0)
      return true;
  return all && strcmp(node->op_type, "MaxPool") == 0 && node->opset >= 12 &&
         o->g->values[node->inputs[0]].shape.rank == 4;
}

/* A per-tensor Q or DQ node n whose quantized side has type t. */
static bool qdq_per_tensor(const het_graph *g, const het_node *n, het_dtype t) {
  float s;
  int32_t z;
  return qdq_is_int8(t) && qdq_params(g, n, &s, &z, t);
}

/* Swaps node a (producing v, read only by b) and node b (writing w) in
 * the chain x -> a -> v -> b -> w: b reads x and writes v, a reads v and
 * writes w.  v takes b's element type over x's shape when b is the Q
 * (q_first), else a's input type over w's shape. */
static void qdq_swap(het_graph *g, int a, int b, bool q_first) {
  het_node *na = &g->nodes[a], *nb = &g->nodes[b];
  int x = na->inputs[0], v = na->outputs[0], w = nb->outputs[0];
  het_value *vv = &g->values[v];
  if (q_first) {
    vv->dtype = g->values[w].dtype;
    vv->shape = g->values[x].shape;
  } else {
    vv->dtype = g->values[x].dtype;
    vv->shape = g->values[w].shape;
  }
  nb->inputs[0] = x;
  nb->outputs[0] = v;
  na->inputs[0] = v;
  na->outputs[0] = w;
  vv->producer = b;
  g->values[w].producer = a;
}

/* Q node qn reading DQ(q) of its type, scale and zero point: its
 * readers read q instead (q may hold any value of the type). */
static het_status qdq_drop_requant(het_opt *o, int qn) {
  het_graph *g = o->g;
  const het_node *q = &g->nodes[qn];
  int d = qdq_dq(o, q->inputs[0]), yq = q->outputs[0];
  if (d < 0 || yq < 0 || yq >= o->n_values || o->pinned[yq])
    return HET_OK;
  const het_node *dq = &g->nodes[d];
  int x = dq->inputs[0];
  het_dtype t = g->values[yq].dtype;
  float s1, s2;
  int32_t z1, z2;
  if (g->values[x].dtype != t || !qdq_is_int8(t) ||
      !qdq_params(g, dq, &s1, &z1, t) || !qdq_params(g, q, &s2, &z2, t) ||
      s1 != s2 || z1 != z2 || s1 < 1e-30f || s1 > 1e30f)
    return HET_OK;
  het_opt_replace_uses(o, yq, x);
  het_opt_kill_node(o, qn);
  return HET_OK;
}

/* DQ(x) -> move -> ... becomes move(x) -> DQ, as far down as it goes, and
 * move -> ... -> Q becomes Q -> move, as far up; a DQ then directly read
 * by a Q of its type, scale and zero point is nothing (Q(DQ(q)) = q for
 * normal scales: (k * s) / s stays within 2^-22 of k).  *moved: whether
 * anything changed (the nodes are then out of order until the next
 * validation). */
het_status het_opt_move_qdq(het_opt *o, bool *moved) {
  het_graph *g = o->g;
  *moved = false;
  if (het_graph_opset(g, "") < 10 || o->level < HET_OPT_EXTENDED)
    return HET_OK;
  for (int k = 0; k < o->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || node->domain[0] || node->n_inputs < 1 ||
        node->n_outputs != 1 || node->inputs[0] < 0 || node->outputs[0] < 0)
      continue; /* an omitted X or Y: the node's checks report it */
    if (strcmp(node->op_type, "DequantizeLinear") == 0) {
      int r;
      while (qdq_per_tensor(g, node, g->values[node->inputs[0]].dtype) &&
             qdq_movable(o, r = het_opt_nlp_reader(o, node->outputs[0], NULL),
                         true) &&
             g->nodes[r].inputs[0] == node->outputs[0]) {
        qdq_swap(g, n, r, false);
        *moved = true;
        o->changes++;
        node = &g->nodes[n];
      }
    } else if (strcmp(node->op_type, "QuantizeLinear") == 0) {
      int p;
      while (qdq_per_tensor(g, node, g->values[node->outputs[0]].dtype) &&
             qdq_movable(o, p = g->values[node->inputs[0]].producer, false) &&
             het_opt_uses(o, node->inputs[0]) == 1 &&
             g->nodes[p].outputs[0] == node->inputs[0]) {
        qdq_swap(g, p, n, true);
        *moved = true;
        o->changes++;
        node = &g->nodes[n];
      }
      HET_TRY(qdq_drop_requant(o, n));
    }
  }
  return HET_OK;
}
