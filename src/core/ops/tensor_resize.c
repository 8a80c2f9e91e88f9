/* tensor_resize.c — Resize (opsets 10, 11, 13+) and Upsample (7, 9):
 * attribute/input parsing into het_resize_params, shared with the CPU
 * kernel, and the output shape (sizes, or floor(dim * scale)).
 */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/ops/tensor_ops.h"

static het_status parse_enum(const het_infer_ctx *ctx, const char *attr,
                             const char *const *names, int count, int dflt,
                             int *out) {
  const char *v = het_node_attr_string(ctx->node, attr);
  *out = dflt;
  if (!v)
    return HET_OK;
  for (int i = 0; i < count; i++)
    if (names[i] && strcmp(v, names[i]) == 0) {
      *out = i;
      return HET_OK;
    }
  return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "%s '%s' is not supported",
                        attr, v);
}

static het_status parse_attrs(const het_infer_ctx *ctx, het_resize_params *p,
                              bool v11) {
  static const char *const modes[] = {"nearest", "linear", "cubic"};
  static const char *const coords[] = {
      "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
      "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  static const char *const nearest[] = {"round_prefer_floor",
                                        "round_prefer_ceil", "floor", "ceil"};
  int m, c, n;
  const char *mv = het_node_attr_string(ctx->node, "mode");
  if (mv && strcmp(mv, "bilinear") == 0 && !v11)
    m = HET_RESIZE_LINEAR;
  else
    HET_TRY(parse_enum(ctx, "mode", modes, v11 ? 3 : 2, 0, &m));
  p->mode = (het_resize_mode)m;
  if (!v11) {
    p->coord = HET_CT_ASYMMETRIC;
    p->nearest = HET_NEAREST_SIMPLE;
    return HET_OK;
  }
  HET_TRY(parse_enum(ctx, "coordinate_transformation_mode", coords, 6, 0, &c));
  HET_TRY(parse_enum(ctx, "nearest_mode", nearest, 4, 0, &n));
  p->coord = (het_resize_coord)c;
  p->nearest = (het_resize_nearest)n;
  p->cubic_a = het_node_attr_float(ctx->node, "cubic_coeff_a", -0.75f);
  p->exclude_outside = het_node_attr_int(ctx->node, "exclude_outside", 0) != 0;
  p->extrapolation = het_node_attr_float(ctx->node, "extrapolation_value", 0.f);
  return HET_OK;
}

/* Scales as doubles from input i (float tensor) or the 'scales' attribute;
 * *n = -1 when not known, -2 when absent or empty. */
static het_status read_scales(const het_infer_ctx *ctx, int i, bool attr,
                              double *out, int *n) {
  if (attr) {
    size_t c;
    const float *f = het_node_attr_floats(ctx->node, "scales", &c);
    if (!f)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "scales are required");
    if (c > HET_MAX_RANK)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "too many scales");
    for (size_t k = 0; k < c; k++)
      out[k] = f[k];
    *n = (int)c;
    return HET_OK;
  }
  *n = -2;
  if (i >= ctx->n_inputs || !ctx->inputs[i].present)
    return HET_OK;
  const het_tensor *t = ctx->inputs[i].data;
  if (!t) {
    const het_shape *s = &ctx->inputs[i].shape;
    *n = s->rank == 1 && s->dims[0].value == 0 ? -2 : -1;
    return HET_OK;
  }
  if (!het_dtype_is_float(t->dtype))
    return het_infer_fail(ctx, HET_ERR_TYPE, "scales must be float");
  int64_t c = het_tensor_count(t);
  if (c == 0)
    return HET_OK;
  if (c > HET_MAX_RANK)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "too many scales");
  for (int64_t k = 0; k < c; k++)
    out[k] = het_dtype_load_f64(t->dtype, t->data, k);
  *n = (int)c;
  return HET_OK;
}

