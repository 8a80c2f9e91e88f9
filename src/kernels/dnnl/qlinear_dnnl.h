/* qlinear_dnnl.h — the oneDNN int8 fast paths of the QLinearConv,
 * QLinearMatMul and MatMulInteger kernels (qlinear_dnnl.c,
 * qlinear_matmul_dnnl.c, compiled only when HETRT_HAVE_DNNL is defined):
 * a primitive per node and input shape with the weights reordered once
 * and the requantization fixed at creation.  Without oneDNN the macros
 * give NULL slots and the ops run their reference kernels
 * (linalg_qlinear.c).
 */
#ifndef HET_CPU_DNNL_QLINEAR_DNNL_H
#define HET_CPU_DNNL_QLINEAR_DNNL_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/kernel.h"

#ifdef HETRT_HAVE_DNNL
/* *state = NULL (and HET_OK) when the node is not one oneDNN runs here:
 * see qlinear_dnnl.c for what it takes.  Caller owns *state (destroy
 * with het_dnnl_qconv_destroy). */
het_status het_dnnl_qconv_prepare(const het_graph *graph, const het_node *node,
                                  void **state);
/* The same for the CPU provider's layout: prep's bit 0 of nhwc_in /
 * nhwc_out stores X / Y NHWC; HET_ERR_UNSUPPORTED when they are set and
 * oneDNN does not take the node. */
het_status het_dnnl_qconv_prepare_with(const het_graph *graph,
                                       const het_node *node,
                                       const het_kernel_prep *prep,
                                       void **state);
/* True when prepare would give the node a oneDNN state (VNNI CPU,
 * constant parameters, int8 weights with zero zero points); for the
 * layout pass. */
bool het_dnnl_qconv_takes(const het_graph *graph, const het_node *node);
void het_dnnl_qconv_destroy(void *state);
/* Its prepared weights, one per primitive, for a plan (kernel.h
 * state_weights); a prepare under presets.h takes them in place. */
void het_dnnl_qconv_state_weights(const void *state, het_kernel_weight_fn fn,
                                  void *ctx);
/* The oneDNN weights of the entry for the declared shape (kernel.h
 * state_prefetch), 0 when it runs on hetrt's own kernel, which fetches
 * its panels ahead itself. */
size_t het_dnnl_qconv_state_prefetch(const void *state, const void **data);
/* Runs the node on oneDNN; *done = false (and HET_OK) when these inputs
 * are not handled and the caller must run the reference.  Thread safe:
 * several threads may run one state at once. */
het_status het_dnnl_qconv_run(het_kernel_ctx *ctx, bool *done);
/* Bytes of staging one run takes from the run's scratch (X in the
 * primitive's channels-last, possibly padded, layout and Y before its
 * reorder to NCHW); 0 without a state. */
size_t het_dnnl_qconv_scratch(const het_kernel_ctx *ctx);
/* The oneDNN implementation the node's first primitive runs (e.g.
 * "brgconv:avx512_core_vnni"), or NULL; for tests and diagnostics. */
const char *het_dnnl_qconv_impl(const void *state);
/* QLinearMatMul (qlinear_matmul_dnnl.c): the same four for a node with a
 * constant 2-D int8 B; no staging (scratch 0). */
het_status het_dnnl_qmatmul_prepare(const het_graph *graph,
                                    const het_node *node, void **state);
void het_dnnl_qmatmul_destroy(void *state);
/* The same for QLinearMatMul and MatMulInteger. */
void het_dnnl_qmatmul_state_weights(const void *state,
                                    het_kernel_weight_fn fn, void *ctx);
het_status het_dnnl_qmatmul_run(het_kernel_ctx *ctx, bool *done);
const char *het_dnnl_qmatmul_impl(const void *state);
/* MatMulInteger (qlinear_matmul_dnnl.c) with a constant 2-D int8 B whose
 * zero points are zero, A uint8 or int8 with a scalar zero point (known
 * at run time); destroy with het_dnnl_qmatmul_destroy. */
het_status het_dnnl_mmint_prepare(const het_graph *graph, const het_node *node,
                                  void **state);
het_status het_dnnl_mmint_run(het_kernel_ctx *ctx, bool *done);
#define HET_QLINEAR_DNNL_CONV_PREPARE het_dnnl_qconv_prepare
#define HET_QLINEAR_DNNL_CONV_PREPARE_WITH het_dnnl_qconv_prepare_with
#define HET_QLINEAR_DNNL_CONV_DESTROY het_dnnl_qconv_destroy
#define HET_QLINEAR_DNNL_CONV_SCRATCH het_dnnl_qconv_scratch
#define HET_QLINEAR_DNNL_MATMUL_PREPARE het_dnnl_qmatmul_prepare
#define HET_QLINEAR_DNNL_MATMUL_DESTROY het_dnnl_qmatmul_destroy
#define HET_QLINEAR_DNNL_MMINT_PREPARE het_dnnl_mmint_prepare
#define HET_QLINEAR_DNNL_CONV_WEIGHTS het_dnnl_qconv_state_weights
#define HET_QLINEAR_DNNL_CONV_PREFETCH het_dnnl_qconv_state_prefetch
#define HET_QLINEAR_DNNL_MATMUL_WEIGHTS het_dnnl_qmatmul_state_weights
#else
#define HET_QLINEAR_DNNL_CONV_PREPARE NULL
#define HET_QLINEAR_DNNL_CONV_PREPARE_WITH NULL
#define HET_QLINEAR_DNNL_CONV_DESTROY NULL
#define HET_QLINEAR_DNNL_CONV_SCRATCH NULL
#define HET_QLINEAR_DNNL_MATMUL_PREPARE NULL
#define HET_QLINEAR_DNNL_MATMUL_DESTROY NULL
#define HET_QLINEAR_DNNL_MMINT_PREPARE NULL
#define HET_QLINEAR_DNNL_CONV_WEIGHTS NULL
#define HET_QLINEAR_DNNL_CONV_PREFETCH NULL
#define HET_QLINEAR_DNNL_MATMUL_WEIGHTS NULL
#endif

#endif
