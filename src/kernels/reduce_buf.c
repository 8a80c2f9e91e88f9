/* reduce_buf.c — float64 working buffers for the reduce-group kernels:
 * typed conversion loops (vectorisable) from/to every numeric dtype, and
 * the axis helpers shared by those kernels.
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/reduce_common.h"

#define HET_RED_CVT_IN(T)                 \
  do {                                    \
    const T *s_ = (const T *)src;         \
    for (int64_t i_ = 0; i_ < n; i_++)    \
      dst[i_] = (double)s_[i_];           \
  } while (0)

static void het_red_to_f64(het_dtype dt, const void *src, double *dst,
                           int64_t n) {
  switch (dt) {
  case HET_DTYPE_FLOAT32: HET_RED_CVT_IN(float); break;
  case HET_DTYPE_FLOAT64: HET_RED_CVT_IN(double); break;
  case HET_DTYPE_INT8: HET_RED_CVT_IN(int8_t); break;
  case HET_DTYPE_UINT8: HET_RED_CVT_IN(uint8_t); break;
  case HET_DTYPE_INT16: HET_RED_CVT_IN(int16_t); break;
  case HET_DTYPE_UINT16: HET_RED_CVT_IN(uint16_t); break;
  case HET_DTYPE_INT32: HET_RED_CVT_IN(int32_t); break;
  case HET_DTYPE_UINT32: HET_RED_CVT_IN(uint32_t); break;
  case HET_DTYPE_INT64: HET_RED_CVT_IN(int64_t); break;
  case HET_DTYPE_UINT64: HET_RED_CVT_IN(uint64_t); break;
  default:
    for (int64_t i = 0; i < n; i++)
      dst[i] = het_dtype_load_f64(dt, src, i);
    break;
  }
}

#define HET_RED_CVT_OUT(T)                \
  do {                                    \
    T *d_ = (T *)dst;                     \
    for (int64_t i_ = 0; i_ < n; i_++)    \
      d_[i_] = (T)src[i_];                \
  } while (0)

static void het_red_from_f64(het_dtype dt, const double *src, void *dst,
                             int64_t n) {
  switch (dt) {
  case HET_DTYPE_FLOAT32: HET_RED_CVT_OUT(float); break;
  case HET_DTYPE_FLOAT64: HET_RED_CVT_OUT(double); break;
  case HET_DTYPE_FLOAT16: {
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++)
      d[i] = het_f32_to_f16((float)src[i]);
    break;
  }
  default:
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_f64(dt, dst, i, src[i]);
    break;
  }
}

het_status het_red_scratch(const het_kernel_ctx *ctx, int64_t n,
                           double **out) {
  double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
  if (!p)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "node '%s' (%s): cannot allocate %lld doubles",
                     ctx->node->name, ctx->node->op_type, (long long)n);
  *out = p;
  return HET_OK;
}

het_status het_red_load(const het_kernel_ctx *ctx, const het_tensor *t,
                        het_red_buf *out) {
  int64_t n = het_tensor_count(t);
  if (t->dtype == HET_DTYPE_FLOAT64) {
    out->data = t->data;
    out->owned = false;
    return HET_OK;
  }
  HET_TRY(het_red_scratch(ctx, n, &out->data));
  out->owned = true;
  het_red_to_f64(t->dtype, t->data, out->data, n);
  return HET_OK;
}

het_status het_red_out(const het_kernel_ctx *ctx, het_tensor *t,
                       het_red_buf *out) {
  if (t->dtype == HET_DTYPE_FLOAT64) {
    out->data = t->data;
    out->owned = false;
    return HET_OK;
  }
  HET_TRY(het_red_scratch(ctx, het_tensor_count(t), &out->data));
  out->owned = true;
  return HET_OK;
}

void het_red_finish(het_tensor *t, het_red_buf *buf) {
  if (buf->owned && buf->data)
    het_red_from_f64(t->dtype, buf->data, t->data, het_tensor_count(t));
  het_red_release(buf);
}

void het_red_release(het_red_buf *buf) {
  if (buf->owned)
    free(buf->data);
  buf->data = NULL;
  buf->owned = false;
}

void het_red_split(const het_tensor *t, int axis, int64_t *outer, int64_t *n,
                   int64_t *inner) {
  int64_t o = 1, in = 1;
  for (int d = 0; d < axis; d++)
    o *= t->dims[d];
  for (int d = axis + 1; d < t->rank; d++)
    in *= t->dims[d];
  *outer = o;
  *n = axis < t->rank ? t->dims[axis] : 1;
  *inner = in;
}

het_status het_red_axis(const het_kernel_ctx *ctx, int64_t axis,
                        int rank, int *out) {
  if (axis < -(int64_t)rank || axis >= (int64_t)(rank > 0 ? rank : 1))
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): axis %lld out of range for rank %d",
                     ctx->node->name, ctx->node->op_type, (long long)axis,
                     rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return HET_OK;
}
