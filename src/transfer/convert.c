/* convert.c — boundary casts and layout changes on host tensors. */
#include "transfer/convert.h"

#include <string.h>

#include "core/dtype.h"
#include "core/status.h"

het_status het_transfer_cast(const het_tensor *src, het_dtype dtype,
                             het_tensor *dst) {
  if (src->device && src->device->vt->alloc)
    return het_error(HET_ERR_INTERNAL, "cast: source is not in host memory");
  HET_TRY(het_tensor_alloc(dst, dtype, src->dims, src->rank));
  int64_t n = het_tensor_count(src);
  for (int64_t i = 0; i < n; i++)
    het_dtype_store_f64(dtype, dst->data, i,
                        het_dtype_load_f64(src->dtype, src->data, i));
  return HET_OK;
}

void het_layout_permute(const void *src, void *dst, const int64_t *dims,
                        size_t es, bool to_nhwc) {
  int64_t n = dims[0], c = dims[1], hw = dims[2] * dims[3];
  const char *s = src;
  char *d = dst;
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < hw; p++) {
        size_t nchw = (size_t)((b * c + ch) * hw + p) * es;
        size_t nhwc = (size_t)((b * hw + p) * c + ch) * es;
        memcpy(d + (to_nhwc ? nhwc : nchw), s + (to_nhwc ? nchw : nhwc), es);
      }
}

het_status het_transfer_layout(const het_tensor *src, bool to_nhwc,
                               het_tensor *dst) {
  if (src->rank != 4)
    return het_error(HET_ERR_INTERNAL, "layout: rank %d is not 4", src->rank);
  if (src->device && src->device->vt->alloc)
    return het_error(HET_ERR_INTERNAL, "layout: source is not in host memory");
  HET_TRY(het_tensor_alloc(dst, src->dtype, src->dims, src->rank));
  het_layout_permute(src->data, dst->data, src->dims,
                     het_dtype_size(src->dtype), to_nhwc);
  return HET_OK;
}
