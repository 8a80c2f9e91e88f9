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
