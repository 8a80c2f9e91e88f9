/* elementwise.c — the elementwise operator group's table and the infer
 * functions of its unary, binary and variadic ops: dtype checks per op,
 * numpy broadcasting (het_shape_broadcast) and, before opset 7, the
 * `broadcast`/`axis` attribute rule.  Other ops are in elementwise_misc.c.
 */
#include "core/ops/elementwise_ops.h"

#include <string.h>

#include "core/dtype.h"

#define T_F HET_TYPES_FLOAT
#define T_S HET_TYPES_SIGNED
#define T_U HET_TYPES_UNSIGNED
#define T_N HET_TYPES_NUMERIC
#define T_B (1u << HET_DTYPE_BOOL)

het_status het_infer_ew_same_type(const het_infer_ctx *ctx, int i, int j) {
  het_dtype a = ctx->inputs[i].dtype, b = ctx->inputs[j].dtype;
  if (a != HET_DTYPE_UNDEFINED && b != HET_DTYPE_UNDEFINED && a != b)
    return het_infer_fail(ctx, HET_ERR_TYPE,
                          "input %d is %s but input %d is %s", j,
                          het_dtype_str(b), i, het_dtype_str(a));
  return HET_OK;
}

/* Same-shape unary: output has the input's shape and dtype (or `out`). */
static het_status het_ew_unary(het_infer_ctx *ctx, uint32_t mask,
                               het_dtype out) {
  HET_TRY(het_infer_require_type(ctx, 0, mask));
  het_infer_copy(ctx, 0, 0);
  if (out != HET_DTYPE_UNDEFINED)
    ctx->outputs[0].dtype = out;
  return HET_OK;
}

/* Opset < 7: with broadcast=0 the shapes must match; with broadcast=1, B
 * matches A's dims from `axis` (default: aligned to the end). */
static het_status het_ew_legacy_shape(het_infer_ctx *ctx, het_shape *out) {
  const het_shape *a = &ctx->inputs[0].shape, *b = &ctx->inputs[1].shape;
  *out = *a;
  if (a->rank < 0 || b->rank < 0)
    return HET_OK;
  bool bc = het_node_attr_int(ctx->node, "broadcast", 0) != 0;
  int64_t axis = het_node_attr_int(ctx->node, "axis", a->rank - b->rank);
  if (!bc && a->rank != b->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "broadcast=0 needs equal "
                          "shapes, got ranks %d and %d", a->rank, b->rank);
  if (!bc)
    axis = 0;
  if (axis < 0)
    axis += a->rank;
  if (axis < 0 || axis + b->rank > a->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "B of rank %d does not fit A "
                          "of rank %d at axis %lld", b->rank, a->rank,
                          (long long)axis);
  for (int d = 0; d < b->rank; d++) {
    het_dim da = a->dims[axis + d], db = b->dims[d];
    bool ok = da.value < 0 || db.value < 0 || da.value == db.value ||
              (bc && db.value == 1);
    if (!ok)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "B dim %d is %lld but A dim "
                            "%lld is %lld", d, (long long)db.value,
                            (long long)(axis + d), (long long)da.value);
  }
  return HET_OK;
}

/* Two-input broadcast: checks both dtypes against mask (and equality when
 * same), output dtype is input 0's or `out`. */
/* PRelu-1/6: a 1-D slope as long as X's dim 1 is per channel; otherwise
 * numpy broadcasting.  The output is X's shape either way. */
static het_status het_ew_prelu_legacy(het_infer_ctx *ctx, het_shape *out) {
  const het_shape *x = &ctx->inputs[0].shape, *s = &ctx->inputs[1].shape;
  if (x->rank >= 2 && s->rank == 1 && s->dims[0].value != 1 &&
      (s->dims[0].value < 0 || x->dims[1].value < 0 ||
       s->dims[0].value == x->dims[1].value)) {
    *out = *x;
    return HET_OK;
  }
  return het_shape_broadcast(ctx, x, s, out);
}

