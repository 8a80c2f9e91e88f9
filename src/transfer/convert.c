/* convert.c — boundary casts and layout changes on host tensors, into a
 * placed destination or a new one. */
#include "transfer/convert.h"

#include <string.h>

#include "core/dtype.h"
#include "core/ep.h"
#include "core/status.h"

static het_status het_host_pair(const het_tensor *src, const het_tensor *dst,
                                const char *what) {
  if (!het_device_is_host(src->device) || !het_device_is_host(dst->device))
    return het_error(HET_ERR_INTERNAL, "%s: a tensor is not in host memory",
                     what);
  if (src->rank != dst->rank ||
      memcmp(src->dims, dst->dims, (size_t)src->rank * sizeof *src->dims) ||
      (src->nbytes && !dst->data))
    return het_error(HET_ERR_INTERNAL, "%s: destination not placed for the "
                                       "source's shape", what);
  return HET_OK;
}

het_status het_transfer_cast_into(const het_tensor *src, het_tensor *dst) {
  HET_TRY(het_host_pair(src, dst, "cast"));
  int64_t n = het_tensor_count(src);
  for (int64_t i = 0; i < n; i++)
    het_dtype_store_f64(dst->dtype, dst->data, i,
                        het_dtype_load_f64(src->dtype, src->data, i));
  return HET_OK;
}

het_status het_transfer_layout_into(const het_tensor *src, bool to_nhwc,
                                    het_tensor *dst) {
  if (src->rank != 4)
    return het_error(HET_ERR_SHAPE, "layout: rank %d is not 4", src->rank);
  HET_TRY(het_host_pair(src, dst, "layout"));
  het_layout_permute(src->data, dst->data, src->dims,
                     het_dtype_size(src->dtype), to_nhwc);
  return HET_OK;
}

het_status het_transfer_cast(const het_tensor *src, het_dtype dtype,
                             het_tensor *dst) {
  if (!het_device_is_host(src->device))
    return het_error(HET_ERR_INTERNAL, "cast: source is not in host memory");
  HET_TRY(het_tensor_alloc(dst, dtype, src->dims, src->rank));
  return het_transfer_cast_into(src, dst);
}

het_status het_transfer_layout(const het_tensor *src, bool to_nhwc,
                               het_tensor *dst) {
  if (!het_device_is_host(src->device))
    return het_error(HET_ERR_INTERNAL, "layout: source is not in host memory");
  HET_TRY(het_tensor_alloc(dst, src->dtype, src->dims, src->rank));
  return het_transfer_layout_into(src, to_nhwc, dst);
}
