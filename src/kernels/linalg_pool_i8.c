/* linalg_pool_i8.c — 2-D MaxPool of uint8 or int8 tensors without Indices,
 * NCHW or NHWC: what a QDQ model's MaxPool becomes once the optimizer has
 * moved its DequantizeLinear below it (opt_qdq.c; the maximum commutes
 * with a dequantization, whose scale is positive), so the pooling reads
 * and writes bytes between int8 Convs instead of floats.  Padding is
 * never a value: only taps inside the input count (a window with none
 * gives the type's minimum).  NHWC pools each pixel over its contiguous
 * channels in one vector loop; NCHW goes output by output.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <stdint.h>
#include <string.h>

#include "kernels/linalg_kern.h"
#include "kernels/linalg_pool_f32.h"
#include "kernels/linalg_pool_i8.h"
#include "kernels/parallel.h"

/* Window taps below which pooling stays on one thread. */
#define POOLI_GRAIN 65536

/* ISA-level clones (byte maxima need AVX-512BW, in x86-64-v4), as the
 * depthwise kernel's. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__)
#define POOLI_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                               "default")))
#else
#define POOLI_CLONES
#endif

typedef struct pooli_job {
  const het_conv_geom *g;
  int64_t c; /* channels */
  const void *x;
  void *y;
} pooli_job;

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* One NHWC output row with AVX-512BW, 64 channels at a time: each
 * block's maximum stays in a register over the window's taps, which are
 * reached by adding strides, and is stored once (the generic loop below
 * reads and writes y per tap and computes each tap's address: ResNet-50's
 * int8 3x3 / 2 pool over 112x112x64 took 47 us that way, hot). */
#define POOLI_AVX512(SFX, MAX, LO)                                            \
  __attribute__((target("avx512f,avx512bw"))) static void                   \
  pooli_row_avx512_##SFX(const pooli_job *j, const uint8_t *xn, int64_t hs, \
                         const int64_t *khr, uint8_t *y) {                  \
    const het_conv_geom *g = j->g;                                          \
    int64_t c = j->c, iw = g->in[1], na = khr[1] - khr[0];                  \
    size_t rstep = (size_t)(g->dil[0] * iw * c), cstep = (size_t)(g->dil[1] * c); \
    for (int64_t o = 0; o < g->out[1]; o++, y += c) {                       \
      int64_t ws = o * g->stride[1] - g->pad_b[1], kw[2];                   \
      het_pool_tap_range(ws, g->kernel[1], g->dil[1], iw, &kw[0], &kw[1]);  \
      const uint8_t *base =                                                 \
          xn + ((hs + khr[0] * g->dil[0]) * iw + ws + kw[0] * g->dil[1]) * c; \
      for (int64_t k = 0; k < c; k += 64) {                                 \
        __mmask64 m = c - k >= 64 ? ~(__mmask64)0                           \
                                  : ((__mmask64)1 << (c - k)) - 1;          \
        __m512i acc = _mm512_set1_epi8((char)(LO));                         \
        const uint8_t *pa = base + k;                                       \
        for (int64_t a = 0; a < na; a++, pa += rstep) {                     \
          const uint8_t *pb = pa;                                           \
          for (int64_t b = kw[0]; b < kw[1]; b++, pb += cstep)              \
            acc = MAX(acc, _mm512_maskz_loadu_epi8(m, pb));                 \
        }                                                                   \
        _mm512_mask_storeu_epi8(y + k, m, acc);                             \
      }                                                                     \
    }                                                                       \
  }
POOLI_AVX512(u8, _mm512_max_epu8, 0)
POOLI_AVX512(s8, _mm512_max_epi8, INT8_MIN)
#endif

/* One NHWC output row (int8 when is_signed) on AVX-512BW; false, nothing
 * done, without it. */
static bool pooli_row_fast(const pooli_job *j, const void *xn, int64_t hs,
                           const int64_t *khr, void *y, bool is_signed) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_cpu_supports("avx512bw"))
    return false;
  if (is_signed)
    pooli_row_avx512_s8(j, xn, hs, khr, y);
  else
    pooli_row_avx512_u8(j, xn, hs, khr, y);
  return true;
#else
  (void)j, (void)xn, (void)hs, (void)khr, (void)y, (void)is_signed;
  return false;
#endif
}

