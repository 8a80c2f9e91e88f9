/* linalg_pool_f32.c — float32 2-D MaxPool / AveragePool (no Indices) and
 * GlobalMax / GlobalAveragePool, in NCHW (vector loops over the interior
 * output columns of a row, per-column windows at the borders) and NHWC
 * (vector loops over the contiguous channels of each pixel).  Taps are
 * visited in the same order in both layouts, so results are identical.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", \
                     "no-trapping-math")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/linalg_kern.h"
#include "kernels/linalg_pool_f32.h"
#include "kernels/simd.h"
#include "kernels/parallel.h"

/* Window taps (or input elements) below which pooling stays on one thread. */
#define POOLF_GRAIN 16384
/* Channels per NHWC global-pool unit. */
#define POOLF_CHUNK 64
/* Channels an NHWC window is pooled over at a time. */
#define POOLF_LANES 64


typedef struct poolf_job {
  const het_conv_geom *g;
  bool max, include_pad;
  int64_t c;       /* channels */
  int64_t jl, jr;  /* output columns whose window lies inside the row */
  const float *x;
  float *y;
} poolf_job;

/* Divisor of an average window whose valid taps are [kr0,kr1)x[kr2,kr3). */
static float poolf_count(const poolf_job *j, int64_t hs, int64_t ws,
                         const int64_t *kr) {
  const het_conv_geom *g = j->g;
  int64_t cnt =
      j->include_pad
          ? het_pool_taps_before(hs, g->kernel[0], 1, g->in[0] + g->pad_e[0]) *
                het_pool_taps_before(ws, g->kernel[1], 1,
                                     g->in[1] + g->pad_e[1])
          : (kr[1] - kr[0]) * (kr[3] - kr[2]);
  return (float)(cnt ? cnt : 1);
}

/* NCHW: one output of plane xp whose window starts at (hs, ws). */
static float poolf_one(const poolf_job *j, const float *xp, int64_t hs,
                       int64_t ws, const int64_t *khr) {
  const het_conv_geom *g = j->g;
  int64_t iw = g->in[1], dh = g->dil[0], dw = g->dil[1];
  int64_t kr[4] = {khr[0], khr[1], 0, 0};
  het_pool_tap_range(ws, g->kernel[1], dw, iw, &kr[2], &kr[3]);
  bool empty = kr[0] == kr[1] || kr[2] == kr[3];
  float acc = j->max ? -INFINITY : 0.f;
  if (j->max && !empty)
    acc = xp[(hs + kr[0] * dh) * iw + ws + kr[2] * dw];
  for (int64_t kh = kr[0]; kh < kr[1] && !empty; kh++)
    for (int64_t kw = kr[2]; kw < kr[3]; kw++) {
      float v = xp[(hs + kh * dh) * iw + ws + kw * dw];
      if (!j->max)
        acc += v;
      else if (v > acc)
        acc = v;
    }
  return j->max ? acc : acc / poolf_count(j, hs, ws, kr);
}

/* NCHW interior columns: y[0..n) over taps rows [kh0,kh1) x all columns;
 * r is the plane at the first window's (row 0, column 0). */
HET_SIMD_CLONES static void poolf_row(const poolf_job *j, const float *r,
                                   int64_t kh0, int64_t kh1, int64_t n,
                                   float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t s = g->stride[1], iw = g->in[1];
  bool first = true;
  if (!j->max)
    for (int64_t o = 0; o < n; o++)
      y[o] = 0.f;
  for (int64_t kh = kh0; kh < kh1; kh++)
    for (int64_t kw = 0; kw < g->kernel[1]; kw++) {
      const float *restrict q = r + kh * g->dil[0] * iw + kw * g->dil[1];
      if (!j->max && s == 1) {
        for (int64_t o = 0; o < n; o++)
          y[o] += q[o];
      } else if (!j->max) {
        for (int64_t o = 0; o < n; o++)
          y[o] += q[o * s];
      } else if (first) {
        for (int64_t o = 0; o < n; o++)
          y[o] = q[o * s];
      } else if (s == 1) {
        for (int64_t o = 0; o < n; o++)
          y[o] = q[o] > y[o] ? q[o] : y[o];
      } else if (s == 2) {
        for (int64_t o = 0; o < n; o++)
          y[o] = q[2 * o] > y[o] ? q[2 * o] : y[o];
      } else {
        for (int64_t o = 0; o < n; o++)
          y[o] = q[o * s] > y[o] ? q[o * s] : y[o];
      }
      first = false;
    }
}

