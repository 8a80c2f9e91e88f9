/* linalg_conv_dw.c — direct float32 depthwise Conv (2-D, group == input
 * channels, strides, dilations, pads, bias, fused activation clamp).
 * NCHW (any channel multiplier): each input plane is copied into a
 * zero-bordered buffer, then each output row is one vectorisable loop over
 * the output width.  NHWC (multiplier 1): weights rearranged taps x C, and
 * each output pixel is a loop over the contiguous channels.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", \
                     "no-trapping-math", "fp-contract=fast")
#endif

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/linalg_conv_dw.h"
#include "kernels/linalg_kern.h"
#include "kernels/parallel.h"

/* Output points per parallel chunk, at least. */
#define DW_GRAIN 16384

/* One channel: the input plane is first copied into a zero-bordered
 * buffer (pw columns per row), so every output row is one branch-free
 * loop over the output width. */
typedef struct dw_plane {
  const het_conv_geom *g;
  const float *pad; /* padded input plane, rows of pw floats */
  int64_t ph, pw;
  bool split;       /* 3x3 stride 2: even columns, then odd, per plane */
  const float *w;   /* kernel[0] x kernel[1] taps */
  float bias;
  float *y;         /* one output channel, out[0] x out[1] */
  const het_lk_dw_act *act;
} dw_plane;

/* Row loops are built for AVX-512, AVX2+FMA and baseline x86-64, picked
 * at load time (GCC function multiversioning).  ISA levels, not CPU names:
 * an "arch=skylake-avx512" clone is chosen only on that exact Intel CPU
 * (never on AMD), an "arch=x86-64-v4" one on any CPU with its features.
 * ThreadSanitizer builds take the baseline (see simd.h). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define DW_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define DW_CLONES
#endif

/* 3x3, dilation 1: a, b, c are the three padded input rows. */
DW_CLONES static void dw_row3(const float *restrict a,
                              const float *restrict b,
                              const float *restrict c, const float *w,
                              float bias, int64_t s, int64_t ow,
                              float *restrict y) {
  float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  float w6 = w[6], w7 = w[7], w8 = w[8];
  if (s == 1) {
    for (int64_t ox = 0; ox < ow; ox++)
      y[ox] = bias + w0 * a[ox] + w1 * a[ox + 1] + w2 * a[ox + 2] +
              w3 * b[ox] + w4 * b[ox + 1] + w5 * b[ox + 2] + w6 * c[ox] +
              w7 * c[ox + 1] + w8 * c[ox + 2];
    return;
  }
  for (int64_t ox = 0; ox < ow; ox++) {
    int64_t i = ox * s;
    y[ox] = bias + w0 * a[i] + w1 * a[i + 1] + w2 * a[i + 2] + w3 * b[i] +
            w4 * b[i + 1] + w5 * b[i + 2] + w6 * c[i] + w7 * c[i + 1] +
            w8 * c[i + 2];
  }
}

/* 3x3, stride 2, dilation 1 on deinterleaved rows: e* hold the even
 * padded columns, o* the odd ones, so every load is contiguous. */
DW_CLONES static void dw_row3_s2(const float *const e[3],
                                 const float *const o[3], const float *w,
                                 float bias, int64_t ow, float *restrict y) {
  const float *restrict ea = e[0], *restrict eb = e[1], *restrict ec = e[2];
  const float *restrict oa = o[0], *restrict ob = o[1], *restrict oc = o[2];
  float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5];
  float w6 = w[6], w7 = w[7], w8 = w[8];
  for (int64_t ox = 0; ox < ow; ox++)
    y[ox] = bias + w0 * ea[ox] + w1 * oa[ox] + w2 * ea[ox + 1] +
            w3 * eb[ox] + w4 * ob[ox] + w5 * eb[ox + 1] + w6 * ec[ox] +
            w7 * oc[ox] + w8 * ec[ox + 1];
}

