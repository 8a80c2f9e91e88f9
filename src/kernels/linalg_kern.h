/* linalg_kern.h — helpers shared by the linalg CPU kernels (linalg_*.c):
 * error messages naming the node, float32/float64 working copies of
 * float16/bfloat16 tensors, batched-broadcast offsets for MatMul, and the
 * per-group kernel functions the table in linalg.c points to.
 */
#ifndef HET_CPU_KERNELS_LINALG_KERN_H
#define HET_CPU_KERNELS_LINALG_KERN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/ops/linalg_geom.h"
#include "kernels/kernel.h"

/* Errors name the node: het_kernel_fail (kernel.h). */
#define het_lk_fail het_kernel_fail

/* Working precision for a float tensor: FLOAT64 for float64, else FLOAT32. */
het_dtype het_lk_work_type(het_dtype t);

/* A working-precision buffer for tensor t.  When t already has the work
 * type the buffer is t's data (borrowed), else a converted malloc'd copy;
 * het_lk_buf_release frees it (and for outputs converts back first). */
typedef struct het_lk_buf {
  void *data;
  bool owned;
  het_dtype work;
} het_lk_buf;

het_status het_lk_buf_input(const het_kernel_ctx *ctx, const het_tensor *t,
                            het_dtype work, het_lk_buf *b);
/* Uninitialised working buffer for output t (t's data when same type). */
het_status het_lk_buf_output(const het_kernel_ctx *ctx, het_tensor *t,
                             het_dtype work, het_lk_buf *b);
/* For outputs: converts into t when owned; then frees. */
void het_lk_buf_commit(het_tensor *t, het_lk_buf *b);
/* For inputs: frees when owned. */
void het_lk_buf_release(het_lk_buf *b);

/* Scratch bytes of the im2col paths of Conv, ConvTranspose and FusedConv
 * (the columns and a residual saved in place), for het_kernel.scratch. */
size_t het_lk_conv_scratch(const het_kernel_ctx *ctx);

/* malloc that reports ERR_OUT_OF_MEMORY naming the node. */
het_status het_lk_alloc(const het_kernel_ctx *ctx, size_t bytes,
                        void **out);

/* Batched matmul layout (numpy broadcasting of the batch dims): count
 * output matrices of m x n; het_lk_batch_at gives the element offsets of
 * the A and B matrices of output batch index i.  Nothing allocated. */
typedef struct het_lk_batch {
  int64_t m, k, n, count;
  int rank;                    /* batch dims */
  int64_t dims[HET_MAX_RANK];  /* output batch dims */
  int64_t sa[HET_MAX_RANK], sb[HET_MAX_RANK]; /* A/B strides per batch dim */
} het_lk_batch;

het_status het_lk_batch_init(const het_kernel_ctx *ctx,
                             const het_tensor *a, const het_tensor *b,
                             het_lk_batch *bt);
void het_lk_batch_at(const het_lk_batch *bt, int64_t i, int64_t *a_off,
                     int64_t *b_off);

/* C[m,n] = alpha * op(A) op(B) + beta * C, row-major, work type float32
 * (sgemm) or float64 (dgemm). */
void het_lk_gemm_work(het_dtype work, bool ta, bool tb, int64_t m, int64_t n,
                      int64_t k, double alpha, const void *a, int64_t lda,
                      const void *b, int64_t ldb, double beta, void *c,
                      int64_t ldc);

/* Geometry of a conv-like node from its concrete X and W (W may be NULL
 * for pools). */
het_status het_lk_geom(const het_kernel_ctx *ctx, het_geom_kind kind,
                       const het_tensor *x, const het_tensor *w,
                       het_conv_geom *g);

/* Conv helpers for the integer ops: channel checks (c in, m out) and an
 * int32 grouped convolution of zero-point-adjusted x and w. */
het_status het_lk_conv_dims(const het_kernel_ctx *ctx,
                            const het_tensor *x, const het_tensor *w,
                            int64_t *group, int64_t *c, int64_t *m);
het_status het_lk_conv_i32(const het_kernel_ctx *ctx,
                           const het_conv_geom *g, int64_t nb, int64_t c,
                           int64_t m, int64_t group, const int32_t *x,
                           const int32_t *w, int32_t *y);

/* The pixels a 1x1 Conv with strides sh, sw reads from n channels-last
 * images of h x w pixels of px bytes each, packed back to back into xs
 * ((h - 1) / sh + 1 rows of (w - 1) / sw + 1 pixels per image): the
 * strided 1x1s (float on oneDNN, int8 on hetrt's VNNI kernel) then run at
 * unit stride. */
