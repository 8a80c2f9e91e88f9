/* linalg.c — the linalg CPU kernel table and the helpers the linalg
 * kernels share: node-naming errors, float16/bfloat16 working copies,
 * MatMul batch broadcasting and conv geometry from concrete tensors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/dnnl/gemm_dnnl.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_dnnl_api.h"
#include "kernels/linalg_kern.h"

het_status het_lk_alloc(const het_kernel_ctx *ctx, size_t bytes,
                        void **out) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p)
    return het_lk_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                       "cannot allocate %zu bytes of scratch", bytes);
  *out = p;
  return HET_OK;
}

het_dtype het_lk_work_type(het_dtype t) {
  return t == HET_DTYPE_FLOAT64 ? HET_DTYPE_FLOAT64 : HET_DTYPE_FLOAT32;
}

het_status het_lk_buf_input(const het_kernel_ctx *ctx, const het_tensor *t,
                            het_dtype work, het_lk_buf *b) {
  b->work = work;
  b->owned = false;
  if (t->dtype == work) {
    b->data = t->data;
    return HET_OK;
  }
  int64_t n = het_tensor_count(t);
  HET_TRY(het_lk_alloc(ctx, (size_t)n * het_dtype_size(work), &b->data));
  b->owned = true;
  if (work == HET_DTYPE_FLOAT32) {
    float *d = b->data;
    for (int64_t i = 0; i < n; i++)
      d[i] = (float)het_dtype_load_f64(t->dtype, t->data, i);
  } else {
    double *d = b->data;
    for (int64_t i = 0; i < n; i++)
      d[i] = het_dtype_load_f64(t->dtype, t->data, i);
  }
  return HET_OK;
}

het_status het_lk_buf_output(const het_kernel_ctx *ctx, het_tensor *t,
                             het_dtype work, het_lk_buf *b) {
  b->work = work;
  b->owned = false;
  if (t->dtype == work) {
    b->data = t->data;
    return HET_OK;
  }
  b->owned = true;
  return het_lk_alloc(ctx, (size_t)het_tensor_count(t) * het_dtype_size(work),
                      &b->data);
}

void het_lk_buf_commit(het_tensor *t, het_lk_buf *b) {
  if (!b->owned)
    return;
  int64_t n = het_tensor_count(t);
  for (int64_t i = 0; i < n; i++)
    het_dtype_store_f64(t->dtype, t->data, i,
                        het_dtype_load_f64(b->work, b->data, i));
  het_lk_buf_release(b);
}

void het_lk_buf_release(het_lk_buf *b) {
  if (b->owned)
    free(b->data);
  b->data = NULL;
  b->owned = false;
}

/* Element strides of the batch dims of t aligned right to rank r, with
 * stride 0 where t broadcasts. */
static void batch_strides(const het_tensor *t, int tb, int r, int64_t mat,
                          int64_t *st) {
  int64_t s = mat;
  for (int i = r - 1; i >= 0; i--) {
    int j = i - (r - tb);
    if (j < 0) {
      st[i] = 0;
      continue;
    }
    st[i] = t->dims[j] == 1 ? 0 : s;
    s *= t->dims[j];
  }
}

het_status het_lk_batch_init(const het_kernel_ctx *ctx, const het_tensor *a,
                             const het_tensor *b, het_lk_batch *bt) {
  memset(bt, 0, sizeof *bt);
  bt->m = a->rank == 1 ? 1 : a->dims[a->rank - 2];
  bt->k = a->dims[a->rank - 1];
  bt->n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
  int ab = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  int r = ab > bb ? ab : bb;
  int64_t *dims = bt->dims;
  bt->rank = r;
  for (int i = 0; i < r; i++) {
    int ja = i - (r - ab), jb = i - (r - bb);
    int64_t da = ja >= 0 ? a->dims[ja] : 1, db = jb >= 0 ? b->dims[jb] : 1;
    if (da != db && da != 1 && db != 1)
      return het_lk_fail(ctx, HET_ERR_SHAPE,
                         "batch dims %lld and %lld do not broadcast",
                         (long long)da, (long long)db);
    dims[i] = da == 1 ? db : da;
  }
  batch_strides(a, ab, r, bt->m * bt->k, bt->sa);
  batch_strides(b, bb, r, bt->k * bt->n, bt->sb);
  bt->count = het_dims_count(dims, r);
  return HET_OK;
}

void het_lk_batch_at(const het_lk_batch *bt, int64_t i, int64_t *a_off,
                     int64_t *b_off) {
  int64_t rem = i, oa = 0, ob = 0;
  for (int d = bt->rank - 1; d >= 0; d--) {
    int64_t c = rem % bt->dims[d];
    rem /= bt->dims[d];
    oa += c * bt->sa[d];
    ob += c * bt->sb[d];
  }
  *a_off = oa;
  *b_off = ob;
}

het_status het_lk_geom(const het_kernel_ctx *ctx, het_geom_kind kind,
                       const het_tensor *x, const het_tensor *w,
                       het_conv_geom *g) {
  if (x->rank < 3 || (w && w->rank != x->rank))
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "X rank %d / W rank %d: need equal ranks >= 3", x->rank,
                       w ? w->rank : x->rank);
  HET_TRY(het_conv_geom_init(ctx->node, kind, x->rank - 2, x->dims + 2,
                             w ? w->dims + 2 : NULL, g));
  for (int d = 0; w && d < g->nsp; d++)
    if (g->kernel[d] != w->dims[2 + d])
      return het_lk_fail(ctx, HET_ERR_SHAPE,
                         "kernel_shape[%d] = %lld but W has %lld", d,
                         (long long)g->kernel[d], (long long)w->dims[2 + d]);
  return HET_OK;
}

