/* linalg_dnnl_api.h — the oneDNN fast path of the float32 Conv and MatMul
 * kernels (implemented in src/kernels/dnnl/, compiled only when
 * HETRT_HAVE_DNNL is defined).  Without oneDNN the macros give NULL slots
 * and the kernels use OpenBLAS and their own loops.
 */
#ifndef HET_CPU_KERNELS_LINALG_DNNL_API_H
#define HET_CPU_KERNELS_LINALG_DNNL_API_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

#ifdef HETRT_HAVE_DNNL
/* Per-node state: a mutex-guarded cache of primitives keyed by input
 * shape (weights reordered once per shape).  state is NULL when the node
 * is not a float32 node oneDNN can run (the kernel then falls back). */
het_status het_dnnl_conv_prepare(const het_graph *graph, const het_node *node,
                                 void **state);
het_status het_dnnl_matmul_prepare(const het_graph *graph,
                                   const het_node *node, void **state);
/* MatMul prepare for the CPU provider: prep's bf16 (cpu.precision). */
het_status het_dnnl_matmul_prepare_with(const het_graph *graph,
                                        const het_node *node,
                                        const het_kernel_prep *prep,
                                        void **state);
/* Conv prepare for the CPU provider (kernel.h prepare_with): the layout
 * pass's bits and the Winograd choice; HET_ERR_UNSUPPORTED when oneDNN
 * cannot build the NHWC primitive.  het_dnnl_conv_prepare is this with
 * plain layouts and direct convolution. */
het_status het_dnnl_conv_prepare_with(const het_graph *graph,
                                      const het_node *node,
                                      const het_kernel_prep *prep, void **state);
/* The oneDNN implementation the node's first primitive runs (e.g.
 * "jit_wino_4x3:avx512_core"), or NULL; for tests and diagnostics. */
const char *het_dnnl_conv_impl(const void *state);
/* How many primitives the node's first one was chosen from (direct plus
 * the Winograd kernels tried; cpu.conv_algo), 0 without one; for tests. */
int het_dnnl_conv_candidates(const void *state);
/* True when the node's first primitive is a strided 1x1 Conv run at unit
 * stride on the gathered pixels of an NHWC X; for tests. */
bool het_dnnl_conv_gathered(const void *state);
/* How many primitives a Conv-like node has built, for tests: part 0 its
 * own (a Conv's, a FusedConv's whole images and residual bands,
 * FusedConvDw's 1x1 half, FusedConvPool's whole images); part 1
 * FusedConvDw's depthwise half on bands or FusedConvPool's bands; part 2
 * FusedConvDw's depthwise half on whole images. */
int het_dnnl_conv_entries(const void *state, int part);
/* True when the Conv/FusedConv node runs on oneDNN (float32, constant
 * weights, not depthwise). */
bool het_dnnl_conv_takes(const het_graph *graph, const het_node *node);
void het_dnnl_state_destroy(void *state);
/* The weights each primitive of state was built with, in oneDNN's layout
 * (kernel.h state_weights); a later prepare under presets.h takes them
 * instead of reordering. */
void het_dnnl_state_weights(const void *state, het_kernel_weight_fn fn,
                            void *ctx);
/* Runs the node on oneDNN; *done = false (and HET_OK) when these inputs
 * are not handled and the caller must fall back. */
het_status het_dnnl_conv_run(het_kernel_ctx *ctx, bool *done);
/* Scratch a Conv or MatMul on oneDNN takes per run (the float32 staging
 * of a float16 one, FusedConvDw's and FusedConvPool's band or
 * whole-output buffer; 0 for other float32 ones). */
size_t het_dnnl_scratch(const het_kernel_ctx *ctx);
het_status het_dnnl_matmul_run(het_kernel_ctx *ctx, bool *done);
#define HET_LK_DNNL_PREPARE(op) het_dnnl_##op##_prepare
#define HET_LK_DNNL_PREPARE_WITH(op) het_dnnl_##op##_prepare_with
#define HET_LK_DNNL_DESTROY het_dnnl_state_destroy
#define HET_LK_DNNL_WEIGHTS het_dnnl_state_weights
#else
#define HET_LK_DNNL_PREPARE(op) NULL
#define HET_LK_DNNL_PREPARE_WITH(op) NULL
#define HET_LK_DNNL_DESTROY NULL
#define HET_LK_DNNL_WEIGHTS NULL
#endif

#endif