static het_status het_ew_binary(het_infer_ctx *ctx, uint32_t mask,
                                uint32_t mask_b, bool same, het_dtype out) {
  HET_TRY(het_infer_require_type(ctx, 0, mask));
  HET_TRY(het_infer_require_type(ctx, 1, mask_b));
  if (same)
    HET_TRY(het_infer_ew_same_type(ctx, 0, 1));
  het_shape s;
  bool prelu = strcmp(ctx->node->op_type, "PRelu") == 0;
  if (ctx->opset < 7 && prelu)
    HET_TRY(het_ew_prelu_legacy(ctx, &s));
  else if (ctx->opset < 7)
    HET_TRY(het_ew_legacy_shape(ctx, &s));
  else
    HET_TRY(het_shape_broadcast(ctx, &ctx->inputs[0].shape,
                                &ctx->inputs[1].shape, &s));
  ctx->outputs[0].shape = s;
  ctx->outputs[0].dtype = out != HET_DTYPE_UNDEFINED ? out
                                                     : ctx->inputs[0].dtype;
  return HET_OK;
}

static het_status het_ew_variadic(het_infer_ctx *ctx, uint32_t mask) {
  het_shape s = ctx->inputs[0].shape;
  for (int i = 0; i < ctx->n_inputs; i++) {
    if (!ctx->inputs[i].present)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                            "input %d is omitted", i);
    HET_TRY(het_infer_require_type(ctx, i, mask));
    HET_TRY(het_infer_ew_same_type(ctx, 0, i));
    if (i > 0)
      HET_TRY(het_shape_broadcast(ctx, &s, &ctx->inputs[i].shape, &s));
  }
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  ctx->outputs[0].shape = s;
  return HET_OK;
}

/* X(op, accepted input types, output dtype or UNDEFINED for the input's) */
#define UNARY_OPS(X)                                                       \
  X(Abs, T_N, UNDEFINED) X(Neg, T_F | T_S, UNDEFINED)                      \
  X(Reciprocal, T_F, UNDEFINED) X(Sqrt, T_F, UNDEFINED)                    \
  X(Exp, T_F, UNDEFINED) X(Log, T_F, UNDEFINED) X(Erf, T_F, UNDEFINED)     \
  X(Sin, T_F, UNDEFINED) X(Cos, T_F, UNDEFINED) X(Tan, T_F, UNDEFINED)     \
  X(Asin, T_F, UNDEFINED) X(Acos, T_F, UNDEFINED) X(Atan, T_F, UNDEFINED)  \
  X(Sinh, T_F, UNDEFINED) X(Cosh, T_F, UNDEFINED)                          \
  X(Asinh, T_F, UNDEFINED) X(Acosh, T_F, UNDEFINED)                        \
  X(Atanh, T_F, UNDEFINED) X(Ceil, T_F, UNDEFINED)                         \
  X(Floor, T_F, UNDEFINED) X(Round, T_F, UNDEFINED) X(Sign, T_N, UNDEFINED) \
  X(Relu, T_F | T_S, UNDEFINED) X(LeakyRelu, T_F, UNDEFINED)               \
  X(Elu, T_F, UNDEFINED) X(Selu, T_F, UNDEFINED) X(Celu, T_F, UNDEFINED)   \
  X(Sigmoid, T_F, UNDEFINED) X(HardSigmoid, T_F, UNDEFINED)                \
  X(HardSwish, T_F, UNDEFINED) X(Tanh, T_F, UNDEFINED)                     \
  X(Softplus, T_F, UNDEFINED) X(Softsign, T_F, UNDEFINED)                  \
  X(ThresholdedRelu, T_F, UNDEFINED) X(Shrink, T_F, UNDEFINED)             \
  X(Not, T_B, UNDEFINED) X(IsNaN, T_F, BOOL) X(IsInf, T_F, BOOL)

