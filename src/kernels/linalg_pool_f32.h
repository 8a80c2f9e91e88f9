/* linalg_pool_f32.h — float32 pooling fast paths (linalg_pool_f32.c) used
 * by linalg_pool.c, and the window helpers both files share: 2-D
 * MaxPool/AveragePool without Indices and GlobalMax/GlobalAveragePool, in
 * NCHW or in NHWC when the layout pass set the kernel context's bits.
 */
#ifndef HET_CPU_KERNELS_LINALG_POOL_F32_H
#define HET_CPU_KERNELS_LINALG_POOL_F32_H

#include <stdbool.h>
#include <stdint.h>

#include "core/ops/linalg_geom.h"
#include "kernels/kernel.h"

/* Taps [*lo, *hi) of a kernel of k taps at start, start + dil, ... that
 * fall inside [0, n). */
static inline void het_pool_tap_range(int64_t start, int64_t k, int64_t dil,
                                      int64_t n, int64_t *lo, int64_t *hi) {
  if (dil == 1) { /* no division: pooling calls this once per output */
    *lo = start >= 0 ? 0 : -start;
    *hi = start > n - 1 ? 0 : n - start;
  } else {
    *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
    *hi = start > n - 1 ? 0 : (n - 1 - start) / dil + 1;
  }
  if (*hi > k)
    *hi = k;
  if (*lo > *hi)
    *lo = *hi;
}

/* Kernel taps at start, start + dil, ... that lie before limit (the end
 * of the padded input): the divisor of count_include_pad. */
static inline int64_t het_pool_taps_before(int64_t start, int64_t k,
                                           int64_t dil, int64_t limit) {
  int64_t n = 0;
  for (int64_t i = 0; i < k; i++)
    n += start + i * dil < limit;
  return n;
}

/* float32 rank-4 X, 2-D window g (dilations 1 for averages), no Indices:
 * MaxPool (is_max) or AveragePool into ctx->outputs[0].  Honours
 * ctx->nhwc_in bit 0 (then Y is NHWC too). */
het_status het_lk_pool2d_f32_run(het_kernel_ctx *ctx,
                                 const het_conv_geom *g, bool is_max,
                                 bool include_pad);

/* float32 rank-4 GlobalMaxPool (is_max) / GlobalAveragePool, NCHW or NHWC
 * input (ctx->nhwc_in bit 0); Y is [N, C, 1, 1]. */
het_status het_lk_global_pool_f32_run(het_kernel_ctx *ctx, bool is_max);

#endif
