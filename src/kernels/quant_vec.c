/* quant_vec.c — the array loops of quant_vec.h: an AVX-512 body of 16
 * elements a step (float division or fused multiply-add as each function
 * says, cvtps_epi32 under the default
 * round-to-nearest-even mode, saturation by clamping in int32), and the
 * scalar loop that finishes the tail and serves other CPUs. */
#include "kernels/quant_vec.h"

#include <math.h>

/* round(r) + zp saturated; NaN gives the type's minimum, as the vector
 * body does. */
static inline int32_t qv_round_sat(float r, int32_t zp, bool is_signed) {
  float lo = (float)((is_signed ? -128 : 0) - zp);
  float hi = (float)((is_signed ? 127 : 255) - zp);
  r = isnan(r) || r < lo ? lo : r > hi ? hi : r;
  return (int32_t)nearbyintf(r) + zp;
}

static inline int32_t qv_load(const void *p, bool is_signed, int64_t i) {
  return is_signed ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static inline void qv_store(void *p, bool is_signed, int64_t i, int32_t v) {
  if (is_signed)
    ((int8_t *)p)[i] = (int8_t)v;
  else
    ((uint8_t *)p)[i] = (uint8_t)v;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "kernels/pack_avx512.h"

#define QV_TARGET __attribute__((target("avx512f,avx512bw")))

QV_TARGET static inline __m512i qv_load16(const void *p, bool is_signed,
                                          int64_t i) {
  __m128i b = _mm_loadu_si128((const __m128i *)(const void *)
                                  ((const uint8_t *)p + i));
  return is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

/* round(r) + zp saturated into bytes, in both widths below.  r is
 * clamped to the type's range around zp in float first (integral bounds,
 * so rounding after clamping is the same as before), which also sends NaN
 * to the minimum (maxps returns its second operand for NaN) and keeps the
 * conversion in range. */
typedef struct qv_pack {
  __m512 lo, hi;
  int32_t zp;
  __m512i zp16;
  bool is_signed;
} qv_pack;

QV_TARGET static inline qv_pack qv_pack_init(bool is_signed, int32_t zp) {
  qv_pack k;
  k.lo = _mm512_set1_ps((float)((is_signed ? -128 : 0) - zp));
  k.hi = _mm512_set1_ps((float)((is_signed ? 127 : 255) - zp));
  k.zp = zp;
  k.zp16 = _mm512_set1_epi16((short)zp);
  k.is_signed = is_signed;
  return k;
}

QV_TARGET static inline __m512i qv_pack_cvt(const qv_pack *k, __m512 r) {
  return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(r, k->lo), k->hi));
}

/* The same without the clamp, for r known finite and below 2^30 in
 * magnitude: the pack's saturation (16 bits, zp, 8 bits) then gives the
 * clamp's bytes, its bounds being integral. */
QV_TARGET static inline __m512i qv_pack_cvt_open(const qv_pack *k, __m512 r) {
  (void)k;
  return _mm512_cvtps_epi32(r);
}

/* 16 values as 16 bytes at p + i. */
QV_TARGET static inline void qv_store16(const qv_pack *k, void *p, int64_t i,
                                        __m512 r) {
  __m512i q = _mm512_add_epi32(qv_pack_cvt(k, r), _mm512_set1_epi32(k->zp));
  _mm_storeu_si128((__m128i *)(void *)((uint8_t *)p + i),
                   _mm512_cvtepi32_epi8(q));
}

/* 64 values at a time (pack_avx512.h; zp added in 16 bits, saturating),
 * each through CVT (qv_pack_cvt or, where r is known in range,
 * qv_pack_cvt_open). */
#define QV_PACK_STORE(CVT, k, p, i, r0, r1, r2, r3)                        \
  het_pack64_store(CVT(k, r0), CVT(k, r1), CVT(k, r2), CVT(k, r3),        \
                   (k)->zp16, (k)->is_signed, (uint8_t *)(p) + (i))
QV_TARGET static inline void qv_pack_store(const qv_pack *k, void *p,
                                           int64_t i, __m512 r0, __m512 r1,
                                           __m512 r2, __m512 r3) {
  QV_PACK_STORE(qv_pack_cvt, k, p, i, r0, r1, r2, r3);
}

QV_TARGET static int64_t qv_quantize_avx512(const float *x, float scale,
                                            int32_t zp, bool is_signed,
                                            void *y, int64_t n) {
  __m512 s = _mm512_set1_ps(scale);
  qv_pack k = qv_pack_init(is_signed, zp);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64)
    qv_pack_store(&k, y, i, _mm512_div_ps(_mm512_loadu_ps(x + i), s),
                  _mm512_div_ps(_mm512_loadu_ps(x + i + 16), s),
                  _mm512_div_ps(_mm512_loadu_ps(x + i + 32), s),
                  _mm512_div_ps(_mm512_loadu_ps(x + i + 48), s));
  for (; i + 16 <= n; i += 16)
    qv_store16(&k, y, i, _mm512_div_ps(_mm512_loadu_ps(x + i), s));
  return i;
}