/* The two element types share one body: T the type, LO its minimum. */
#define POOLI_DEFINE(SFX, T, LO)                                              \
  /* NHWC: y[0..c) = max over the valid taps of the window at (hs, ws). */   \
  POOLI_CLONES static void pooli_pixel_##SFX(                                \
      const pooli_job *j, const T *xn, int64_t hs, int64_t ws,               \
      const int64_t *khr, T *restrict y) {                                   \
    const het_conv_geom *g = j->g;                                           \
    int64_t c = j->c, iw = g->in[1], kw[2];                                  \
    het_pool_tap_range(ws, g->kernel[1], g->dil[1], iw, &kw[0], &kw[1]);     \
    for (int64_t k = 0; k < c; k++)                                          \
      y[k] = LO;                                                             \
    for (int64_t a = khr[0]; a < khr[1]; a++)                                \
      for (int64_t b = kw[0]; b < kw[1]; b++) {                              \
        const T *restrict q =                                                \
            xn + ((hs + a * g->dil[0]) * iw + ws + b * g->dil[1]) * c;       \
        for (int64_t k = 0; k < c; k++)                                      \
          y[k] = q[k] > y[k] ? q[k] : y[k];                                  \
      }                                                                      \
  }                                                                          \
                                                                             \
  /* Unit u: output row u % oh of image (NHWC) or plane (NCHW) u / oh. */   \
  static void pooli_rows_##SFX(void *arg, int64_t u0, int64_t u1, bool nhwc) \
  {                                                                          \
    const pooli_job *j = arg;                                                \
    const het_conv_geom *g = j->g;                                           \
    int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];    \
    int64_t per = nhwc ? j->c : 1; /* elements per pixel */                  \
    for (int64_t u = u0; u < u1; u++) {                                      \
      const T *xp = (const T *)j->x + (u / oh) * ih * iw * per;              \
      T *y = (T *)j->y + u * ow * per;                                       \
      int64_t hs = (u % oh) * g->stride[0] - g->pad_b[0], khr[2];            \
      het_pool_tap_range(hs, g->kernel[0], g->dil[0], ih, &khr[0], &khr[1]); \
      if (nhwc && pooli_row_fast(j, xp, hs, khr, y, (LO) != 0))              \
        continue;                                                            \
      for (int64_t o = 0; o < ow; o++) {                                     \
        int64_t ws = o * g->stride[1] - g->pad_b[1];                         \
        if (nhwc) {                                                          \
          pooli_pixel_##SFX(j, xp, hs, ws, khr, y + o * per);                \
          continue;                                                          \
        }                                                                    \
        int64_t kw[2];                                                       \
        het_pool_tap_range(ws, g->kernel[1], g->dil[1], iw, &kw[0], &kw[1]); \
        T m = LO;                                                            \
        for (int64_t a = khr[0]; a < khr[1]; a++)                            \
          for (int64_t b = kw[0]; b < kw[1]; b++) {                          \
            T v = xp[(hs + a * g->dil[0]) * iw + ws + b * g->dil[1]];        \
            m = v > m ? v : m;                                               \
          }                                                                  \
        y[o] = m;                                                            \
      }                                                                      \
    }                                                                        \
  }                                                                          \
  static void pooli_nchw_##SFX(void *arg, int64_t u0, int64_t u1) {          \
    pooli_rows_##SFX(arg, u0, u1, false);                                    \
  }                                                                          \
  static void pooli_nhwc_##SFX(void *arg, int64_t u0, int64_t u1) {          \
    pooli_rows_##SFX(arg, u0, u1, true);                                     \
  }

POOLI_DEFINE(u8, uint8_t, 0)
POOLI_DEFINE(s8, int8_t, INT8_MIN)

het_status het_lk_maxpool2d_i8_run(het_kernel_ctx *ctx,
                                   const het_conv_geom *g) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  bool nhwc = ctx->nhwc_in & 1, sign = x->dtype == HET_DTYPE_INT8;
  if (nhwc != ((ctx->nhwc_out & 1) != 0))
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "int8 MaxPool: input and output layouts differ");
  pooli_job j = {.g = g, .c = x->dims[1], .x = x->data, .y = y->data};
  int64_t units = x->dims[0] * g->out[0] * (nhwc ? 1 : j.c);
  int64_t row = g->out[1] * (het_conv_geom_count(g->kernel, 2) + 1) *
                (nhwc ? j.c : 1);
  het_parallel_fn fn = sign ? (nhwc ? pooli_nhwc_s8 : pooli_nchw_s8)
                            : (nhwc ? pooli_nhwc_u8 : pooli_nchw_u8);
  het_parallel_for(ctx->par, units, POOLI_GRAIN / row + 1, fn, &j);
  return HET_OK;
}
