/* qconv_vnni.h — hetrt's own AVX-512 VNNI kernel for int8 convolutions
 * on channels-last uint8 X that oneDNN 2.6 runs slower: 1x1 Convs (a GEMM
 * of the pixels' rows against the weights) and Convs on a few input
 * channels such as a CNN's stem (each kernel row of the window read as
 * one run of bytes), requantized in the same pass and bit-exact with the
 * reference kernel (linalg_qlinear.c).  qconv_vnni.c has the method and
 * the timings.
 */
#ifndef HET_KERNELS_QCONV_VNNI_H
#define HET_KERNELS_QCONV_VNNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/parallel.h"

/* Output channels per weight panel (four 16-lane vectors). */
#define HET_QV_PANEL 64
/* Most runs (taps) one output pixel reads. */
#define HET_QV_MAX_TAPS 16

/* Invariant: n >= 1, np = n rounded up to a multiple of HET_QV_PANEL,
 * kt % 4 == 0, 1 <= taps <= HET_QV_MAX_TAPS, k = taps * kt; w holds the
 * np * k weights in panels ([np / 64][k / 4][64][4] bytes, 64-byte
 * aligned, zero for channels n..np-1; owned, or a plan's when
 * w_borrowed), bias np sums (the int32 bias less x_zp times each
 * channel's weight sum), scale np multipliers (0 past n).  A run computes
 * the padding channels and stores none of them. */
typedef struct het_qv_conv {
  int64_t n, np, k;
  int taps;
  int64_t kt;
  int8_t *w;
  bool w_borrowed;
  int32_t *bias;
  float *scale;
  int32_t yzp;
  bool y_signed; /* int8 Y, else uint8 */
  bool clamp;    /* some float(acc) * scale may pass 2^30 */
} het_qv_conv;

/* Where a run reads and writes: rows output rows of px pixels each; the
 * bytes of row r start at x + (r / img_rows) * img_step +
 * (r % img_rows) * row_step, pixel p's px_step further, its tap t
 * tap_step * t further still (kt bytes each).  Y is rows * px pixels of n
 * bytes, back to back. */
typedef struct het_qv_geom {
  int64_t rows, px, img_rows, img_step, row_step, px_step, tap_step;
} het_qv_geom;

/* True when this CPU has the instructions (AVX-512 F/BW and VNNI). */
bool het_qv_usable(void);

/* Whether the kernel takes n output channels reading taps runs of kt
 * bytes per pixel (any n: the last panel may be partly padding, which
 * het_qv_padding says the cost of). */
bool het_qv_fits(int64_t n, int taps, int64_t kt);

/* The padding channels of n outputs: n rounded up to a panel, less n. */
int64_t het_qv_padding(int64_t n);

/* Fills q from W (n rows of taps * kt int8: row c the weights of output
 * channel c in the order the runs read X, zero where a run reads bytes
 * outside the window), or from packed, W already in panels (borrowed: a
 * plan's prepared weights, np * taps * kt bytes, 64-byte aligned), the
 * int32 bias (n values or NULL), x's zero point, n_scales (1 or n)
 * multipliers x_scale * w_scale / y_scale and y's zero point and type.
 * False when out of memory (q then holds nothing). */
bool het_qv_init(het_qv_conv *q, const int8_t *w, const int8_t *packed,
                 int64_t n, int taps, int64_t kt, const int32_t *bias,
                 int32_t xzp, const float *scales, int n_scales, int32_t yzp,
                 bool y_signed);

void het_qv_free(het_qv_conv *q);

/* Y from X over geometry g, the tiles split over par.  Each run reads its
 * kt bytes (a caller whose window rows are narrower rounds kt up to a
 * multiple of 4, gives the extra bytes zero weights and keeps them
 * readable).  ahead: ahead_bytes (the next node's weights) that the 1x1
 * tiles prefetch into L2 as they go, a line per step in the tiles not
 * fetching this kernel's own next panel; NULL for none. */
void het_qv_run(const het_qv_conv *q, const uint8_t *x, const het_qv_geom *g,
                void *y, const het_parallel *par, const void *ahead,
                size_t ahead_bytes);

/* Runs of this process given bytes to fetch ahead (tests read it). */
long het_qv_ahead_runs(void);

#endif
