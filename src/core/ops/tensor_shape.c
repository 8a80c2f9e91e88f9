/* tensor_shape.c — inference for the shape-producing and shape-changing
 * ops: Constant, ConstantOfShape, Identity, Shape, Size, Reshape, Flatten,
 * Squeeze, Unsqueeze, Expand, Tile, Range, EyeLike, Trilu.  Unknown data at
 * load time gives unknown dims (or rank -1), never an error.
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "core/ops/tensor_ops.h"

static void shape_unknown(het_shape *s, int rank) {
  s->rank = rank;
  for (int i = 0; i < rank && i < HET_MAX_RANK; i++)
    s->dims[i] = het_dim_unknown();
}

static het_status set_rank_checked(const het_infer_ctx *ctx, het_shape *s,
                                   int64_t rank) {
  if (rank < 0 || rank > HET_MAX_RANK)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "output rank %lld outside 0..%d", (long long)rank,
                          HET_MAX_RANK);
  shape_unknown(s, (int)rank);
  return HET_OK;
}

het_status het_infer_constant(het_infer_ctx *ctx) {
  const het_node *n = ctx->node;
  het_value_info *o = &ctx->outputs[0];
  const het_attr *a;
  if ((a = het_node_find_attr(n, "value")) && a->type == HET_ATTR_TENSOR &&
      a->t) {
    o->dtype = a->t->dtype;
    het_shape_set(&o->shape, a->t->rank, a->t->dims);
  } else if ((a = het_node_find_attr(n, "value_float"))) {
    o->dtype = HET_DTYPE_FLOAT32;
    o->shape.rank = 0;
  } else if ((a = het_node_find_attr(n, "value_int"))) {
    o->dtype = HET_DTYPE_INT64;
    o->shape.rank = 0;
  } else if ((a = het_node_find_attr(n, "value_floats")) ||
             (a = het_node_find_attr(n, "value_ints"))) {
    int64_t len = (int64_t)a->n;
    o->dtype = a->type == HET_ATTR_FLOATS ? HET_DTYPE_FLOAT32 : HET_DTYPE_INT64;
    het_shape_set(&o->shape, 1, &len);
  } else if (het_node_find_attr(n, "sparse_value") ||
             het_node_find_attr(n, "value_string") ||
             het_node_find_attr(n, "value_strings")) {
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "sparse and string constants are not supported");
  } else {
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "no value attribute");
  }
  return HET_OK;
}

het_status het_infer_constant_of_shape(het_infer_ctx *ctx) {
  const het_attr *a = het_node_find_attr(ctx->node, "value");
  het_value_info *o = &ctx->outputs[0];
  const het_value_info *in = &ctx->inputs[0];
  int64_t dims[HET_MAX_RANK];
  int n;
  o->dtype = HET_DTYPE_FLOAT32;
  if (a) {
    if (a->type != HET_ATTR_TENSOR || !a->t || het_tensor_count(a->t) != 1)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                            "'value' must be a one-element tensor");
    o->dtype = a->t->dtype;
  }
  HET_TRY(het_tensor_op_ints(ctx, 0, dims, HET_MAX_RANK, &n));
  if (n >= 0) {
    for (int i = 0; i < n; i++)
      if (dims[i] < 0)
        return het_infer_fail(ctx, HET_ERR_SHAPE, "negative dim %lld",
                              (long long)dims[i]);
    het_shape_set(&o->shape, n, dims);
  } else if (in->shape.rank == 1 && in->shape.dims[0].value >= 0) {
    HET_TRY(set_rank_checked(ctx, &o->shape, in->shape.dims[0].value));
  } else {
    o->shape.rank = -1;
  }
  return HET_OK;
}

het_status het_infer_identity(het_infer_ctx *ctx) {
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

void het_shape_op_range(const het_node *n, int rank, int64_t *start,
                        int64_t *end) {
  int64_t s = het_node_attr_int(n, "start", 0);
  int64_t e = het_node_attr_int(n, "end", rank);
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  *start = s < 0 ? 0 : s > rank ? rank : s;
  *end = e < 0 ? 0 : e > rank ? rank : e;
}

het_status het_infer_shape(het_infer_ctx *ctx) {
  int r = ctx->inputs[0].shape.rank;
  int64_t start, end;
  het_shape_op_range(ctx->node, r, &start, &end);
  int64_t len = end > start ? end - start : 0;
  ctx->outputs[0].dtype = HET_DTYPE_INT64;
  het_shape_set(&ctx->outputs[0].shape, 1, &len);
  return HET_OK;
}

het_status het_infer_size(het_infer_ctx *ctx) {
  ctx->outputs[0].dtype = HET_DTYPE_INT64;
  ctx->outputs[0].shape.rank = 0;
  return HET_OK;
}

/* Resolves the -1 entry of a Reshape target against the input count. */
static het_status reshape_resolve(const het_infer_ctx *ctx, het_shape *o,
                                  int neg) {
  int64_t in_count = het_shape_count(&ctx->inputs[0].shape);
  int64_t prod = 1;
  bool known = true;
  for (int i = 0; i < o->rank; i++) {
    if (i == neg) continue;
    if (o->dims[i].value < 0) known = false;
    else if (!het_dim_mul(prod, o->dims[i].value, &prod))
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "shape's element count overflows int64");
  }
  if (neg >= 0) {
    o->dims[neg] = het_dim_unknown();
    if (known && in_count >= 0) {
      if (prod == 0 || in_count % prod != 0)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "cannot reshape %lld elements: -1 dim does not "
                              "divide evenly", (long long)in_count);
      o->dims[neg] = het_dim_known(in_count / prod);
    }
  } else if (known && in_count >= 0 && prod != in_count) {
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "cannot reshape %lld elements into %lld",
                          (long long)in_count, (long long)prod);
  }
  return HET_OK;
}

