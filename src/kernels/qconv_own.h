/* qconv_own.h — which QLinearConvs hetrt runs on its own VNNI kernel
 * (qconv_vnni.h) instead of oneDNN 2.6, and how their X is laid out for
 * it: the oneDNN int8 path (kernels/dnnl/qlinear_dnnl.c) asks here first
 * for every shape it builds.
 *   - 1x1: unpadded, ungrouped, X channels-last (the layout pass's, or
 *     one pixel per image, where NCHW is the same); a stride above 1
 *     gathers the pixels it reads into staging first.
 *   - narrow: at most HET_QOWN_NARROW_C input channels (an image
 *     network's stem), ungrouped, undilated, any kernel, stride and pads,
 *     X channels-last or planar: X is staged padded channels-last (the
 *     borders hold x's zero point, ONNX's zero padding) and each kernel
 *     row of a window, kernel width x channels contiguous bytes, is one
 *     run of the kernel.
 * Both need uint8 X, Y stored channels-last (or one pixel per image), a
 * VNNI CPU and output channels filling the 64-channel weight panels but
 * for at most one in QOWN_PAD_SHARE (qconv_own.c) of them.
 */
#ifndef HET_KERNELS_QCONV_OWN_H
#define HET_KERNELS_QCONV_OWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "kernels/qconv_vnni.h"

#define HET_QOWN_NARROW_C 4

/* A QLinearConv as the kernel sees it (1-D: nsp 1, dims [0] only). */
typedef struct het_qown_desc {
  int nsp;
  int64_t n, c, m, group;
  int64_t in[2], kernel[2], stride[2], dil[2], pad_b[2], pad_e[2], out[2];
  bool x_u8, nhwc_x, nhwc_y;
  const int8_t *w; /* m x c x kernel, ONNX's order */
  const int32_t *bias;
  int32_t xzp, yzp;
  const float *scales; /* x_scale * w_scale / y_scale, 1 or m */
  int n_scales;
  bool y_signed;
} het_qown_desc;

typedef enum { HET_QOWN_NONE, HET_QOWN_1X1, HET_QOWN_NARROW } het_qown_kind;

/* Invariant: kind != NONE holds qv and the geometry g its runs read
 * (from X itself, or from the staging buffer when stage_bytes > 0). */
typedef struct het_qown {
  het_qown_kind kind;
  het_qv_conv qv;
  het_qv_geom g;
  het_qown_desc d; /* w, bias and scales not kept */
  size_t stage_bytes;
} het_qown;

/* Which way the kernel runs d, or NONE. */
het_qown_kind het_qown_kind_of(const het_qown_desc *d);

/* Bytes of staging a run of d needs (0: none, or not taken). */
size_t het_qown_stage_bytes(const het_qown_desc *d);

/* Builds o for d (het_qown_kind_of(d) != NONE), its weights from a plan's
 * presets where one holds them; false when out of memory. */
bool het_qown_init(het_qown *o, const het_qown_desc *d);

void het_qown_free(het_qown *o);

/* Y (channels-last) from X; stage: stage_bytes of 64-byte aligned
 * scratch (unused when 0); ahead: bytes to prefetch meanwhile
 * (het_qv_run). */
void het_qown_run(const het_qown *o, const uint8_t *x, uint8_t *stage,
                  void *y, const het_parallel *par, const void *ahead,
                  size_t ahead_bytes);

/* o's weights for a plan (het_kernel.state_weights). */
void het_qown_weights(const het_qown *o, het_kernel_weight_fn fn, void *ctx);

#endif