/* General kernel: accumulate tap by tap into output row oy. */
DW_CLONES static void dw_row_general(const dw_plane *p, int64_t oy,
                                     float *restrict y) {
  const het_conv_geom *g = p->g;
  int64_t s = g->stride[1], ow = g->out[1];
  for (int64_t ox = 0; ox < ow; ox++)
    y[ox] = p->bias;
  for (int64_t ky = 0; ky < g->kernel[0]; ky++) {
    const float *restrict xr =
        p->pad + (oy * g->stride[0] + ky * g->dil[0]) * p->pw;
    for (int64_t kx = 0; kx < g->kernel[1]; kx++) {
      float wv = p->w[ky * g->kernel[1] + kx];
      const float *restrict xk = xr + kx * g->dil[1];
      if (s == 1)
        for (int64_t ox = 0; ox < ow; ox++)
          y[ox] += wv * xk[ox];
      else
        for (int64_t ox = 0; ox < ow; ox++)
          y[ox] += wv * xk[ox * s];
    }
  }
}

/* The fused activation (hetrt_act_min/max): NaN stays NaN. */
DW_CLONES static void dw_clamp(float *restrict y, int64_t n, float lo,
                               float hi) {
  for (int64_t i = 0; i < n; i++) {
    float v = y[i] < lo ? lo : y[i];
    y[i] = v > hi ? hi : v;
  }
}

static void dw_plane_run(const dw_plane *p) {
  const het_conv_geom *g = p->g;
  int64_t ow = g->out[1], s = g->stride[0];
  bool k3 = g->kernel[0] == 3 && g->kernel[1] == 3 && g->dil[0] == 1 &&
            g->dil[1] == 1;
  for (int64_t oy = 0; oy < g->out[0]; oy++) {
    float *y = p->y + oy * ow;
    if (p->split) {
      int64_t half = (p->pw + 1) / 2, plane = half * p->ph;
      const float *e[3], *o[3];
      for (int k = 0; k < 3; k++) {
        e[k] = p->pad + (oy * 2 + k) * half;
        o[k] = e[k] + plane;
      }
      dw_row3_s2(e, o, p->w, p->bias, ow, y);
    } else if (k3) {
      const float *r = p->pad + oy * s * p->pw;
      dw_row3(r, r + p->pw, r + 2 * p->pw, p->w, p->bias, g->stride[1], ow,
              y);
    } else {
      dw_row_general(p, oy, y);
    }
    if (p->act->on)
      dw_clamp(y, ow, p->act->lo, p->act->hi);
  }
}

/* Copies one input plane into the interior of the zero-bordered buffer;
 * split: into an even-column plane then an odd-column plane, each of ph
 * rows of (pw + 1) / 2. */
static void dw_pad_copy(const het_conv_geom *g, const float *x, float *pad,
                        int64_t ph, int64_t pw, bool split) {
  int64_t half = (pw + 1) / 2;
  for (int64_t iy = 0; iy < g->in[0]; iy++) {
    const float *src = x + iy * g->in[1];
    int64_t r = iy + g->pad_b[0];
    if (!split) {
      memcpy(pad + r * pw + g->pad_b[1], src,
             sizeof(float) * (size_t)g->in[1]);
      continue;
    }
    for (int64_t par = 0; par < 2; par++) {
      /* first ix whose padded column has parity par; then every other */
      int64_t ix0 = (par + g->pad_b[1]) & 1;
      float *restrict dst =
          pad + par * ph * half + r * half + (ix0 + g->pad_b[1]) / 2;
      const float *restrict s2 = src + ix0;
      int64_t cnt = ix0 < g->in[1] ? (g->in[1] - ix0 + 1) / 2 : 0;
      for (int64_t k = 0; k < cnt; k++)
        dst[k] = s2[2 * k];
    }
  }
}