het_status het_infer_reshape(het_infer_ctx *ctx) {
  const het_value_info *in = &ctx->inputs[0];
  het_value_info *o = &ctx->outputs[0];
  int64_t shp[HET_MAX_RANK];
  int n;
  bool allowzero = het_node_attr_int(ctx->node, "allowzero", 0) != 0;
  o->dtype = in->dtype;
  if (ctx->opset < 5)
    HET_TRY(het_tensor_op_attr_ints(ctx, "shape", shp, HET_MAX_RANK, &n));
  else if (ctx->n_inputs < 2 || !ctx->inputs[1].present)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "missing shape input");
  else
    HET_TRY(het_tensor_op_ints(ctx, 1, shp, HET_MAX_RANK, &n));
  if (n < 0) {
    const het_shape *ss = &ctx->inputs[1 < ctx->n_inputs ? 1 : 0].shape;
    if (ctx->opset >= 5 && ss->rank == 1 && ss->dims[0].value >= 0)
      return set_rank_checked(ctx, &o->shape, ss->dims[0].value);
    o->shape.rank = -1;
    return HET_OK;
  }
  int neg = -1;
  o->shape.rank = n;
  for (int i = 0; i < n; i++) {
    if (shp[i] == 0 && !allowzero) {
      if (i >= in->shape.rank)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "shape[%d] = 0 copies a dim the input lacks", i);
      o->shape.dims[i] = in->shape.dims[i];
    } else if (shp[i] == -1) {
      if (neg >= 0)
        return het_infer_fail(ctx, HET_ERR_SHAPE, "more than one -1 in shape");
      neg = i;
    } else if (shp[i] < -1) {
      return het_infer_fail(ctx, HET_ERR_SHAPE, "invalid dim %lld in shape",
                            (long long)shp[i]);
    } else {
      o->shape.dims[i] = het_dim_known(shp[i]);
    }
  }
  return reshape_resolve(ctx, &o->shape, neg);
}

het_status het_infer_flatten(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  int64_t axis = het_node_attr_int(ctx->node, "axis", 1);
  if (axis < 0) axis += s->rank;
  if (axis < 0 || axis > s->rank)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "axis %lld out of range",
                          (long long)het_node_attr_int(ctx->node, "axis", 1));
  het_value_info *o = &ctx->outputs[0];
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = 2;
  int64_t a = het_tensor_op_prod(s, 0, (int)axis);
  int64_t b = het_tensor_op_prod(s, (int)axis, s->rank);
  o->shape.dims[0] = a >= 0 ? het_dim_known(a) : het_dim_unknown();
  o->shape.dims[1] = b >= 0 ? het_dim_known(b) : het_dim_unknown();
  return HET_OK;
}

