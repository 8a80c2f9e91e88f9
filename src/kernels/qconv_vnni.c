/* qconv_vnni.c — the 1x1 int8 convolution of qconv_vnni.h.
 *
 * Y = requant(X · Wᵀ + bias) over channels-last rows: a tile is 6 pixel
 * rows by one 64-channel weight panel, 24 int32 accumulators that start
 * at the bias; each step loads the panel's next 4 input channels (4
 * vectors of 16 channels x 4 bytes), broadcasts each row's 4 input bytes
 * and issues 24 vpdpbusd (u8 x s8, 4 products summed into each int32
 * lane).  The tile is then requantized in registers and stored as 64
 * bytes per row: float(acc) * scale, rounded half to even by vcvtps2dq
 * (the default rounding mode), y's zero point added with saturation in
 * 16 bits and packed with saturation to 8 bits, the reference's
 * sat(rint(float(acc + bias) * m) + y_zp) to the bit.  oneDNN 2.6's
 * brgconv_1x1 adds the bias in float and rounds with a post-op, and on
 * ResNet-50's 64 -> 256 layer at 56x56 took 161-166 us here against this
 * kernel's 131-145 (hot caches, one thread; 128 -> 512 at 28x28: 137-144
 * against 121-130; the reducing 1x1s and 14x14, 7x7 ones within ±5%).
 * The vpdpbusd are inline assembly: GCC 12 copies the accumulator of the
 * intrinsic's result around each one and spills the tile (2x slower).
 * Tiles go row range by row range over the loop runner; inside a range
 * the panels go innermost while the whole weights stay in L2
 * (QV_W_L2_BYTES), else each panel sweeps the rows.
 */
#include "kernels/qconv_vnni.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QV_X86 1
#endif

#define QV_ROWS 6
/* Weights up to this size stay in L2 while the panels go innermost. */
#define QV_W_L2_BYTES (256 * 1024)
/* Above this, float(acc) * scale saturates anyway: the clamp keeps
 * vcvtps2dq from its "integer indefinite" (INT_MIN) on overflow. */
#define QV_CLAMP 65536.0f

bool het_qv_usable(void) {
#ifdef QV_X86
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

bool het_qv_1x1_fits(int64_t n, int64_t k) {
  return n > 0 && k > 0 && n % HET_QV_PANEL == 0 && k % 4 == 0;
}

/* Byte i of output channel c in the panels. */
static size_t qv_at(int64_t k, int64_t c, int64_t i) {
  return (size_t)((c / HET_QV_PANEL) * k * HET_QV_PANEL +
                  (i / 4) * 4 * HET_QV_PANEL + (c % HET_QV_PANEL) * 4 + i % 4);
}

static void *qv_alloc(size_t n) {
  return aligned_alloc(64, (n + 63) & ~(size_t)63);
}

bool het_qv_1x1_init(het_qv_1x1 *q, const int8_t *w, const int8_t *packed,
                     int64_t n, int64_t k, const int32_t *bias, int32_t xzp,
                     const float *scales, int n_scales, int32_t yzp,
                     bool y_signed) {
  memset(q, 0, sizeof *q);
  q->w_borrowed = packed != NULL;
  q->w = packed ? (int8_t *)(uintptr_t)packed : qv_alloc((size_t)(n * k));
  q->bias = qv_alloc((size_t)n * sizeof(int32_t));
  q->scale = qv_alloc((size_t)n * sizeof(float));
  if (!q->w || !q->bias || !q->scale) {
    het_qv_1x1_free(q);
    return false;
  }
  q->n = n;
  q->k = k;
  q->yzp = yzp;
  q->y_signed = y_signed;
  for (int64_t c = 0; c < n; c++) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; i++) {
      if (!packed)
        q->w[qv_at(k, c, i)] = w[c * k + i];
      sum += q->w[qv_at(k, c, i)];
    }
    /* sum (x - xzp) w + b = sum x w + (b - xzp sum w), exactly in int32 */
    q->bias[c] = (int32_t)((uint32_t)(bias ? bias[c] : 0) -
                           (uint32_t)xzp * (uint32_t)sum);
    q->scale[c] = scales[n_scales == 1 ? 0 : c];
  }
  return true;
}