/* Taps [*lo, *hi) of k taps at start, start + dil, ... inside [0, n). */
static void dw_tap_range(int64_t start, int64_t k, int64_t dil, int64_t n,
                         int64_t *lo, int64_t *hi) {
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  *hi = start > n - 1 ? 0 : (n - 1 - start) / dil + 1;
  if (*hi > k)
    *hi = k;
  if (*lo > *hi)
    *lo = *hi;
}

het_lk_dw_act het_lk_dw_act_get(const het_node *node) {
  const het_attr *lo = het_node_find_attr(node, "hetrt_act_min");
  const het_attr *hi = het_node_find_attr(node, "hetrt_act_max");
  het_lk_dw_act a = {lo && hi, lo ? lo->f : 0.f, hi ? hi->f : 0.f};
  return a;
}

/* Padded plane rows/cols that every tap of every output can read. */
static void dw_pad_dims(const het_conv_geom *g, int64_t *ph, int64_t *pw) {
  int64_t d[2];
  for (int i = 0; i < 2; i++) {
    int64_t need = (g->out[i] - 1) * g->stride[i] +
                   (g->kernel[i] - 1) * g->dil[i] + 1;
    int64_t have = g->pad_b[i] + g->in[i];
    d[i] = need > have ? need : have;
  }
  *ph = d[0];
  *pw = d[1];
}

static bool dw_applies(const het_kernel_ctx *ctx, const het_tensor *x,
                       const het_tensor *w, const het_tensor *b) {
  int64_t group = het_node_attr_int(ctx->node, "group", 1);
  return x->dtype == HET_DTYPE_FLOAT32 && w->dtype == HET_DTYPE_FLOAT32 &&
         (!b || b->dtype == HET_DTYPE_FLOAT32) && x->rank == 4 &&
         w->rank == 4 && group > 1 && x->dims[1] == group &&
         w->dims[1] == 1 && w->dims[0] % group == 0 &&
         (!b || het_tensor_count(b) == w->dims[0]);
}

/* A parallel loop over input planes (batch x channel): each chunk
 * pads its planes in its own buffer. */
typedef struct dw_job {
  const het_conv_geom *g;
  int64_t c, mult, ph, pw;
  bool split;
  const float *x, *w, *b;
  float *y;
  het_lk_dw_act act;
  atomic_int oom;
} dw_job;

static void dw_chunk(void *ctx, int64_t begin, int64_t end) {
  dw_job *j = ctx;
  const het_conv_geom *g = j->g;
  size_t pad_n = (size_t)(j->ph * ((j->pw + 1) / 2) * 2);
  float *pad = calloc(pad_n, sizeof(float));
  if (!pad) {
    atomic_store(&j->oom, 1);
    return;
  }
  int64_t isz = g->in[0] * g->in[1], osz = g->out[0] * g->out[1];
  int64_t ksz = g->kernel[0] * g->kernel[1];
  for (int64_t i = begin; i < end; i++) { /* i = n * c + input channel */
    dw_pad_copy(g, j->x + i * isz, pad, j->ph, j->pw, j->split);
    for (int64_t k = 0; k < j->mult; k++) {
      int64_t oc = (i % j->c) * j->mult + k;
      dw_plane p = {g, pad, j->ph, j->pw, j->split, j->w + oc * ksz,
                    j->b ? j->b[oc] : 0.0f, j->y + (i * j->mult + k) * osz,
                    &j->act};
      dw_plane_run(&p);
    }
  }
  free(pad);
}

/* ---- NHWC (channels-last), channel multiplier 1 ---- */

static inline float dw_clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* One NHWC depthwise call: weights rearranged as taps x C. */
typedef struct dwn_job {
  const het_conv_geom *g;
  int64_t c, jl, jr; /* [jl, jr): output columns whose taps are all inside */
  const float *x, *wt, *b; /* wt: taps x C; b: C (zeros when absent) */
  float *y;
  het_lk_dw_act act;
} dwn_job;

/* Channels [c0, C) of the output pixel y whose window starts at (hs, ws)
 * of image xn; taps rows [kr[0], kr[1]). */