const het_kernel het_kernels_linalg[] = {
    {.op_type = "Conv",
     .domain = "",
     .prepare = HET_LK_DNNL_PREPARE(conv),
     .run = het_lk_conv_run,
     .destroy_state = HET_LK_DNNL_DESTROY,
     .prepare_with = HET_LK_DNNL_PREPARE_WITH(conv),
     .scratch = het_lk_conv_scratch,
     .state_weights = HET_LK_DNNL_WEIGHTS},
    /* Conv + residual Add (+ Relu/Clip), from opt_conv_add.c */
    {.op_type = "FusedConv",
     .domain = "hetrt",
     .prepare = HET_LK_DNNL_PREPARE(conv),
     .run = het_lk_conv_run,
     .destroy_state = HET_LK_DNNL_DESTROY,
     .prepare_with = HET_LK_DNNL_PREPARE_WITH(conv),
     .scratch = het_lk_conv_scratch,
     .state_weights = HET_LK_DNNL_WEIGHTS},
    /* 1x1 Conv + depthwise Conv, from opt_conv_dw.c */
    {.op_type = "FusedConvDw",
     .domain = "hetrt",
     .prepare = HET_LK_DNNL_PREPARE(conv),
     .run = het_lk_conv_dw_fused_run,
     .destroy_state = HET_LK_DNNL_DESTROY,
     .prepare_with = HET_LK_DNNL_PREPARE_WITH(conv),
     .scratch = het_lk_conv_dw_fused_scratch,
     .state_weights = HET_LK_DNNL_WEIGHTS},
    /* Conv + MaxPool, from opt_conv_pool.c */
    {.op_type = "FusedConvPool",
     .domain = "hetrt",
     .prepare = HET_LK_DNNL_PREPARE(conv),
     .run = het_lk_conv_pool_run,
     .destroy_state = HET_LK_DNNL_DESTROY,
     .prepare_with = HET_LK_DNNL_PREPARE_WITH(conv),
     .scratch = het_lk_conv_pool_scratch,
     .state_weights = HET_LK_DNNL_WEIGHTS},
    {.op_type = "ConvTranspose",
     .domain = "",
     .run = het_lk_conv_transpose_run,
     .scratch = het_lk_conv_scratch},
    {.op_type = "ConvInteger", .domain = "", .run = het_lk_conv_integer_run},
    {.op_type = "QLinearConv",
     .domain = "",
     .prepare = HET_QLINEAR_DNNL_CONV_PREPARE,
     .prepare_with = HET_QLINEAR_DNNL_CONV_PREPARE_WITH,
     .run = het_lk_qlinear_conv_run,
     .destroy_state = HET_QLINEAR_DNNL_CONV_DESTROY,
     .scratch = HET_QLINEAR_DNNL_CONV_SCRATCH,
     .state_weights = HET_QLINEAR_DNNL_CONV_WEIGHTS,
     .state_prefetch = HET_QLINEAR_DNNL_CONV_PREFETCH},
    {.op_type = "MatMul",
     .domain = "",
     .prepare = HET_LK_DNNL_PREPARE(matmul),
     .prepare_with = HET_LK_DNNL_PREPARE_WITH(matmul),
     .run = het_lk_matmul_run,
     .destroy_state = HET_LK_DNNL_DESTROY,
     .scratch = het_lk_matmul_scratch,
     .state_weights = HET_LK_DNNL_WEIGHTS},
    {.op_type = "MatMulInteger",
     .domain = "",
     .prepare = HET_QLINEAR_DNNL_MMINT_PREPARE,
     .run = het_lk_matmul_integer_run,
     .destroy_state = HET_QLINEAR_DNNL_MATMUL_DESTROY,
     .state_weights = HET_QLINEAR_DNNL_MATMUL_WEIGHTS},
    {.op_type = "QLinearMatMul",
     .domain = "",
     .prepare = HET_QLINEAR_DNNL_MATMUL_PREPARE,
     .run = het_lk_qlinear_matmul_run,
     .destroy_state = HET_QLINEAR_DNNL_MATMUL_DESTROY,
     .state_weights = HET_QLINEAR_DNNL_MATMUL_WEIGHTS},
    {.op_type = "Gemm",
     .domain = "",
     .prepare = HET_GEMM_DNNL_PREPARE,
     .prepare_with = HET_GEMM_DNNL_PREPARE_WITH,
     .run = het_lk_gemm_run,
     .destroy_state = HET_GEMM_DNNL_DESTROY,
     .state_weights = HET_GEMM_DNNL_WEIGHTS},
    {.op_type = "MaxPool", .domain = "", .run = het_lk_maxpool_run},
    {.op_type = "AveragePool", .domain = "", .run = het_lk_avgpool_run},
    {.op_type = "LpPool", .domain = "", .run = het_lk_lppool_run},
    {.op_type = "GlobalAveragePool",
     .domain = "",
     .run = het_lk_global_pool_run},
    {.op_type = "GlobalMaxPool", .domain = "", .run = het_lk_global_pool_run},
    {.op_type = "GlobalLpPool", .domain = "", .run = het_lk_global_pool_run},
    {.op_type = "MaxUnpool", .domain = "", .run = het_lk_max_unpool_run},
    {.op_type = "BatchNormalization",
     .domain = "",
     .run = het_lk_batch_norm_run},
    {.op_type = "RNN", .domain = "", .run = het_lk_rnn_run},
    {.op_type = "GRU", .domain = "", .run = het_lk_gru_run},
    {.op_type = "LSTM", .domain = "", .run = het_lk_lstm_run,
     .prepare = het_lk_lstm_prepare, .destroy_state = het_lk_lstm_destroy,
     .scratch = het_lk_lstm_scratch},
    {0},
};
