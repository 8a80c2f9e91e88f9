/* copy.h — moving a tensor between memory spaces through the providers'
 * copy slots (host staging when neither side is host memory).  Large
 * host<->device copies on a provider with the ABI-2 staging slots go in
 * chunks through two staging buffers, double-buffered: the device copies
 * chunk k while the host fills (or drains) chunk k+1.
 */
#ifndef HET_TRANSFER_COPY_H
#define HET_TRANSFER_COPY_H

#include "core/tensor.h"

/* Chunk (and staging buffer) size of staged copies; copies of at most
 * this many bytes use the provider's synchronous slots directly. */
#define HET_TRANSFER_CHUNK ((size_t)4 << 20)

/* Allocates dst (an empty tensor shell) in to's memory (NULL = host) with
 * src's dtype and shape, then copies src's bytes into it. */
het_status het_transfer_copy(const het_tensor *src, const het_device *to,
                             het_tensor *dst);

/* As het_transfer_copy with chunk bytes per staged chunk (tests). */
het_status het_transfer_copy_chunked(const het_tensor *src,
                                     const het_device *to, het_tensor *dst,
                                     size_t chunk);

/* Whether dev has the ABI-2 staging slots (alloc_host, free_host,
 * copy_submit, copy_wait). */
bool het_transfer_has_staging(const het_device *dev);

/* Copies n bytes between host memory `host` and the start of dev's block
 * `handle` (direction as in provider.h) in chunks of `chunk` bytes
 * through two staging buffers from dev's alloc_host.  n == 0 copies
 * nothing.  dev must have the staging slots (ERR_INVALID_ARGUMENT
 * otherwise, or for chunk == 0). */
het_status het_transfer_staged(const het_device *dev,
                               het_copy_direction direction, void *handle,
                               void *host, size_t n, size_t chunk);

#endif