DW_CLONES static void dwn_one(const dwn_job *j, const float *xn, int64_t hs,
                              int64_t ws, const int64_t *kr, int64_t c0,
                              float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t c = j->c, kw0, kw1;
  dw_tap_range(ws, g->kernel[1], g->dil[1], g->in[1], &kw0, &kw1);
  for (int64_t k = c0; k < c; k++)
    y[k] = j->b[k];
  for (int64_t kh = kr[0]; kh < kr[1]; kh++)
    for (int64_t kw = kw0; kw < kw1; kw++) {
      const float *restrict q =
          xn + ((hs + kh * g->dil[0]) * g->in[1] + ws + kw * g->dil[1]) * c;
      const float *restrict w = j->wt + (kh * g->kernel[1] + kw) * c;
      for (int64_t k = c0; k < c; k++)
        y[k] += w[k] * q[k];
    }
  if (j->act.on)
    dw_clamp(y + c0, c - c0, j->act.lo, j->act.hi);
}

/* Four neighbouring output pixels whose taps columns are all inside:
 * 16 channels at a time with the accumulators in registers. */
DW_CLONES static void dwn_quad(const dwn_job *j, const float *xn, int64_t hs,
                               int64_t ws, const int64_t *kr,
                               float *restrict y) {
  const het_conv_geom *g = j->g;
  int64_t c = j->c, ps = g->stride[1] * c, body = c / 16 * 16;
  float lo = j->act.on ? j->act.lo : -INFINITY;
  float hi = j->act.on ? j->act.hi : INFINITY;
  for (int64_t c0 = 0; c0 < body; c0 += 16) {
    float a0[16], a1[16], a2[16], a3[16];
    for (int k = 0; k < 16; k++)
      a0[k] = a1[k] = a2[k] = a3[k] = j->b[c0 + k];
    for (int64_t kh = kr[0]; kh < kr[1]; kh++)
      for (int64_t kw = 0; kw < g->kernel[1]; kw++) {
        const float *restrict q =
            xn + ((hs + kh * g->dil[0]) * g->in[1] + ws + kw * g->dil[1]) * c +
            c0;
        const float *restrict w = j->wt + (kh * g->kernel[1] + kw) * c + c0;
        for (int k = 0; k < 16; k++) {
          a0[k] += w[k] * q[k];
          a1[k] += w[k] * q[ps + k];
          a2[k] += w[k] * q[2 * ps + k];
          a3[k] += w[k] * q[3 * ps + k];
        }
      }
    for (int k = 0; k < 16; k++) {
      float v0 = a0[k] < lo ? lo : a0[k], v1 = a1[k] < lo ? lo : a1[k];
      float v2 = a2[k] < lo ? lo : a2[k], v3 = a3[k] < lo ? lo : a3[k];
      y[c0 + k] = v0 > hi ? hi : v0;
      y[c + c0 + k] = v1 > hi ? hi : v1;
      y[2 * c + c0 + k] = v2 > hi ? hi : v2;
      y[3 * c + c0 + k] = v3 > hi ? hi : v3;
    }
  }
  for (int p = 0; body < c && p < 4; p++)
    dwn_one(j, xn, hs, ws + p * g->stride[1], kr, body, y + p * c);
}

/* Unit u is output row u % oh of image u / oh. */
static void dwn_rows(void *arg, int64_t u0, int64_t u1) {
  const dwn_job *j = arg;
  const het_conv_geom *g = j->g;
  int64_t oh = g->out[0], ow = g->out[1], c = j->c;
  for (int64_t u = u0; u < u1; u++) {
    const float *xn = j->x + (u / oh) * g->in[0] * g->in[1] * c;
    float *y = j->y + u * ow * c;
    int64_t hs = (u % oh) * g->stride[0] - g->pad_b[0], kr[2];
    dw_tap_range(hs, g->kernel[0], g->dil[0], g->in[0], &kr[0], &kr[1]);
    for (int64_t o = 0; o < ow;) {
      int64_t ws = o * g->stride[1] - g->pad_b[1];
      if (o >= j->jl && o + 4 <= j->jr) {
        dwn_quad(j, xn, hs, ws, kr, y + o * c);
        o += 4;
      } else {
        dwn_one(j, xn, hs, ws, kr, 0, y + o * c);
        o++;
      }
    }
  }
}

