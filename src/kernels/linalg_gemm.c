/* linalg_gemm.c — MatMul (numpy batched broadcast, 1-D operands) and Gemm
 * (transA/transB, alpha, beta, C broadcast to [M, N]) on the CPU.
 * float32/float64 use OpenBLAS sgemm/dgemm (oneDNN first for float32
 * MatMul and Gemm with constant B when built: dnnl/linalg_dnnl.c,
 * dnnl/gemm_dnnl.c); float16/bfloat16 compute in float32; integer types
 * use plain loops with wrap-around arithmetic in 64 bits.
 */
#include <cblas.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/dnnl/gemm_dnnl.h"
#include "kernels/linalg_dnnl_api.h"
#include "kernels/linalg_kern.h"

void het_lk_gemm_work(het_dtype work, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, double alpha, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c,
                      int64_t ldc) {
  enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans;
  enum CBLAS_TRANSPOSE trb = tb ? CblasTrans : CblasNoTrans;
  if (work == HET_DTYPE_FLOAT32)
    cblas_sgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                (float)alpha, a, (blasint)lda, b, (blasint)ldb, (float)beta, c,
                (blasint)ldc);
  else
    cblas_dgemm(CblasRowMajor, tra, trb, (blasint)m, (blasint)n, (blasint)k,
                alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
                (blasint)ldc);
}

/* Integer matmul with generic loads: c = op(a) op(b) (wraps like C). */
static void gemm_int(het_dtype t, bool ta, bool tb, int64_t m, int64_t n,
                     int64_t k, const void *a, int64_t ao, const void *b,
                     int64_t bo, void *c, int64_t co, int64_t alpha,
                     bool accumulate, int64_t beta) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      uint64_t acc = 0;
      for (int64_t p = 0; p < k; p++) {
        int64_t av = het_dtype_load_i64(t, a, ao + (ta ? p * m + i : i * k + p));
        int64_t bv = het_dtype_load_i64(t, b, bo + (tb ? j * k + p : p * n + j));
        acc += (uint64_t)av * (uint64_t)bv;
      }
      acc *= (uint64_t)alpha;
      if (accumulate)
        acc += (uint64_t)beta *
               (uint64_t)het_dtype_load_i64(t, c, co + i * n + j);
      het_dtype_store_i64(t, c, co + i * n + j, (int64_t)acc);
    }
}

static het_status matmul_float(het_kernel_ctx *ctx, const het_lk_batch *bt,
                               het_dtype work) {
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  het_tensor *y = ctx->outputs[0];
  het_lk_buf ba, bb, by;
  HET_TRY(het_lk_buf_input(ctx, a, work, &ba));
  het_status st = het_lk_buf_input(ctx, b, work, &bb);
  if (st == HET_OK)
    st = het_lk_buf_output(ctx, y, work, &by);
  if (st != HET_OK)
    goto fail;
  size_t es = het_dtype_size(work);
  for (int64_t i = 0; i < bt->count; i++) {
    int64_t oa, ob;
    het_lk_batch_at(bt, i, &oa, &ob);
    het_lk_gemm_work(work, false, false, bt->m, bt->n, bt->k, 1.0,
                     (char *)ba.data + oa * es, bt->k,
                     (char *)bb.data + ob * es, bt->n, 0.0,
                     (char *)by.data + i * bt->m * bt->n * es, bt->n);
  }
  het_lk_buf_commit(y, &by);
fail:
  het_lk_buf_release(&ba);
  het_lk_buf_release(&bb);
  return st;
}

size_t het_lk_matmul_scratch(const het_kernel_ctx *ctx) {
#ifdef HETRT_HAVE_DNNL
  return ctx->state ? het_dnnl_scratch(ctx) : 0;
#else
  (void)ctx;
  return 0;
#endif
}

