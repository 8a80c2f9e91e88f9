/* signal_spectral.c — DFT (opset 17 axis attribute, opset 20 axis input)
 * and STFT on the CPU.  Complex values are (re, im) pairs in a
 * trailing dim of 2 (a real input may use 1).  The transforms are in
 * signal_fft.c; the inverse is scaled by 1/n as numpy's ifft.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/signal_fft.h"
#include "kernels/signal_kernels.h"

static het_status read_flag(const het_kernel_ctx *ctx, const char *name,
                            int64_t dflt, bool *out) {
  int64_t v = het_node_attr_int(ctx->node, name, dflt);
  if (v != 0 && v != 1)
    return het_sig_fail(ctx, HET_ERR_INVALID_MODEL,
                        "attribute %s must be 0 or 1, is %lld", name,
                        (long long)v);
  *out = v != 0;
  return HET_OK;
}

static const het_tensor *opt_input(const het_kernel_ctx *ctx, int i) {
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

/* Geometry of one DFT call: the input viewed as [outer, len, inner, c]. */
typedef struct dft_geom {
  int64_t outer, len, inner, c, n, n_out;
  bool inverse;
} dft_geom;

static het_status dft_geom_read(const het_kernel_ctx *ctx, dft_geom *g) {
  const het_tensor *x = ctx->inputs[0];
  bool onesided = false;
  HET_TRY(read_flag(ctx, "onesided", 0, &onesided));
  HET_TRY(read_flag(ctx, "inverse", 0, &g->inverse));
  int64_t axis = ctx->opset >= 20 ? -2 : het_node_attr_int(ctx->node, "axis", 1);
  const het_tensor *ta = ctx->opset >= 20 ? opt_input(ctx, 2) : NULL;
  if (ta && het_tensor_count(ta) > 0)
    axis = het_tensor_get_i64(ta, 0);
  if (axis < 0)
    axis += x->rank;
  if (x->rank < 2 || axis < 0 || axis >= x->rank - 1)
    return het_sig_fail(ctx, HET_ERR_INVALID_MODEL,
                        "axis is out of range for an input of rank %d",
                        x->rank);
  g->c = x->dims[x->rank - 1];
  g->outer = het_dims_count(x->dims, (int)axis);
  g->len = x->dims[axis];
  g->inner = het_dims_count(x->dims + axis + 1, x->rank - 2 - (int)axis);
  const het_tensor *tl = opt_input(ctx, 1);
  g->n = tl && het_tensor_count(tl) > 0 ? het_tensor_get_i64(tl, 0) : g->len;
  if (g->n < 1 || (g->c != 1 && g->c != 2))
    return het_sig_fail(ctx, HET_ERR_INVALID_ARGUMENT,
                        "dft_length %lld and complex dim %lld: need >= 1 and "
                        "1 or 2", (long long)g->n, (long long)g->c);
  g->n_out = onesided ? g->n / 2 + 1 : g->n;
  return HET_OK;
}

static void dft_lines(const dft_geom *g, het_sig_fft *f, const double *x,
                      double *y, double *re, double *im) {
  int64_t take = g->len < g->n ? g->len : g->n;
  for (int64_t o = 0; o < g->outer; o++)
    for (int64_t i = 0; i < g->inner; i++) {
      for (int64_t j = 0; j < g->n; j++) {
        const double *p = x + ((o * g->len + j) * g->inner + i) * g->c;
        re[j] = j < take ? p[0] : 0;
        im[j] = j < take && g->c == 2 ? p[1] : 0;
      }
      het_sig_fft_run(f, re, im, g->n_out);
      for (int64_t k = 0; k < g->n_out; k++) {
        double *q = y + ((o * g->n_out + k) * g->inner + i) * 2;
        q[0] = re[k];
        q[1] = im[k];
      }
    }
}

