/* copy.c — tensor copies between host memory and device memory: the
 * providers' synchronous copy slots, or for large host<->device copies the
 * ABI-2 staging slots, double-buffered.  Staged copy to the device: the
 * host copies chunk k into staging buffer k % 2 while the device copies
 * chunk k - 1 out of the other one; to the host, the device fills one
 * buffer while the host drains the other.  Every submitted copy is waited
 * for exactly once, also after a failure.
 */
#include "transfer/copy.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static bool het_on_device(const het_device *d) {
  return d && d->vt->alloc;
}

bool het_transfer_has_staging(const het_device *d) {
  const het_provider_vtable *vt = d ? d->vt : NULL;
  return vt && HET_PROVIDER_HAS(vt, 2, alloc_host) &&
         HET_PROVIDER_HAS(vt, 2, free_host) &&
         HET_PROVIDER_HAS(vt, 2, copy_submit) &&
         HET_PROVIDER_HAS(vt, 2, copy_wait);
}

static size_t het_chunk_len(size_t off, size_t n, size_t chunk) {
  return n - off < chunk ? n - off : chunk;
}

/* Waits for the outstanding tickets, older first; keeps the first error. */
static het_status het_staged_drain(const het_device *d, void **ticket,
                                   int older, het_status st) {
  for (int i = 0; i < 2; i++) {
    int b = (older + i) & 1;
    if (!ticket[b])
      continue;
    het_status w = d->vt->copy_wait(d->state, ticket[b]);
    ticket[b] = NULL;
    if (st == HET_OK)
      st = w;
  }
  return st;
}

static het_status het_staged_in(const het_device *d, void **buf, void *handle,
                                const char *src, size_t n, size_t chunk) {
  void *ticket[2] = {NULL, NULL};
  het_status st = HET_OK;
  size_t k = 0;
  for (size_t off = 0; off < n && st == HET_OK; off += chunk, k++) {
    int b = (int)(k & 1);
    size_t len = het_chunk_len(off, n, chunk);
    if (ticket[b]) { /* buffer b is free once its last chunk is copied */
      st = d->vt->copy_wait(d->state, ticket[b]);
      ticket[b] = NULL;
      if (st != HET_OK)
        break;
    }
    memcpy(buf[b], src + off, len);
    st = d->vt->copy_submit(d->state, HET_COPY_TO_DEVICE, handle, off, buf[b],
                            len, &ticket[b]);
    if (st != HET_OK)
      ticket[b] = NULL;
  }
  return het_staged_drain(d, ticket, (int)(k & 1), st);
}

static het_status het_staged_out(const het_device *d, void **buf,
                                 void *handle, char *dst, size_t n,
                                 size_t chunk) {
  void *ticket[2] = {NULL, NULL};
  het_status st = HET_OK;
  size_t next = 0, k = 0; /* next chunk to submit; chunk to drain */
  for (int b = 0; b < 2 && next < n && st == HET_OK; b++, next += chunk)
    st = d->vt->copy_submit(d->state, HET_COPY_TO_HOST, handle, next, buf[b],
                            het_chunk_len(next, n, chunk), &ticket[b]);
  for (size_t off = 0; off < n && st == HET_OK; off += chunk, k++) {
    int b = (int)(k & 1);
    st = d->vt->copy_wait(d->state, ticket[b]);
    ticket[b] = NULL;
    if (st != HET_OK)
      break;
    memcpy(dst + off, buf[b], het_chunk_len(off, n, chunk));
    if (next < n) {
      st = d->vt->copy_submit(d->state, HET_COPY_TO_HOST, handle, next,
                              buf[b], het_chunk_len(next, n, chunk),
                              &ticket[b]);
      if (st != HET_OK)
        ticket[b] = NULL;
      next += chunk;
    }
  }
  return het_staged_drain(d, ticket, (int)((k + 1) & 1), st);
}

het_status het_transfer_staged(const het_device *d,
                               het_copy_direction direction, void *handle,
                               void *host, size_t n, size_t chunk) {
  if (!het_transfer_has_staging(d) || chunk == 0 ||
      (direction != HET_COPY_TO_DEVICE && direction != HET_COPY_TO_HOST))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "staged copy: %s has no staging slots, or chunk 0, or a "
                     "bad direction",
                     d ? d->vt->name : "(no device)");
  if (n == 0)
    return HET_OK;
  size_t cap = n < chunk ? n : chunk;
  int n_buf = n > chunk ? 2 : 1;
  void *buf[2] = {NULL, NULL};
  het_status st = HET_OK;
  for (int b = 0; b < n_buf && st == HET_OK; b++)
    st = d->vt->alloc_host(d->state, cap, &buf[b]);
  if (st == HET_OK && n_buf == 1)
    buf[1] = buf[0]; /* one chunk: never two in flight */
  if (st == HET_OK)
    st = direction == HET_COPY_TO_DEVICE
             ? het_staged_in(d, buf, handle, host, n, chunk)
             : het_staged_out(d, buf, handle, host, n, chunk);
  for (int b = 0; b < n_buf; b++)
    if (buf[b])
      d->vt->free_host(d->state, buf[b]);
  return st;
}

/* host <-> device: staged when large and the provider has the slots. */
static het_status het_copy_host_device(const het_device *dev, bool to_dev,
                                       void *dst, const void *src, size_t n,
                                       size_t chunk) {
  if (n > chunk && het_transfer_has_staging(dev))
    return to_dev ? het_transfer_staged(dev, HET_COPY_TO_DEVICE, dst,
                                        (void *)src, n, chunk)
                  : het_transfer_staged(dev, HET_COPY_TO_HOST, (void *)src,
                                        dst, n, chunk);
  return to_dev ? dev->vt->copy_from_host(dev->state, dst, src, n)
                : dev->vt->copy_to_host(dev->state, dst, src, n);
}

het_status het_transfer_copy_chunked(const het_tensor *src,
                                     const het_device *to, het_tensor *dst,
                                     size_t chunk) {
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
    return het_copy_host_device(to, true, dst->data, src->data, n, chunk);
  if (!to)
    return het_copy_host_device(from, false, dst->data, src->data, n, chunk);
  void *staging = malloc(n);
  if (!staging)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "copy %s -> %s: cannot stage %zu bytes", from->vt->name,
                     to->vt->name, n);
  het_status st = het_copy_host_device(from, false, staging, src->data, n,
                                       chunk);
  if (st == HET_OK)
    st = het_copy_host_device(to, true, dst->data, staging, n, chunk);
  free(staging);
  return st;
}

het_status het_transfer_copy(const het_tensor *src, const het_device *to,
                             het_tensor *dst) {
  return het_transfer_copy_chunked(src, to, dst, HET_TRANSFER_CHUNK);
}
