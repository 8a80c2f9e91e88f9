/* linalg_qlinear.c — the integer linalg ops on the CPU: MatMulInteger,
 * QLinearMatMul, ConvInteger and QLinearConv.  Operands are widened to
 * int32 with their zero points subtracted (per tensor, per row of A, per
 * column of B or per output channel of W), multiplied exactly in int32 and,
 * for the QLinear ops, requantized as float32 multiplier, round half to
 * even, add zero point, saturate.  QLinearConv and QLinearMatMul first
 * try their oneDNN int8 primitives (kernels/dnnl/qlinear_dnnl.c,
 * qlinear_matmul_dnnl.c) when prepare made one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_kern.h"
#ifdef HETRT_HAVE_DNNL
#include "kernels/dnnl/qlinear_common.h"
#endif

bool het_kernels_int8_fast(void) {
#ifdef HETRT_HAVE_DNNL
  return het_dnnl_q8_usable();
#else
  return false;
#endif
}

/* Zero point i of an optional (scalar or 1-D) zero-point input. */
static int32_t zp_at(const het_tensor *zp, int64_t i) {
  if (!zp || het_tensor_count(zp) == 0)
    return 0;
  int64_t n = het_tensor_count(zp);
  return (int32_t)het_dtype_load_i64(zp->dtype, zp->data, n == 1 ? 0 : i % n);
}

/* A scale input has 1 value or want (per row or channel); an empty one
 * would divide by zero in scale_at. */
static het_status scale_check(const het_kernel_ctx *ctx, const het_tensor *s,
                              int64_t want, const char *what) {
  int64_t n = het_tensor_count(s);
  if (n == 1 || (n == want && n > 0))
    return HET_OK;
  return het_lk_fail(ctx, HET_ERR_SHAPE,
                     "%s has %lld values, expected 1 or %lld", what,
                     (long long)n, (long long)want);
}

static float scale_at(const het_tensor *s, int64_t i) {
  int64_t n = het_tensor_count(s);
  return (float)het_dtype_load_f64(s->dtype, s->data, n == 1 ? 0 : i % n);
}

/* dst[i] = t[i] - zp(index(i)), index = (i / div) % mod picks the zp. */
static het_status widen(const het_kernel_ctx *ctx, const het_tensor *t,
                        const het_tensor *zp, int64_t div, int64_t mod,
                        int32_t **out) {
  int64_t n = het_tensor_count(t);
  int64_t nz = zp ? het_tensor_count(zp) : 0;
  if (nz > 1 && nz != mod)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "zero point has %lld values, expected 1 or %lld",
                       (long long)nz, (long long)mod);
  HET_TRY(het_lk_alloc(ctx, sizeof(int32_t) * (size_t)n, (void **)out));
  for (int64_t i = 0; i < n; i++)
    (*out)[i] = (int32_t)het_dtype_load_i64(t->dtype, t->data, i) -
                zp_at(zp, (i / div) % mod);
  return HET_OK;
}

/* NaN (a NaN or infinite scale) gives the type's minimum, as
 * QuantizeLinear does (quant_vec.c). */
static int32_t requant(int64_t acc, float mult, int32_t zp, het_dtype t) {
  float v = nearbyintf((float)acc * mult) + (float)zp;
  float lo = t == HET_DTYPE_UINT8 ? 0.f : -128.f;
  float hi = t == HET_DTYPE_UINT8 ? 255.f : 127.f;
  return (int32_t)(isnan(v) || v < lo ? lo : v > hi ? hi : v);
}

/* acc[i] = A'(batch i) B'(batch i) in int32; caller frees *acc. */
static het_status matmul_i32(const het_kernel_ctx *ctx, int ai, int bi,
                             const het_tensor *azp, const het_tensor *bzp,
                             het_lk_batch *bt, int32_t **acc) {
  const het_tensor *a = ctx->inputs[ai], *b = ctx->inputs[bi];
  int32_t *wa = NULL, *wb = NULL;
  HET_TRY(het_lk_batch_init(ctx, a, b, bt));
  het_status st = widen(ctx, a, azp, bt->k, bt->m, &wa);
  if (st == HET_OK)
    st = widen(ctx, b, bzp, 1, bt->n, &wb);
  if (st == HET_OK)
    st = het_lk_alloc(ctx,
                      sizeof(int32_t) * (size_t)(bt->count * bt->m * bt->n),
                      (void **)acc);
  if (st == HET_OK)
    for (int64_t i = 0; i < bt->count; i++)
      for (int64_t r = 0; r < bt->m; r++)
        for (int64_t cidx = 0; cidx < bt->n; cidx++) {
          int64_t s = 0, oa, ob;
          het_lk_batch_at(bt, i, &oa, &ob);
          const int32_t *pa = wa + oa + r * bt->k;
          const int32_t *pb = wb + ob + cidx;
          for (int64_t p = 0; p < bt->k; p++)
            s += (int64_t)pa[p] * pb[p * bt->n];
          (*acc)[(i * bt->m + r) * bt->n + cidx] = (int32_t)s;
        }
  free(wa);
  free(wb);
  return st;
}

