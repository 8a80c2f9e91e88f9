/* reduce_f32.c — float32 fast paths of the reduce group that read and
 * write float directly (no double working copy): Reduce* over an
 * [outer, reduced, inner] view, Softmax/LogSoftmax over contiguous rows and
 * the LayerNormalization row.  Sums accumulate in double in 16 lanes (so the
 * compiler vectorises without reassociating: every ISA clone and thread
 * count gives the same bits); extrema compare in float, propagating NaN.
 * The unit loops are built per ISA (HET_SIMD_CLONES).  Outer rows (and
 * blocks of inner columns) are split across the CPU thread pool.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", \
                     "no-trapping-math")
#endif

#include <math.h>
#include <stdlib.h>

#include "kernels/reduce_common.h"
#include "kernels/simd.h"
#include "kernels/parallel.h"

/* Input elements below which a loop stays on one thread, and the width of
 * an inner-column block (one parallel unit when inner > 1). */
#define HET_RED_GRAIN 16384
#define HET_RED_COLS 512
#define HET_RED_LANES 16

/* Lane-wise accumulation of a contiguous row: acc[l] = STEP(acc[l], x),
 * the lanes combined in order with COMB, then the tail with STEP. */
#define HET_RED_ROW_ACC(NAME, INIT, STEP, COMB)                      \
  HET_SIMD_INLINE double NAME(const float *restrict x, int64_t n) { \
    double acc[HET_RED_LANES];                                       \
    for (int l = 0; l < HET_RED_LANES; l++)                          \
      acc[l] = INIT;                                                 \
    int64_t r = 0;                                                   \
    for (; r + HET_RED_LANES <= n; r += HET_RED_LANES)               \
      for (int l = 0; l < HET_RED_LANES; l++)                        \
        acc[l] = STEP(acc[l], (double)x[r + l]);                     \
    for (int w = HET_RED_LANES / 2; w >= 1; w /= 2)                  \
      for (int l = 0; l < w; l++)                                    \
        acc[l] = COMB(acc[l], acc[l + w]);                           \
    double t = acc[0];                                               \
    for (; r < n; r++)                                               \
      t = STEP(t, (double)x[r]);                                     \
    return t;                                                        \
  }
#define HET_RED_ADD(a, v) ((a) + (v))
#define HET_RED_ADD_ABS(a, v) ((a) + fabs(v))
#define HET_RED_ADD_SQ(a, v) ((a) + (v) * (v))
#define HET_RED_MUL(a, v) ((a) * (v))
HET_RED_ROW_ACC(het_f32_row_sum, 0.0, HET_RED_ADD, HET_RED_ADD)
HET_RED_ROW_ACC(het_f32_row_l1, 0.0, HET_RED_ADD_ABS, HET_RED_ADD)
HET_RED_ROW_ACC(het_f32_row_sq, 0.0, HET_RED_ADD_SQ, HET_RED_ADD)
HET_RED_ROW_ACC(het_f32_row_prod, 1.0, HET_RED_MUL, HET_RED_MUL)

/* mode: 0 sum, 1 sum |x|, 2 sum x^2, 3 product */
HET_SIMD_INLINE double het_f32_row_acc(const float *restrict x, int64_t n,
                                       int mode) {
  switch (mode) {
  case 0: return het_f32_row_sum(x, n);
  case 1: return het_f32_row_l1(x, n);
  case 2: return het_f32_row_sq(x, n);
  default: return het_f32_row_prod(x, n);
  }
}

/* max (is_max) or min of a row; NaN wins.  The lanes keep a plain
 * max/min (maxps-style selects) and a separate NaN flag, so the loop has no
 * branches to vectorise around. */
