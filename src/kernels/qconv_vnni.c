/* qconv_vnni.c — the int8 convolution of qconv_vnni.h.
 *
 * Y = requant(X · Wᵀ + bias) over channels-last pixels: a tile is 6
 * pixels of one output row by one 64-channel weight panel, 24 int32
 * accumulators that start at the bias; each step loads the panel's next 4
 * weight bytes per channel (4 vectors of 16 channels x 4 bytes),
 * broadcasts each pixel's next 4 input bytes and issues 24 vpdpbusd (u8 x
 * s8, 4 products summed into each int32 lane).  A pixel's bytes are read
 * as taps: runs of kt bytes tap_step apart (a 1x1 Conv is one run of its
 * channels; a Conv on few channels reads each kernel row of its window,
 * kernel width x channels bytes contiguous in the padded channels-last
 * image, as one run).  The tile is then requantized in registers and
 * stored as 64 bytes per pixel: float(acc) * scale, rounded half to even
 * by vcvtps2dq (the default rounding mode), y's zero point added with
 * saturation in 16 bits and packed with saturation to 8 bits, the
 * reference's sat(rint(float(acc + bias) * m) + y_zp) to the bit.
 * oneDNN 2.6's brgconv_1x1 adds the bias in float and rounds with a
 * post-op, and on ResNet-50's 64 -> 256 layer at 56x56 took 161-166 us
 * here against this kernel's 131-145 (hot caches, one thread; 128 -> 512
 * at 28x28: 137-144 against 121-130; the reducing 1x1s and 14x14, 7x7
 * ones within ±5%).  The vpdpbusd are inline assembly: GCC 12 copies the
 * accumulator of the intrinsic's result around each one and spills the
 * tile (2x slower).  Tiles go in ranges over the loop runner, every
 * panel on each tile, or each panel sweeping a range of tiles
 * (het_qv_run says which when).
 */
#include "kernels/qconv_vnni.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QV_X86 1
#endif

#include "kernels/pack_avx512.h"

#define QV_ROWS 6
/* Weights up to this size stay in L2 while the panels go innermost. */
#define QV_W_L2_BYTES (256 * 1024)
/* Above this, float(acc) * scale saturates anyway: the clamp keeps
 * vcvtps2dq from its "integer indefinite" (INT_MIN) on overflow.  Only
 * kernels whose products can reach 2^30 clamp (het_qv_conv.clamp): on
 * the rest the vminps cost 4% (ResNet's 64 -> 256 at 56x56, hot). */
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

bool het_qv_fits(int64_t n, int taps, int64_t kt) {
  return n > 0 && taps >= 1 && taps <= HET_QV_MAX_TAPS && kt > 0 &&
         kt % 4 == 0;
}

int64_t het_qv_padding(int64_t n) {
  return (HET_QV_PANEL - n % HET_QV_PANEL) % HET_QV_PANEL;
}

/* Byte i of output channel c in the panels. */
static size_t qv_at(int64_t k, int64_t c, int64_t i) {
  return (size_t)((c / HET_QV_PANEL) * k * HET_QV_PANEL +
                  (i / 4) * 4 * HET_QV_PANEL + (c % HET_QV_PANEL) * 4 + i % 4);
}

static void *qv_alloc(size_t n) {
  return aligned_alloc(64, (n + 63) & ~(size_t)63);
}

bool het_qv_init(het_qv_conv *q, const int8_t *w, const int8_t *packed,
                 int64_t n, int taps, int64_t kt, const int32_t *bias,
                 int32_t xzp, const float *scales, int n_scales, int32_t yzp,
                 bool y_signed) {
  int64_t k = taps * kt, np = n + het_qv_padding(n);
  memset(q, 0, sizeof *q);
  q->w_borrowed = packed != NULL;
  q->w = packed ? (int8_t *)(uintptr_t)packed : qv_alloc((size_t)(np * k));
  q->bias = qv_alloc((size_t)np * sizeof(int32_t));
  q->scale = qv_alloc((size_t)np * sizeof(float));
  if (!q->w || !q->bias || !q->scale) {
    het_qv_free(q);
    return false;
  }
  if (!packed && np > n) /* the last panel, padding channels included */
    memset(q->w + (np - HET_QV_PANEL) * k, 0, (size_t)(HET_QV_PANEL * k));
  for (int64_t c = n; c < np; c++) {
    q->bias[c] = 0;
    q->scale[c] = 0.0f;
  }
  q->n = n;
  q->np = np;
  q->k = k;
  q->taps = taps;
  q->kt = kt;
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
    /* the largest |acc| is k * 255 * 128 + |bias| */
    double top = ((double)k * 255.0 * 128.0 + fabs((double)q->bias[c])) *
                 fabs((double)q->scale[c]);
    q->clamp |= !(top < 1073741824.0);
  }
  return true;
}