QV_TARGET static int64_t qv_dequantize_avx512(const void *q, bool is_signed,
                                              int32_t zp, float scale,
                                              float *y, int64_t n) {
  __m512 s = _mm512_set1_ps(scale);
  __m512i z = _mm512_set1_epi32(zp);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i v = _mm512_sub_epi32(qv_load16(q, is_signed, i), z);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(v), s));
  }
  return i;
}

QV_TARGET static int64_t qv_add_avx512(const void *a, float ra, int32_t az,
                                       const void *b, float rb, int32_t bz,
                                       int32_t cz, bool is_signed, void *c,
                                       int64_t n) {
  __m512 sa = _mm512_set1_ps(ra), sb = _mm512_set1_ps(rb);
  __m512i za = _mm512_set1_epi32(az), zb = _mm512_set1_epi32(bz);
  qv_pack k = qv_pack_init(is_signed, cz);
  int64_t i = 0;
  /* |a - az|, |b - bz| <= 255: below 2^30 (and not NaN) without a clamp
   * for the scales of real models; the clamp cost 2 of 12 operations per
   * 16 bytes */
  bool open = 255.0 * (fabs((double)ra) + fabs((double)rb)) < 1073741824.0;
#define QV_ADD16(j)                                                         \
  _mm512_fmadd_ps(                                                          \
      _mm512_cvtepi32_ps(                                                   \
          _mm512_sub_epi32(qv_load16(b, is_signed, i + 16 * (j)), zb)),     \
      sb,                                                                   \
      _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(                    \
                        qv_load16(a, is_signed, i + 16 * (j)), za)),        \
                    sa))
  if (open)
    for (; i + 64 <= n; i += 64)
      QV_PACK_STORE(qv_pack_cvt_open, &k, c, i, QV_ADD16(0), QV_ADD16(1),
                    QV_ADD16(2), QV_ADD16(3));
  else
    for (; i + 64 <= n; i += 64)
      QV_PACK_STORE(qv_pack_cvt, &k, c, i, QV_ADD16(0), QV_ADD16(1),
                    QV_ADD16(2), QV_ADD16(3));
#undef QV_ADD16
  for (; i + 16 <= n; i += 16) {
    __m512 fa = _mm512_mul_ps(
        _mm512_cvtepi32_ps(_mm512_sub_epi32(qv_load16(a, is_signed, i), za)),
        sa);
    __m512 db =
        _mm512_cvtepi32_ps(_mm512_sub_epi32(qv_load16(b, is_signed, i), zb));
    qv_store16(&k, c, i, _mm512_fmadd_ps(db, sb, fa));
  }
  return i;
}

/* Running min and max of x folded into *mn, *mx; NaN elements are
 * skipped, as the scalar comparisons skip them (min_ps returns its second
 * operand, the accumulator, when the first is NaN). */
QV_TARGET static int64_t qv_minmax_avx512(const float *x, int64_t n,
                                          float *mn, float *mx) {
  __m512 lo = _mm512_set1_ps(*mn), hi = _mm512_set1_ps(*mx);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    lo = _mm512_min_ps(v, lo);
    hi = _mm512_max_ps(v, hi);
  }
  *mn = _mm512_reduce_min_ps(lo);
  *mx = _mm512_reduce_max_ps(hi);
  return i;
}

static bool qv_avx512(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}
#else
static bool qv_avx512(void) { return false; }
#define qv_quantize_avx512(...) 0
#define qv_dequantize_avx512(...) 0
#define qv_add_avx512(...) 0
#define qv_minmax_avx512(...) 0
#endif

void het_quant_vec_minmax(const float *x, int64_t n, float *mn, float *mx) {
  int64_t i = qv_avx512() ? qv_minmax_avx512(x, n, mn, mx) : 0;
  for (; i < n; i++) {
    *mn = x[i] < *mn ? x[i] : *mn;
    *mx = x[i] > *mx ? x[i] : *mx;
  }
}

void het_quant_vec_quantize(const float *x, float scale, int32_t zp,
                            bool is_signed, void *y, int64_t n) {
  int64_t i = qv_avx512() ? qv_quantize_avx512(x, scale, zp, is_signed, y, n)
                          : 0;
  for (; i < n; i++)
    qv_store(y, is_signed, i, qv_round_sat(x[i] / scale, zp, is_signed));
}

void het_quant_vec_dequantize(const void *q, bool is_signed, int32_t zp,
                              float scale, float *y, int64_t n) {
  int64_t i = qv_avx512()
                  ? qv_dequantize_avx512(q, is_signed, zp, scale, y, n)
                  : 0;
  for (; i < n; i++)
    y[i] = (float)(qv_load(q, is_signed, i) - zp) * scale;
}

void het_quant_vec_add(const void *a, float as, int32_t az, const void *b,
                       float bs, int32_t bz, float cs, int32_t cz,
                       bool is_signed, void *c, int64_t n) {
  float ra = as / cs, rb = bs / cs;
  int64_t i = qv_avx512() ? qv_add_avx512(a, ra, az, b, rb, bz, cz, is_signed,
                                          c, n)
                          : 0;
  for (; i < n; i++) {
    float fa = (float)(qv_load(a, is_signed, i) - az) * ra;
    float db = (float)(qv_load(b, is_signed, i) - bz);
    qv_store(c, is_signed, i, qv_round_sat(fmaf(db, rb, fa), cz, is_signed));
  }
}
