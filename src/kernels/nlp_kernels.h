/* nlp_kernels.h — the float32 row loops shared by the hetrt-domain
 * transformer kernels (nlp*.c): Gelu (erf form), bias + optional Gelu,
 * in-place softmax rows and LayerNorm rows.  Built for AVX-512, AVX2+FMA
 * and baseline x86-64 and picked at load time (nlp_vec.c).
 */
#ifndef HET_CPU_KERNELS_NLP_KERNELS_H
#define HET_CPU_KERNELS_NLP_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/* Kernels of the hetrt-domain ops outside nlp.c. */
het_status het_nlp_attention_run(het_kernel_ctx *ctx);
/* Its scratch: one [S, T] score matrix per batch entry. */
size_t het_nlp_attention_scratch(const het_kernel_ctx *ctx);
het_status het_nlp_fused_matmul_prepare(const het_graph *graph,
                                        const het_node *node, void **state);
het_status het_nlp_fused_matmul_run(het_kernel_ctx *ctx);
void het_nlp_fused_matmul_destroy(void *state);
/* prepare for the CPU provider: prep's bf16 (cpu.precision). */
het_status het_nlp_fused_matmul_prepare_with(const het_graph *graph,
                                             const het_node *node,
                                             const het_kernel_prep *prep,
                                             void **state);
void het_nlp_fused_matmul_weights(const void *state, het_kernel_weight_fn fn,
                                  void *ctx);

#ifdef HETRT_HAVE_DNNL
/* dnnl/matmul_fused_dnnl.c: FusedMatMul as one oneDNN matmul primitive
 * (bias, gelu_erf post-op) for a static A shape (bf16: A and B bfloat16,
 * A converted per call; cpu.precision); *state NULL when it does
 * not apply.  run sets *done = false when these inputs are not the
 * prepared ones (the caller falls back); a primitive that fails is
 * ERR_KERNEL. */
het_status het_fmm_dnnl_create(const het_graph *g, const het_node *node,
                               bool bf16, void **state);
het_status het_fmm_dnnl_run(const void *state, const het_tensor *a,
                            const het_tensor *bias, het_tensor *y, bool *done);
void het_fmm_dnnl_destroy(void *state);
/* Its prepared weight, for a plan (kernel.h state_weights). */
void het_fmm_dnnl_weights(const void *state, het_kernel_weight_fn fn,
                          void *ctx);
#endif

/* y[i] = x[i] * 0.5 * (1 + erf(x[i] / sqrt(2))); y may alias x. */
void het_nlp_gelu(const float *x, float *y, int64_t n);
/* Each of the rows of y (n floats each): y += bias, then Gelu when gelu. */
void het_nlp_bias_act(float *y, const float *bias, int64_t rows, int64_t n,
                      bool gelu);
/* Each of the rows of s (n floats each, n >= 1) replaced by its softmax. */
void het_nlp_softmax_rows(float *s, int64_t rows, int64_t n);
/* y = (x - mean) / sqrt(var + eps) * gamma + beta per row of n floats
 * (gamma / beta NULL: 1 / 0). */
void het_nlp_layernorm_rows(const float *x, float *y, const float *gamma,
                            const float *beta, int64_t rows, int64_t n,
                            float eps);

#endif