/* X(op, type mask A, type mask B, same types, output dtype) */
#define BINARY_OPS(X)                                                  \
  X(Add, T_N, T_N, true, UNDEFINED) X(Sub, T_N, T_N, true, UNDEFINED)  \
  X(Mul, T_N, T_N, true, UNDEFINED) X(Div, T_N, T_N, true, UNDEFINED)  \
  X(Mod, T_N, T_N, true, UNDEFINED) X(PRelu, T_N, T_N, true, UNDEFINED) \
  X(Pow, T_N, T_N, false, UNDEFINED)                                   \
  X(Equal, T_N | T_B, T_N | T_B, true, BOOL)                           \
  X(Less, T_N, T_N, true, BOOL) X(LessOrEqual, T_N, T_N, true, BOOL)   \
  X(Greater, T_N, T_N, true, BOOL)                                     \
  X(GreaterOrEqual, T_N, T_N, true, BOOL)                              \
  X(And, T_B, T_B, true, BOOL) X(Or, T_B, T_B, true, BOOL)             \
  X(Xor, T_B, T_B, true, BOOL) X(BitShift, T_U, T_U, true, UNDEFINED)

#define VARIADIC_OPS(X) X(Max, T_N) X(Min, T_N) X(Sum, T_N) X(Mean, T_N)

#define DEF_UNARY_(op, mask, out)                            \
  static het_status het_infer_ew_##op(het_infer_ctx *ctx) {  \
    return het_ew_unary(ctx, mask, HET_DTYPE_##out);         \
  }
UNARY_OPS(DEF_UNARY_)
#undef DEF_UNARY_

#define DEF_BINARY_(op, ma, mb, same, out)                         \
  static het_status het_infer_ew_##op(het_infer_ctx *ctx) {        \
    return het_ew_binary(ctx, ma, mb, same, HET_DTYPE_##out);      \
  }
BINARY_OPS(DEF_BINARY_)
#undef DEF_BINARY_

#define DEF_VARIADIC_(op, mask)                              \
  static het_status het_infer_ew_##op(het_infer_ctx *ctx) {  \
    return het_ew_variadic(ctx, mask);                       \
  }
VARIADIC_OPS(DEF_VARIADIC_)
#undef DEF_VARIADIC_

#define ROW_UNARY_(op, mask, out) {#op, "", 1, 1, 1, 1, het_infer_ew_##op},
#define ROW_BINARY_(op, ma, mb, same, out) \
  {#op, "", 2, 2, 1, 1, het_infer_ew_##op},
#define ROW_VARIADIC_(op, mask) {#op, "", 1, -1, 1, 1, het_infer_ew_##op},
#define TRAINING "ai.onnx.preview.training"

const het_op_def het_ops_elementwise[] = {
    UNARY_OPS(ROW_UNARY_)
    BINARY_OPS(ROW_BINARY_)
    VARIADIC_OPS(ROW_VARIADIC_)
    {"Where", "", 3, 3, 1, 1, het_infer_ew_where},
    {"Cast", "", 1, 1, 1, 1, het_infer_ew_cast},
    {"CastLike", "", 2, 2, 1, 1, het_infer_ew_cast_like},
    {"Clip", "", 1, 3, 1, 1, het_infer_ew_clip},
    {"Dropout", "", 1, 3, 1, 2, het_infer_ew_dropout},
    {"QuantizeLinear", "", 2, 3, 1, 1, het_infer_ew_quantize},
    {"DequantizeLinear", "", 2, 3, 1, 1, het_infer_ew_dequantize},
    {"DynamicQuantizeLinear", "", 1, 1, 3, 3, het_infer_ew_dynamic_quantize},
    {"QLinearAdd", "hetrt", 8, 8, 1, 1, het_infer_ew_qlinear_add},
    {"QLinearLut", "hetrt", 2, 2, 1, 1, het_infer_ew_qlinear_lut},
    {"Adagrad", TRAINING, 5, -1, 2, -1, het_infer_ew_adagrad},
    {"Adam", TRAINING, 6, -1, 3, -1, het_infer_ew_adam},
    {"Momentum", TRAINING, 5, -1, 2, -1, het_infer_ew_momentum},
    {0},
};