void het_qv_free(het_qv_conv *q) {
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

/* The 64 int32 of one row of a tile into the bytes of channels c0..c0+63
 * at y (fewer in a last panel past n). */
QV_TARGET static inline void qv_store_row(const het_qv_conv *q, int64_t c0,
                                          __m512i a0, __m512i a1, __m512i a2,
                                          __m512i a3, uint8_t *y) {
  const __m512 hi = _mm512_set1_ps(QV_CLAMP);
  const float *s = q->scale + c0;
#define QV_MUL(a, j) \
  _mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_load_ps(s + 16 * j))
#define QV_RQ(a, j)                                               \
  _mm512_cvtps_epi32(q->clamp ? _mm512_min_ps(QV_MUL(a, j), hi)   \
                              : QV_MUL(a, j))
  __m512i b = het_pack64(QV_RQ(a0, 0), QV_RQ(a1, 1), QV_RQ(a2, 2),
                         QV_RQ(a3, 3), _mm512_set1_epi16((short)q->yzp),
                         q->y_signed);
  if (c0 + HET_QV_PANEL <= q->n)
    _mm512_storeu_si512(y, b);
  else /* the last panel's channels up to n */
    _mm512_mask_storeu_epi8(y, ~(__mmask64)0 >> (c0 + HET_QV_PANEL - q->n), b);
#undef QV_RQ
#undef QV_MUL
}

/* Where tile pixel r's bytes of tap t start: x + r * ps + t * ts; pf,
 * when not NULL, the weight bytes to fetch into L2 meanwhile, a line
 * per step (a quarter of the next panel, or the next node's weights:
 * qv_fetch, qv_ahead). */
typedef struct qv_src {
  const uint8_t *x;
  int64_t ps, ts;
  const int8_t *pf;
} qv_src;

/* A full tile's 24 accumulators, at the bias of panel c0. */
#define QV_TILE6_INIT                                                      \
  const int32_t *bias = q->bias + c0;                                      \
  __m512i b0 = _mm512_load_si512(bias), b1 = _mm512_load_si512(bias + 16); \
  __m512i b2 = _mm512_load_si512(bias + 32),                               \
          b3 = _mm512_load_si512(bias + 48);                               \
  __m512i c0_0 = b0, c0_1 = b1, c0_2 = b2, c0_3 = b3;                      \
  __m512i c1_0 = b0, c1_1 = b1, c1_2 = b2, c1_3 = b3;                      \
  __m512i c2_0 = b0, c2_1 = b1, c2_2 = b2, c2_3 = b3;                      \
  __m512i c3_0 = b0, c3_1 = b1, c3_2 = b2, c3_3 = b3;                      \
  __m512i c4_0 = b0, c4_1 = b1, c4_2 = b2, c4_3 = b3;                      \
  __m512i c5_0 = b0, c5_1 = b1, c5_2 = b2, c5_3 = b3;

/* One step of a full tile: 4 weight bytes per channel at w, 4 input
 * bytes of pixel r at ADDR + r * ps, then PF (a prefetch, or nothing). */
#define QV_TILE6_STEP(ADDR, PF)                                             \
  {                                                                         \
    __m512i w0 = _mm512_load_si512(w), w1 = _mm512_load_si512(w + 64);      \
    __m512i w2 = _mm512_load_si512(w + 128), w3 = _mm512_load_si512(w + 192); \
    PF                                                                      \
    QV_PIXEL(c0_, 0, ADDR) QV_PIXEL(c1_, 1, ADDR) QV_PIXEL(c2_, 2, ADDR)   \
    QV_PIXEL(c3_, 3, ADDR) QV_PIXEL(c4_, 4, ADDR) QV_PIXEL(c5_, 5, ADDR)   \
  }
