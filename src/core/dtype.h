/* dtype.h — element-type facts and the half-precision conversions.
 * Conversions round to nearest even and keep NaN/Inf, as numpy does.
 */
#ifndef HET_CORE_DTYPE_H
#define HET_CORE_DTYPE_H

#include <stdbool.h>
#include <stdint.h>

#include "hetrt/hetrt.h"

/* True for the values listed in HET_DTYPE_TABLE other than UNDEFINED. */
bool het_dtype_valid(int value);
bool het_dtype_is_float(het_dtype t);   /* float16/32/64, bfloat16 */
bool het_dtype_is_signed_int(het_dtype t);
bool het_dtype_is_unsigned_int(het_dtype t);
bool het_dtype_is_int(het_dtype t);     /* signed or unsigned integer */

float het_f16_to_f32(uint16_t h);
uint16_t het_f32_to_f16(float f);
float het_bf16_to_f32(uint16_t h);
uint16_t het_f32_to_bf16(float f);

/* Element i of data (of type t) widened to double / int64; for the generic
 * slow paths (casts, comparisons of mixed types, test harnesses). */
double het_dtype_load_f64(het_dtype t, const void *data, int64_t i);
int64_t het_dtype_load_i64(het_dtype t, const void *data, int64_t i);
/* Stores v into element i, converting as a C cast would (float→int
 * truncates toward zero; bool is v != 0). */
void het_dtype_store_f64(het_dtype t, void *data, int64_t i, double v);
void het_dtype_store_i64(het_dtype t, void *data, int64_t i, int64_t v);

#endif
