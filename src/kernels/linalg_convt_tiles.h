/* linalg_convt_tiles.h — float32 ConvTranspose whose stride equals its
 * kernel (linalg_convt_tiles.c), tried by the ConvTranspose kernel before
 * GEMM + col2im.
 */
#ifndef HET_CPU_KERNELS_LINALG_CONVT_TILES_H
#define HET_CPU_KERNELS_LINALG_CONVT_TILES_H

#include <stdbool.h>

#include "core/ops/linalg_geom.h"
#include "kernels/kernel.h"

/* The widest tile (kernel == stride along W) the tiled path takes. */
#define HET_CONVT_TILES_MAX_W 8

/* Whether the node (geometry g, group, c input and m output channels, x,
 * w, bias b or NULL, y) takes the tiled path: 2-D float32, one group,
 * kernel == stride (at most HET_CONVT_TILES_MAX_W wide), dilation 1, no
 * padding, y exactly the input times the stride. */
bool het_lk_convt_tiles_apply(const het_conv_geom *g, int64_t group,
                              int64_t c, int64_t m, const het_tensor *x,
                              const het_tensor *w, const het_tensor *b,
                              const het_tensor *y);

/* Runs it (after het_lk_convt_tiles_apply said yes); its scratch is the
 * c * m * kernel weights, rearranged. */
het_status het_lk_convt_tiles_run(het_kernel_ctx *ctx, const het_conv_geom *g,
                                  int64_t c, int64_t m);

#endif