HET_SIMD_INLINE float het_f32_row_ext(const float *restrict x, int64_t n,
                                      bool is_max) {
  float acc[HET_RED_LANES];
  int32_t nan[HET_RED_LANES];
  for (int l = 0; l < HET_RED_LANES; l++)
    acc[l] = is_max ? -INFINITY : INFINITY, nan[l] = 0;
  int64_t r = 0;
  if (is_max)
    for (; r + HET_RED_LANES <= n; r += HET_RED_LANES)
      for (int l = 0; l < HET_RED_LANES; l++) {
        float v = x[r + l];
        acc[l] = v > acc[l] ? v : acc[l];
        nan[l] |= v != v;
      }
  else
    for (; r + HET_RED_LANES <= n; r += HET_RED_LANES)
      for (int l = 0; l < HET_RED_LANES; l++) {
        float v = x[r + l];
        acc[l] = v < acc[l] ? v : acc[l];
        nan[l] |= v != v;
      }
  for (int w = HET_RED_LANES / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; l++) {
      acc[l] = is_max ? (acc[l + w] > acc[l] ? acc[l + w] : acc[l])
                      : (acc[l + w] < acc[l] ? acc[l + w] : acc[l]);
      nan[l] |= nan[l + w];
    }
  float t = acc[0];
  for (; r < n; r++) {
    float v = x[r];
    t = is_max ? (v > t ? v : t) : (v < t ? v : t);
    nan[0] |= v != v;
  }
  return nan[0] ? NAN : t;
}

static double het_f32_finish(int kind, double v, int64_t R) {
  switch (kind) {
  case 1: return v / (double)R;   /* mean */
  case 6: return sqrt(v);         /* L2 */
  case 7: return log(v);          /* log-sum */
  default: return v;
  }
}

/* Column-wise (inner > 1) accumulation of I columns (rows stride S apart)
 * into acc[I] (double). */
HET_SIMD_INLINE void het_f32_cols(const float *restrict x, double *restrict acc,
                         int64_t R, int64_t I, int64_t S, int mode) {
  for (int64_t i = 0; i < I; i++)
    acc[i] = mode == 3 ? 1.0 : 0.0;
  for (int64_t r = 0; r < R; r++) {
    const float *restrict xr = x + r * S;
    if (mode == 0)
      for (int64_t i = 0; i < I; i++) acc[i] += (double)xr[i];
    else if (mode == 1)
      for (int64_t i = 0; i < I; i++) acc[i] += fabs((double)xr[i]);
    else if (mode == 2)
      for (int64_t i = 0; i < I; i++) acc[i] += (double)xr[i] * xr[i];
    else
      for (int64_t i = 0; i < I; i++) acc[i] *= (double)xr[i];
  }
}

HET_SIMD_INLINE void het_f32_cols_ext(const float *restrict x, float *restrict y,
                             int64_t R, int64_t I, int64_t S, bool is_max) {
  for (int64_t i = 0; i < I; i++)
    y[i] = is_max ? -INFINITY : INFINITY;
  for (int64_t r = 0; r < R; r++) {
    const float *restrict xr = x + r * S;
    for (int64_t i = 0; i < I; i++) {
      float v = xr[i], a = y[i];
      y[i] = (is_max ? v > a : v < a) || v != v ? v : a;
    }
  }
}

/* A reduction split into units: unit u is column block u % nblk (of
 * HET_RED_COLS columns; the whole row when I == 1) of outer row u / nblk. */
typedef struct het_red_f32_job {
  int kind, mode;
  bool ext;
  const float *x;
  float *y;
  int64_t R, I, nblk;
} het_red_f32_job;

HET_SIMD_CLONES static void het_red_f32_units(void *arg, int64_t u0, int64_t u1) {
  const het_red_f32_job *j = arg;
  double acc[HET_RED_COLS];
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / j->nblk, c0 = (u % j->nblk) * HET_RED_COLS;
    int64_t w = j->I - c0 < HET_RED_COLS ? j->I - c0 : HET_RED_COLS;
    const float *xo = j->x + o * j->R * j->I + c0;
    float *yo = j->y + o * j->I + c0;
    if (j->ext && j->I == 1)
      yo[0] = het_f32_row_ext(xo, j->R, j->kind == 2);
    else if (j->ext)
      het_f32_cols_ext(xo, yo, j->R, w, j->I, j->kind == 2);
    else if (j->I == 1)
      yo[0] = (float)het_f32_finish(j->kind, het_f32_row_acc(xo, j->R, j->mode),
                                    j->R);
    else {
      het_f32_cols(xo, acc, j->R, w, j->I, j->mode);
      for (int64_t i = 0; i < w; i++)
        yo[i] = (float)het_f32_finish(j->kind, acc[i], j->R);
    }
  }
}

