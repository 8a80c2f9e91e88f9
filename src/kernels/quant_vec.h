/* quant_vec.h — float32 <-> 8-bit quantization over arrays, vectorised
 * with AVX-512 where the CPU has it (chosen at run time), scalar
 * otherwise, with identical results: quantize divides by the scale in
 * float32, rounds half to even and saturates; dequantize computes
 * (float)(q - zero_point) * scale in float32 (the ONNX definitions). */
#ifndef HET_KERNELS_QUANT_VEC_H
#define HET_KERNELS_QUANT_VEC_H

#include <stdbool.h>
#include <stdint.h>

/* y[i] = saturate(round(x[i] / scale) + zp) into uint8 (is_signed false)
 * or int8 (true). */
void het_quant_vec_quantize(const float *x, float scale, int32_t zp,
                            bool is_signed, void *y, int64_t n);
/* y[i] = (float)(q[i] - zp) * scale for uint8 or int8 q. */
void het_quant_vec_dequantize(const void *q, bool is_signed, int32_t zp,
                              float scale, float *y, int64_t n);
/* Folds the smallest and largest of x[0..n) into *mn and *mx (NaN
 * elements skipped). */
void het_quant_vec_minmax(const float *x, int64_t n, float *mn, float *mx);
/* c[i] = saturate(round(fma((float)(b[i] - bz), rb, (float)(a[i] - az) *
 * ra)) + cz) with ra = as / cs and rb = bs / cs: DequantizeLinear, Add
 * and QuantizeLinear in one pass, all three 8-bit arrays of one
 * signedness.  Multiplying by the ratios (as ONNX Runtime's QLinearAdd
 * does) instead of dividing the float sum by cs may round a value lying
 * within a float rounding of a half-step to the other side: at most one
 * step apart from the three ops run one by one. */
void het_quant_vec_add(const void *a, float as, int32_t az, const void *b,
                       float bs, int32_t bz, float cs, int32_t cz,
                       bool is_signed, void *c, int64_t n);

#endif
