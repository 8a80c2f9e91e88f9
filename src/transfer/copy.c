/* copy.c — synchronous tensor copies between memory spaces (copy.h): one
 * leg when a provider can copy between the two memories, else device to
 * host and host to device through a staging buffer.
 */
#include "transfer/copy.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* The first of eps that copies src -> dst directly, or NULL. */
static const het_ep *het_copier(const het_ep *eps, int n_eps,
                                const het_device *src, const het_device *dst) {
  for (int i = 0; i < n_eps; i++)
    if ((eps[i].device == src || eps[i].device == dst) &&
        het_ep_can_copy(&eps[i], src, dst))
      return &eps[i];
  return NULL;
}

static het_status het_leg(const het_ep *eps, int n_eps, void *dst,
                          const het_device *to, const void *src,
                          const het_device *from, size_t n) {
  if (het_device_is_host(to) && het_device_is_host(from)) {
    memcpy(dst, src, n);
    return HET_OK;
  }
  const het_ep *ep = het_copier(eps, n_eps, from, to);
  if (!ep)
    return het_error(HET_ERR_INTERNAL, "copy %s -> %s: no provider copies it",
                     het_device_is_host(from) ? "host" : from->name,
                     het_device_is_host(to) ? "host" : to->name);
  return het_ep_copy_now(ep, dst, to, src, from, n);
}

het_status het_transfer_copy(const het_ep *eps, int n_eps,
                             const het_tensor *src, const het_device *to,
                             het_tensor *dst) {
  const het_device *from = src->device;
  HET_TRY(het_tensor_alloc_on(dst, to, src->dtype, src->dims, src->rank));
  size_t n = src->nbytes;
  if (n == 0)
    return HET_OK;
  bool direct = het_device_is_host(from) || het_device_is_host(to) ||
                het_copier(eps, n_eps, from, to);
  if (direct)
    return het_leg(eps, n_eps, dst->data, to, src->data, from, n);
  void *staging = malloc(n);
  if (!staging)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "copy %s -> %s: cannot stage %zu bytes", from->name,
                     to->name, n);
  het_status st = het_leg(eps, n_eps, staging, NULL, src->data, from, n);
  if (st == HET_OK)
    st = het_leg(eps, n_eps, dst->data, to, staging, NULL, n);
  free(staging);
  return st;
}
