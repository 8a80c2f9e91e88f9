/* dtype.c — element-type table lookups and float16/bfloat16 conversions. */
#include "core/dtype.h"

#include <math.h>
#include <string.h>

const char *het_dtype_str(het_dtype dtype) {
  switch (dtype) {
#define HET_DTYPE_STR_(name, value, bytes, text) \
  case HET_DTYPE_##name:                         \
    return text;
    HET_DTYPE_TABLE(HET_DTYPE_STR_)
#undef HET_DTYPE_STR_
  }
  return "invalid";
}

size_t het_dtype_size(het_dtype dtype) {
  switch (dtype) {
#define HET_DTYPE_SIZE_(name, value, bytes, text) \
  case HET_DTYPE_##name:                          \
    return bytes;
    HET_DTYPE_TABLE(HET_DTYPE_SIZE_)
#undef HET_DTYPE_SIZE_
  }
  return 0;
}

bool het_dtype_valid(int value) {
  return value >= HET_DTYPE_FLOAT32 && value <= HET_DTYPE_BFLOAT16;
}

bool het_dtype_is_float(het_dtype t) {
  return t == HET_DTYPE_FLOAT32 || t == HET_DTYPE_FLOAT64 ||
         t == HET_DTYPE_FLOAT16 || t == HET_DTYPE_BFLOAT16;
}

bool het_dtype_is_signed_int(het_dtype t) {
  return t == HET_DTYPE_INT8 || t == HET_DTYPE_INT16 || t == HET_DTYPE_INT32 ||
         t == HET_DTYPE_INT64;
}

bool het_dtype_is_unsigned_int(het_dtype t) {
  return t == HET_DTYPE_UINT8 || t == HET_DTYPE_UINT16 ||
         t == HET_DTYPE_UINT32 || t == HET_DTYPE_UINT64;
}

bool het_dtype_is_int(het_dtype t) {
  return het_dtype_is_signed_int(t) || het_dtype_is_unsigned_int(t);
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float het_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0x1f)
    return bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float v = ldexpf((float)man, -24);
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t het_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) /* Inf or NaN */
    return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
  if (abs >= 0x477ff000u) /* rounds to >= 65520: overflow */
    return sign | 0x7c00;
  if (abs < 0x38800000u) { /* subnormal or zero in half */
    float a = bits_f32(abs);
    /* Scale so the subnormal unit (2^-24) becomes 1, round to even. */
    float scaled = a * 16777216.0f;
    float r = nearbyintf(scaled);
    return sign | (uint16_t)r;
  }
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

float het_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t het_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

double het_dtype_load_f64(het_dtype t, const void *data, int64_t i) {
  switch (t) {
  case HET_DTYPE_FLOAT32: return ((const float *)data)[i];
  case HET_DTYPE_FLOAT64: return ((const double *)data)[i];
  case HET_DTYPE_FLOAT16: return het_f16_to_f32(((const uint16_t *)data)[i]);
  case HET_DTYPE_BFLOAT16: return het_bf16_to_f32(((const uint16_t *)data)[i]);
  case HET_DTYPE_INT8: return ((const int8_t *)data)[i];
  case HET_DTYPE_INT16: return ((const int16_t *)data)[i];
  case HET_DTYPE_INT32: return ((const int32_t *)data)[i];
  case HET_DTYPE_INT64: return (double)((const int64_t *)data)[i];
  case HET_DTYPE_UINT8: return ((const uint8_t *)data)[i];
  case HET_DTYPE_UINT16: return ((const uint16_t *)data)[i];
  case HET_DTYPE_UINT32: return ((const uint32_t *)data)[i];
  case HET_DTYPE_UINT64: return (double)((const uint64_t *)data)[i];
  case HET_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
  default: return 0.0;
  }
}

/* A double as int64, saturating: a float outside int64's range (which C
 * leaves undefined) becomes its nearest end, NaN becomes 0. */
static int64_t het_f64_to_i64(double v) {
  if (isnan(v))
    return 0;
  if (v >= 9223372036854775808.0) /* 2^63 */
    return INT64_MAX;
  if (v < -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}

int64_t het_dtype_load_i64(het_dtype t, const void *data, int64_t i) {
  switch (t) {
  case HET_DTYPE_INT8: return ((const int8_t *)data)[i];
  case HET_DTYPE_INT16: return ((const int16_t *)data)[i];
  case HET_DTYPE_INT32: return ((const int32_t *)data)[i];
  case HET_DTYPE_INT64: return ((const int64_t *)data)[i];
  case HET_DTYPE_UINT8: return ((const uint8_t *)data)[i];
  case HET_DTYPE_UINT16: return ((const uint16_t *)data)[i];
  case HET_DTYPE_UINT32: return ((const uint32_t *)data)[i];
  case HET_DTYPE_UINT64: return (int64_t)((const uint64_t *)data)[i];
  case HET_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
  default: return het_f64_to_i64(het_dtype_load_f64(t, data, i));
  }
}

void het_dtype_store_f64(het_dtype t, void *data, int64_t i, double v) {
  switch (t) {
  case HET_DTYPE_FLOAT32: ((float *)data)[i] = (float)v; break;
  case HET_DTYPE_FLOAT64: ((double *)data)[i] = v; break;
  case HET_DTYPE_FLOAT16: ((uint16_t *)data)[i] = het_f32_to_f16((float)v); break;
  case HET_DTYPE_BFLOAT16: ((uint16_t *)data)[i] = het_f32_to_bf16((float)v); break;
  case HET_DTYPE_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
  default:
    if (isnan(v) || isinf(v))
      v = 0; /* casting NaN/Inf to an integer is undefined in C */
    if (het_dtype_is_unsigned_int(t) && v < 0)
      het_dtype_store_i64(t, data, i, het_f64_to_i64(v));
    else if (t == HET_DTYPE_UINT64)
      ((uint64_t *)data)[i] = v >= 18446744073709551616.0 ? UINT64_MAX /* 2^64 */
                                                          : (uint64_t)v;
    else
      het_dtype_store_i64(t, data, i, het_f64_to_i64(v));
  }
}

void het_dtype_store_i64(het_dtype t, void *data, int64_t i, int64_t v) {
  switch (t) {
  case HET_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
  case HET_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
  case HET_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
  case HET_DTYPE_INT64: ((int64_t *)data)[i] = v; break;
  case HET_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
  case HET_DTYPE_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
  case HET_DTYPE_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
  case HET_DTYPE_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
  case HET_DTYPE_BOOL: ((uint8_t *)data)[i] = v != 0; break;
  default: het_dtype_store_f64(t, data, i, (double)v); break;
  }
}
