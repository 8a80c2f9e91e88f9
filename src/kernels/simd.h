/* simd.h — run-time ISA dispatch for float32 hot loops, and float32 math
 * the compiler can vectorise.  HET_SIMD_CLONES before a function definition
 * builds it three times (AVX-512F, AVX2, baseline x86-64) and lets the
 * loader pick the best one the CPU has (GCC function multiversioning); the
 * het_simd_*f functions are branch-free straight-line code (no libm calls)
 * so loops calling them vectorise inside each clone.
 */
#ifndef HET_CPU_SIMD_H
#define HET_CPU_SIMD_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Clones are chosen by ISA feature (__builtin_cpu_supports), not by
 * "arch=" names: the resolver of an "arch=skylake-avx512" clone asks
 * __builtin_cpu_is, which is false on every other AVX-512 CPU (AMD Zen 4,
 * Ice Lake, Sapphire Rapids), so those would run the baseline clone.
 * Without contraction (-std=c11 keeps -ffp-contract=off) every clone
 * computes bit-identical results, so the dispatch never changes output.
 * ThreadSanitizer builds take the baseline only: the clones' resolvers run
 * before the sanitizer's runtime starts. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && \
    defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define HET_SIMD_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HET_SIMD_CLONES
#endif

/* Always inlined: GCC inlines a plain function into a clone of another
 * -march only when the callee is always_inline. */
#if defined(__GNUC__)
#define HET_SIMD_INLINE static inline __attribute__((always_inline))
#else
#define HET_SIMD_INLINE static inline
#endif

HET_SIMD_INLINE float het_simd_bits_f32(int32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* exp: Cephes' range reduction and polynomial, scaled by 2^n in two steps
 * so results down to the subnormals are right.  Max relative error about
 * 2 ulp (1.5e-7); NaN, +-inf, overflow and underflow as expf. */
HET_SIMD_INLINE float het_simd_expf(float x) {
  const float magic = 12582912.0f; /* 1.5 * 2^23: rounds to an integer */
  float c = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;
  float t = c * 1.44269504088896341f + magic;
  float n = t - magic;
  int32_t ni;
  memcpy(&ni, &t, 4);
  ni -= 0x4B400000; /* bits of magic */
  float r = c - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t n1 = ni >> 1, n2 = ni - n1;
  /* unsigned shifts: for NaN x, ni is garbage (the result is x anyway) */
  y = y * het_simd_bits_f32((int32_t)((uint32_t)(n1 + 127) << 23)) *
      het_simd_bits_f32((int32_t)((uint32_t)(n2 + 127) << 23));
  y = x > 88.7228391f ? INFINITY : y;
  y = x < -103.972084f ? 0.0f : y;
  return x != x ? x : y;
}

/* tanh: an odd polynomial (relative least squares, degree 11) below 0.625,
 * 1 - 2 / (exp(2|x|) + 1) above, where nothing cancels.  Max relative
 * error about 2e-7; tanh(+-inf) = +-1, NaN stays NaN, -0 stays -0. */
HET_SIMD_INLINE float het_simd_tanhf(float x) {
  float a = x < 0 ? -x : x;
  float a2 = a * a;
  float p = -0.005697545196622597f;
  p = p * a2 + 0.020630331319718073f;
  p = p * a2 + -0.053735874508197445f;
  p = p * a2 + 0.13331365745774026f;
  p = p * a2 + -0.3333327535906488f;
  float small = a + a * (p * a2);
  float e = het_simd_expf(2.0f * (a > 20.0f ? 20.0f : a));
  float big = 1.0f - 2.0f / (e + 1.0f);
  float t = a < 0.625f ? small : big;
  return x != x ? x : copysignf(t, x);
}

/* The rational erf approximation on x clamped to [-4, 4]:
 * erf(x) = x * P(x^2) / Q(x^2).  p and q (float or vector variables)
 * start at HET_ERF_P0 / HET_ERF_Q0; HET_ERF_HORNER finishes both.  Shared
 * by het_simd_erff and nlp_vec.c's 16-lane erf. */
#define HET_ERF_P0 (-2.72614225801306e-10f)
#define HET_ERF_Q0 (-1.45660718464996e-05f)
#define HET_ERF_HORNER(x2, p, q)                                               \
  do {                                                                         \
    p = p * (x2) + 2.77068142495902e-08f;                                      \
    p = p * (x2) + -2.10102402082508e-06f;                                     \
    p = p * (x2) + -5.69250639462346e-05f;                                     \
    p = p * (x2) + -7.34990630326855e-04f;                                     \
    p = p * (x2) + -2.95459980854025e-03f;                                     \
    p = p * (x2) + -1.60960333262415e-02f;                                     \
    q = q * (x2) + -2.13374055278905e-04f;                                     \
    q = q * (x2) + -1.68282697438203e-03f;                                     \
    q = q * (x2) + -7.37332916720468e-03f;                                     \
    q = q * (x2) + -1.42647390514189e-02f;                                     \
  } while (0)

/* erf: odd polynomial over even polynomial on [-4, 4] (the rational fast
 * erf of Eigen/XLA); erf saturates to +-1 in float beyond.  Max relative
 * error about 5e-7; NaN stays NaN. */
HET_SIMD_INLINE float het_simd_erff(float x) {
  float c = x < -4.0f ? -4.0f : x > 4.0f ? 4.0f : x;
  float x2 = c * c;
  float p = HET_ERF_P0, q = HET_ERF_Q0;
  HET_ERF_HORNER(x2, p, q);
  return p / q * c; /* not (p * c) / q: keeps tiny x off the subnormals */
}

/* sigmoid: 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|),
 * so results stay accurate down to the subnormals; 0 and 1 at -inf and
 * +inf, NaN stays NaN. */
HET_SIMD_INLINE float het_simd_sigmoidf(float x) {
  float e = het_simd_expf(x < 0 ? x : -x);
  float r = 1.0f / (1.0f + e);
  return x < 0 ? e * r : r;
}

#endif