het_status het_lk_matmul_run(het_kernel_ctx *ctx) {
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  het_tensor *y = ctx->outputs[0];
#ifdef HETRT_HAVE_DNNL
  if (ctx->state) {
    bool done = false;
    HET_TRY(het_dnnl_matmul_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  het_lk_batch bt;
  HET_TRY(het_lk_batch_init(ctx, a, b, &bt));
  het_status st = HET_OK;
  if (bt.k != (b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2]))
    st = het_lk_fail(ctx, HET_ERR_SHAPE, "inner dims %lld and %lld differ",
                     (long long)bt.k,
                     (long long)(b->rank == 1 ? b->dims[0]
                                              : b->dims[b->rank - 2]));
  else if (het_tensor_count(y) == 0)
    ;
  else if (bt.k == 0)
    memset(y->data, 0, y->nbytes);
  else if (het_dtype_is_float(a->dtype))
    st = matmul_float(ctx, &bt, het_lk_work_type(a->dtype));
  else
    for (int64_t i = 0; i < bt.count; i++) {
      int64_t oa, ob;
      het_lk_batch_at(&bt, i, &oa, &ob);
      gemm_int(a->dtype, false, false, bt.m, bt.n, bt.k, a->data, oa, b->data,
               ob, y->data, i * bt.m * bt.n, 1, false, 0);
    }
  return st;
}

/* Writes C broadcast to [m, n] into y (work type or y's int type). */
static void gemm_fill_c(const het_tensor *c, het_dtype t, void *y, int64_t m,
                        int64_t n) {
  int64_t cm = c->rank == 2 ? c->dims[0] : 1;
  int64_t cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t src = (cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j);
      if (het_dtype_is_float(t))
        het_dtype_store_f64(t, y, i * n + j,
                            het_dtype_load_f64(c->dtype, c->data, src));
      else
        het_dtype_store_i64(t, y, i * n + j,
                            het_dtype_load_i64(c->dtype, c->data, src));
    }
}

static het_status gemm_float(het_kernel_ctx *ctx, bool ta, bool tb,
                             int64_t m, int64_t n, int64_t k, double alpha,
                             double beta, const het_tensor *c) {
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  het_tensor *y = ctx->outputs[0];
  het_dtype work = het_lk_work_type(a->dtype);
  het_lk_buf ba, bb, by;
  HET_TRY(het_lk_buf_input(ctx, a, work, &ba));
  het_status st = het_lk_buf_input(ctx, b, work, &bb);
  if (st == HET_OK)
    st = het_lk_buf_output(ctx, y, work, &by);
  if (st != HET_OK)
    goto fail;
  if (c)
    gemm_fill_c(c, work, by.data, m, n);
  if (k > 0)
    het_lk_gemm_work(work, ta, tb, m, n, k, alpha, ba.data, ta ? m : k, bb.data,
              tb ? k : n, c ? beta : 0.0, by.data, n);
  else if (c && beta != 1.0)
    for (int64_t i = 0; i < m * n; i++)
      het_dtype_store_f64(work, by.data, i,
                          beta * het_dtype_load_f64(work, by.data, i));
  else if (!c)
    memset(by.data, 0, (size_t)(m * n) * het_dtype_size(work));
  het_lk_buf_commit(y, &by);
fail:
  het_lk_buf_release(&ba);
  het_lk_buf_release(&bb);
  return st;
}

het_status het_lk_gemm_run(het_kernel_ctx *ctx) {
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const het_tensor *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  bool ta = het_node_attr_int(ctx->node, "transA", 0) != 0;
  bool tb = het_node_attr_int(ctx->node, "transB", 0) != 0;
  double alpha = het_node_attr_float(ctx->node, "alpha", 1.0f);
  double beta = het_node_attr_float(ctx->node, "beta", 1.0f);
  int64_t m = y->dims[0], n = y->dims[1], k = a->dims[ta ? 0 : 1];
  if (a->rank != 2 || b->rank != 2 || k != b->dims[tb ? 1 : 0])
    return het_lk_fail(ctx, HET_ERR_SHAPE, "A and B shapes do not multiply");
  if (c && het_tensor_count(c) == 0)
    c = NULL;
  if (m * n == 0)
    return HET_OK;
#ifdef HETRT_HAVE_DNNL
  if (ctx->state && k > 0) {
    bool done = false;
    HET_TRY(het_gemm_dnnl_run(ctx, &done));
    if (done)
      return HET_OK;
  }
#endif
  if (het_dtype_is_float(a->dtype))
    return gemm_float(ctx, ta, tb, m, n, k, alpha, beta, c);
  if (c)
    gemm_fill_c(c, y->dtype, y->data, m, n);
  gemm_int(a->dtype, ta, tb, m, n, k, a->data, 0, b->data, 0, y->data, 0,
           (int64_t)alpha, c != NULL, (int64_t)beta);
  return HET_OK;
}
