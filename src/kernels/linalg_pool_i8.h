/* linalg_pool_i8.h — 2-D MaxPool of uint8/int8 tensors (linalg_pool_i8.c),
 * used by linalg_pool.c.
 */
#ifndef HET_CPU_KERNELS_LINALG_POOL_I8_H
#define HET_CPU_KERNELS_LINALG_POOL_I8_H

#include "core/ops/linalg_geom.h"
#include "kernels/kernel.h"

/* uint8 or int8 rank-4 X, 2-D window g, no Indices: MaxPool into
 * ctx->outputs[0], NHWC in and out when ctx->nhwc_in bit 0 is set. */
het_status het_lk_maxpool2d_i8_run(het_kernel_ctx *ctx,
                                   const het_conv_geom *g);

#endif
