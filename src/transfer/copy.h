/* copy.h — synchronous tensor copies between memory spaces, for work done
 * once at session creation (initializers placed on their devices): the
 * providers' copy slots through core/ep.h, via host memory where no
 * provider copies between the two devices directly.
 */
#ifndef HET_TRANSFER_COPY_H
#define HET_TRANSFER_COPY_H

#include "core/ep.h"
#include "core/tensor.h"

/* Allocates dst (an empty tensor shell) in to's memory (NULL = host) with
 * src's dtype and shape, then copies src's bytes into it.  eps (n_eps of
 * them) are the providers that may do the copy: one whose can_copy says
 * it moves the bytes directly, else one per leg through host memory. */
het_status het_transfer_copy(const het_ep *eps, int n_eps,
                             const het_tensor *src, const het_device *to,
                             het_tensor *dst);

#endif
