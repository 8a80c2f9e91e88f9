/* copy.c — tensor copies between host memory and device memory. */
#include "transfer/copy.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static bool het_on_device(const het_device *d) {
  return d && d->vt->alloc;
}

het_status het_transfer_copy(const het_tensor *src, const het_device *to,
                             het_tensor *dst) {
  const het_device *from = src->device;
  if (!het_on_device(to))
    to = NULL;
  HET_TRY(het_tensor_alloc_on(dst, to, src->dtype, src->dims, src->rank));
  size_t n = src->nbytes;
  if (n == 0)
    return HET_OK;
  if (!het_on_device(from) && !to) {
    memcpy(dst->data, src->data, n);
    return HET_OK;
  }
  if (!het_on_device(from))
    return to->vt->copy_from_host(to->state, dst->data, src->data, n);
  if (!to)
    return from->vt->copy_to_host(from->state, dst->data, src->data, n);
  void *staging = malloc(n);
  if (!staging)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "copy %s -> %s: cannot stage %zu bytes", from->vt->name,
                     to->vt->name, n);
  het_status st = from->vt->copy_to_host(from->state, staging, src->data, n);
  if (st == HET_OK)
    st = to->vt->copy_from_host(to->state, dst->data, staging, n);
  free(staging);
  return st;
}