void het_qv_1x1_free(het_qv_1x1 *q) {
  if (!q->w_borrowed)
    free(q->w);
  free(q->bias);
  free(q->scale);
  memset(q, 0, sizeof *q);
}

#ifdef QV_X86
#define QV_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* acc += the 4-byte groups of a (u8) times those of b (s8), summed. */
#define QV_DP(acc, a, b) \
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

/* The 64 int32 of one row of a tile into 64 bytes at y. */
QV_TARGET static inline void qv_store_row(const het_qv_1x1 *q, int64_t c0,
                                          __m512i a0, __m512i a1, __m512i a2,
                                          __m512i a3, uint8_t *y) {
  const __m512 hi = _mm512_set1_ps(QV_CLAMP);
  const float *s = q->scale + c0;
#define QV_RQ(a, j)                                                  \
  _mm512_cvtps_epi32(_mm512_min_ps(                                  \
      _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_load_ps(s + 16 * j)), hi))
  __m512i z = _mm512_set1_epi16((short)q->yzp);
  __m512i p0 = _mm512_adds_epi16(_mm512_packs_epi32(QV_RQ(a0, 0), QV_RQ(a1, 1)), z);
  __m512i p1 = _mm512_adds_epi16(_mm512_packs_epi32(QV_RQ(a2, 2), QV_RQ(a3, 3)), z);
#undef QV_RQ
  /* lane L holds dwords L of a0..a3 in turn: gather each vector's four */
  const __m512i order =
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i b = q->y_signed ? _mm512_packs_epi16(p0, p1)
                          : _mm512_packus_epi16(p0, p1);
  _mm512_storeu_si512(y, _mm512_permutexvar_epi32(order, b));
}

