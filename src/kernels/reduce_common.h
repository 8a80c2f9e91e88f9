/* reduce_common.h — shared pieces of the reduce-group CPU kernels: float64
 * working buffers (every float type is computed in double so float32 results
 * match numpy well inside rtol 1e-3), the [outer, n, inner] view of a tensor
 * around one axis, and the kernel entry points split over reduce_*.c.
 */
#ifndef HET_CPU_KERNELS_REDUCE_COMMON_H
#define HET_CPU_KERNELS_REDUCE_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/* A double view of a tensor: data points at the tensor itself for float64
 * tensors (owned false) or at a malloc'd converted copy (owned true). */
typedef struct het_red_buf {
  double *data;
  bool owned;
} het_red_buf;

/* Loads t (any numeric or bool dtype) as doubles.  ERR_OUT_OF_MEMORY
 * naming the node.  Read-only use: data may be the input itself. */
het_status het_red_load(const het_kernel_ctx *ctx, const het_tensor *t,
                        het_red_buf *out);
/* A writable double buffer for output t (t's own storage when float64). */
het_status het_red_out(const het_kernel_ctx *ctx, het_tensor *t,
                       het_red_buf *out);
/* Converts buf into t when buf is a copy, then releases buf. */
void het_red_finish(het_tensor *t, het_red_buf *buf);
/* Releases buf without storing. */
void het_red_release(het_red_buf *buf);
/* A zero-filled malloc'd double array of n elements (n may be 0). */
het_status het_red_scratch(const het_kernel_ctx *ctx, int64_t n,
                           double **out);

/* outer = prod(dims[:axis]), n = dims[axis], inner = prod(dims[axis+1:]). */
void het_red_split(const het_tensor *t, int axis, int64_t *outer, int64_t *n,
                   int64_t *inner);
/* Normalises axis for rank; ERR_INVALID_MODEL naming the node otherwise. */
het_status het_red_axis(const het_kernel_ctx *ctx, int64_t axis,
                        int rank, int *out);

/* float32 fast paths (reduce_f32.c).  kind is het_red_kind of reduce.c,
 * not HET_RED_LOGSUMEXP. */
het_status het_red_f32_run(const het_kernel_ctx *ctx, int kind,
                           const float *x, float *y, int64_t O, int64_t R,
                           int64_t I);
/* Softmax (log_out: LogSoftmax) over O contiguous rows of N floats, the
 * rows split across pool (NULL: calling thread). */
struct het_parallel;
void het_softmax_f32_rows(const struct het_parallel *pool, const float *x,
                          float *y, int64_t O, int64_t N, bool log_out);
/* One LayerNormalization row: y = (x - mean) * invstd * s + b, where s and
 * b are indexed through smap/bmap (NULL: identity); b may be NULL. */
void het_layernorm_f32_row(const float *x, float *y, int64_t N, double eps,
                           const float *s, const int64_t *smap,
                           const float *b, const int64_t *bmap,
                           double *mean_out, double *inv_out);

/* Kernel entry points (one per op family). */
het_status het_kernel_reduce_run(het_kernel_ctx *ctx);
het_status het_kernel_argreduce_run(het_kernel_ctx *ctx);
het_status het_kernel_softmax_run(het_kernel_ctx *ctx);
het_status het_kernel_hardmax_run(het_kernel_ctx *ctx);
het_status het_kernel_nllloss_run(het_kernel_ctx *ctx);
het_status het_kernel_sceloss_run(het_kernel_ctx *ctx);
het_status het_kernel_layernorm_run(het_kernel_ctx *ctx);
het_status het_kernel_instancenorm_run(het_kernel_ctx *ctx);
het_status het_kernel_mvn_run(het_kernel_ctx *ctx);
het_status het_kernel_lrn_run(het_kernel_ctx *ctx);
het_status het_kernel_topk_run(het_kernel_ctx *ctx);
het_status het_kernel_cumsum_run(het_kernel_ctx *ctx);
het_status het_kernel_det_run(het_kernel_ctx *ctx);
het_status het_kernel_einsum_run(het_kernel_ctx *ctx);

#endif
