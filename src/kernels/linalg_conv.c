/* linalg_conv.c — Conv and ConvTranspose (1-D/2-D/3-D, groups, dilations,
 * pads, auto_pad, bias) on the CPU by im2col/col2im + GEMM: OpenBLAS for
 * float32/float64 (direct depthwise, linalg_conv_dw.c, then oneDNN first
 * for float32 Conv when built; a float32 ConvTranspose whose stride is its
 * kernel by tiles, linalg_convt_tiles.c), float16 and
 * bfloat16 through float32; an int32 instance serves ConvInteger and
 * QLinearConv (linalg_qlinear.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/infer.h"
#include "core/ops/linalg_geom.h"
#include "kernels/linalg_conv_dw.h"
#include "kernels/linalg_convt_tiles.h"
#include "kernels/linalg_dnnl_api.h"
#include "kernels/linalg_kern.h"

static void kidx_decompose(const het_conv_geom *g, int64_t kk, int64_t *k) {
  for (int d = g->nsp - 1; d >= 0; d--) {
    k[d] = kk % g->kernel[d];
    kk /= g->kernel[d];
  }
}

static bool geom_pointwise(const het_conv_geom *g) {
  for (int d = 0; d < g->nsp; d++)
    if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad_b[d] != 0 ||
        g->pad_e[d] != 0 || g->in[d] != g->out[d])
      return false;
  return true;
}

static void gemm_i32(bool ta, int64_t m, int64_t n, int64_t k, const int32_t *a,
                     int64_t lda, const int32_t *b, int64_t ldb, int32_t *c,
                     int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    int32_t *crow = c + i * ldc;
    memset(crow, 0, sizeof(int32_t) * (size_t)n);
    for (int64_t p = 0; p < k; p++) {
      int32_t av = ta ? a[p * lda + i] : a[i * lda + p];
      if (av == 0)
        continue;
      const int32_t *brow = b + p * ldb;
      for (int64_t j = 0; j < n; j++)
        crow[j] =
            (int32_t)((uint32_t)crow[j] + (uint32_t)av * (uint32_t)brow[j]);
    }
  }
}

#define LK_T float
#define LK_SFX f32
#define LK_GEMM(ta, m, n, k, a, lda, b, ldb, c, ldc)                           \
  het_lk_gemm_work(HET_DTYPE_FLOAT32, ta, false, m, n, k, 1.0, a, lda, b, ldb, \
                   0.0, c, ldc)
#include "kernels/linalg_conv_tmpl.h"
#undef LK_T
#undef LK_SFX
#undef LK_GEMM

#define LK_T double
#define LK_SFX f64
#define LK_GEMM(ta, m, n, k, a, lda, b, ldb, c, ldc)                           \
  het_lk_gemm_work(HET_DTYPE_FLOAT64, ta, false, m, n, k, 1.0, a, lda, b, ldb, \
                   0.0, c, ldc)
#include "kernels/linalg_conv_tmpl.h"
#undef LK_T
#undef LK_SFX
#undef LK_GEMM

#define LK_T int32_t
#define LK_SFX i32
#define LK_GEMM gemm_i32
#include "kernels/linalg_conv_tmpl.h"
#undef LK_T
#undef LK_SFX
#undef LK_GEMM

/* Sizes of a conv node checked against W: c channels in, m out. */
static het_status conv_dims(const het_kernel_ctx *ctx, const het_tensor *x,
                            const het_tensor *w, bool transposed,
                            int64_t *group, int64_t *c, int64_t *m) {
  *group = het_node_attr_int(ctx->node, "group", 1);
  *c = x->dims[1];
  int64_t wc = transposed ? w->dims[0] : w->dims[1] * *group;
  if (*group < 1 || *c != wc || *c % *group != 0)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "input has %lld channels but W expects %lld (group "
                       "%lld)",
                       (long long)*c, (long long)wc, (long long)*group);
  *m = transposed ? w->dims[1] * *group : w->dims[0];
  if (*m % *group != 0)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "%lld output channels not divisible by group %lld",
                       (long long)*m, (long long)*group);
  return HET_OK;
}