#define QV_PIXEL(acc, r, ADDR)                                              \
  {                                                                         \
    int32_t v;                                                              \
    memcpy(&v, (ADDR) + (r) * ps, 4);                                       \
    __m512i a = _mm512_set1_epi32(v);                                       \
    QV_DP(acc##0, a, w0);                                                   \
    QV_DP(acc##1, a, w1);                                                   \
    QV_DP(acc##2, a, w2);                                                   \
    QV_DP(acc##3, a, w3);                                                   \
  }

#define QV_TILE6_STORE                                              \
  qv_store_row(q, c0, c0_0, c0_1, c0_2, c0_3, y);                   \
  qv_store_row(q, c0, c1_0, c1_1, c1_2, c1_3, y + q->n);            \
  qv_store_row(q, c0, c2_0, c2_1, c2_2, c2_3, y + 2 * q->n);        \
  qv_store_row(q, c0, c3_0, c3_1, c3_2, c3_3, y + 3 * q->n);        \
  qv_store_row(q, c0, c4_0, c4_1, c4_2, c4_3, y + 4 * q->n);        \
  qv_store_row(q, c0, c5_0, c5_1, c5_2, c5_3, y + 5 * q->n);

/* A full tile of a one-run kernel (1x1): 6 pixels of src times panel
 * c0, into y (stride n).  Kept apart from the one with taps: with the
 * tap loop around it GCC 12's code for this loop ran 20% slower (ResNet's
 * 64 -> 256 at 56x56: 173-182 against 141-145 us).  Two copies: the
 * prefetching one's extra load per step cost 4% on that layer when its
 * weights sit in L1 anyway (157 -> 164 us hot). */
#define QV_TILE6_FLAT(PF)                                                  \
  const int8_t *w = q->w + c0 * q->k;                                      \
  const uint8_t *x = src.x;                                                \
  int64_t ps = src.ps;                                                     \
  QV_TILE6_INIT                                                            \
  for (int64_t i = 0; i < q->k; i += 4, w += 4 * HET_QV_PANEL)             \
    QV_TILE6_STEP(x + i, PF)                                               \
  QV_TILE6_STORE
QV_TARGET __attribute__((noinline)) static void
qv_tile6(const het_qv_conv *q, qv_src src, int64_t c0, uint8_t *y) {
  QV_TILE6_FLAT()
}
QV_TARGET __attribute__((noinline)) static void
qv_tile6_pf(const het_qv_conv *q, qv_src src, int64_t c0, uint8_t *y) {
  const int8_t *pf = src.pf;
  QV_TILE6_FLAT(_mm_prefetch((const char *)pf, _MM_HINT_T1); pf += 64;)
}
#undef QV_TILE6_FLAT

/* The same with taps: run t of pixel r at src.x + r * ps + t * ts. */
QV_TARGET __attribute__((noinline)) static void
qv_tile6_taps(const het_qv_conv *q, qv_src src, int64_t c0, uint8_t *y) {
  const int8_t *w = q->w + c0 * q->k;
  int64_t ps = src.ps;
  QV_TILE6_INIT
  for (int t = 0; t < q->taps; t++) {
    const uint8_t *x = src.x + t * src.ts;
    for (int64_t i = 0; i < q->kt; i += 4, w += 4 * HET_QV_PANEL)
      QV_TILE6_STEP(x + i, )
  }
  QV_TILE6_STORE
}
#undef QV_TILE6_INIT
#undef QV_TILE6_STEP
#undef QV_PIXEL
#undef QV_TILE6_STORE

/* One pixel (the last ones of a row, fewer than 6). */
QV_TARGET __attribute__((noinline)) static void
qv_tile1(const het_qv_conv *q, qv_src src, int64_t c0, uint8_t *y) {
  const int8_t *w = q->w + c0 * q->k;
  const int32_t *bias = q->bias + c0;
  __m512i a0 = _mm512_load_si512(bias), a1 = _mm512_load_si512(bias + 16);
  __m512i a2 = _mm512_load_si512(bias + 32), a3 = _mm512_load_si512(bias + 48);
  for (int t = 0; t < q->taps; t++) {
    const uint8_t *x = src.x + t * src.ts;
    for (int64_t i = 0; i < q->kt; i += 4, w += 4 * HET_QV_PANEL) {
      int32_t v;
      memcpy(&v, x + i, 4);
      __m512i a = _mm512_set1_epi32(v);
      QV_DP(a0, a, _mm512_load_si512(w));
      QV_DP(a1, a, _mm512_load_si512(w + 64));
      QV_DP(a2, a, _mm512_load_si512(w + 128));
      QV_DP(a3, a, _mm512_load_si512(w + 192));
    }
  }
  qv_store_row(q, c0, a0, a1, a2, a3, y);
}

typedef struct qv_job {
  const het_qv_conv *q;
  const uint8_t *x;
  const het_qv_geom *g;
  uint8_t *y;
  int64_t tiles_per_row;
  int64_t tiles;       /* of the whole run */
  bool panels_inner;   /* units are tiles (every panel each), else
                          (panel, tile) pairs, panel-major */
  const char *ahead;   /* the bytes to prefetch for the next node */
  int64_t ahead_lines; /* and their 64-byte lines */
} qv_job;

/* The tiles at the start of each panel's sweep that fetch the next panel
 * (qv_fetch), a share each. */
#define QV_FETCH_TILES 4

/* The bytes of the next panel (after c0) that tile t of a panel-major
 * sweep fetches: tiles 0-3 a quarter each, so that the panel is in L2
 * when the sweep reaches it.  ResNet-50's 7x7 1x1s read 1-2 MiB of
 * weights from memory: 3-32 us less per layer, the model's node sum
 * -0.6% (ten alternations, one thread).  NULL for the other tiles, the
 * last panel and the taps kernel. */
static const int8_t *qv_fetch(const het_qv_conv *q, int64_t c0, int64_t t) {
  if (t >= QV_FETCH_TILES || c0 + HET_QV_PANEL >= q->np || q->taps != 1)
    return NULL;
  return q->w + (c0 + HET_QV_PANEL) * q->k +
         t * (HET_QV_PANEL / QV_FETCH_TILES) * q->k;
}

/* The next node's bytes that tile t of panel c0 fetches (a line per
 * step, k / 4 lines) when qv_fetch gives it none: the free tiles, in
 * sweep order, take the lines one tile's worth after another (the tiles
 * of a row's last, partial pixels take theirs without fetching).  NULL
 * past the end, or without ahead. */
static const int8_t *qv_ahead(const qv_job *j, int64_t c0, int64_t t) {
  const het_qv_conv *q = j->q;
  if (!j->ahead || q->taps != 1)
    return NULL;
  int64_t panel = c0 / HET_QV_PANEL, panels = q->np / HET_QV_PANEL, unit;
  if (j->panels_inner) {
    unit = t * panels + panel;
  } else { /* qv_fetch's tiles of every panel but the last are taken */
    int64_t own = j->tiles < QV_FETCH_TILES ? j->tiles : QV_FETCH_TILES;
    int64_t free = j->tiles - own;
    if (panel + 1 < panels && t < own)
      return NULL;
    unit = panel * free + (panel + 1 < panels ? t - own : t);
  }
  int64_t line = unit * (q->k / 4);
  return line < j->ahead_lines ? (const int8_t *)(j->ahead + line * 64) : NULL;
}

/* Pixels [p0, p1) of the output row whose X bytes start at row and
 * whose Y pixels at y, panel c0; t0 is the tile at p0. */
QV_TARGET static void qv_pixels(const qv_job *j, const uint8_t *row,
                                uint8_t *y, int64_t p0, int64_t p1,
                                int64_t c0, int64_t t0) {
  const het_qv_geom *g = j->g;
  int64_t n = j->q->n, p = p0;
  qv_src src = {.ps = g->px_step, .ts = g->tap_step};
  y += p0 * n + c0;
  for (; p + QV_ROWS <= p1; p += QV_ROWS, y += QV_ROWS * n) {
    int64_t t = t0 + (p - p0) / QV_ROWS;
    src.x = row + p * g->px_step;
    src.pf = j->panels_inner ? NULL : qv_fetch(j->q, c0, t);
    if (!src.pf)
      src.pf = qv_ahead(j, c0, t);
    if (j->q->taps > 1)
      qv_tile6_taps(j->q, src, c0, y);
    else if (src.pf)
      qv_tile6_pf(j->q, src, c0, y);
    else
      qv_tile6(j->q, src, c0, y);
  }
  for (; p < p1; p++, y += n) {
    src.x = row + p * g->px_step;
    qv_tile1(j->q, src, c0, y);
  }
}

/* The tiles of one output row inside a range: pixels [p0, p1), where
 * the row's X and Y start. */
typedef struct qv_span {
  int64_t p0, p1;
  const uint8_t *x;
  uint8_t *y;
} qv_span;

/* The span starting at tile *u (of a range ending at u1); *u moves past
 * it.  Tile u is pixels 6 (u % tiles_per_row) onwards of output row
 * u / tiles_per_row, the last one of a row maybe shorter. */
static qv_span qv_next(const qv_job *j, int64_t *u, int64_t u1) {
  const het_qv_geom *g = j->g;
  int64_t tpr = j->tiles_per_row, r = *u / tpr;
  int64_t end = (r + 1) * tpr < u1 ? (r + 1) * tpr : u1;
  qv_span s;
  s.p0 = (*u - r * tpr) * QV_ROWS;
  s.p1 = (end - r * tpr) * QV_ROWS < g->px ? (end - r * tpr) * QV_ROWS : g->px;
  s.x = j->x + (r / g->img_rows) * g->img_step +
        (r % g->img_rows) * g->row_step;
  s.y = j->y + r * g->px * j->q->n;
  *u = end;
  return s;
}

/* Units [u0, u1): tiles, every panel on each, or (panel, tile) pairs,
 * panel-major, each panel sweeping its tiles. */
static void qv_range(void *arg, int64_t u0, int64_t u1) {
  const qv_job *j = arg;
  int64_t np = j->q->np;
  if (j->panels_inner) {
    for (int64_t u = u0; u < u1;) {
      int64_t t = u;
      qv_span s = qv_next(j, &u, u1);
      for (int64_t p = s.p0; p < s.p1; p += QV_ROWS, t++)
        for (int64_t c0 = 0; c0 < np; c0 += HET_QV_PANEL)
          qv_pixels(j, s.x, s.y, p, p + QV_ROWS < s.p1 ? p + QV_ROWS : s.p1,
                    c0, t);
    }
    return;
  }
  for (int64_t u = u0; u < u1;) {
    int64_t panel = u / j->tiles, t = u % j->tiles;
    int64_t end = t + (u1 - u) < j->tiles ? t + (u1 - u) : j->tiles;
    u += end - t;
    while (t < end) {
      int64_t t0 = t;
      qv_span s = qv_next(j, &t, end);
      qv_pixels(j, s.x, s.y, s.p0, s.p1, panel * HET_QV_PANEL, t0);
    }
  }
}
#endif

static long qv_ahead_runs;

long het_qv_ahead_runs(void) {
  return __atomic_load_n(&qv_ahead_runs, __ATOMIC_RELAXED);
}

void het_qv_run(const het_qv_conv *q, const uint8_t *x, const het_qv_geom *g,
                void *y, const het_parallel *par, const void *ahead,
                size_t ahead_bytes) {
  if (ahead && ahead_bytes)
    __atomic_fetch_add(&qv_ahead_runs, 1, __ATOMIC_RELAXED);
#ifdef QV_X86
  int64_t tpr = (g->px + QV_ROWS - 1) / QV_ROWS;
  /* One thread: tile by tile while the weights stay in L2.  More: the
   * threads take the tiles apart while the weights are smaller than X
   * (each reads its share of X), else the panels (each its share of the
   * weights; splitting the tiles had each thread stream every weight:
   * ResNet-50's 1024 -> 256 at 14x14, two threads, 113 us against
   * oneDNN's 82; splitting the panels of its 512 -> 128 at 28x28, 97-106
   * against 78). */
  int64_t wbytes = q->np * q->k, xbytes = g->rows * g->px * q->k;
  bool inner = het_parallel_threads(par) == 1 ? wbytes <= QV_W_L2_BYTES
                                              : wbytes <= xbytes;
  qv_job j = {.q = q, .x = x, .g = g, .y = y, .tiles_per_row = tpr,
              .tiles = g->rows * tpr, .panels_inner = inner,
              .ahead = ahead,
              .ahead_lines = ahead ? (int64_t)(ahead_bytes + 63) / 64 : 0};
  /* 2M or more multiply-adds per share of the loop */
  int64_t per_unit = q->k * QV_ROWS * (inner ? q->np : HET_QV_PANEL);
  int64_t grain = per_unit >= (1 << 21) ? 1 : (1 << 21) / per_unit;
  het_parallel_for(par, j.tiles * (inner ? 1 : q->np / HET_QV_PANEL), grain,
                   qv_range, &j);
#else
  (void)q, (void)x, (void)g, (void)y, (void)par, (void)ahead, (void)ahead_bytes;
#endif
}