het_status het_red_f32_run(const het_kernel_ctx *ctx, int kind,
                           const float *x, float *y, int64_t O, int64_t R,
                           int64_t I) {
  /* kinds as in reduce.c: 0 sum 1 mean 2 max 3 min 4 prod 5 L1 6 L2
   * 7 logsum 9 sumsquare */
  static const int mode_of[] = {0, 0, -1, -1, 3, 1, 2, 0, -1, 2};
  het_red_f32_job j = {.kind = kind, .mode = mode_of[kind],
                       .ext = kind == 2 || kind == 3, .x = x, .y = y,
                       .R = R, .I = I,
                       .nblk = (I + HET_RED_COLS - 1) / HET_RED_COLS};
  if (O * I == 0)
    return HET_OK;
  int64_t per_unit = R * (I < HET_RED_COLS ? I : HET_RED_COLS);
  int64_t grain = per_unit > 0 ? (HET_RED_GRAIN + per_unit - 1) / per_unit
                               : O * j.nblk;
  het_parallel_for(ctx->par, O * j.nblk, grain, het_red_f32_units,
                              &j);
  return HET_OK;
}

typedef struct het_softmax_f32_job {
  const float *x;
  float *y;
  int64_t N;
  bool log_out;
} het_softmax_f32_job;

/* Rows [o0, o1): y = exp(x - max) (one vectorised map), the sum of the
 * row in double lanes, then y scaled (or log-softmax from x). */
HET_SIMD_CLONES static void het_softmax_f32_units(void *arg, int64_t o0,
                                                  int64_t o1) {
  const het_softmax_f32_job *j = arg;
  int64_t N = j->N;
  for (int64_t o = o0; o < o1; o++) {
    const float *restrict xr = j->x + o * N;
    float *restrict yr = j->y + o * N;
    float mx = het_f32_row_ext(xr, N, true);
    for (int64_t n = 0; n < N; n++)
      yr[n] = het_simd_expf(xr[n] - mx);
    double sum = het_f32_row_sum(yr, N);
    if (j->log_out) {
      float ls = (float)log(sum);
      for (int64_t n = 0; n < N; n++)
        yr[n] = (xr[n] - mx) - ls;
    } else {
      float inv = (float)(1.0 / sum);
      for (int64_t n = 0; n < N; n++)
        yr[n] *= inv;
    }
  }
}

void het_softmax_f32_rows(const struct het_parallel *pool, const float *x,
                          float *y, int64_t O, int64_t N, bool log_out) {
  het_softmax_f32_job j = {.x = x, .y = y, .N = N, .log_out = log_out};
  int64_t grain = N > 0 ? (HET_RED_GRAIN / 2 + N - 1) / N : O;
  het_parallel_for(pool, O, grain, het_softmax_f32_units, &j);
}

HET_SIMD_CLONES void het_layernorm_f32_row(
    const float *restrict x, float *restrict y, int64_t N, double eps,
    const float *s, const int64_t *smap, const float *b, const int64_t *bmap,
    double *mean_out, double *inv_out) {
  double mean = N ? het_f32_row_sum(x, N) / (double)N : 0;
  float mf = (float)mean;
  double var[HET_RED_LANES] = {0};
  int64_t j = 0;
  for (; j + HET_RED_LANES <= N; j += HET_RED_LANES)
    for (int l = 0; l < HET_RED_LANES; l++) {
      double d = (double)x[j + l] - mean;
      var[l] += d * d;
    }
  double v = 0;
  for (int l = 0; l < HET_RED_LANES; l++)
    v += var[l];
  for (; j < N; j++)
    v += ((double)x[j] - mean) * ((double)x[j] - mean);
  double inv = 1.0 / sqrt((N ? v / (double)N : 0) + eps);
  float fi = (float)inv;
  if (!smap && !bmap && b) {
    for (j = 0; j < N; j++)
      y[j] = (x[j] - mf) * fi * s[j] + b[j];
  } else {
    for (j = 0; j < N; j++) {
      float sj = s[smap ? smap[j] : j], bj = b ? b[bmap ? bmap[j] : j] : 0.0f;
      y[j] = (x[j] - mf) * fi * sj + bj;
    }
  }
  *mean_out = mean;
  *inv_out = inv;
}
