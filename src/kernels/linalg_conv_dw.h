/* linalg_conv_dw.h — direct float32 depthwise Conv (linalg_conv_dw.c),
 * tried by the Conv kernel before oneDNN and im2col.
 */
#ifndef HET_CPU_KERNELS_LINALG_CONV_DW_H
#define HET_CPU_KERNELS_LINALG_CONV_DW_H

#include <stdbool.h>

#include "kernels/kernel.h"

/* The activation fused into the Conv by opt_activation.c (float
 * attributes hetrt_act_min / hetrt_act_max): y = min(max(y, lo), hi) with
 * NaN kept; on is false without both attributes. */
typedef struct het_lk_dw_act {
  bool on;
  float lo, hi;
} het_lk_dw_act;

het_lk_dw_act het_lk_dw_act_get(const het_node *node);

/* Runs a 2-D float32 depthwise Conv (group == input channels, W with one
 * input channel per group); *done = false (HET_OK) when the node is not
 * one, and the caller falls back.  Applies the fused clamp itself.  With
 * ctx->nhwc_in bit 0 set: NHWC in and out (channel multiplier 1 only,
 * else *done = false). */
het_status het_lk_conv_dw_run(het_kernel_ctx *ctx, bool *done);

/* True when a Conv node with constant W of these dims takes the depthwise
 * path (so oneDNN need not build a primitive for it). */
static inline bool het_lk_conv_is_dw(int64_t group, int w_rank,
                                     const int64_t *w_dims) {
  return group > 1 && w_rank == 4 && w_dims[1] == 1 &&
         w_dims[0] % group == 0;
}

#endif
