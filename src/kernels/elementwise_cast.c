/* elementwise_cast.c — Cast and CastLike between all numeric and bool
 * types (float → integer truncates toward zero, NaN/Inf become 0; half
 * precision rounds to nearest even), Clip (attribute bounds before opset
 * 11, optional scalar inputs after) and inference-mode Dropout.
 */
#include <string.h>

#include "kernels/elementwise_internal.h"
#include "kernels/half.h"

/* Straight C conversions for the common pairs that cannot hit UB. */
#define CAST_FAST(S, D, ST, DT)                            \
  if (in->dtype == S && out->dtype == D) {                 \
    const ST *restrict s = in->data;                       \
    DT *restrict d = out->data;                            \
    for (int64_t i = 0; i < n; i++)                        \
      d[i] = (DT)s[i];                                     \
    return;                                                \
  }

static void het_ew_cast_data(const het_tensor *in, het_tensor *out) {
  int64_t n = het_tensor_count(in);
  if (in->dtype == out->dtype) {
    memcpy(out->data, in->data, in->nbytes);
    return;
  }
  CAST_FAST(HET_DTYPE_FLOAT32, HET_DTYPE_FLOAT64, float, double)
  CAST_FAST(HET_DTYPE_FLOAT64, HET_DTYPE_FLOAT32, double, float)
  CAST_FAST(HET_DTYPE_INT64, HET_DTYPE_FLOAT32, int64_t, float)
  CAST_FAST(HET_DTYPE_INT32, HET_DTYPE_FLOAT32, int32_t, float)
  CAST_FAST(HET_DTYPE_UINT8, HET_DTYPE_FLOAT32, uint8_t, float)
  CAST_FAST(HET_DTYPE_INT32, HET_DTYPE_INT64, int32_t, int64_t)
  CAST_FAST(HET_DTYPE_INT64, HET_DTYPE_INT32, int64_t, int32_t)
  if (in->dtype == HET_DTYPE_FLOAT32 && out->dtype == HET_DTYPE_FLOAT16) {
    het_float_to_half(in->data, out->data, n);
    return;
  }
  if (in->dtype == HET_DTYPE_FLOAT16 && out->dtype == HET_DTYPE_FLOAT32) {
    het_half_to_float(in->data, out->data, n);
    return;
  }
  if (het_dtype_is_float(in->dtype) || het_dtype_is_float(out->dtype)) {
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_f64(out->dtype, out->data, i,
                          het_dtype_load_f64(in->dtype, in->data, i));
  } else {
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_i64(out->dtype, out->data, i,
                          het_dtype_load_i64(in->dtype, in->data, i));
  }
}

static bool het_ew_castable(het_dtype t) {
  return het_dtype_is_float(t) || het_dtype_is_int(t) || t == HET_DTYPE_BOOL;
}

static het_status het_ew_cast(het_kernel_ctx *ctx) {
  const het_tensor *in = ctx->inputs[0];
  het_tensor *out = ctx->outputs[0];
  if (!het_ew_castable(in->dtype) || !het_ew_castable(out->dtype))
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (%s): cast from %s to "
                     "%s is not supported", ctx->node->name,
                     ctx->node->op_type, het_dtype_str(in->dtype),
                     het_dtype_str(out->dtype));
  if (het_tensor_count(in) != het_tensor_count(out))
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): output size differs "
                     "from input", ctx->node->name, ctx->node->op_type);
  het_ew_cast_data(in, out);
  return HET_OK;
}

het_status het_kernel_ew_run_Cast(het_kernel_ctx *ctx) {
  return het_ew_cast(ctx);
}

het_status het_kernel_ew_run_CastLike(het_kernel_ctx *ctx) {
  return het_ew_cast(ctx);
}

/* ---- Clip ---- */

typedef struct het_ew_clip_args {
  const void *lo, *hi; /* element of the input's type, NULL = unbounded */
} het_ew_clip_args;

#define CLIP_ROW(sfx, T, U, DT, ...)                                     \
  HET_SIMD_CLONES static void clip_##sfx(                                \
      void *const *pp, const int64_t *st, int64_t n, const void *user) { \
    (void)st;                                                            \
    const het_ew_clip_args *a = user;                                    \
    T *restrict o = pp[0];                                               \
    const T *restrict x = pp[1];                                         \
    const bool has_lo = a->lo != NULL, has_hi = a->hi != NULL;           \
    const T lo = has_lo ? *(const T *)a->lo : (T)0;                      \
    const T hi = has_hi ? *(const T *)a->hi : (T)0;                      \
    for (int64_t i = 0; i < n; i++) {                                    \
      T v = x[i];                                                        \
      v = (has_lo && v < lo) ? lo : v;                                   \
      v = (has_hi && v > hi) ? hi : v;                                   \
      o[i] = v;                                                          \
    }                                                                    \
  }