het_status het_lk_conv_i32(const het_kernel_ctx *ctx,
                           const het_conv_geom *g, int64_t nb, int64_t c,
                           int64_t m, int64_t group, const int32_t *x,
                           const int32_t *w, int32_t *y) {
  int64_t cols = (c / group) * het_conv_geom_count(g->kernel, g->nsp) *
                 het_conv_geom_count(g->out, g->nsp);
  int32_t *col;
  HET_TRY(het_lk_alloc(ctx, sizeof(int32_t) * (size_t)cols, (void **)&col));
  conv_core_i32(g, nb, c, m, group, x, w, NULL, y, col);
  free(col);
  return HET_OK;
}

het_status het_lk_conv_dims(const het_kernel_ctx *ctx, const het_tensor *x,
                            const het_tensor *w, int64_t *group, int64_t *c,
                            int64_t *m) {
  return conv_dims(ctx, x, w, false, group, c, m);
}

static het_status conv_float(het_kernel_ctx *ctx, bool transposed) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  het_conv_geom g;
  int64_t group = 1, c = 0, m = 0;
  HET_TRY(
      het_lk_geom(ctx, transposed ? HET_GEOM_CONVT : HET_GEOM_CONV, x, w, &g));
  HET_TRY(conv_dims(ctx, x, w, transposed, &group, &c, &m));
  if (b && het_tensor_count(b) != m)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "bias has %lld values for %lld "
                       "output channels",
                       (long long)het_tensor_count(b), (long long)m);
  if (transposed)
    memcpy(g.out, y->dims + 2, sizeof(int64_t) * (size_t)g.nsp);
  if (het_tensor_count(y) == 0)
    return HET_OK;
  if (transposed && het_lk_convt_tiles_apply(&g, group, c, m, x, w, b, y))
    return het_lk_convt_tiles_run(ctx, &g, c, m);
  het_dtype work = het_lk_work_type(x->dtype);
  size_t es = work == HET_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double);
  int64_t ksz = het_conv_geom_count(g.kernel, g.nsp);
  int64_t cols = transposed
                     ? (m / group) * ksz * het_conv_geom_count(g.in, g.nsp)
                     : (c / group) * ksz * het_conv_geom_count(g.out, g.nsp);
  het_lk_buf bx = {0}, bw = {0}, bb = {0}, by = {0};
  void *col = NULL;
  bool took = false;
  het_status st = het_lk_buf_input(ctx, x, work, &bx);
  if (st == HET_OK)
    st = het_lk_buf_input(ctx, w, work, &bw);
  if (st == HET_OK && b)
    st = het_lk_buf_input(ctx, b, work, &bb);
  if (st == HET_OK)
    st = het_lk_buf_output(ctx, y, work, &by);
  if (st == HET_OK)
    st = het_kernel_take(ctx, es * (size_t)cols, &col);
  took = st == HET_OK;
  if (st != HET_OK)
    goto fail;
  if (work == HET_DTYPE_FLOAT32 && transposed)
    convt_core_f32(&g, x->dims[0], c, m, group, bx.data, bw.data, bb.data,
                   by.data, col);
  else if (work == HET_DTYPE_FLOAT32)
    conv_core_f32(&g, x->dims[0], c, m, group, bx.data, bw.data, bb.data,
                  by.data, col);
  else if (transposed)
    convt_core_f64(&g, x->dims[0], c, m, group, bx.data, bw.data, bb.data,
                   by.data, col);
  else
    conv_core_f64(&g, x->dims[0], c, m, group, bx.data, bw.data, bb.data,
                  by.data, col);
  het_lk_buf_commit(y, &by);
fail:
  if (took)
    het_kernel_give(ctx, col);
  het_lk_buf_release(&by);
  het_lk_buf_release(&bx);
  het_lk_buf_release(&bw);
  het_lk_buf_release(&bb);
  return st;
}

/* A Relu or Clip the optimizer fused into this Conv (attributes
 * hetrt_act_min / hetrt_act_max): clamps the output in place, NaN staying
 * NaN as in the unfused ops.  The Conv may run in another float type than
 * the model's float32 (a device with float32_as). */
