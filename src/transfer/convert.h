/* convert.h — the host-side boundary conversions: element type (a device
 * that keeps float32 tensors as float16/bfloat16) and physical layout of
 * rank-4 tensors (NCHW <-> NHWC; dims stay in logical NCHW order).
 */
#ifndef HET_TRANSFER_CONVERT_H
#define HET_TRANSFER_CONVERT_H

#include <stdbool.h>

#include "core/tensor.h"

/* dst (an empty shell) receives src converted to dtype (host tensors). */
het_status het_transfer_cast(const het_tensor *src, het_dtype dtype,
                             het_tensor *dst);

/* dst receives src's rank-4 data reordered from NCHW to NHWC (to_nhwc) or
 * back; the dims are unchanged. */
het_status het_transfer_layout(const het_tensor *src, bool to_nhwc,
                               het_tensor *dst);

/* The same into dst already placed in host memory with src's dims (and,
 * for a cast, the target dtype): nothing is allocated. */
het_status het_transfer_cast_into(const het_tensor *src, het_tensor *dst);
het_status het_transfer_layout_into(const het_tensor *src, bool to_nhwc,
                                    het_tensor *dst);

#endif