het_status het_sig_run_dft(het_kernel_ctx *ctx) {
  dft_geom g = {0};
  HET_TRY(dft_geom_read(ctx, &g));
  het_tensor *Y = ctx->outputs[0];
  if (het_tensor_count(Y) != g.outer * g.n_out * g.inner * 2)
    return het_sig_fail(ctx, HET_ERR_INTERNAL, "output size mismatch");
  het_sig_fft f;
  HET_TRY(het_sig_fft_init(ctx, &f, g.n, g.inverse));
  double *x = NULL, *y = NULL, *buf = NULL;
  het_status st = het_sig_widen(ctx, ctx->inputs[0], &x);
  if (st == HET_OK) {
    y = malloc((size_t)(het_tensor_count(Y) + 1) * sizeof *y);
    buf = malloc((size_t)g.n * 2 * sizeof *buf);
    if (!y || !buf)
      st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (st == HET_OK) {
    dft_lines(&g, &f, x, y, buf, buf + g.n);
    het_sig_store(Y, y, het_tensor_count(Y));
  }
  het_sig_fft_deinit(&f);
  free(x);
  free(y);
  free(buf);
  return st;
}

/* STFT geometry: signal [batch, length, c], frames of len every step. */
typedef struct stft_geom {
  int64_t batch, length, c, step, len, frames, n_out;
} stft_geom;

static het_status stft_geom_read(const het_kernel_ctx *ctx,
                                 stft_geom *g) {
  const het_tensor *x = ctx->inputs[0], *w = opt_input(ctx, 2),
                   *tl = opt_input(ctx, 3);
  bool onesided = false;
  HET_TRY(read_flag(ctx, "onesided", 1, &onesided));
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return het_sig_fail(ctx, HET_ERR_SHAPE,
                        "signal must be [batch, length, 1|2]");
  g->batch = x->dims[0];
  g->length = x->dims[1];
  g->c = x->dims[2];
  g->step = het_tensor_count(ctx->inputs[1]) > 0
                ? het_tensor_get_i64(ctx->inputs[1], 0) : 0;
  g->len = tl && het_tensor_count(tl) > 0 ? het_tensor_get_i64(tl, 0)
           : w ? w->dims[0] : 0;
  if (g->step < 1 || g->len < 1 || g->len > g->length ||
      (w && (w->rank != 1 || w->dims[0] != g->len)))
    return het_sig_fail(ctx, HET_ERR_INVALID_ARGUMENT,
                        "frame_step %lld, frame length %lld and signal "
                        "length %lld do not fit (window must match the frame)",
                        (long long)g->step, (long long)g->len,
                        (long long)g->length);
  g->frames = (g->length - g->len) / g->step + 1;
  g->n_out = onesided ? g->len / 2 + 1 : g->len;
  return HET_OK;
}

static void stft_frames(const stft_geom *g, het_sig_fft *f, const double *x,
                        const double *win, double *y, double *re,
                        double *im) {
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t fr = 0; fr < g->frames; fr++) {
      const double *p = x + (b * g->length + fr * g->step) * g->c;
      for (int64_t j = 0; j < g->len; j++) {
        double wj = win ? win[j] : 1.0;
        re[j] = p[j * g->c] * wj;
        im[j] = g->c == 2 ? p[j * 2 + 1] * wj : 0;
      }
      het_sig_fft_run(f, re, im, g->n_out);
      double *q = y + (b * g->frames + fr) * g->n_out * 2;
      for (int64_t k = 0; k < g->n_out; k++) {
        q[2 * k] = re[k];
        q[2 * k + 1] = im[k];
      }
    }
}

het_status het_sig_run_stft(het_kernel_ctx *ctx) {
  stft_geom g = {0};
  HET_TRY(stft_geom_read(ctx, &g));
  het_tensor *Y = ctx->outputs[0];
  if (het_tensor_count(Y) != g.batch * g.frames * g.n_out * 2)
    return het_sig_fail(ctx, HET_ERR_INTERNAL, "output size mismatch");
  het_sig_fft f;
  HET_TRY(het_sig_fft_init(ctx, &f, g.len, false));
  double *x = NULL, *w = NULL, *y = NULL, *buf = NULL;
  const het_tensor *tw = opt_input(ctx, 2);
  het_status st = het_sig_widen(ctx, ctx->inputs[0], &x);
  if (st == HET_OK && tw)
    st = het_sig_widen(ctx, tw, &w);
  if (st == HET_OK) {
    y = malloc((size_t)(het_tensor_count(Y) + 1) * sizeof *y);
    buf = malloc((size_t)g.len * 2 * sizeof *buf);
    if (!y || !buf)
      st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (st == HET_OK) {
    stft_frames(&g, &f, x, w, y, buf, buf + g.len);
    het_sig_store(Y, y, het_tensor_count(Y));
  }
  het_sig_fft_deinit(&f);
  free(x);
  free(w);
  free(y);
  free(buf);
  return st;
}
