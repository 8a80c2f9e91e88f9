/* qconv_vnni.h — hetrt's own AVX-512 VNNI kernel for a 1x1, stride-1,
 * ungrouped QLinearConv on channels-last uint8 X: a GEMM of the pixels'
 * rows (K = input channels) against the weights, requantized in the same
 * pass, bit-exact with the reference kernel (linalg_qlinear.c).  On
 * ResNet-50's 1x1 shapes it took 0.80-0.98x the time of oneDNN 2.6's
 * brgconv_1x1 (qconv_vnni.c says where the difference comes from).
 */
#ifndef HET_KERNELS_QCONV_VNNI_H
#define HET_KERNELS_QCONV_VNNI_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/parallel.h"

/* Output channels per weight panel (four 16-lane vectors). */
#define HET_QV_PANEL 64

/* Invariant: n % HET_QV_PANEL == 0, k % 4 == 0; w holds the n * k
 * weights in panels ([n / 64][k / 4][64][4] bytes, 64-byte aligned;
 * owned, or a plan's when w_borrowed), bias n sums (the int32 bias less
 * x_zp times each channel's weight sum), scale n multipliers. */
typedef struct het_qv_1x1 {
  int64_t n, k;
  int8_t *w;
  bool w_borrowed;
  int32_t *bias;
  float *scale;
  int32_t yzp;
  bool y_signed; /* int8 Y, else uint8 */
} het_qv_1x1;

/* True when this CPU has the instructions (AVX-512 F/BW and VNNI). */
bool het_qv_usable(void);

/* Whether the kernel takes an n-channel output of k-channel input. */
bool het_qv_1x1_fits(int64_t n, int64_t k);

/* Fills q from W (n x k int8, row c the weights of output channel c),
 * or from packed, W already in panels (borrowed: a plan's prepared
 * weights, n * k bytes, 64-byte aligned), the int32 bias (n values or
 * NULL), x's zero point, n_scales (1 or n) multipliers
 * x_scale * w_scale / y_scale and y's zero point and type.  False when
 * out of memory (q then holds nothing). */
bool het_qv_1x1_init(het_qv_1x1 *q, const int8_t *w, const int8_t *packed,
                     int64_t n, int64_t k, const int32_t *bias, int32_t xzp,
                     const float *scales, int n_scales, int32_t yzp,
                     bool y_signed);

void het_qv_1x1_free(het_qv_1x1 *q);

/* y (pixels x n, channels-last) from x (pixels x k, channels-last),
 * pixel rows split over par. */
void het_qv_1x1_run(const het_qv_1x1 *q, const uint8_t *x, int64_t pixels,
                    void *y, const het_parallel *par);

#endif