static void het_lk_conv_clamp(het_kernel_ctx *ctx) {
  const het_attr *lo_a = het_node_find_attr(ctx->node, "hetrt_act_min");
  const het_attr *hi_a = het_node_find_attr(ctx->node, "hetrt_act_max");
  het_tensor *y = ctx->outputs[0];
  if (!lo_a || !hi_a)
    return;
  float lo = lo_a->f, hi = hi_a->f;
  int64_t n = het_tensor_count(y);
  if (y->dtype == HET_DTYPE_FLOAT32) {
    float *p = y->data;
    for (int64_t i = 0; i < n; i++) {
      float v = p[i] < lo ? lo : p[i];
      p[i] = v > hi ? hi : v;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    double x = het_dtype_load_f64(y->dtype, y->data, i);
    double v = x < lo ? lo : x;
    het_dtype_store_f64(y->dtype, y->data, i, v > hi ? hi : v);
  }
}

/* A named activation the optimizer fused into this Conv (hetrt_act with
 * hetrt_act_alpha / hetrt_act_beta): that op's own CPU kernel, run in
 * place over the output (elementwise kernels allow it). */
static het_status het_lk_conv_act(het_kernel_ctx *ctx) {
  const het_attr *op = het_node_find_attr(ctx->node, "hetrt_act");
  if (!op)
    return HET_OK;
  const char *name = op->type == HET_ATTR_STRING ? het_conv_act_name(op->s)
                                                : NULL;
  const het_kernel *k = name ? het_kernel_find("", name) : NULL;
  if (!k) /* only a file could put another op there */
    return het_lk_fail(ctx, HET_ERR_INVALID_MODEL,
                       "hetrt_act is not an activation a Conv can apply "
                       "(LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh)");
  het_attr attrs[2] = {
      {.name = "alpha", .type = HET_ATTR_FLOAT,
       .f = het_node_attr_float(ctx->node, "hetrt_act_alpha", 0.0f)},
      {.name = "beta", .type = HET_ATTR_FLOAT,
       .f = het_node_attr_float(ctx->node, "hetrt_act_beta", 0.0f)}};
  int io_ids[1] = {-1};
  het_node act = {.name = ctx->node->name, .op_type = name, .domain = "",
                  .opset = ctx->node->opset, .n_inputs = 1,
                  .inputs = io_ids, .n_outputs = 1, .outputs = io_ids,
                  .n_attrs = 2, .attrs = attrs};
  het_tensor *y[1] = {ctx->outputs[0]};
  het_kernel_ctx c = *ctx;
  c.node = &act;
  c.n_inputs = c.n_outputs = 1;
  c.inputs = c.outputs = y;
  c.state = NULL;
  c.nhwc_in = c.nhwc_out = 0;
  return k->run(&c);
}

/* z: the residual's bytes (a copy when the memory plan put the output in
 * the residual's buffer, which the convolution overwrites first). */
static het_status het_lk_conv_add_residual(het_kernel_ctx *ctx,
                                           const void *z) {
  het_tensor *y = ctx->outputs[0];
  int64_t n = het_tensor_count(y);
  for (int64_t i = 0; i < n; i++)
    het_dtype_store_f64(y->dtype, y->data, i,
                        het_dtype_load_f64(y->dtype, y->data, i) +
                            het_dtype_load_f64(y->dtype, z, i));
  return HET_OK;
}

/* im2col + GEMM, then FusedConv's residual: saved first when it shares
 * the output's buffer (memplan in-place). */
static het_status het_lk_conv_generic(het_kernel_ctx *ctx) {
  const het_tensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  het_tensor *y = ctx->outputs[0];
  if (!z)
    return conv_float(ctx, false);
  if (z->dtype != y->dtype || z->rank != y->rank ||
      memcmp(z->dims, y->dims, sizeof(int64_t) * (size_t)y->rank) != 0)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "residual input does not match the output");
  void *saved = NULL;
  if (z->data == y->data && z->nbytes) {
    HET_TRY(het_kernel_take(ctx, z->nbytes, &saved));
    memcpy(saved, z->data, z->nbytes);
  }
  het_status st = conv_float(ctx, false);
  if (st == HET_OK)
    st = het_lk_conv_add_residual(ctx, saved ? saved : z->data);
  if (saved)
    het_kernel_give(ctx, saved);
  return st;
}

