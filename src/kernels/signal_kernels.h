/* signal_kernels.h — run functions of the CPU signal/vision kernels (one
 * file per family: signal_nms.c, signal_sample.c, signal_spectral.c) and
 * the widening helpers they share.  All math runs in double; inputs of any
 * float type are widened once and results narrowed on store.
 */
#ifndef HET_CPU_SIGNAL_KERNELS_H
#define HET_CPU_SIGNAL_KERNELS_H

#include "kernels/kernel.h"

/* A malloc'd double copy of t's elements; caller frees.  OUT_OF_MEMORY
 * naming the node on failure. */
het_status het_sig_widen(const het_kernel_ctx *ctx, const het_tensor *t,
                         double **out);
/* Stores n doubles into t (narrowing to t's dtype). */
void het_sig_store(het_tensor *t, const double *v, int64_t n);
/* Errors name the node: het_kernel_fail (kernel.h). */
#define het_sig_fail het_kernel_fail

het_status het_sig_run_nms(het_kernel_ctx *ctx);
het_status het_sig_run_grid_sample(het_kernel_ctx *ctx);
het_status het_sig_run_roi_align(het_kernel_ctx *ctx);
het_status het_sig_run_dft(het_kernel_ctx *ctx);
het_status het_sig_run_stft(het_kernel_ctx *ctx);
het_status het_sig_run_window(het_kernel_ctx *ctx);
het_status het_sig_run_mel(het_kernel_ctx *ctx);

#endif