void het_lk_gather_strided(const void *x, void *xs, int64_t n, int64_t h,
                           int64_t w, int64_t sh, int64_t sw, size_t px);

/* Kernel entry points (one file per concept). */
het_status het_lk_matmul_run(het_kernel_ctx *ctx);
/* Scratch of MatMul (the float32 staging of a float16 one on oneDNN). */
size_t het_lk_matmul_scratch(const het_kernel_ctx *ctx);
het_status het_lk_gemm_run(het_kernel_ctx *ctx);
het_status het_lk_matmul_integer_run(het_kernel_ctx *ctx);
het_status het_lk_qlinear_matmul_run(het_kernel_ctx *ctx);
het_status het_lk_conv_run(het_kernel_ctx *ctx);
/* hetrt.FusedConvDw (opt_conv_dw.c): on oneDNN where it was prepared
 * (channels-last; band by band or whole, linalg_dnnl.c), else the 1x1
 * half into scratch, then the depthwise half, each as the Conv it came
 * from (plain layout only). */
het_status het_lk_conv_dw_fused_run(het_kernel_ctx *ctx);
size_t het_lk_conv_dw_fused_scratch(const het_kernel_ctx *ctx);
/* FusedConvDw's depthwise half as a Conv node of its own: group m, the
 * pair's depthwise strides and pads (band: none above and below, for an
 * input whose rows already hold them as zeros), its activation
 * (hetrt_dw_act*) as hetrt_act*; inputs the pair's X (standing for the
 * 1x1 half's output), Wd and Bd. */
typedef struct het_lk_dw_half {
  het_node node;
  int inputs[3];
  het_attr attrs[8];
  int64_t ints[6];
} het_lk_dw_half;
void het_lk_dw_half_init(const het_node *fused, int64_t m, bool band,
                         het_lk_dw_half *d);
/* hetrt.FusedConvPool (opt_conv_pool.c): on oneDNN where it was prepared
 * (band by band or whole, linalg_dnnl.c), else the Conv into scratch,
 * then the MaxPool, each as the node it came from (plain layout only). */
het_status het_lk_conv_pool_run(het_kernel_ctx *ctx);
size_t het_lk_conv_pool_scratch(const het_kernel_ctx *ctx);
het_status het_lk_conv_transpose_run(het_kernel_ctx *ctx);
het_status het_lk_conv_integer_run(het_kernel_ctx *ctx);
het_status het_lk_qlinear_conv_run(het_kernel_ctx *ctx);
het_status het_lk_maxpool_run(het_kernel_ctx *ctx);
het_status het_lk_avgpool_run(het_kernel_ctx *ctx);
het_status het_lk_lppool_run(het_kernel_ctx *ctx);
het_status het_lk_global_pool_run(het_kernel_ctx *ctx);
het_status het_lk_max_unpool_run(het_kernel_ctx *ctx);
het_status het_lk_batch_norm_run(het_kernel_ctx *ctx);
het_status het_lk_rnn_run(het_kernel_ctx *ctx);
het_status het_lk_gru_run(het_kernel_ctx *ctx);
het_status het_lk_lstm_run(het_kernel_ctx *ctx);
/* LSTM's float32 path (linalg_lstm_f32.c): *taken says whether ctx's LSTM
 * is of its form (and then ran); scratch bytes it wants, 0 if not. */
het_status het_lk_lstm_f32_run(het_kernel_ctx *ctx, bool *taken);
size_t het_lk_lstm_scratch(const het_kernel_ctx *ctx);
/* State of LSTM's float32 path: R and B packed when initializers. */
het_status het_lk_lstm_prepare(const het_graph *graph, const het_node *node,
                               void **state);
void het_lk_lstm_destroy(void *state);

/* [*jl, *jr): the output columns (last spatial axis of a 2-D geometry)
 * whose window lies wholly inside the input row, no padding read. */
static inline void het_conv_geom_inner_cols(const het_conv_geom *g,
                                            int64_t *jl, int64_t *jr) {
  int64_t s = g->stride[1], pb = g->pad_b[1];
  int64_t last = g->in[1] - 1 - (g->kernel[1] - 1) * g->dil[1] + pb;
  *jl = pb <= 0 ? 0 : (pb + s - 1) / s;
  *jr = last < 0 ? 0 : last / s + 1;
  if (*jr > g->out[1])
    *jr = g->out[1];
  if (*jl > *jr)
    *jl = *jr;
}

#endif
