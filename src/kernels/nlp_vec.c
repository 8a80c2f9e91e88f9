/* nlp_vec.c — the float32 row loops of the transformer kernels (see
 * nlp_kernels.h), written with GCC vector extensions (16 lanes) and built
 * for AVX-512, AVX2+FMA and baseline x86-64 (GCC function multiversioning,
 * picked at load time by CPU features, so AMD CPUs get them too).  exp is Cephes' expf polynomial (range-reduced by
 * powers of two), erf a [-4, 4] rational approximation (|error| < 5e-7);
 * tails shorter than one vector use libm.
 */
#include <math.h>
#include <string.h>

#include "kernels/nlp_kernels.h"
#include "kernels/simd.h"

#pragma GCC diagnostic ignored "-Wpsabi"


#define VL 16
typedef float vf __attribute__((vector_size(VL * 4)));
typedef int32_t vi __attribute__((vector_size(VL * 4)));
#define NLP_INLINE static inline __attribute__((always_inline))

NLP_INLINE vf vload(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
NLP_INLINE void vstore(float *p, vf v) { memcpy(p, &v, sizeof v); }
NLP_INLINE vf vsplat(float f) { return (vf){0} + f; }
NLP_INLINE vf vmin(vf a, vf b) {
  vi m = a < b;
  return (vf)(((vi)a & m) | ((vi)b & ~m));
}
NLP_INLINE vf vmax(vf a, vf b) {
  vi m = a > b;
  return (vf)(((vi)a & m) | ((vi)b & ~m));
}

/* e^x, x clamped to [-87.33, 88]. */
NLP_INLINE vf vexp(vf x) {
  x = vmax(vmin(x, vsplat(88.0f)), vsplat(-87.3365478515625f));
  vf z = x * 1.44269504088896341f + 128.5f;
  vi n = __builtin_convertvector(z, vi) - 128;
  vf fn = __builtin_convertvector(n, vf);
  vf r = x - fn * 0.693359375f;
  r = r + fn * 2.12194440e-4f;
  vf p = vsplat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  vi bits = (n + 127) << 23;
  return p * (vf)bits;
}

/* erf(x): x * P(x^2) / Q(x^2) on [-4, 4] (+-1 in float beyond; simd.h's
 * HET_ERF_* coefficients). */
NLP_INLINE vf verf(vf x) {
  x = vmax(vmin(x, vsplat(4.0f)), vsplat(-4.0f));
  vf x2 = x * x;
  vf p = vsplat(HET_ERF_P0), q = vsplat(HET_ERF_Q0);
  HET_ERF_HORNER(x2, p, q);
  return x * p / q;
}

NLP_INLINE vf vgelu(vf x) {
  return x * 0.5f * (verf(x * 0.70710678118654752f) + 1.0f);
}

static inline float sgelu(float x) {
  return x * 0.5f * (erff(x * 0.70710678118654752f) + 1.0f);
}

HET_SIMD_CLONES void het_nlp_gelu(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL)
    vstore(y + i, vgelu(vload(x + i)));
  for (; i < n; i++)
    y[i] = sgelu(x[i]);
}

HET_SIMD_CLONES void het_nlp_bias_act(float *y, const float *bias, int64_t rows,
                                 int64_t n, bool gelu) {
  for (int64_t r = 0; r < rows; r++) {
    float *row = y + r * n;
    int64_t i = 0;
    if (gelu)
      for (; i + VL <= n; i += VL)
        vstore(row + i, vgelu(vload(row + i) + vload(bias + i)));
    else
      for (; i + VL <= n; i += VL)
        vstore(row + i, vload(row + i) + vload(bias + i));
    for (; i < n; i++) {
      float v = row[i] + bias[i];
      row[i] = gelu ? sgelu(v) : v;
    }
  }
}

NLP_INLINE float hsum(vf v) {
  float s = 0;
  for (int k = 0; k < VL; k++)
    s += v[k];
  return s;
}

NLP_INLINE float row_max(const float *s, int64_t n) {
  float mx = s[0];
  int64_t i = 0;
  if (n >= VL) {
    vf m = vload(s);
    for (i = VL; i + VL <= n; i += VL)
      m = vmax(m, vload(s + i));
    for (int k = 0; k < VL; k++)
      mx = m[k] > mx ? m[k] : mx;
  }
  for (; i < n; i++)
    mx = s[i] > mx ? s[i] : mx;
  return mx;
}

HET_SIMD_CLONES void het_nlp_softmax_rows(float *s, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; r++, s += n) {
    float mx = row_max(s, n);
    vf acc = vsplat(0.0f);
    int64_t i = 0;
    for (; i + VL <= n; i += VL) {
      vf e = vexp(vload(s + i) - mx);
      vstore(s + i, e);
      acc += e;
    }
    float sum = hsum(acc);
    for (; i < n; i++) {
      s[i] = expf(s[i] - mx);
      sum += s[i];
    }
    float inv = 1.0f / sum;
    for (i = 0; i + VL <= n; i += VL)
      vstore(s + i, vload(s + i) * inv);
    for (; i < n; i++)
      s[i] *= inv;
  }
}

/* Mean and 1 / sqrt(var + eps) of one row (two passes). */
NLP_INLINE void row_moments(const float *x, int64_t n, float eps,
                            float *mean, float *rstd) {
  vf acc = vsplat(0.0f);
  int64_t i = 0;
  for (; i + VL <= n; i += VL)
    acc += vload(x + i);
  float s = hsum(acc);
  for (; i < n; i++)
    s += x[i];
  float m = s / (float)n;
  acc = vsplat(0.0f);
  for (i = 0; i + VL <= n; i += VL) {
    vf d = vload(x + i) - m;
    acc += d * d;
  }
  float v = hsum(acc);
  for (; i < n; i++)
    v += (x[i] - m) * (x[i] - m);
  *mean = m;
  *rstd = 1.0f / sqrtf(v / (float)n + eps);
}

HET_SIMD_CLONES void het_nlp_layernorm_rows(const float *x, float *y,
                                       const float *gamma, const float *beta,
                                       int64_t rows, int64_t n, float eps) {
  for (int64_t r = 0; r < rows; r++, x += n, y += n) {
    float m, rs;
    row_moments(x, n, eps, &m, &rs);
    int64_t i = 0;
    for (; i + VL <= n; i += VL) {
      vf v = (vload(x + i) - m) * rs;
      if (gamma)
        v *= vload(gamma + i);
      if (beta)
        v += vload(beta + i);
      vstore(y + i, v);
    }
    for (; i < n; i++) {
      float v = (x[i] - m) * rs;
      y[i] = (gamma ? v * gamma[i] : v) + (beta ? beta[i] : 0.0f);
    }
  }
}
