/* half.h — float16 <-> float32 over arrays, vectorised (AVX-512F or F16C
 * where the CPU has them, chosen at run time; scalar otherwise).  Round to
 * nearest even, NaN and Inf kept, as core/dtype.h's scalar conversions. */
#ifndef HET_KERNELS_HALF_H
#define HET_KERNELS_HALF_H

#include <stdint.h>

void het_half_to_float(const uint16_t *src, float *dst, int64_t n);
void het_float_to_half(const float *src, uint16_t *dst, int64_t n);

#endif
