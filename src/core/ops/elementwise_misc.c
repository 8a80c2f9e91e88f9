/* elementwise_misc.c — infer functions of the elementwise ops that are not
 * plain unary/binary maps: Where, Cast, CastLike, Clip, Dropout, the
 * quantize ops and the ai.onnx.preview.training optimizers.
 */
#include "core/ops/elementwise_ops.h"

#include "core/dtype.h"

#define T_F HET_TYPES_FLOAT
#define T_B (1u << HET_DTYPE_BOOL)
#define T_CASTABLE (HET_TYPES_ALL)

het_status het_infer_ew_where(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, T_B));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_ALL));
  HET_TRY(het_infer_ew_same_type(ctx, 1, 2));
  het_shape s;
  HET_TRY(het_shape_broadcast(ctx, &ctx->inputs[0].shape,
                              &ctx->inputs[1].shape, &s));
  HET_TRY(het_shape_broadcast(ctx, &s, &ctx->inputs[2].shape, &s));
  ctx->outputs[0].dtype = ctx->inputs[1].dtype;
  ctx->outputs[0].shape = s;
  return HET_OK;
}

static het_status het_ew_cast_check(het_infer_ctx *ctx, het_dtype to) {
  het_dtype from = ctx->inputs[0].dtype;
  if (!het_dtype_valid((int)to))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "target type %d is not a valid dtype", (int)to);
  bool ok_to = (T_CASTABLE >> to) & 1u;
  bool ok_from = from == HET_DTYPE_UNDEFINED || ((T_CASTABLE >> from) & 1u);
  if (!ok_to || !ok_from)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "cast from %s to %s is not supported (numeric and "
                          "bool types only)",
                          het_dtype_str(from), het_dtype_str(to));
  het_infer_copy(ctx, 0, 0);
  ctx->outputs[0].dtype = to;
  return HET_OK;
}

het_status het_infer_ew_cast(het_infer_ctx *ctx) {
  const het_attr *to = het_node_find_attr(ctx->node, "to");
  if (!to || to->type != HET_ATTR_INT)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "attribute 'to' (int) is required");
  return het_ew_cast_check(ctx, (het_dtype)to->i);
}

het_status het_infer_ew_cast_like(het_infer_ctx *ctx) {
  het_dtype to = ctx->inputs[1].dtype;
  if (to == HET_DTYPE_UNDEFINED) {
    het_infer_copy(ctx, 0, 0);
    ctx->outputs[0].dtype = HET_DTYPE_UNDEFINED;
    return HET_OK;
  }
  return het_ew_cast_check(ctx, to);
}

het_status het_infer_ew_clip(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  for (int k = 1; k < ctx->n_inputs; k++) {
    const het_value_info *b = &ctx->inputs[k];
    if (!b->present)
      continue;
    HET_TRY(het_infer_ew_same_type(ctx, 0, k));
    if (het_shape_count(&b->shape) > 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "%s must be a scalar, has "
                            "%lld elements", k == 1 ? "min" : "max",
                            (long long)het_shape_count(&b->shape));
  }
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

/* Training mode is refused unless ratio is 0 (known only with data). */
static het_status het_ew_dropout_mode(het_infer_ctx *ctx) {
  if (ctx->n_inputs < 3 || !ctx->inputs[2].present)
    return HET_OK;
  HET_TRY(het_infer_require_type(ctx, 2, T_B));
  const het_tensor *tm = ctx->inputs[2].data;
  if (!tm || het_tensor_count(tm) < 1 || !het_tensor_get_i64(tm, 0))
    return HET_OK;
  const het_tensor *r = ctx->inputs[1].present ? ctx->inputs[1].data : NULL;
  if (ctx->inputs[1].present && !r)
    return HET_OK; /* ratio not known yet: decided at run time */
  double ratio = 0.5;
  if (r && het_tensor_count(r) > 0)
    ratio = het_dtype_load_f64(r->dtype, r->data, 0);
  if (ratio != 0.0)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "training_mode with ratio %g is not supported "
                          "(hetrt runs inference only)", ratio);
  return HET_OK;
}

het_status het_infer_ew_dropout(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, T_F));
  if (ctx->n_inputs > 1 && ctx->inputs[1].present)
    HET_TRY(het_infer_require_type(ctx, 1, T_F));
  HET_TRY(het_ew_dropout_mode(ctx));
  het_infer_copy(ctx, 0, 0);
  if (ctx->n_outputs > 1) {
    het_infer_copy(ctx, 1, 0);
    if (ctx->opset >= 10)
      ctx->outputs[1].dtype = HET_DTYPE_BOOL;
  }
  return HET_OK;
}

/* Scale (and zero point) must be one value, or a 1-D tensor along axis
 * (opset >= 13) whose length matches that input dim. */
static het_status het_ew_quant_params(het_infer_ctx *ctx) {
  const het_shape *x = &ctx->inputs[0].shape, *s = &ctx->inputs[1].shape;
  if (s->rank < 0 || x->rank < 0)
    return HET_OK;
  if (ctx->n_inputs > 2 && ctx->inputs[2].present &&
      ctx->inputs[2].shape.rank >= 0) {
    int64_t ns = het_shape_count(s), nz = het_shape_count(&ctx->inputs[2].shape);
    if (ns >= 0 && nz >= 0 && ns != nz)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "zero point has %lld "
                            "elements, scale %lld", (long long)nz,
                            (long long)ns);
  }
  if (s->rank == 0 || (s->rank == 1 && s->dims[0].value == 1))
    return HET_OK;
  if (ctx->opset < 13 || s->rank != 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "scale must be a scalar%s",
                          ctx->opset < 13 ? "" : " or 1-D");
  int axis;
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 1),
                         x->rank, "axis", &axis));
  int64_t want = x->dims[axis].value, got = s->dims[0].value;
  if (want >= 0 && got >= 0 && want != got)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "scale has %lld elements but "
                          "axis %d has %lld", (long long)got, axis,
                          (long long)want);
  return HET_OK;
}