size_t het_lk_conv_scratch(const het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  if (ctx->state && strcmp(ctx->node->op_type, "ConvTranspose") != 0)
#ifdef HETRT_HAVE_DNNL
    return het_dnnl_scratch(ctx); /* oneDNN's primitive (or the
                                          depthwise kernel) runs it */
#else
    return 0; /* the depthwise kernel runs it */
#endif
  const het_tensor *y = ctx->outputs[0];
  bool transposed = strcmp(ctx->node->op_type, "ConvTranspose") == 0;
  het_conv_geom g;
  int64_t group = 1, c = 0, m = 0;
  if (!x || !w || !y ||
      het_lk_geom(ctx, transposed ? HET_GEOM_CONVT : HET_GEOM_CONV, x, w,
                  &g) != HET_OK ||
      conv_dims(ctx, x, w, transposed, &group, &c, &m) != HET_OK) {
    het_error_clear();
    return 0; /* the run reports the error */
  }
  if (transposed)
    memcpy(g.out, y->dims + 2, sizeof(int64_t) * (size_t)g.nsp);
  size_t es = het_dtype_size(het_lk_work_type(x->dtype));
  int64_t ksz = het_conv_geom_count(g.kernel, g.nsp);
  int64_t cols = transposed
                     ? (m / group) * ksz * het_conv_geom_count(g.in, g.nsp)
                     : (c / group) * ksz * het_conv_geom_count(g.out, g.nsp);
  if (transposed && c * (m / group) * ksz > cols) /* the tiled path's */
    cols = c * (m / group) * ksz;
  size_t need = ((es * (size_t)cols + 63) & ~(size_t)63);
  if (ctx->n_inputs > 3 && ctx->inputs[3]) /* a residual saved in place */
    need += (ctx->inputs[3]->nbytes + 63) & ~(size_t)63;
  return need;
}

/* Conv and hetrt.FusedConv: oneDNN (which applies residual and clamp as
 * post-ops), the direct depthwise kernel or im2col + GEMM, then the
 * residual and the clamp.  NHWC bits (layout.c) are only ever set where
 * the first two can honour them. */
het_status het_lk_conv_run(het_kernel_ctx *ctx) {
  bool done = false;
  bool fused_sum = ctx->n_inputs > 3 && ctx->inputs[3];
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    HET_TRY(het_dnnl_conv_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  if (!fused_sum) {
    HET_TRY(het_lk_conv_dw_run(ctx, &done)); /* clamps itself */
    if (done)
      return het_lk_conv_act(ctx);
  }
  if (ctx->nhwc_in || ctx->nhwc_out)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "no Conv path for the NHWC layout it was given");
  HET_TRY(het_lk_conv_generic(ctx));
  het_lk_conv_clamp(ctx);
  return het_lk_conv_act(ctx);
}

void het_lk_dw_half_init(const het_node *fused, int64_t m, bool band,
                         het_lk_dw_half *d) {
  int64_t st[2] = {1, 1}, pads[4] = {0};
  het_conv_dw_attrs(fused, st, pads); /* checked by shape inference */
  memset(d, 0, sizeof *d);
  memcpy(d->ints, st, sizeof st);
  memcpy(d->ints + 2, pads, sizeof pads);
  if (band)
    d->ints[2] = d->ints[4] = 0;
  int n = 0;
  d->attrs[n++] = (het_attr){.name = "group", .type = HET_ATTR_INT, .i = m};
  d->attrs[n++] = (het_attr){.name = "strides", .type = HET_ATTR_INTS,
                             .n = 2, .ints = d->ints};
  d->attrs[n++] = (het_attr){.name = "pads", .type = HET_ATTR_INTS, .n = 4,
                             .ints = d->ints + 2};
  n += het_node_copy_act_attrs(fused, false, d->attrs + n);
  d->inputs[0] = het_node_input(fused, 0);
  d->inputs[1] = het_node_input(fused, 3);
  d->inputs[2] = het_node_input(fused, 4);
  d->node = (het_node){.name = fused->name, .op_type = "Conv", .domain = "",
                       .opset = fused->opset, .inputs = d->inputs,
                       .n_inputs = d->inputs[2] >= 0 ? 3 : 2,
                       .attrs = d->attrs, .n_attrs = n};
}