het_status het_lk_matmul_integer_run(het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    bool done = false;
    HET_TRY(het_dnnl_mmint_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  const het_tensor *azp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const het_tensor *bzp = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  het_lk_batch bt;
  int32_t *acc;
  HET_TRY(matmul_i32(ctx, 0, 1, azp, bzp, &bt, &acc));
  memcpy(ctx->outputs[0]->data, acc, ctx->outputs[0]->nbytes);
  free(acc);
  return HET_OK;
}

/* The oneDNN int8 path (qlinear_matmul_dnnl.c) where the node's state
 * has one for these inputs, else the reference below. */
het_status het_lk_qlinear_matmul_run(het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    bool done = false;
    HET_TRY(het_dnnl_qmatmul_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  het_tensor *const *in = ctx->inputs;
  het_tensor *y = ctx->outputs[0];
  het_lk_batch bt;
  int32_t *acc;
  HET_TRY(matmul_i32(ctx, 0, 3, in[2], in[5], &bt, &acc));
  het_status st = scale_check(ctx, in[1], bt.m, "a_scale");
  if (st == HET_OK)
    st = scale_check(ctx, in[4], bt.n, "b_scale");
  if (st == HET_OK)
    st = scale_check(ctx, in[6], 1, "y_scale");
  if (st != HET_OK) {
    free(acc);
    return st;
  }
  int32_t yzp = zp_at(in[7], 0);
  float ys = scale_at(in[6], 0);
  int64_t total = bt.count * bt.m * bt.n;
  for (int64_t i = 0; i < total; i++) {
    int64_t r = (i / bt.n) % bt.m, col = i % bt.n;
    float mult = scale_at(in[1], r) * scale_at(in[4], col) / ys;
    het_dtype_store_i64(y->dtype, y->data, i,
                        requant(acc[i], mult, yzp, y->dtype));
  }
  free(acc);
  return HET_OK;
}

/* Int32 convolution of zero-point-adjusted X (input 0) and W (input wi);
 * *acc is [N, M, out...]. */
static het_status conv_i32(het_kernel_ctx *ctx, int wi,
                           const het_tensor *xzp, const het_tensor *wzp,
                           int32_t **acc, int64_t *m_out, int64_t *osz) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[wi];
  het_conv_geom g;
  int64_t group = 1, c = 0, m = 0;
  HET_TRY(het_lk_geom(ctx, HET_GEOM_CONV, x, w, &g));
  HET_TRY(het_lk_conv_dims(ctx, x, w, &group, &c, &m));
  if (xzp && het_tensor_count(xzp) > 1)
    return het_lk_fail(ctx, HET_ERR_SHAPE, "x zero point must be a scalar");
  int64_t wper = het_tensor_count(w) / (m ? m : 1);
  *osz = het_conv_geom_count(g.out, g.nsp);
  *m_out = m;
  int32_t *wx = NULL, *ww = NULL;
  het_status st = widen(ctx, x, xzp, 1, 1, &wx);
  if (st == HET_OK)
    st = widen(ctx, w, wzp, wper, m, &ww);
  if (st == HET_OK)
    st = het_lk_alloc(ctx, sizeof(int32_t) * (size_t)(x->dims[0] * m * *osz),
                      (void **)acc);
  if (st == HET_OK) {
    st = het_lk_conv_i32(ctx, &g, x->dims[0], c, m, group, wx, ww, *acc);
    if (st != HET_OK)
      free(*acc);
  }
  free(wx);
  free(ww);
  return st;
}

het_status het_lk_conv_integer_run(het_kernel_ctx *ctx) {
  const het_tensor *xzp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const het_tensor *wzp = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  int32_t *acc;
  int64_t m, osz;
  HET_TRY(conv_i32(ctx, 1, xzp, wzp, &acc, &m, &osz));
  memcpy(ctx->outputs[0]->data, acc, ctx->outputs[0]->nbytes);
  free(acc);
  return HET_OK;
}

/* The oneDNN int8 path (qlinear_dnnl.c) where the node's state has one
 * for these inputs, else the reference below. */
het_status het_lk_qlinear_conv_run(het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    bool done = false;
    HET_TRY(het_dnnl_qconv_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  if ((ctx->nhwc_in | ctx->nhwc_out) & 1)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "the reference QLinearConv reads NCHW only");
  het_tensor *const *in = ctx->inputs;
  het_tensor *y = ctx->outputs[0];
  const het_tensor *bias = ctx->n_inputs > 8 ? in[8] : NULL;
  int32_t *acc;
  int64_t m, osz;
  HET_TRY(conv_i32(ctx, 3, in[2], in[5], &acc, &m, &osz));
  het_status st = scale_check(ctx, in[1], 1, "x_scale");
  if (st == HET_OK)
    st = scale_check(ctx, in[4], m, "w_scale");
  if (st == HET_OK)
    st = scale_check(ctx, in[6], 1, "y_scale");
  if (st == HET_OK && bias && het_tensor_count(bias) != m)
    st = het_lk_fail(ctx, HET_ERR_SHAPE, "bias has %lld values, expected %lld",
                     (long long)het_tensor_count(bias), (long long)m);
  if (st != HET_OK) {
    free(acc);
    return st;
  }
  int32_t yzp = zp_at(in[7], 0);
  float xs = scale_at(in[1], 0), ys = scale_at(in[6], 0);
  int64_t total = het_tensor_count(y);
  for (int64_t i = 0; i < total; i++) {
    int64_t ch = (i / (osz ? osz : 1)) % m;
    int64_t a = acc[i];
    if (bias)
      a += het_dtype_load_i64(bias->dtype, bias->data, ch);
    float mult = xs * scale_at(in[4], ch) / ys;
    het_dtype_store_i64(y->dtype, y->data, i, requant(a, mult, yzp, y->dtype));
  }
  free(acc);
  return HET_OK;
}