/* NCHW: unit u is output row u % oh of plane u / oh. */
static void poolf_nchw(void *arg, int64_t u0, int64_t u1) {
  const poolf_job *j = arg;
  const het_conv_geom *g = j->g;
  int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
  for (int64_t u = u0; u < u1; u++) {
    const float *xp = j->x + (u / oh) * ih * iw;
    float *y = j->y + u * ow;
    int64_t hs = (u % oh) * g->stride[0] - g->pad_b[0], khr[2];
    het_pool_tap_range(hs, g->kernel[0], g->dil[0], ih, &khr[0], &khr[1]);
    int64_t jl = khr[0] == khr[1] ? ow : j->jl, jr = khr[0] == khr[1] ? ow : j->jr;
    for (int64_t o = 0; o < jl; o++)
      y[o] = poolf_one(j, xp, hs, o * g->stride[1] - g->pad_b[1], khr);
    for (int64_t o = jr; o < ow; o++)
      y[o] = poolf_one(j, xp, hs, o * g->stride[1] - g->pad_b[1], khr);
    if (jl >= jr)
      continue;
    int64_t ws = jl * g->stride[1] - g->pad_b[1];
    poolf_row(j, xp + hs * iw + ws, khr[0], khr[1], jr - jl, y + jl);
    if (!j->max) {
      int64_t kr[4] = {khr[0], khr[1], 0, g->kernel[1]};
      float cnt = poolf_count(j, hs, ws, kr);
      for (int64_t o = jl; o < jr; o++)
        y[o] /= cnt;
    }
  }
}

/* NHWC, channels [k0, k0 + n) of the output whose window starts at
 * (hs, ws) of image xn, taps kr (at least one), sums divided by cnt.
 * With n a constant the accumulators stay in registers across the taps. */
static inline void poolf_span(const poolf_job *j, const float *xn, int64_t hs,
                              int64_t ws, const int64_t *kr, float cnt,
                              int64_t k0, int64_t n, float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t c = j->c, iw = g->in[1];
  float acc[POOLF_LANES];
  bool first = true;
  for (int64_t kh = kr[0]; kh < kr[1]; kh++)
    for (int64_t kw = kr[2]; kw < kr[3]; kw++) {
      const float *restrict q =
          xn + ((hs + kh * g->dil[0]) * iw + ws + kw * g->dil[1]) * c + k0;
      if (first && j->max)
        for (int64_t k = 0; k < n; k++)
          acc[k] = q[k];
      else if (first)
        for (int64_t k = 0; k < n; k++)
          acc[k] = 0.f + q[k];
      else if (j->max)
        for (int64_t k = 0; k < n; k++)
          acc[k] = q[k] > acc[k] ? q[k] : acc[k];
      else
        for (int64_t k = 0; k < n; k++)
          acc[k] += q[k];
      first = false;
    }
  for (int64_t k = 0; k < n; k++)
    y[k0 + k] = j->max ? acc[k] : acc[k] / cnt;
}

/* 16 float lanes as one value (a 512-bit register where the clone has
 * AVX-512, halves or quarters of it elsewhere). */
typedef float poolf_v16 __attribute__((vector_size(64)));
typedef int32_t poolf_i16 __attribute__((vector_size(64)));

/* a = q > a ? q : a per lane, for the 16 floats at p (unaligned): the max
 * of poolf_span (a NaN in q is skipped). */
#define POOLF_VMAX(a, p)                                                     \
  do {                                                                       \
    poolf_v16 q_;                                                            \
    memcpy(&q_, (p), sizeof q_);                                             \
    poolf_i16 m_ = q_ > (a);                                                 \
    (a) = (poolf_v16)((m_ & (poolf_i16)q_) | (~m_ & (poolf_i16)(a)));        \
  } while (0)

/* NHWC MaxPool of POOLF_LANES channels from k0, as poolf_span computes it
 * (same taps, same order) with the running maxima in four registers:
 * poolf_span's accumulator array lived on the stack, a store and a reload
 * per tap (SqueezeNet's first MaxPool, 3x3 over 111x111x64: 106-143 us,
 * 86-118 us this way, three alternations; ONNX Runtime's 67-79). */