/* Axes of Squeeze/Unsqueeze: attribute before opset 13, input 1 after. */
static het_status read_axes(const het_infer_ctx *ctx, int64_t *axes, int *n,
                            bool *given) {
  if (ctx->opset < 13) {
    HET_TRY(het_tensor_op_attr_ints(ctx, "axes", axes, HET_MAX_RANK, n));
    *given = *n >= 0;
    return HET_OK;
  }
  *given = ctx->n_inputs > 1 && ctx->inputs[1].present;
  *n = -1;
  if (*given)
    HET_TRY(het_tensor_op_ints(ctx, 1, axes, HET_MAX_RANK, n));
  return HET_OK;
}

het_status het_infer_squeeze(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t axes[HET_MAX_RANK];
  int n;
  bool given, drop[HET_MAX_RANK] = {false};
  o->dtype = ctx->inputs[0].dtype;
  HET_TRY(read_axes(ctx, axes, &n, &given));
  if (given && n < 0) {
    o->shape.rank = -1;
    return HET_OK;
  }
  if (!given || n == 0) {
    for (int i = 0; i < s->rank; i++) {
      if (s->dims[i].value < 0) {
        o->shape.rank = -1;
        return HET_OK;
      }
      drop[i] = s->dims[i].value == 1;
    }
  }
  for (int k = 0; given && k < n; k++) {
    int ax;
    HET_TRY(het_infer_axis(ctx, axes[k], s->rank, "axes", &ax));
    if (s->dims[ax].value >= 0 && s->dims[ax].value != 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "cannot squeeze axis %d of size %lld", ax,
                            (long long)s->dims[ax].value);
    drop[ax] = true;
  }
  o->shape.rank = 0;
  for (int i = 0; i < s->rank; i++)
    if (!drop[i])
      o->shape.dims[o->shape.rank++] = s->dims[i];
  return HET_OK;
}

het_status het_infer_unsqueeze(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t axes[HET_MAX_RANK];
  int n;
  bool given, ins[HET_MAX_RANK] = {false};
  o->dtype = ctx->inputs[0].dtype;
  HET_TRY(read_axes(ctx, axes, &n, &given));
  if (!given)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "axes are required");
  if (n < 0) {
    const het_shape *as = &ctx->inputs[1].shape;
    if (as->rank == 1 && as->dims[0].value >= 0)
      return set_rank_checked(ctx, &o->shape, s->rank + as->dims[0].value);
    o->shape.rank = -1;
    return HET_OK;
  }
  int r = s->rank + n;
  if (r > HET_MAX_RANK)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "output rank %d > %d", r,
                          HET_MAX_RANK);
  for (int k = 0; k < n; k++) {
    int ax;
    HET_TRY(het_infer_axis(ctx, axes[k], r, "axes", &ax));
    if (ins[ax])
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "axis %d repeated", ax);
    ins[ax] = true;
  }
  o->shape.rank = r;
  for (int i = 0, j = 0; i < r; i++)
    o->shape.dims[i] = ins[i] ? het_dim_known(1) : s->dims[j++];
  return HET_OK;
}

het_status het_infer_expand(het_infer_ctx *ctx) {
  int64_t shp[HET_MAX_RANK];
  int n;
  het_shape target;
  het_value_info *o = &ctx->outputs[0];
  o->dtype = ctx->inputs[0].dtype;
  HET_TRY(het_tensor_op_ints(ctx, 1, shp, HET_MAX_RANK, &n));
  if (n < 0) {
    const het_shape *ss = &ctx->inputs[1].shape;
    if (ss->rank == 1 && ss->dims[0].value >= 0) {
      int64_t r = ss->dims[0].value;
      if (r < ctx->inputs[0].shape.rank) r = ctx->inputs[0].shape.rank;
      return set_rank_checked(ctx, &o->shape, r);
    }
    o->shape.rank = -1;
    return HET_OK;
  }
  for (int i = 0; i < n; i++)
    if (shp[i] < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "shape[%d] is %lld (must be "
                            ">= 0)", i, (long long)shp[i]);
  het_shape_set(&target, n, shp);
  return het_shape_broadcast(ctx, &ctx->inputs[0].shape, &target, &o->shape);
}

