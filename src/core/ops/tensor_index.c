/* tensor_index.c — inference for the indexing ops: Gather, GatherElements,
 * GatherND, ScatterND, Scatter/ScatterElements, OneHot, NonZero, Compress,
 * Unique.  NonZero and Unique outputs stay unknown along their
 * data-dependent dim; the kernels size them.
 */
#include <string.h>

#include "core/ops/tensor_ops.h"

#define INDEX_TYPES ((1u << HET_DTYPE_INT64) | (1u << HET_DTYPE_INT32))

het_status het_infer_gather(het_infer_ctx *ctx) {
  const het_shape *d = &ctx->inputs[0].shape, *ix = &ctx->inputs[1].shape;
  het_value_info *o = &ctx->outputs[0];
  int ax;
  HET_TRY(het_infer_require_type(ctx, 1, INDEX_TYPES));
  if (d->rank < 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "data must have rank >= 1");
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 0), d->rank,
                         "axis", &ax));
  int r = d->rank - 1 + ix->rank;
  if (r > HET_MAX_RANK)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "output rank %d > %d", r,
                          HET_MAX_RANK);
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = 0;
  for (int i = 0; i < ax; i++)
    o->shape.dims[o->shape.rank++] = d->dims[i];
  for (int i = 0; i < ix->rank; i++)
    o->shape.dims[o->shape.rank++] = ix->dims[i];
  for (int i = ax + 1; i < d->rank; i++)
    o->shape.dims[o->shape.rank++] = d->dims[i];
  return HET_OK;
}

het_status het_infer_gather_elements(het_infer_ctx *ctx) {
  int ax;
  HET_TRY(het_infer_require_type(ctx, 1, INDEX_TYPES));
  int r = ctx->inputs[0].shape.rank;
  if (r < 1 || ctx->inputs[1].shape.rank != r)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "data and indices must have one rank >= 1");
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 0), r,
                         "axis", &ax));
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  ctx->outputs[0].shape = ctx->inputs[1].shape;
  return HET_OK;
}

het_status het_infer_gather_nd(het_infer_ctx *ctx) {
  const het_shape *d = &ctx->inputs[0].shape, *ix = &ctx->inputs[1].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t b = het_node_attr_int(ctx->node, "batch_dims", 0);
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_INT64));
  o->dtype = ctx->inputs[0].dtype;
  if (ix->rank < 1 || b < 0 || b >= ix->rank || b >= d->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "batch_dims %lld invalid for ranks %d and %d",
                          (long long)b, d->rank, ix->rank);
  int64_t last = ix->dims[ix->rank - 1].value;
  if (last < 0) {
    o->shape.rank = -1;
    return HET_OK;
  }
  if (last > d->rank - b)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "indices last dim %lld exceeds data rank %d - %lld",
                          (long long)last, d->rank, (long long)b);
  o->shape.rank = 0;
  for (int i = 0; i < ix->rank - 1; i++)
    o->shape.dims[o->shape.rank++] = ix->dims[i];
  for (int i = (int)(b + last); i < d->rank; i++)
    o->shape.dims[o->shape.rank++] = d->dims[i];
  return HET_OK;
}

static het_status scatter_reduction(const het_infer_ctx *ctx) {
  const char *r = het_node_attr_string(ctx->node, "reduction");
  if (r && strcmp(r, "none") && strcmp(r, "add") && strcmp(r, "mul") &&
      strcmp(r, "max") && strcmp(r, "min"))
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "reduction '%s'", r);
  return HET_OK;
}

het_status het_infer_scatter_nd(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_INT64));
  HET_TRY(scatter_reduction(ctx));
  if (ctx->inputs[1].shape.rank < 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "indices must have rank >= 1");
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_scatter_elements(het_infer_ctx *ctx) {
  int ax, r = ctx->inputs[0].shape.rank;
  HET_TRY(het_infer_require_type(ctx, 1, INDEX_TYPES));
  HET_TRY(scatter_reduction(ctx));
  if (ctx->inputs[1].shape.rank != r || ctx->inputs[2].shape.rank != r)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "data, indices and updates must have one rank");
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 0), r,
                         "axis", &ax));
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

het_status het_infer_one_hot(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int r = s->rank + 1, ax;
  if (r > HET_MAX_RANK)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "output rank %d > %d", r,
                          HET_MAX_RANK);
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", -1), r,
                         "axis", &ax));
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_NUMERIC));
  o->dtype = ctx->inputs[2].dtype;
  o->shape.rank = r;
  het_dim depth = het_dim_unknown();
  const het_tensor *dt = ctx->inputs[1].data;
  if (dt) {
    if (het_tensor_count(dt) != 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "depth must be a scalar");
    int64_t v = het_tensor_get_i64(dt, 0);
    if (v < 1)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "depth %lld < 1",
                            (long long)v);
    depth = het_dim_known(v);
  }
  for (int i = 0, j = 0; i < r; i++)
    o->shape.dims[i] = i == ax ? depth : s->dims[j++];
  return HET_OK;
}

het_status het_infer_non_zero(het_infer_ctx *ctx) {
  het_value_info *o = &ctx->outputs[0];
  o->dtype = HET_DTYPE_INT64;
  o->shape.rank = 2;
  o->shape.dims[0] = het_dim_known(ctx->inputs[0].shape.rank);
  o->shape.dims[1] = het_dim_unknown();
  return HET_OK;
}

het_status het_infer_compress(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  const het_attr *a = het_node_find_attr(ctx->node, "axis");
  const het_tensor *c = ctx->inputs[1].data;
  int ax = -1;
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_BOOL));
  if (ctx->inputs[1].shape.rank != 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "condition must be 1-D");
  if (a)
    HET_TRY(het_infer_axis(ctx, a->i, s->rank, "axis", &ax));
  int64_t len = ax >= 0 ? s->dims[ax].value : het_shape_count(s);
  het_dim out = het_dim_unknown();
  if (c && len >= 0) {
    int64_t n = het_tensor_count(c), k = 0;
    if (n > len)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "condition has %lld entries, axis has %lld",
                            (long long)n, (long long)len);
    for (int64_t i = 0; i < n; i++)
      k += ((const uint8_t *)c->data)[i] != 0;
    out = het_dim_known(k);
  }
  o->dtype = ctx->inputs[0].dtype;
  if (ax < 0) {
    o->shape.rank = 1;
    o->shape.dims[0] = out;
  } else {
    o->shape = *s;
    o->shape.dims[ax] = out;
  }
  return HET_OK;
}

het_status het_infer_unique(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  const het_attr *a = het_node_find_attr(ctx->node, "axis");
  int ax = -1;
  if (a)
    HET_TRY(het_infer_axis(ctx, a->i, s->rank, "axis", &ax));
  het_value_info *o = ctx->outputs;
  o[0].dtype = ctx->inputs[0].dtype;
  if (ax < 0) {
    o[0].shape.rank = 1;
    o[0].shape.dims[0] = het_dim_unknown();
  } else {
    o[0].shape = *s;
    o[0].shape.dims[ax] = het_dim_unknown();
  }
  int64_t n = ax >= 0 ? s->dims[ax].value : het_shape_count(s);
  for (int i = 1; i < ctx->n_outputs; i++) {
    o[i].dtype = HET_DTYPE_INT64;
    o[i].shape.rank = 1;
    o[i].shape.dims[0] = i == 2 && n >= 0 ? het_dim_known(n) : het_dim_unknown();
  }
  return HET_OK;
}
