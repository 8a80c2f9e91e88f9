/* signal_window.c — HannWindow, HammingWindow, BlackmanWindow and
 * MelWeightMatrix on the CPU.  Windows are generalized cosine windows over
 * N = size (periodic) or size - 1 (symmetric) samples; the mel matrix
 * follows the ONNX reference (triangles between integer FFT bins).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/signal_kernels.h"

#define SIG_PI 3.14159265358979323846

het_status het_sig_run_window(het_kernel_ctx *ctx) {
  het_tensor *Y = ctx->outputs[0];
  int64_t size = Y->rank == 1 ? Y->dims[0] : -1;
  if (het_tensor_count(ctx->inputs[0]) != 1 ||
      het_tensor_get_i64(ctx->inputs[0], 0) != size)
    return het_sig_fail(ctx, HET_ERR_SHAPE,
                        "size does not match the output length %lld",
                        (long long)size);
  const char *op = ctx->node->op_type;
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (strcmp(op, "HammingWindow") == 0) {
    a0 = 25.0 / 46.0;
    a1 = 1 - a0;
  } else if (strcmp(op, "BlackmanWindow") == 0) {
    a0 = 0.42;
    a2 = 0.08;
  }
  bool periodic = het_node_attr_int(ctx->node, "periodic", 1) != 0;
  double n = (double)(periodic ? size : size - 1);
  for (int64_t i = 0; i < size; i++) {
    double t = n > 0 ? 2 * SIG_PI * (double)i / n : 0;
    het_dtype_store_f64(Y->dtype, Y->data, i,
                        a0 - a1 * cos(t) + a2 * cos(2 * t));
  }
  return HET_OK;
}

/* Integer FFT bin of each of the bins + 2 mel-spaced edges. */
static void mel_edges(int64_t bins, int64_t dft_len, int64_t rate, float lo,
                      float hi, int64_t *edge) {
  float lo_mel = 2595.0f * log10f(1.0f + lo / 700.0f);
  float hi_mel = 2595.0f * log10f(1.0f + hi / 700.0f);
  float step = (hi_mel - lo_mel) / (float)(bins + 2);
  for (int64_t i = 0; i < bins + 2; i++) {
    double mel = (double)i * (double)step + (double)lo_mel;
    double hz = 700.0 * (pow(10.0, mel / 2595.0) - 1.0);
    edge[i] = (int64_t)floor((double)(dft_len + 1) * hz / (double)rate);
  }
}

static void mel_set(double *out, int64_t rows, int64_t bins, int64_t r,
                    int64_t c, double v) {
  if (r >= 0 && r < rows)
    out[r * bins + c] = v;
}

static void mel_fill(const int64_t *edge, int64_t rows, int64_t bins,
                     double *out) {
  memset(out, 0, (size_t)(rows * bins) * sizeof *out);
  for (int64_t i = 0; i < bins; i++) {
    int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
    if (c == l)
      mel_set(out, rows, bins, c, i, 1.0);
    else
      for (int64_t j = l < 0 ? 0 : l; j <= c && j < rows; j++)
        mel_set(out, rows, bins, j, i, (double)(j - l) / (double)(c - l));
    for (int64_t j = c < 0 ? 0 : c; j < h && j < rows; j++)
      mel_set(out, rows, bins, j, i, (double)(h - j) / (double)(h - c));
  }
}

het_status het_sig_run_mel(het_kernel_ctx *ctx) {
  het_tensor *Y = ctx->outputs[0];
  int64_t bins = het_tensor_get_i64(ctx->inputs[0], 0);
  int64_t dft_len = het_tensor_get_i64(ctx->inputs[1], 0);
  int64_t rate = het_tensor_get_i64(ctx->inputs[2], 0);
  const het_tensor *tlo = ctx->inputs[3], *thi = ctx->inputs[4];
  if (het_tensor_count(tlo) != 1 || het_tensor_count(thi) != 1 || rate < 1 ||
      Y->rank != 2 || Y->dims[0] != dft_len / 2 + 1 || Y->dims[1] != bins)
    return het_sig_fail(ctx, HET_ERR_INVALID_ARGUMENT,
                        "bad inputs (num_mel_bins %lld, dft_length %lld, "
                        "sample_rate %lld)", (long long)bins,
                        (long long)dft_len, (long long)rate);
  float lo = (float)het_dtype_load_f64(tlo->dtype, tlo->data, 0);
  float hi = (float)het_dtype_load_f64(thi->dtype, thi->data, 0);
  int64_t rows = Y->dims[0];
  int64_t *edge = malloc((size_t)(bins + 2) * sizeof *edge);
  double *out = malloc((size_t)(rows * bins + 1) * sizeof *out);
  het_status st = HET_OK;
  if (!edge || !out)
    st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
  else {
    mel_edges(bins, dft_len, rate, lo, hi, edge);
    mel_fill(edge, rows, bins, out);
    het_sig_store(Y, out, rows * bins);
  }
  free(edge);
  free(out);
  return st;
}