/* A full tile: rows x[0..6) (stride k) times panel c0, into y (stride n). */
QV_TARGET __attribute__((noinline)) static void
qv_tile6(const het_qv_1x1 *q, const uint8_t *x, int64_t c0, uint8_t *y) {
  int64_t k = q->k, n = q->n;
  const int8_t *w = q->w + c0 * k;
  const int32_t *bias = q->bias + c0;
  __m512i b0 = _mm512_load_si512(bias), b1 = _mm512_load_si512(bias + 16);
  __m512i b2 = _mm512_load_si512(bias + 32), b3 = _mm512_load_si512(bias + 48);
#define QV_DECL(r) __m512i r##0 = b0, r##1 = b1, r##2 = b2, r##3 = b3;
  QV_DECL(c0_) QV_DECL(c1_) QV_DECL(c2_) QV_DECL(c3_) QV_DECL(c4_)
  QV_DECL(c5_)
#undef QV_DECL
  for (int64_t i = 0; i < k; i += 4, w += 4 * HET_QV_PANEL) {
    __m512i w0 = _mm512_load_si512(w), w1 = _mm512_load_si512(w + 64);
    __m512i w2 = _mm512_load_si512(w + 128), w3 = _mm512_load_si512(w + 192);
#define QV_ROW(r, row)                                              \
  {                                                                 \
    int32_t v;                                                      \
    memcpy(&v, x + (row) * k + i, 4);                               \
    __m512i a = _mm512_set1_epi32(v);                               \
    QV_DP(r##0, a, w0);                                             \
    QV_DP(r##1, a, w1);                                             \
    QV_DP(r##2, a, w2);                                             \
    QV_DP(r##3, a, w3);                                             \
  }
    QV_ROW(c0_, 0) QV_ROW(c1_, 1) QV_ROW(c2_, 2) QV_ROW(c3_, 3)
    QV_ROW(c4_, 4) QV_ROW(c5_, 5)
#undef QV_ROW
  }
  qv_store_row(q, c0, c0_0, c0_1, c0_2, c0_3, y);
  qv_store_row(q, c0, c1_0, c1_1, c1_2, c1_3, y + n);
  qv_store_row(q, c0, c2_0, c2_1, c2_2, c2_3, y + 2 * n);
  qv_store_row(q, c0, c3_0, c3_1, c3_2, c3_3, y + 3 * n);
  qv_store_row(q, c0, c4_0, c4_1, c4_2, c4_3, y + 4 * n);
  qv_store_row(q, c0, c5_0, c5_1, c5_2, c5_3, y + 5 * n);
}

/* The last rows (fewer than 6), one at a time. */
QV_TARGET __attribute__((noinline)) static void
qv_tile1(const het_qv_1x1 *q, const uint8_t *x, int64_t c0, uint8_t *y) {
  const int8_t *w = q->w + c0 * q->k;
  const int32_t *bias = q->bias + c0;
  __m512i a0 = _mm512_load_si512(bias), a1 = _mm512_load_si512(bias + 16);
  __m512i a2 = _mm512_load_si512(bias + 32), a3 = _mm512_load_si512(bias + 48);
  for (int64_t i = 0; i < q->k; i += 4, w += 4 * HET_QV_PANEL) {
    int32_t v;
    memcpy(&v, x + i, 4);
    __m512i a = _mm512_set1_epi32(v);
    QV_DP(a0, a, _mm512_load_si512(w));
    QV_DP(a1, a, _mm512_load_si512(w + 64));
    QV_DP(a2, a, _mm512_load_si512(w + 128));
    QV_DP(a3, a, _mm512_load_si512(w + 192));
  }
  qv_store_row(q, c0, a0, a1, a2, a3, y);
}

typedef struct qv_job {
  const het_qv_1x1 *q;
  const uint8_t *x;
  uint8_t *y;
  int64_t pixels;
} qv_job;

/* Rows [r0, r1) of panel c0. */
QV_TARGET static void qv_rows(const qv_job *j, int64_t c0, int64_t r0,
                              int64_t r1) {
  int64_t k = j->q->k, n = j->q->n, r = r0;
  for (; r + QV_ROWS <= r1; r += QV_ROWS)
    qv_tile6(j->q, j->x + r * k, c0, j->y + r * n + c0);
  for (; r < r1; r++)
    qv_tile1(j->q, j->x + r * k, c0, j->y + r * n + c0);
}

/* Tiles [t0, t1) of 6 rows (the last one maybe shorter). */
static void qv_range(void *arg, int64_t t0, int64_t t1) {
  const qv_job *j = arg;
  int64_t n = j->q->n, r1 = t1 * QV_ROWS < j->pixels ? t1 * QV_ROWS : j->pixels;
  if (n * j->q->k <= QV_W_L2_BYTES) {
    for (int64_t t = t0; t < t1; t++) {
      int64_t e = (t + 1) * QV_ROWS < r1 ? (t + 1) * QV_ROWS : r1;
      for (int64_t c0 = 0; c0 < n; c0 += HET_QV_PANEL)
        qv_rows(j, c0, t * QV_ROWS, e);
    }
  } else {
    for (int64_t c0 = 0; c0 < n; c0 += HET_QV_PANEL)
      qv_rows(j, c0, t0 * QV_ROWS, r1);
  }
}
#endif

void het_qv_1x1_run(const het_qv_1x1 *q, const uint8_t *x, int64_t pixels,
                    void *y, const het_parallel *par) {
#ifdef QV_X86
  qv_job j = {.q = q, .x = x, .y = y, .pixels = pixels};
  int64_t tiles = (pixels + QV_ROWS - 1) / QV_ROWS;
  /* ~64K multiply-adds per tile and panel; 2M or more per share */
  int64_t per_tile = q->k * q->n * QV_ROWS;
  int64_t grain = per_tile >= (1 << 21) ? 1 : (1 << 21) / per_tile;
  het_parallel_for(par, tiles, grain, qv_range, &j);
#else
  (void)q, (void)x, (void)pixels, (void)y, (void)par;
#endif
}