_Static_assert(POOLF_LANES == 64, "poolf_max64 holds 64 lanes");
HET_SIMD_INLINE void poolf_max64(const poolf_job *j, const float *xn,
                                 int64_t hs, int64_t ws, const int64_t *kr,
                                 int64_t k0, float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t c = j->c, iw = g->in[1];
  poolf_v16 a0, a1, a2, a3;
  const float *q =
      xn + ((hs + kr[0] * g->dil[0]) * iw + ws + kr[2] * g->dil[1]) * c + k0;
  memcpy(&a0, q, sizeof a0);
  memcpy(&a1, q + 16, sizeof a1);
  memcpy(&a2, q + 32, sizeof a2);
  memcpy(&a3, q + 48, sizeof a3);
  for (int64_t kh = kr[0]; kh < kr[1]; kh++)
    for (int64_t kw = kh == kr[0] ? kr[2] + 1 : kr[2]; kw < kr[3]; kw++) {
      q = xn + ((hs + kh * g->dil[0]) * iw + ws + kw * g->dil[1]) * c + k0;
      POOLF_VMAX(a0, q);
      POOLF_VMAX(a1, q + 16);
      POOLF_VMAX(a2, q + 32);
      POOLF_VMAX(a3, q + 48);
    }
  memcpy(y + k0, &a0, sizeof a0);
  memcpy(y + k0 + 16, &a1, sizeof a1);
  memcpy(y + k0 + 32, &a2, sizeof a2);
  memcpy(y + k0 + 48, &a3, sizeof a3);
}

/* NHWC: the C channels y of the output whose window starts at (hs, ws)
 * of image xn, POOLF_LANES at a time (a loop over all C channels per tap
 * kept the accumulators in memory: 3x slower on SqueezeNet's 64-channel
 * MaxPool). */
HET_SIMD_CLONES static void poolf_pixel(const poolf_job *j, const float *xn,
                                     int64_t hs, int64_t ws,
                                     const int64_t *khr, float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t c = j->c, k0 = 0;
  int64_t kr[4] = {khr[0], khr[1], 0, 0};
  het_pool_tap_range(ws, g->kernel[1], g->dil[1], g->in[1], &kr[2], &kr[3]);
  if (kr[0] == kr[1] || kr[2] == kr[3]) { /* no taps: -inf or 0 / 1 */
    for (int64_t k = 0; k < c; k++)
      y[k] = j->max ? -INFINITY : 0.f;
    return;
  }
  float cnt = j->max ? 1.f : poolf_count(j, hs, ws, kr);
  for (; j->max && k0 + POOLF_LANES <= c; k0 += POOLF_LANES)
    poolf_max64(j, xn, hs, ws, kr, k0, y);
  for (; k0 + POOLF_LANES <= c; k0 += POOLF_LANES)
    poolf_span(j, xn, hs, ws, kr, cnt, k0, POOLF_LANES, y);
  for (; k0 < c; k0 += POOLF_LANES)
    poolf_span(j, xn, hs, ws, kr, cnt, k0,
               c - k0 < POOLF_LANES ? c - k0 : POOLF_LANES, y);
}

/* NHWC: unit u is output row u % oh of image u / oh. */
static void poolf_nhwc(void *arg, int64_t u0, int64_t u1) {
  const poolf_job *j = arg;
  const het_conv_geom *g = j->g;
  int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
  for (int64_t u = u0; u < u1; u++) {
    const float *xn = j->x + (u / oh) * ih * iw * j->c;
    int64_t hs = (u % oh) * g->stride[0] - g->pad_b[0], khr[2];
    het_pool_tap_range(hs, g->kernel[0], g->dil[0], ih, &khr[0], &khr[1]);
    for (int64_t o = 0; o < ow; o++)
      poolf_pixel(j, xn, hs, o * g->stride[1] - g->pad_b[1], khr,
                  j->y + (u * ow + o) * j->c);
  }
}

het_status het_lk_pool2d_f32_run(het_kernel_ctx *ctx,
                                 const het_conv_geom *g, bool is_max,
                                 bool include_pad) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  bool nhwc = ctx->nhwc_in & 1;
  if (!nhwc && (ctx->nhwc_out & 1))
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "NHWC output asked for an NCHW input");
  poolf_job j = {.g = g, .max = is_max, .include_pad = include_pad,
                 .c = x->dims[1], .x = x->data, .y = y->data};
  het_conv_geom_inner_cols(g, &j.jl, &j.jr);
  int64_t units = x->dims[0] * g->out[0];
  int64_t row = g->out[1] * (het_conv_geom_count(g->kernel, 2) + 1) *
                (nhwc ? j.c : 1);
  if (!nhwc)
    units *= j.c;
  het_parallel_for(ctx->par, units, POOLF_GRAIN / row + 1,
                              nhwc ? poolf_nhwc : poolf_nchw, &j);
  return HET_OK;
}

