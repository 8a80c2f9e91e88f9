/* gemm_dnnl.h — the oneDNN fast path of the float32 Gemm kernel
 * (gemm_dnnl.c, compiled only when HETRT_HAVE_DNNL is defined): a matmul
 * primitive per node and input shape with B (an initializer) reordered
 * once.  Without oneDNN the macros give NULL slots and Gemm uses OpenBLAS.
 */
#ifndef HET_CPU_DNNL_GEMM_DNNL_H
#define HET_CPU_DNNL_GEMM_DNNL_H

#include <stdbool.h>

#include "kernels/kernel.h"

#ifdef HETRT_HAVE_DNNL
/* *state = NULL when the node is not a float32 Gemm with constant B that
 * oneDNN can run (the kernel then uses OpenBLAS). */
het_status het_gemm_dnnl_prepare(const het_graph *graph, const het_node *node,
                                 void **state);
/* The same with the compiling provider's choices (prep->bf16: bfloat16 A
 * and B, float32 sums and Y). */
het_status het_gemm_dnnl_prepare_with(const het_graph *graph,
                                      const het_node *node,
                                      const het_kernel_prep *prep,
                                      void **state);
void het_gemm_dnnl_destroy(void *state);
/* Its prepared weights, for a plan (kernel.h state_weights). */
void het_gemm_dnnl_weights(const void *state, het_kernel_weight_fn fn,
                           void *ctx);
/* Runs the node on oneDNN; *done = false (and HET_OK) when these inputs
 * are not handled and the caller must fall back. */
het_status het_gemm_dnnl_run(het_kernel_ctx *ctx, bool *done);
#define HET_GEMM_DNNL_PREPARE het_gemm_dnnl_prepare
#define HET_GEMM_DNNL_PREPARE_WITH het_gemm_dnnl_prepare_with
#define HET_GEMM_DNNL_DESTROY het_gemm_dnnl_destroy
#define HET_GEMM_DNNL_WEIGHTS het_gemm_dnnl_weights
#else
#define HET_GEMM_DNNL_PREPARE NULL
#define HET_GEMM_DNNL_PREPARE_WITH NULL
#define HET_GEMM_DNNL_DESTROY NULL
#define HET_GEMM_DNNL_WEIGHTS NULL
#endif

#endif