het_status het_infer_ew_quantize(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, (1u << HET_DTYPE_FLOAT32) |
                                             (1u << HET_DTYPE_INT32)));
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_FLOAT32));
  bool zp = ctx->n_inputs > 2 && ctx->inputs[2].present;
  if (zp)
    HET_TRY(het_infer_require_type(ctx, 2, (1u << HET_DTYPE_UINT8) |
                                               (1u << HET_DTYPE_INT8)));
  HET_TRY(het_ew_quant_params(ctx));
  het_infer_copy(ctx, 0, 0);
  ctx->outputs[0].dtype = zp ? ctx->inputs[2].dtype : HET_DTYPE_UINT8;
  return HET_OK;
}

het_status het_infer_ew_qlinear_add(het_infer_ctx *ctx) {
  uint32_t q8 = (1u << HET_DTYPE_UINT8) | (1u << HET_DTYPE_INT8);
  for (int i = 0; i < 8; i++)
    HET_TRY(het_infer_require_type(ctx, i, i == 1 || i == 4 || i == 6
                                               ? 1u << HET_DTYPE_FLOAT32
                                               : q8));
  HET_TRY(het_infer_ew_same_type(ctx, 0, 2));
  HET_TRY(het_infer_ew_same_type(ctx, 3, 5));
  HET_TRY(het_shape_broadcast(ctx, &ctx->inputs[0].shape,
                              &ctx->inputs[3].shape, &ctx->outputs[0].shape));
  ctx->outputs[0].dtype = ctx->inputs[7].dtype;
  return HET_OK;
}

het_status het_infer_ew_qlinear_lut(het_infer_ctx *ctx) {
  uint32_t q8 = (1u << HET_DTYPE_UINT8) | (1u << HET_DTYPE_INT8);
  HET_TRY(het_infer_require_type(ctx, 0, q8));
  HET_TRY(het_infer_require_type(ctx, 1, q8));
  const het_shape *t = &ctx->inputs[1].shape;
  if (t->rank >= 0 && (t->rank != 1 || (t->dims[0].value >= 0 &&
                                        t->dims[0].value != 256)))
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (QLinearLut): the table must hold 256 "
                     "values (one per byte)",
                     ctx->node->name);
  het_infer_copy(ctx, 0, 0);
  ctx->outputs[0].dtype = ctx->inputs[1].dtype;
  return HET_OK;
}

het_status het_infer_ew_dequantize(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, (1u << HET_DTYPE_UINT8) |
                                             (1u << HET_DTYPE_INT8) |
                                             (1u << HET_DTYPE_INT32)));
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_FLOAT32));
  if (ctx->n_inputs > 2 && ctx->inputs[2].present)
    HET_TRY(het_infer_ew_same_type(ctx, 0, 2));
  HET_TRY(het_ew_quant_params(ctx));
  het_infer_copy(ctx, 0, 0);
  ctx->outputs[0].dtype = HET_DTYPE_FLOAT32;
  return HET_OK;
}

het_status het_infer_ew_dynamic_quantize(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, 1u << HET_DTYPE_FLOAT32));
  het_infer_copy(ctx, 0, 0);
  ctx->outputs[0].dtype = HET_DTYPE_UINT8;
  ctx->outputs[1].dtype = HET_DTYPE_FLOAT32;
  ctx->outputs[1].shape.rank = 0;
  ctx->outputs[2].dtype = HET_DTYPE_UINT8;
  ctx->outputs[2].shape.rank = 0;
  return HET_OK;
}

/* Inputs R, T, then groups_in groups of n tensors; outputs X_new... then
 * the new states, each shaped like the matching input. */
static het_status het_ew_optimizer(het_infer_ctx *ctx, int groups_in,
                                   int groups_out) {
  int n = (ctx->n_inputs - 2) / groups_in;
  if (n < 1 || 2 + n * groups_in != ctx->n_inputs ||
      ctx->n_outputs != n * groups_out)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "%d inputs and %d outputs do not form groups of "
                          "%d tensors", ctx->n_inputs, ctx->n_outputs,
                          groups_in);
  HET_TRY(het_infer_require_type(ctx, 0, (1u << HET_DTYPE_FLOAT32) |
                                             (1u << HET_DTYPE_FLOAT64)));
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_INT64));
  for (int i = 2; i < ctx->n_inputs; i++)
    HET_TRY(het_infer_require_type(ctx, i, (1u << HET_DTYPE_FLOAT32) |
                                               (1u << HET_DTYPE_FLOAT64)));
  for (int k = 0; k < n; k++) {
    het_infer_copy(ctx, k, 2 + k);
    for (int g = 1; g < groups_out; g++)
      het_infer_copy(ctx, g * n + k, 2 + (groups_in - groups_out + g) * n + k);
  }
  return HET_OK;
}

het_status het_infer_ew_adagrad(het_infer_ctx *ctx) {
  return het_ew_optimizer(ctx, 3, 2);
}

het_status het_infer_ew_adam(het_infer_ctx *ctx) {
  return het_ew_optimizer(ctx, 4, 3);
}

het_status het_infer_ew_momentum(het_infer_ctx *ctx) {
  return het_ew_optimizer(ctx, 3, 2);
}