/* NHWC input (and output, unless its H*W is 1): channel multiplier 1
 * only; *done stays false otherwise (the caller may still have a path). */
static het_status dwn_run(het_kernel_ctx *ctx, const het_conv_geom *g,
                          bool *done) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  int64_t c = x->dims[1], ksz = g->kernel[0] * g->kernel[1];
  bool out_nhwc = (ctx->nhwc_out & 1) || g->out[0] * g->out[1] == 1;
  if (w->dims[0] != c || !out_nhwc)
    return HET_OK;
  *done = true;
  if (het_tensor_count(y) == 0)
    return HET_OK;
  float *wt;
  HET_TRY(het_lk_alloc(ctx, sizeof(float) * (size_t)((ksz + 1) * c),
                       (void **)&wt));
  const float *wsrc = w->data;
  for (int64_t t = 0; t < ksz; t++)
    for (int64_t k = 0; k < c; k++)
      wt[t * c + k] = wsrc[k * ksz + t];
  for (int64_t k = 0; k < c; k++) /* the bias (zeros without one) */
    wt[ksz * c + k] = b ? ((const float *)b->data)[k] : 0.0f;
  dwn_job j = {.g = g, .c = c, .x = x->data, .wt = wt, .b = wt + ksz * c,
               .y = y->data,
               .act = het_lk_dw_act_get(ctx->node)};
  het_conv_geom_inner_cols(g, &j.jl, &j.jr);
  int64_t row = g->out[1] * c * ksz + 1;
  het_parallel_for(ctx->par, x->dims[0] * g->out[0],
                              DW_GRAIN * 4 / row + 1, dwn_rows, &j);
  free(wt);
  return HET_OK;
}

het_status het_lk_conv_dw_run(het_kernel_ctx *ctx, bool *done) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  *done = false;
  if (!dw_applies(ctx, x, w, b))
    return HET_OK;
  het_conv_geom g;
  HET_TRY(het_lk_geom(ctx, HET_GEOM_CONV, x, w, &g));
  int64_t c = x->dims[1], m = w->dims[0];
  if (y->rank != 4 || y->dims[1] != m || y->dims[2] != g.out[0] ||
      y->dims[3] != g.out[1] || y->dims[0] != x->dims[0])
    return HET_OK;
  if (g.pad_b[0] < 0 || g.pad_b[1] < 0 || g.out[0] < 1 || g.out[1] < 1)
    return HET_OK;
  if (ctx->nhwc_in & 1)
    return dwn_run(ctx, &g, done);
  if (ctx->nhwc_out & 1)
    return HET_OK;
  *done = true;
  if (het_tensor_count(y) == 0)
    return HET_OK;
  dw_job j = {&g, c, m / c, 0, 0, false, x->data, w->data,
              b ? b->data : NULL, y->data, het_lk_dw_act_get(ctx->node), 0};
  dw_pad_dims(&g, &j.ph, &j.pw);
  j.split = g.kernel[0] == 3 && g.kernel[1] == 3 && g.dil[0] == 1 &&
            g.dil[1] == 1 && g.stride[0] == 2 && g.stride[1] == 2;
  int64_t work = g.out[0] * g.out[1] * j.mult; /* outputs per plane */
  het_parallel_for(ctx->par, x->dims[0] * c,
                              DW_GRAIN / work + 1, dw_chunk, &j);
  if (atomic_load(&j.oom))
    return het_lk_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                       "depthwise Conv: out of memory");
  return HET_OK;
}
