/* reduce_f32.c — float32 fast paths of the reduce group that read and
 * write float directly (no double working copy): Reduce* over an
 * [outer, reduced, inner] view and Softmax/LogSoftmax over contiguous rows.
 * Sums accumulate in double (8 lanes for contiguous rows, so the compiler
 * can vectorise without reassociating); extrema compare in float.
 * Outer rows (and blocks of inner columns) are split across the CPU thread
 * pool; every output element is reduced in the same order on any thread.
 */
#include <math.h>
#include <stdlib.h>

#include "providers/cpu/kernels/reduce_common.h"
#include "providers/cpu/threadpool.h"

/* Input elements below which a loop stays on one thread, and the width of
 * an inner-column block (one parallel unit when inner > 1). */
#define HET_RED_GRAIN 16384
#define HET_RED_COLS 512

/* mode: 0 sum, 1 sum |x|, 2 sum x^2, 3 product */
static inline double het_f32_row_acc(const float *restrict x, int64_t n,
                                     int mode) {
  double acc[8];
  for (int l = 0; l < 8; l++)
    acc[l] = mode == 3 ? 1.0 : 0.0;
  int64_t r = 0;
  for (; r + 8 <= n; r += 8)
    for (int l = 0; l < 8; l++) {
      double v = (double)x[r + l];
      acc[l] = mode == 0 ? acc[l] + v
               : mode == 1 ? acc[l] + fabs(v)
               : mode == 2 ? acc[l] + v * v
                           : acc[l] * v;
    }
  double t = mode == 3 ? 1.0 : 0.0;
  for (int l = 0; l < 8; l++)
    t = mode == 3 ? t * acc[l] : t + acc[l];
  for (; r < n; r++) {
    double v = (double)x[r];
    t = mode == 0 ? t + v : mode == 1 ? t + fabs(v) : mode == 2 ? t + v * v
                                                                : t * v;
  }
  return t;
}

static inline float het_f32_row_ext(const float *restrict x, int64_t n,
                                    bool is_max) {
  float acc[8];
  for (int l = 0; l < 8; l++)
    acc[l] = is_max ? -INFINITY : INFINITY;
  int64_t r = 0;
  for (; r + 8 <= n; r += 8)
    for (int l = 0; l < 8; l++) {
      float v = x[r + l], a = acc[l];
      acc[l] = (is_max ? v > a : v < a) || v != v ? v : a;
    }
  float t = is_max ? -INFINITY : INFINITY;
  for (int l = 0; l < 8; l++)
    t = (is_max ? acc[l] > t : acc[l] < t) || acc[l] != acc[l] ? acc[l] : t;
  for (; r < n; r++)
    t = (is_max ? x[r] > t : x[r] < t) || x[r] != x[r] ? x[r] : t;
  return t;
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
static void het_f32_cols(const float *restrict x, double *restrict acc,
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

static void het_f32_cols_ext(const float *restrict x, float *restrict y,
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

static void het_red_f32_units(void *arg, int64_t u0, int64_t u1) {
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

het_status het_red_f32_run(const het_cpu_kernel_ctx *ctx, int kind,
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
  het_threadpool_parallel_for(ctx->pool, O * j.nblk, grain, het_red_f32_units,
                              &j);
  return HET_OK;
}

typedef struct het_softmax_f32_job {
  const float *x;
  float *y;
  int64_t N;
  bool log_out;
} het_softmax_f32_job;

static void het_softmax_f32_units(void *arg, int64_t o0, int64_t o1) {
  const het_softmax_f32_job *j = arg;
  const float *x = j->x;
  float *y = j->y;
  int64_t N = j->N;
  bool log_out = j->log_out;
  for (int64_t o = o0; o < o1; o++) {
    const float *restrict xr = x + o * N;
    float *restrict yr = y + o * N;
    float mx = het_f32_row_ext(xr, N, true);
    double sum = 0;
    for (int64_t n = 0; n < N; n++) {
      float e = expf(xr[n] - mx);
      yr[n] = e;
      sum += e;
    }
    if (log_out) {
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

void het_softmax_f32_rows(struct het_threadpool *pool, const float *x,
                          float *y, int64_t O, int64_t N, bool log_out) {
  het_softmax_f32_job j = {.x = x, .y = y, .N = N, .log_out = log_out};
  int64_t grain = N > 0 ? (HET_RED_GRAIN / 2 + N - 1) / N : O;
  het_threadpool_parallel_for(pool, O, grain, het_softmax_f32_units, &j);
}

void het_layernorm_f32_row(const float *restrict x, float *restrict y,
                           int64_t N, double eps, const float *s,
                           const int64_t *smap, const float *b,
                           const int64_t *bmap, double *mean_out,
                           double *inv_out) {
  double mean = N ? het_f32_row_acc(x, N, 0) / (double)N : 0;
  float mf = (float)mean;
  double var[8] = {0};
  int64_t j = 0;
  for (; j + 8 <= N; j += 8)
    for (int l = 0; l < 8; l++) {
      double d = (double)x[j + l] - mean;
      var[l] += d * d;
    }
  double v = 0;
  for (int l = 0; l < 8; l++)
    v += var[l];
  for (; j < N; j++)
    v += ((double)x[j] - mean) * ((double)x[j] - mean);
  double inv = 1.0 / sqrt((N ? v / (double)N : 0) + eps);
  float fi = (float)inv;
  for (j = 0; j < N; j++) {
    float sj = s[smap ? smap[j] : j], bj = b ? b[bmap ? bmap[j] : j] : 0.0f;
    y[j] = (x[j] - mf) * fi * sj + bj;
  }
  *mean_out = mean;
  *inv_out = inv;
}
