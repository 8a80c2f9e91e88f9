/* linalg_convt_tiles.c — float32 ConvTranspose whose stride equals its
 * kernel (no padding, dilation 1, no output padding, one group, 2-D,
 * NCHW): the up-sampling of segmentation and detection heads (DBNet's 2x2
 * stride-2 layers).  Each input pixel then owns its own sh x sw tile of
 * the output:
 *   y[n, m, i*sh + a, j*sw + b] = bias[m] + sum_c x[n, c, i, j] w[c, m, a, b]
 * so no output is summed twice.  Per input row and output channel, the
 * sw tile columns are accumulated over the input channels in short
 * vectorisable runs (the row's block of x stays in L1), then interleaved
 * into the sh output rows.  This replaces GEMM into a column buffer,
 * col2im and a bias pass (four passes over the output: 2.9 ms for a
 * 16-channel 160x160 -> 320x320 layer, where oneDNN's deconvolution takes
 * 4 ms).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", \
                     "no-trapping-math", "fp-contract=fast")
#endif

#include <stdlib.h>
#include <string.h>

#include "kernels/linalg_convt_tiles.h"
#include "kernels/linalg_kern.h"
#include "kernels/parallel.h"

/* Input columns per run: CT_BLOCK * (channels) floats of x stay in L1. */
#define CT_BLOCK 128
/* Output points per parallel chunk, at least. */
#define CT_GRAIN 16384

/* Same ISA clones as the depthwise kernel (linalg_conv_dw.c). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define CT_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define CT_CLONES
#endif

typedef struct ct_job {
  int64_t c, m;       /* input and output channels */
  int64_t h, w;       /* input rows and columns */
  int64_t sh, sw;     /* tile (= kernel = stride) */
  const float *x, *wt, *bias; /* wt: [m][sh][sw][c], rearranged */
  float *y;
} ct_job;

/* 16 floats as one value (GCC vector extension): a zmm register in the
 * AVX-512 clone, two ymm or four xmm in the others. */
typedef float ct_v16 __attribute__((vector_size(64)));


/* Columns [j0, j0 + 16 * NV) of both tile columns of an sw == 2 tile: the
 * 2 * NV sums stay in registers across the channels and share the loads
 * of x (NV = 4: eight independent chains, enough to hide the FMA
 * latency). */
#define CT_RUN2(NV)                                                          \
  static inline __attribute__((always_inline)) void ct_run2_##NV(            \
      const float *restrict x, int64_t xs, int64_t c,                        \
      const float *restrict wt, float bias, int64_t j0,                      \
      float acc[HET_CONVT_TILES_MAX_W][CT_BLOCK]) {                          \
    ct_v16 v0[NV], v1[NV];                                                   \
    for (int q = 0; q < NV; q++)                                             \
      v0[q] = v1[q] = (ct_v16){0} + bias;                                    \
    for (int64_t k = 0; k < c; k++) {                                        \
      const float *restrict xr = x + k * xs + j0;                            \
      ct_v16 w0 = (ct_v16){0} + wt[k], w1 = (ct_v16){0} + wt[c + k];         \
      for (int q = 0; q < NV; q++) {                                         \
        ct_v16 xv;                                                           \
        memcpy(&xv, xr + 16 * q, sizeof xv);                                 \
        v0[q] += w0 * xv;                                                    \
        v1[q] += w1 * xv;                                                    \
      }                                                                      \
    }                                                                        \
    memcpy(acc[0] + j0, v0, sizeof v0);                                      \
    memcpy(acc[1] + j0, v1, sizeof v1);                                      \
  }
CT_RUN2(4)
CT_RUN2(1)

/* acc[b][0..len) = bias + sum_c wt[b][c] * x[c][0..len) for the sw tile
 * columns b of one (m, a); x rows are stride xs apart.  For sw == 2, runs
 * of 64 then 16 columns (CT_RUN2); the rest a tile column at a time. */
CT_CLONES static void ct_accumulate(const float *restrict x, int64_t xs,
                                    int64_t c, const float *restrict wt,
                                    int64_t sw, float bias, int64_t len,
                                    float acc[HET_CONVT_TILES_MAX_W]
                                             [CT_BLOCK]) {
  int64_t j0 = 0;
  if (sw == 2) {
    for (; j0 + 64 <= len; j0 += 64)
      ct_run2_4(x, xs, c, wt, bias, j0, acc);
    for (; j0 + 16 <= len; j0 += 16)
      ct_run2_1(x, xs, c, wt, bias, j0, acc);
  }
  for (int64_t b = 0; b < sw; b++) {
    float *restrict t = acc[b];
    const float *restrict wb = wt + b * c;
    for (int64_t j = j0; j < len; j++)
      t[j] = bias;
    for (int64_t k = 0; k < c; k++) {
      const float *restrict xr = x + k * xs;
      float wv = wb[k];
      for (int64_t j = j0; j < len; j++)
        t[j] += wv * xr[j];
    }
  }
}

