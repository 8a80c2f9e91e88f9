/* reduce_norm.c — shape inference for the reduce group's non-Reduce ops:
 * Softmax/LogSoftmax/Hardmax (opset < 13 coerces to 2-D at axis, default 1;
 * opset 13 uses one axis, default -1), the normalizations, LRN, TopK,
 * CumSum, Det and the two loss operators.
 */
#include <string.h>

#include "core/ops/reduce_ops.h"
#include "core/status.h"
#include "core/tensor.h"

het_status het_infer_softmax(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  int rank = ctx->inputs[0].shape.rank;
  int64_t dflt = ctx->opset < 13 ? 1 : -1;
  int axis;
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", dflt),
                         rank > 0 ? rank : 1, "axis", &axis));
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_layernorm(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_FLOAT));
  const het_value_info *x = &ctx->inputs[0];
  int rank = x->shape.rank, axis;
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", -1), rank,
                         "axis", &axis));
  int64_t stash = het_node_attr_int(ctx->node, "stash_type", 1);
  het_dtype udt = stash == HET_DTYPE_BFLOAT16 ? HET_DTYPE_BFLOAT16
                  : stash == HET_DTYPE_FLOAT32 ? HET_DTYPE_FLOAT32
                                               : x->dtype;
  het_infer_copy(ctx, 0, 0);
  for (int o = 1; o < ctx->n_outputs && o < 3; o++) {
    het_value_info *y = &ctx->outputs[o];
    y->dtype = udt;
    y->shape.rank = rank;
    for (int d = 0; d < rank; d++)
      y->shape.dims[d] = d < axis ? x->shape.dims[d] : het_dim_known(1);
  }
  return HET_OK;
}

het_status het_infer_instancenorm(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  if (ctx->inputs[0].shape.rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input must have rank >= 2 (N, C, ...), got %d",
                          ctx->inputs[0].shape.rank);
  for (int i = 1; i < 3; i++)
    if (ctx->inputs[i].shape.rank > 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "input %d (%s) must be 1-D of size C", i,
                            i == 1 ? "scale" : "B");
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_mvn(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  int rank = ctx->inputs[0].shape.rank;
  size_t n;
  const int64_t *axes = het_node_attr_ints(ctx->node, "axes", &n);
  for (size_t i = 0; i < n; i++) {
    int a;
    HET_TRY(het_infer_axis(ctx, axes[i], rank, "axes", &a));
  }
  if (!axes && rank < 4)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "default axes [0,2,3] need rank >= 4, got %d", rank);
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_lrn(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  if (het_node_attr_int(ctx->node, "size", 0) <= 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "attribute 'size' must be given and positive");
  if (ctx->inputs[0].shape.rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input must have rank >= 2");
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_topk(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  const het_value_info *x = &ctx->inputs[0];
  int rank = x->shape.rank, axis;
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", -1), rank,
                         "axis", &axis));
  int64_t k = -1;
  if (ctx->n_inputs > 1 && ctx->inputs[1].present) {
    const het_tensor *t = ctx->inputs[1].data;
    if (t) {
      if (het_tensor_count(t) != 1)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "K must hold one value, has %lld",
                              (long long)het_tensor_count(t));
      k = het_tensor_get_i64(t, 0);
      if (k < 0)
        return het_infer_fail(ctx, HET_ERR_SHAPE, "K must be >= 0, got %lld",
                              (long long)k);
    }
  } else {
    k = het_node_attr_int(ctx->node, "k", -1);
    if (k < 0)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                            "needs attribute 'k' or input K");
  }
  int64_t dim = x->shape.dims[axis].value;
  if (k < -1 || (k >= 0 && dim >= 0 && k > dim))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "k = %lld is out of range for axis %d of size %lld",
                          (long long)k, axis, (long long)dim);
  for (int o = 0; o < 2; o++) {
    het_value_info *y = &ctx->outputs[o];
    y->dtype = o == 0 ? x->dtype : HET_DTYPE_INT64;
    y->shape = x->shape;
    y->shape.dims[axis] = k >= 0 ? het_dim_known(k) : het_dim_unknown();
  }
  return HET_OK;
}

het_status het_infer_cumsum(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  HET_TRY(het_infer_require_type(
      ctx, 1, (1u << HET_DTYPE_INT64) | (1u << HET_DTYPE_INT32)));
  const het_tensor *t = ctx->inputs[1].data;
  if (t) {
    if (het_tensor_count(t) != 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "axis must be a scalar");
    int a;
    HET_TRY(het_infer_axis(ctx, het_tensor_get_i64(t, 0),
                           ctx->inputs[0].shape.rank, "axis", &a));
  }
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_det(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  const het_value_info *x = &ctx->inputs[0];
  int rank = x->shape.rank;
  if (rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input must have rank >= 2, got %d", rank);
  int64_t m = x->shape.dims[rank - 1].value, n = x->shape.dims[rank - 2].value;
  if (m >= 0 && n >= 0 && m != n)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "matrices must be square, got %lldx%lld",
                          (long long)n, (long long)m);
  het_value_info *y = &ctx->outputs[0];
  y->dtype = x->dtype;
  y->shape.rank = rank - 2;
  for (int d = 0; d < rank - 2; d++)
    y->shape.dims[d] = x->shape.dims[d];
  return HET_OK;
}

/* Shared by both losses: checks input (N, C, d...) against target
 * (N, d...) and weight (C), and sets output 0. */
static het_status het_infer_loss_common(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(
      ctx, 1, (1u << HET_DTYPE_INT64) | (1u << HET_DTYPE_INT32)));
  const het_value_info *x = &ctx->inputs[0], *t = &ctx->inputs[1];
  if (x->shape.rank < 2 || t->shape.rank != x->shape.rank - 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input must be (N, C, d...) and target (N, d...): "
                          "got ranks %d and %d", x->shape.rank, t->shape.rank);
  const char *red = het_node_attr_string(ctx->node, "reduction");
  if (red && strcmp(red, "none") && strcmp(red, "sum") && strcmp(red, "mean"))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "reduction '%s' is not none, sum or mean", red);
  het_value_info *y = &ctx->outputs[0];
  y->dtype = x->dtype;
  if (red && strcmp(red, "none") == 0) {
    y->shape = t->shape;
    if (y->shape.dims[0].value < 0)
      y->shape.dims[0] = x->shape.dims[0];
  } else {
    y->shape.rank = 0;
  }
  return HET_OK;
}

het_status het_infer_nllloss(het_infer_ctx *ctx) {
  return het_infer_loss_common(ctx);
}

het_status het_infer_sceloss(het_infer_ctx *ctx) {
  HET_TRY(het_infer_loss_common(ctx));
  if (ctx->n_outputs > 1)
    het_infer_copy(ctx, 1, 0);
  return HET_OK;
}