/* FusedConvDw's two halves as kernel contexts of their own: one (the 1x1
 * half, the node's own attributes) writes mid, dw (on d) reads it. */
static void conv_dw_halves(const het_kernel_ctx *ctx, het_tensor *mid,
                           het_tensor **mid_p, het_tensor *dw_in[3],
                           het_lk_dw_half *d, het_kernel_ctx *one,
                           het_kernel_ctx *dw) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  *mid = (het_tensor){.dtype = x->dtype, .rank = 4,
                      .dims = {x->dims[0], w->dims[0], x->dims[2], x->dims[3]}};
  mid->nbytes = (size_t)het_tensor_count(mid) * het_dtype_size(x->dtype);
  *mid_p = mid;
  het_lk_dw_half_init(ctx->node, w->dims[0], false, d);
  *one = *ctx;
  one->n_inputs = 3;
  one->outputs = mid_p;
  one->n_outputs = 1;
  one->state = NULL;
  dw_in[0] = mid;
  dw_in[1] = ctx->inputs[3];
  dw_in[2] = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  *dw = *ctx;
  dw->node = &d->node;
  dw->n_inputs = 3;
  dw->inputs = dw_in;
  dw->state = NULL;
}

/* FusedConvDw's inputs as the generic path needs them. */
static bool conv_dw_shapes_ok(const het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  return x && w && ctx->n_inputs > 3 && ctx->inputs[3] && x->rank == 4 &&
         w->rank == 4 && ctx->inputs[3]->rank == 4;
}

size_t het_lk_conv_dw_fused_scratch(const het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  if (ctx->state)
    return het_dnnl_scratch(ctx); /* its band or whole-output buffer */
#endif
  if (!conv_dw_shapes_ok(ctx))
    return 0; /* the run reports it */
  het_tensor mid, *mid_p, *dw_in[3];
  het_lk_dw_half d;
  het_kernel_ctx one, dw;
  conv_dw_halves(ctx, &mid, &mid_p, dw_in, &d, &one, &dw);
  size_t a = het_lk_conv_scratch(&one), b = het_lk_conv_scratch(&dw);
  return ((mid.nbytes + 63) & ~(size_t)63) + (a > b ? a : b);
}

/* A fused Conv node (op) on oneDNN where it was prepared (*done), else
 * an error for an NHWC layout: the generic paths run plain layouts only. */
static het_status fused_on_dnnl(het_kernel_ctx *ctx, const char *op,
                                bool *done) {
  *done = false;
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    HET_TRY(het_dnnl_conv_run(ctx, done));
    if (*done)
      return HET_OK;
  }
#endif
  if (ctx->nhwc_in || ctx->nhwc_out)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "no %s path for the NHWC layout it was given", op);
  return HET_OK;
}

het_status het_lk_conv_dw_fused_run(het_kernel_ctx *ctx) {
  bool done;
  HET_TRY(fused_on_dnnl(ctx, "FusedConvDw", &done));
  if (done)
    return HET_OK;
  if (!conv_dw_shapes_ok(ctx))
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "FusedConvDw takes rank-4 X, W and depthwise weights");
  het_tensor mid, *mid_p, *dw_in[3];
  het_lk_dw_half d;
  het_kernel_ctx one, dw;
  conv_dw_halves(ctx, &mid, &mid_p, dw_in, &d, &one, &dw);
  HET_TRY(het_kernel_take(ctx, mid.nbytes, &mid.data));
  /* the halves take their scratch after mid's */
  one.scratch_used = dw.scratch_used = ctx->scratch_used;
  het_status st = het_lk_conv_run(&one);
  if (st == HET_OK)
    st = het_lk_conv_run(&dw);
  het_kernel_give(ctx, mid.data);
  return st;
}