/* Interleaves the sw accumulators into one output row: y[j*sw + b]. */
CT_CLONES static void ct_store(float acc[HET_CONVT_TILES_MAX_W][CT_BLOCK],
                               int64_t sw, int64_t len, float *restrict y) {
  if (sw == 2) {
    const float *restrict t0 = acc[0], *restrict t1 = acc[1];
    for (int64_t j = 0; j < len; j++) {
      y[2 * j] = t0[j];
      y[2 * j + 1] = t1[j];
    }
    return;
  }
  for (int64_t j = 0; j < len; j++)
    for (int64_t b = 0; b < sw; b++)
      y[j * sw + b] = acc[b][j];
}

/* Rows [begin, end) of n * h input rows: every output row they own. */
static void ct_rows(void *arg, int64_t begin, int64_t end) {
  const ct_job *jb = arg;
  float acc[HET_CONVT_TILES_MAX_W][CT_BLOCK];
  int64_t ow = jb->w * jb->sw, oh = jb->h * jb->sh;
  for (int64_t r = begin; r < end; r++) {
    int64_t n = r / jb->h, i = r % jb->h;
    const float *xrow = jb->x + (n * jb->c * jb->h + i) * jb->w;
    for (int64_t j0 = 0; j0 < jb->w; j0 += CT_BLOCK) {
      int64_t len = jb->w - j0 < CT_BLOCK ? jb->w - j0 : CT_BLOCK;
      for (int64_t m = 0; m < jb->m; m++) {
        float bias = jb->bias ? jb->bias[m] : 0.0f;
        float *yplane = jb->y + (n * jb->m + m) * oh * ow;
        for (int64_t a = 0; a < jb->sh; a++) {
          const float *wt = jb->wt + ((m * jb->sh + a) * jb->sw) * jb->c;
          ct_accumulate(xrow + j0, jb->h * jb->w, jb->c, wt, jb->sw, bias,
                        len, acc);
          ct_store(acc, jb->sw, len,
                   yplane + (i * jb->sh + a) * ow + j0 * jb->sw);
        }
      }
    }
  }
}

bool het_lk_convt_tiles_apply(const het_conv_geom *g, int64_t group,
                              int64_t c, int64_t m, const het_tensor *x,
                              const het_tensor *w, const het_tensor *b,
                              const het_tensor *y) {
  if (g->nsp != 2 || group != 1 || x->dtype != HET_DTYPE_FLOAT32 ||
      w->dtype != HET_DTYPE_FLOAT32 || y->dtype != HET_DTYPE_FLOAT32 ||
      (b && b->dtype != HET_DTYPE_FLOAT32) || x->rank != 4 || y->rank != 4 ||
      w->rank != 4 || w->dims[0] != c || w->dims[1] != m)
    return false;
  for (int d = 0; d < 2; d++)
    if (g->kernel[d] != g->stride[d] || g->dil[d] != 1 || g->pad_b[d] ||
        g->pad_e[d] || y->dims[2 + d] != g->in[d] * g->stride[d])
      return false;
  return g->stride[1] <= HET_CONVT_TILES_MAX_W && y->dims[0] == x->dims[0] &&
         y->dims[1] == m;
}

het_status het_lk_convt_tiles_run(het_kernel_ctx *ctx, const het_conv_geom *g,
                                  int64_t c, int64_t m) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  int64_t sh = g->stride[0], sw = g->stride[1];
  if (het_tensor_count(y) == 0)
    return HET_OK;
  /* w[c][m][a][b] as [m][a][b][c]: each run reads its weights in order */
  size_t nw = (size_t)(c * m * sh * sw);
  float *wt;
  HET_TRY(het_kernel_take(ctx, nw * sizeof *wt, (void **)&wt));
  const float *wsrc = w->data;
  for (int64_t k = 0; k < c; k++)
    for (int64_t o = 0; o < m * sh * sw; o++)
      wt[o * c + k] = wsrc[k * m * sh * sw + o];
  ct_job jb = {c, m, g->in[0], g->in[1], sh, sw, x->data, wt,
               b ? b->data : NULL, y->data};
  int64_t row = m * sh * sw * g->in[1] + 1; /* outputs per input row */
  het_parallel_for(ctx->par, x->dims[0] * g->in[0], CT_GRAIN / row + 1,
                   ct_rows, &jb);
  het_kernel_give(ctx, wt);
  return HET_OK;
}
