/* elementwise_quant.c — QuantizeLinear, DequantizeLinear (per tensor, or
 * per axis from opset 13) and DynamicQuantizeLinear.  Quantization divides
 * in float32, rounds half to even and saturates to the zero point's type
 * (uint8 when absent).
 */
#include <math.h>
#include <string.h>

#include "kernels/elementwise_internal.h"

/* The [outer, channels, inner] split of x for a scale of `channels`
 * elements along `axis` (channels 1 = per tensor). */
typedef struct het_ew_qlayout {
  int64_t outer, channels, inner;
} het_ew_qlayout;

static het_status het_ew_qlayout_get(const het_kernel_ctx *ctx,
                                     const het_tensor *x,
                                     const het_tensor *scale,
                                     const het_tensor *zp,
                                     het_ew_qlayout *l) {
  int64_t ns = het_tensor_count(scale);
  l->outer = 1;
  l->channels = 1;
  l->inner = het_tensor_count(x);
  if (zp && het_tensor_count(zp) != ns)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): zero point has %lld "
                     "elements, scale %lld", ctx->node->name,
                     ctx->node->op_type, (long long)het_tensor_count(zp),
                     (long long)ns);
  if (ns == 1 && scale->rank <= 1)
    return HET_OK;
  int64_t axis = het_node_attr_int(ctx->node, "axis", 1);
  if (axis < 0)
    axis += x->rank;
  if (ctx->opset < 13 || scale->rank != 1 || axis < 0 || axis >= x->rank ||
      x->dims[axis] != ns)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): scale of %lld elements "
                     "does not match input axis %lld", ctx->node->name,
                     ctx->node->op_type, (long long)ns, (long long)axis);
  l->channels = ns;
  l->outer = 1;
  for (int d = 0; d < axis; d++)
    l->outer *= x->dims[d];
  l->inner = 1;
  for (int d = (int)axis + 1; d < x->rank; d++)
    l->inner *= x->dims[d];
  return HET_OK;
}

static double het_ew_qrange(het_dtype t, bool hi) {
  switch (t) {
  case HET_DTYPE_INT8: return hi ? 127 : -128;
  case HET_DTYPE_UINT8: return hi ? 255 : 0;
  case HET_DTYPE_INT16: return hi ? 32767 : -32768;
  case HET_DTYPE_UINT16: return hi ? 65535 : 0;
  default: return hi ? 2147483647.0 : -2147483648.0;
  }
}

het_status het_kernel_ew_run_QuantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const het_tensor *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  het_ew_qlayout l;
  HET_TRY(het_ew_qlayout_get(ctx, x, scale, zp, &l));
  double lo = het_ew_qrange(y->dtype, false), hi = het_ew_qrange(y->dtype, true);
  int64_t i = 0;
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t c = 0; c < l.channels; c++) {
      float s = (float)het_ew_load(scale, c);
      double z = zp ? het_ew_load(zp, c) : 0.0;
      for (int64_t k = 0; k < l.inner; k++, i++) {
        float q = nearbyintf((float)het_ew_load(x, i) / s);
        double v = (double)q + z;
        v = v < lo ? lo : v > hi ? hi : v;
        het_dtype_store_f64(y->dtype, y->data, i, v);
      }
    }
  return HET_OK;
}

het_status het_kernel_ew_run_DequantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const het_tensor *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  if (zp && zp->dtype != x->dtype)
    return het_error(HET_ERR_TYPE, "node '%s' (DequantizeLinear): zero "
                     "point is %s, x is %s", ctx->node->name,
                     het_dtype_str(zp->dtype), het_dtype_str(x->dtype));
  het_ew_qlayout l;
  HET_TRY(het_ew_qlayout_get(ctx, x, scale, zp, &l));
  int64_t i = 0;
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t c = 0; c < l.channels; c++) {
      float s = (float)het_ew_load(scale, c);
      int64_t z = zp ? het_dtype_load_i64(zp->dtype, zp->data, c) : 0;
      for (int64_t k = 0; k < l.inner; k++, i++) {
        int64_t q = het_dtype_load_i64(x->dtype, x->data, i);
        het_dtype_store_f64(y->dtype, y->data, i, (float)(q - z) * s);
      }
    }
  return HET_OK;
}

het_status het_kernel_ew_run_DynamicQuantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  if (x->dtype != HET_DTYPE_FLOAT32)
    return het_ew_unsupported(ctx, x->dtype);
  const float *xs = x->data;
  int64_t n = het_tensor_count(x);
  float mn = 0.0f, mx = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    mn = xs[i] < mn ? xs[i] : mn;
    mx = xs[i] > mx ? xs[i] : mx;
  }
  float scale = (mx - mn) / 255.0f;
  float zpf = scale > 0 ? nearbyintf((0.0f - mn) / scale) : 0.0f;
  zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
  uint8_t *ys = y->data;
  for (int64_t i = 0; i < n; i++) {
    float v = scale > 0 ? nearbyintf(xs[i] / scale) + zpf : zpf;
    ys[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
  }
  if (ctx->n_outputs > 1 && ctx->outputs[1])
    het_dtype_store_f64(ctx->outputs[1]->dtype, ctx->outputs[1]->data, 0,
                        scale);
  if (ctx->n_outputs > 2 && ctx->outputs[2])
    het_dtype_store_f64(ctx->outputs[2]->dtype, ctx->outputs[2]->data, 0,
                        zpf);
  return HET_OK;
}
