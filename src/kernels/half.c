/* half.c — the array conversions of half.h. */
#include "kernels/half.h"

#include "core/dtype.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* F16C through CPUID: clang before 15 has no "f16c" for
 * __builtin_cpu_supports.  AVX's check covers the OS saving YMM state. */
static int het_half_has_f16c(void) {
  unsigned a, b, c, d;
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) &&
         (c & bit_F16C);
}

__attribute__((target("avx512f"))) static int64_t
half_to_float_avx512(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                  (const __m256i *)(const void *)(src + i))));
  return i;
}

__attribute__((target("avx512f"))) static int64_t
float_to_half_avx512(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(
        (__m256i *)(void *)(dst + i),
        _mm512_cvtps_ph(_mm512_loadu_ps(src + i),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  return i;
}

__attribute__((target("avx,f16c"))) static int64_t
half_to_float_f16c(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  (const __m128i *)(const void *)(src + i))));
  return i;
}

__attribute__((target("avx,f16c"))) static int64_t
float_to_half_f16c(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(void *)(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                     _MM_FROUND_TO_NEAREST_INT |
                                         _MM_FROUND_NO_EXC));
  return i;
}
#endif

void het_half_to_float(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f"))
    i = half_to_float_avx512(src, dst, n);
  else if (het_half_has_f16c())
    i = half_to_float_f16c(src, dst, n);
#endif
  for (; i < n; i++)
    dst[i] = het_f16_to_f32(src[i]);
}

void het_float_to_half(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f"))
    i = float_to_half_avx512(src, dst, n);
  else if (het_half_has_f16c())
    i = float_to_half_f16c(src, dst, n);
#endif
  for (; i < n; i++)
    dst[i] = het_f32_to_f16(src[i]);
}
