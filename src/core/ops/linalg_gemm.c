/* linalg_gemm.c — shape/type inference for MatMul (numpy semantics:
 * 1-D operands promoted and squeezed, batch dims broadcast), MatMulInteger,
 * QLinearMatMul and Gemm (transA/transB, C broadcast to [M, N]; opset < 7
 * `broadcast` attribute).
 */
#include "core/ops/linalg_geom.h"

#define MATMUL_TYPES                                                   \
  (HET_TYPES_FLOAT | (1u << HET_DTYPE_INT32) | (1u << HET_DTYPE_INT64) | \
   (1u << HET_DTYPE_UINT32) | (1u << HET_DTYPE_UINT64))
#define Q8_TYPES ((1u << HET_DTYPE_INT8) | (1u << HET_DTYPE_UINT8))

static bool dims_conflict(const het_dim *a, const het_dim *b) {
  return a->value >= 0 && b->value >= 0 && a->value != b->value;
}

/* Output shape of matmul(input ai, input bi) into output 0. */
static het_status matmul_shape(het_infer_ctx *ctx, int ai, int bi) {
  const het_shape *a = &ctx->inputs[ai].shape, *b = &ctx->inputs[bi].shape;
  het_shape *y = &ctx->outputs[0].shape;
  if (a->rank < 0 || b->rank < 0) {
    y->rank = -1;
    return HET_OK;
  }
  if (a->rank == 0 || b->rank == 0)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "operands must have rank >= 1 (got %d and %d)",
                          a->rank, b->rank);
  het_dim one = het_dim_known(1);
  const het_dim *m = a->rank == 1 ? &one : &a->dims[a->rank - 2];
  const het_dim *ka = &a->dims[a->rank - 1];
  const het_dim *kb = b->rank == 1 ? &b->dims[0] : &b->dims[b->rank - 2];
  const het_dim *n = b->rank == 1 ? &one : &b->dims[b->rank - 1];
  if (dims_conflict(ka, kb))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "inner dims differ: A has K = %lld, B has K = %lld",
                          (long long)ka->value, (long long)kb->value);
  het_shape ba = {.rank = a->rank > 2 ? a->rank - 2 : 0};
  het_shape bb = {.rank = b->rank > 2 ? b->rank - 2 : 0};
  for (int i = 0; i < ba.rank; i++)
    ba.dims[i] = a->dims[i];
  for (int i = 0; i < bb.rank; i++)
    bb.dims[i] = b->dims[i];
  het_shape batch;
  HET_TRY(het_shape_broadcast(ctx, &ba, &bb, &batch));
  int r = batch.rank;
  het_dim mm = *m, nn = *n;
  y->rank = r;
  for (int i = 0; i < r; i++)
    y->dims[i] = batch.dims[i];
  if (a->rank != 1)
    y->dims[y->rank++] = mm;
  if (b->rank != 1)
    y->dims[y->rank++] = nn;
  return HET_OK;
}

het_status het_infer_matmul(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, MATMUL_TYPES));
  HET_TRY(het_infer_require_type(ctx, 1, MATMUL_TYPES));
  if (ctx->inputs[0].dtype != ctx->inputs[1].dtype)
    return het_infer_fail(ctx, HET_ERR_TYPE, "A is %s but B is %s",
                          het_dtype_str(ctx->inputs[0].dtype),
                          het_dtype_str(ctx->inputs[1].dtype));
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  return matmul_shape(ctx, 0, 1);
}

het_status het_infer_matmul_integer(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 1, Q8_TYPES));
  ctx->outputs[0].dtype = HET_DTYPE_INT32;
  return matmul_shape(ctx, 0, 1);
}

het_status het_infer_qlinear_matmul(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 3, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 7, Q8_TYPES));
  ctx->outputs[0].dtype = ctx->inputs[7].dtype;
  return matmul_shape(ctx, 0, 3);
}

static het_status gemm_check_c(het_infer_ctx *ctx, const het_dim *m,
                               const het_dim *n) {
  if (ctx->n_inputs < 3 || !ctx->inputs[2].present)
    return HET_OK;
  const het_shape *c = &ctx->inputs[2].shape;
  if (c->rank < 0)
    return HET_OK;
  if (c->rank > 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "C has rank %d, expected <= 2",
                          c->rank);
  const het_dim *want[2] = {m, n};
  for (int i = 0; i < c->rank; i++) {
    const het_dim *d = &c->dims[i];
    const het_dim *w = want[2 - c->rank + i];
    if (d->value >= 0 && d->value != 1 && dims_conflict(d, w))
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "C dim %d is %lld, cannot broadcast to %lld", i,
                            (long long)d->value, (long long)w->value);
  }
  return HET_OK;
}

het_status het_infer_gemm(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, MATMUL_TYPES));
  HET_TRY(het_infer_require_type(ctx, 1, MATMUL_TYPES));
  const het_shape *a = &ctx->inputs[0].shape, *b = &ctx->inputs[1].shape;
  het_value_info *y = &ctx->outputs[0];
  y->dtype = ctx->inputs[0].dtype;
  if (a->rank != 2 || b->rank != 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "A and B must be 2-D, got ranks %d and %d", a->rank,
                          b->rank);
  bool ta = het_node_attr_int(ctx->node, "transA", 0) != 0;
  bool tb = het_node_attr_int(ctx->node, "transB", 0) != 0;
  const het_dim *m = &a->dims[ta ? 1 : 0], *ka = &a->dims[ta ? 0 : 1];
  const het_dim *kb = &b->dims[tb ? 1 : 0], *n = &b->dims[tb ? 0 : 1];
  if (dims_conflict(ka, kb))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "inner dims differ: A gives K = %lld, B gives "
                          "K = %lld",
                          (long long)ka->value, (long long)kb->value);
  HET_TRY(gemm_check_c(ctx, m, n));
  y->shape.rank = 2;
  y->shape.dims[0] = *m;
  y->shape.dims[1] = *n;
  return HET_OK;
}