typedef struct globalf_job {
  const float *x;
  float *y;
  int64_t c, sz; /* channels, pixels per plane */
  bool max;
} globalf_job;

/* NCHW: planes [p0, p1); 16 independent lanes so the loops vectorise
 * (sums in float64, as the generic path). */
HET_SIMD_CLONES static void globalf_nchw(void *arg, int64_t p0, int64_t p1) {
  const globalf_job *j = arg;
  int64_t sz = j->sz, body = sz / 16 * 16;
  for (int64_t p = p0; p < p1; p++) {
    const float *restrict x = j->x + p * sz;
    if (j->max) {
      float m[16], acc = -INFINITY;
      for (int k = 0; k < 16; k++)
        m[k] = -INFINITY;
      for (int64_t e = 0; e < body; e += 16)
        for (int k = 0; k < 16; k++)
          m[k] = x[e + k] > m[k] ? x[e + k] : m[k];
      for (int64_t e = body; e < sz; e++)
        acc = x[e] > acc ? x[e] : acc;
      for (int k = 0; k < 16; k++)
        acc = m[k] > acc ? m[k] : acc;
      j->y[p] = acc;
      continue;
    }
    double s[16] = {0}, acc = 0.0;
    for (int64_t e = 0; e < body; e += 16)
      for (int k = 0; k < 16; k++)
        s[k] += x[e + k];
    for (int64_t e = body; e < sz; e++)
      acc += x[e];
    for (int k = 0; k < 16; k++)
      acc += s[k];
    j->y[p] = (float)(acc / (double)sz);
  }
}

/* NHWC: unit u is channels [c0, c0 + POOLF_CHUNK) of image u / chunks. */
HET_SIMD_CLONES static void globalf_nhwc(void *arg, int64_t u0, int64_t u1) {
  const globalf_job *j = arg;
  int64_t chunks = (j->c + POOLF_CHUNK - 1) / POOLF_CHUNK;
  for (int64_t u = u0; u < u1; u++) {
    int64_t n = u / chunks, c0 = (u % chunks) * POOLF_CHUNK;
    int64_t cn = j->c - c0 < POOLF_CHUNK ? j->c - c0 : POOLF_CHUNK;
    const float *x = j->x + n * j->sz * j->c + c0;
    float *restrict y = j->y + n * j->c + c0;
    double s[POOLF_CHUNK];
    float m[POOLF_CHUNK];
    for (int64_t k = 0; k < cn; k++) {
      s[k] = 0.0;
      m[k] = -INFINITY;
    }
    for (int64_t e = 0; e < j->sz; e++) {
      const float *restrict q = x + e * j->c;
      if (j->max)
        for (int64_t k = 0; k < cn; k++)
          m[k] = q[k] > m[k] ? q[k] : m[k];
      else
        for (int64_t k = 0; k < cn; k++)
          s[k] += q[k];
    }
    for (int64_t k = 0; k < cn; k++)
      y[k] = j->max ? m[k] : (float)(s[k] / (double)j->sz);
  }
}

het_status het_lk_global_pool_f32_run(het_kernel_ctx *ctx, bool is_max) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  bool nhwc = ctx->nhwc_in & 1;
  globalf_job j = {.x = x->data, .y = y->data, .c = x->dims[1],
                   .sz = x->dims[2] * x->dims[3], .max = is_max};
  if (!nhwc) {
    het_parallel_for(ctx->par, x->dims[0] * j.c,
                                POOLF_GRAIN / (j.sz + 1) + 1, globalf_nchw,
                                &j);
    return HET_OK;
  }
  int64_t chunks = (j.c + POOLF_CHUNK - 1) / POOLF_CHUNK;
  het_parallel_for(ctx->par, x->dims[0] * chunks,
                              POOLF_GRAIN / (j.sz * POOLF_CHUNK + 1) + 1,
                              globalf_nhwc, &j);
  return HET_OK;
}
