/* signal.c — the CPU kernel table of the signal/vision group and the
 * helpers its kernels share (widening to double, narrowing stores, errors).
 * The kernels themselves are in signal_nms.c, signal_sample.c and
 * signal_spectral.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "kernels/signal_kernels.h"

const het_kernel het_kernels_signal[] = {
    {.op_type = "NonMaxSuppression", .domain = "", .run = het_sig_run_nms},
    {.op_type = "GridSample", .domain = "", .run = het_sig_run_grid_sample},
    {.op_type = "RoiAlign", .domain = "", .run = het_sig_run_roi_align},
    {.op_type = "DFT", .domain = "", .run = het_sig_run_dft},
    {.op_type = "STFT", .domain = "", .run = het_sig_run_stft},
    {.op_type = "HannWindow", .domain = "", .run = het_sig_run_window},
    {.op_type = "HammingWindow", .domain = "", .run = het_sig_run_window},
    {.op_type = "BlackmanWindow", .domain = "", .run = het_sig_run_window},
    {.op_type = "MelWeightMatrix", .domain = "", .run = het_sig_run_mel},
    {0},
};

het_status het_sig_widen(const het_kernel_ctx *ctx, const het_tensor *t,
                         double **out) {
  int64_t n = het_tensor_count(t);
  double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v)
    return het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                        "out of memory widening a %lld-element input",
                        (long long)n);
  if (t->dtype == HET_DTYPE_FLOAT32) {
    const float *f = t->data;
    for (int64_t i = 0; i < n; i++)
      v[i] = f[i];
  } else {
    for (int64_t i = 0; i < n; i++)
      v[i] = het_dtype_load_f64(t->dtype, t->data, i);
  }
  *out = v;
  return HET_OK;
}

void het_sig_store(het_tensor *t, const double *v, int64_t n) {
  if (t->dtype == HET_DTYPE_FLOAT32) {
    float *f = t->data;
    for (int64_t i = 0; i < n; i++)
      f[i] = (float)v[i];
    return;
  }
  for (int64_t i = 0; i < n; i++)
    het_dtype_store_f64(t->dtype, t->data, i, v[i]);
}
