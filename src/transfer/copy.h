/* copy.h — moving a tensor between memory spaces through the providers'
 * copy slots (host staging when neither side is host memory).
 */
#ifndef HET_TRANSFER_COPY_H
#define HET_TRANSFER_COPY_H

#include "core/tensor.h"

/* Allocates dst (an empty tensor shell) in to's memory (NULL = host) with
 * src's dtype and shape, then copies src's bytes into it. */
het_status het_transfer_copy(const het_tensor *src, const het_device *to,
                             het_tensor *dst);

#endif