/* FusedConvPool's halves as kernel contexts of their own: conv (the
 * node's own attributes) writes mid, pool (on ph) reads it into Y; false
 * when the shapes or attributes do not fit. */
static bool conv_pool_halves(const het_kernel_ctx *ctx, het_tensor *mid,
                             het_tensor **mid_p, het_pool_half *ph,
                             het_kernel_ctx *conv, het_kernel_ctx *pool) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  het_conv_geom g;
  if (!x || !w || x->rank != 4 || w->rank != 4 ||
      !het_pool_half_init(ctx->node, ph) ||
      het_conv_geom_init(ctx->node, HET_GEOM_CONV, 2, x->dims + 2,
                         w->dims + 2, &g) != HET_OK) {
    het_error_clear();
    return false;
  }
  *mid = (het_tensor){.dtype = x->dtype, .rank = 4,
                      .dims = {x->dims[0], w->dims[0], g.out[0], g.out[1]}};
  mid->nbytes = (size_t)het_tensor_count(mid) * het_dtype_size(x->dtype);
  *mid_p = mid;
  *conv = *ctx;
  conv->outputs = mid_p;
  conv->n_outputs = 1;
  conv->state = NULL;
  *pool = *ctx;
  pool->node = &ph->node;
  pool->inputs = mid_p;
  pool->n_inputs = 1;
  pool->state = NULL;
  return true;
}

size_t het_lk_conv_pool_scratch(const het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  if (ctx->state)
    return het_dnnl_scratch(ctx); /* its band or whole-output buffer */
#endif
  het_tensor mid, *mid_p;
  het_pool_half ph;
  het_kernel_ctx conv, pool;
  if (!conv_pool_halves(ctx, &mid, &mid_p, &ph, &conv, &pool))
    return 0; /* the run reports it */
  return ((mid.nbytes + 63) & ~(size_t)63) + het_lk_conv_scratch(&conv);
}

het_status het_lk_conv_pool_run(het_kernel_ctx *ctx) {
  bool done;
  HET_TRY(fused_on_dnnl(ctx, "FusedConvPool", &done));
  if (done)
    return HET_OK;
  het_tensor mid, *mid_p;
  het_pool_half ph;
  het_kernel_ctx conv, pool;
  if (!conv_pool_halves(ctx, &mid, &mid_p, &ph, &conv, &pool))
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "FusedConvPool takes rank-4 X and W and its pool "
                       "attributes");
  HET_TRY(het_kernel_take(ctx, mid.nbytes, &mid.data));
  conv.scratch_used = ctx->scratch_used; /* the Conv's after mid's */
  het_status st = het_lk_conv_run(&conv);
  if (st == HET_OK)
    st = het_lk_maxpool_run(&pool);
  het_kernel_give(ctx, mid.data);
  return st;
}

/* ConvTranspose, then the activation the optimizer fused into it. */
het_status het_lk_conv_transpose_run(het_kernel_ctx *ctx) {
  HET_TRY(conv_float(ctx, true));
  het_lk_conv_clamp(ctx);
  return het_lk_conv_act(ctx);
}

void het_lk_gather_strided(const void *x, void *xs, int64_t n, int64_t h,
                           int64_t w, int64_t sh, int64_t sw, size_t px) {
  int64_t oh = (h - 1) / sh + 1, ow = (w - 1) / sw + 1;
  const uint8_t *src = x;
  uint8_t *dst = xs;
  for (int64_t i = 0; i < n; i++)
    for (int64_t r = 0; r < oh; r++) {
      const uint8_t *row = src + (size_t)((i * h + r * sh) * w) * px;
      for (int64_t q = 0; q < ow; q++, dst += px)
        memcpy(dst, row + (size_t)(q * sw) * px, px);
    }
}