het_status het_infer_tile(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t rep[HET_MAX_RANK];
  int n;
  o->dtype = ctx->inputs[0].dtype;
  HET_TRY(het_tensor_op_ints(ctx, 1, rep, HET_MAX_RANK, &n));
  shape_unknown(&o->shape, s->rank);
  if (n < 0)
    return HET_OK;
  if (n != s->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "repeats has %d values for rank %d", n, s->rank);
  for (int i = 0; i < n; i++) {
    if (rep[i] < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "negative repeat %lld",
                            (long long)rep[i]);
    int64_t d;
    if (s->dims[i].value < 0)
      continue;
    if (!het_dim_mul(s->dims[i].value, rep[i], &d))
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "dim %d (%lld) times repeat %lld overflows int64",
                            i, (long long)s->dims[i].value, (long long)rep[i]);
    o->shape.dims[i] = het_dim_known(d);
  }
  return HET_OK;
}

/* Counts past this are no tensor any machine holds (and past 2^63 they
 * are not an int64): refused with the count. */
#define HET_RANGE_MAX_COUNT 281474976710656.0 /* 2^48 */

static het_status range_check(const het_infer_ctx *ctx, double c,
                              int64_t *count) {
  if (isnan(c))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "start, limit or delta is NaN");
  if (c > HET_RANGE_MAX_COUNT)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "would make %.3g elements (more than 2^48)", c);
  *count = c > 0 ? (int64_t)c : 0;
  return HET_OK;
}

static het_status range_count(const het_infer_ctx *ctx, int64_t *count) {
  het_dtype t = ctx->inputs[0].dtype;
  const het_tensor *ts = ctx->inputs[0].data, *tl = ctx->inputs[1].data,
                   *td = ctx->inputs[2].data;
  if (het_dtype_is_float(t)) {
    double s = het_dtype_load_f64(t, ts->data, 0);
    double l = het_dtype_load_f64(t, tl->data, 0);
    double d = het_dtype_load_f64(t, td->data, 0);
    if (d == 0 || isnan(d))
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "delta is zero");
    return range_check(ctx, ceil((l - s) / d), count);
  } else {
    int64_t s = het_dtype_load_i64(t, ts->data, 0);
    int64_t l = het_dtype_load_i64(t, tl->data, 0);
    int64_t d = het_dtype_load_i64(t, td->data, 0);
    if (d == 0)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "delta is zero");
    return range_check(ctx, ceil(((double)l - (double)s) / (double)d), count);
  }
}

het_status het_infer_range(het_infer_ctx *ctx) {
  het_value_info *o = &ctx->outputs[0];
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  for (int i = 1; i < 3; i++)
    if (ctx->inputs[i].dtype != ctx->inputs[0].dtype)
      return het_infer_fail(ctx, HET_ERR_TYPE,
                            "start, limit and delta must have one type");
  o->dtype = ctx->inputs[0].dtype;
  shape_unknown(&o->shape, 1);
  for (int i = 0; i < 3; i++) {
    if (!ctx->inputs[i].data)
      return HET_OK;
    if (het_tensor_count(ctx->inputs[i].data) != 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "input %d must be a scalar", i);
  }
  int64_t c = 0;
  HET_TRY(range_count(ctx, &c));
  o->shape.dims[0] = het_dim_known(c);
  return HET_OK;
}

het_status het_infer_eye_like(het_infer_ctx *ctx) {
  het_value_info *o = &ctx->outputs[0];
  if (ctx->inputs[0].shape.rank != 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input must be 2-D");
  int64_t dt = het_node_attr_int(ctx->node, "dtype", ctx->inputs[0].dtype);
  if (!het_dtype_valid((int)dt) || het_dtype_size((het_dtype)dt) == 0)
    return het_infer_fail(ctx, HET_ERR_TYPE, "unsupported dtype %lld",
                          (long long)dt);
  o->dtype = (het_dtype)dt;
  o->shape = ctx->inputs[0].shape;
  return HET_OK;
}

het_status het_infer_trilu(het_infer_ctx *ctx) {
  if (ctx->inputs[0].shape.rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input rank must be >= 2");
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}