static het_status read_roi(const het_infer_ctx *ctx, het_resize_params *p,
                           int r) {
  for (int i = 0; i < r; i++) {
    p->roi[i] = 0;
    p->roi[i + r] = 1;
  }
  if (p->coord != HET_CT_TF_CROP_AND_RESIZE || !het_tensor_op_input_known(ctx, 1))
    return HET_OK;
  const het_tensor *t = ctx->inputs[1].data;
  if (het_tensor_count(t) == 0)
    return HET_OK;
  if (het_tensor_count(t) != 2 * r)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "roi must have %d values", 2 * r);
  for (int i = 0; i < 2 * r; i++)
    p->roi[i] = het_dtype_load_f64(t->dtype, t->data, i);
  return HET_OK;
}

/* Fills p->out/p->scale from sizes (input 3) when given. */
static het_status from_sizes(const het_infer_ctx *ctx, het_resize_params *p,
                             bool *done, bool *known) {
  const het_shape *s = &ctx->inputs[0].shape;
  int64_t sz[HET_MAX_RANK];
  int n;
  *done = false;
  if (ctx->n_inputs < 4 || !ctx->inputs[3].present)
    return HET_OK;
  *done = true;
  HET_TRY(het_tensor_op_ints(ctx, 3, sz, HET_MAX_RANK, &n));
  if (n < 0) {
    *known = false;
    return HET_OK;
  }
  if (n != s->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "sizes has %d values for rank %d",
                          n, s->rank);
  for (int i = 0; i < n; i++) {
    if (sz[i] < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "negative size");
    int64_t d = s->dims[i].value;
    p->out[i] = sz[i];
    p->scale[i] = d > 0 ? (double)sz[i] / (double)d : 1.0;
  }
  return HET_OK;
}

het_status het_resize_params_make(const het_infer_ctx *ctx,
                                  het_resize_params *p, bool *known) {
  const het_shape *s = &ctx->inputs[0].shape;
  bool upsample = strcmp(ctx->node->op_type, "Upsample") == 0;
  bool v11 = !upsample && ctx->opset >= 11;
  int n = -2;
  memset(p, 0, sizeof *p);
  *known = true;
  HET_TRY(parse_attrs(ctx, p, v11));
  for (int i = 0; i < s->rank; i++) {
    p->out[i] = -1;
    p->scale[i] = 1.0;
  }
  HET_TRY(read_roi(ctx, p, s->rank));
  bool done = false;
  if (v11)
    HET_TRY(from_sizes(ctx, p, &done, known));
  if (done)
    return HET_OK;
  HET_TRY(read_scales(ctx, v11 ? 2 : 1, upsample && ctx->opset < 9, p->scale,
                      &n));
  if (n == -2)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "one of scales and sizes is required");
  if (n == -1) {
    *known = false;
    for (int i = 0; i < s->rank; i++)
      p->scale[i] = 1.0;
    return HET_OK;
  }
  if (n != s->rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "scales has %d values for rank %d",
                          n, s->rank);
  for (int i = 0; i < n; i++) {
    if (!(p->scale[i] > 0))
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "scale %d is not > 0", i);
    if (s->dims[i].value < 0)
      continue;
    double d = floor(p->scale[i] * (double)s->dims[i].value);
    if (!(d < 9223372036854775808.0)) /* 2^63, or infinite */
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "scale %d (%g) makes a dim past int64", i,
                            p->scale[i]);
    p->out[i] = (int64_t)d;
  }
  return HET_OK;
}

het_status het_infer_resize(het_infer_ctx *ctx) {
  het_resize_params p;
  bool known;
  het_value_info *o = &ctx->outputs[0];
  HET_TRY(het_resize_params_make(ctx, &p, &known));
  if (p.mode != HET_RESIZE_NEAREST)
    HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = ctx->inputs[0].shape.rank;
  for (int i = 0; i < o->shape.rank; i++)
    o->shape.dims[i] =
        known && p.out[i] >= 0 ? het_dim_known(p.out[i]) : het_dim_unknown();
  return HET_OK;
}