HET_EW_FLOATS(CLIP_ROW, 0)
HET_EW_SINTS(CLIP_ROW, 0)
HET_EW_UINTS(CLIP_ROW, 0)
static const het_ew_fn_table clip_fns = {HET_EW_FLOATS(HET_EW_ENTRY, clip, 0)
    HET_EW_SINTS(HET_EW_ENTRY, clip, 0) HET_EW_UINTS(HET_EW_ENTRY, clip, 0)};

/* Bound input k (opset >= 11): NULL when omitted; must be one element of
 * the input's type. */
static het_status het_ew_clip_bound(het_kernel_ctx *ctx, int k,
                                    const void **out) {
  const het_tensor *b = k < ctx->n_inputs ? ctx->inputs[k] : NULL;
  *out = NULL;
  if (!b)
    return HET_OK;
  if (b->dtype != ctx->inputs[0]->dtype || het_tensor_count(b) != 1)
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (Clip): %s must be a "
                     "single %s value", ctx->node->name,
                     k == 1 ? "min" : "max",
                     het_dtype_str(ctx->inputs[0]->dtype));
  *out = b->data;
  return HET_OK;
}

static het_status het_ew_clip_body(het_kernel_ctx *ctx, const void *arg) {
  (void)arg;
  const het_tensor *in = ctx->inputs[0];
  het_tensor *out = ctx->outputs[0];
  het_bcast_row_fn fn = (unsigned)in->dtype < HET_EW_NDT ? clip_fns[in->dtype]
                                                         : NULL;
  if (!fn)
    return het_ew_unsupported(ctx, in->dtype);
  het_ew_clip_args a = {NULL, NULL};
  float lo_f, hi_f;
  double lo_d, hi_d;
  if (ctx->opset < 11) {
    const het_attr *mn = het_node_find_attr(ctx->node, "min");
    const het_attr *mx = het_node_find_attr(ctx->node, "max");
    lo_f = mn ? mn->f : 0.0f, hi_f = mx ? mx->f : 0.0f;
    lo_d = lo_f, hi_d = hi_f;
    bool f64 = in->dtype == HET_DTYPE_FLOAT64;
    a.lo = mn ? (f64 ? (const void *)&lo_d : (const void *)&lo_f) : NULL;
    a.hi = mx ? (f64 ? (const void *)&hi_d : (const void *)&hi_f) : NULL;
  } else {
    HET_TRY(het_ew_clip_bound(ctx, 1, &a.lo));
    HET_TRY(het_ew_clip_bound(ctx, 2, &a.hi));
  }
  int64_t n = het_tensor_count(in);
  if (n > 0) {
    void *ptrs[2] = {out->data, in->data};
    static const int64_t steps[2] = {1, 1};
    fn(ptrs, steps, n, &a);
  }
  return HET_OK;
}

het_status het_kernel_ew_run_Clip(het_kernel_ctx *ctx) {
  return het_ew_via_f32(ctx, het_ew_clip_body, NULL);
}

/* ---- Dropout (inference) ---- */

static het_status het_ew_dropout_check(het_kernel_ctx *ctx) {
  const het_tensor *tm = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (!tm || het_tensor_count(tm) < 1 || !het_tensor_get_i64(tm, 0))
    return HET_OK;
  const het_tensor *r = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  double ratio = r && het_tensor_count(r) > 0 ? het_ew_load(r, 0) : 0.5;
  if (ratio != 0.0)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Dropout): "
                     "training_mode with ratio %g is not supported (hetrt "
                     "runs inference only)", ctx->node->name, ratio);
  return HET_OK;
}

het_status het_kernel_ew_run_Dropout(het_kernel_ctx *ctx) {
  HET_TRY(het_ew_dropout_check(ctx));
  const het_tensor *in = ctx->inputs[0];
  het_tensor *out = ctx->outputs[0];
  if (out && out->nbytes != in->nbytes)
    return het_error(HET_ERR_SHAPE, "node '%s' (Dropout): output size "
                     "differs from input", ctx->node->name);
  if (out && in->nbytes)
    memcpy(out->data, in->data, in->nbytes);
  het_tensor *mask = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  if (!mask)
    return HET_OK;
  int64_t n = het_tensor_count(mask);
  if (mask->dtype == HET_DTYPE_BOOL)
    memset(mask->data, 1, (size_t)n);
  else
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_f64(mask->dtype, mask->data, i, 1.0);
  return HET_OK;
}
