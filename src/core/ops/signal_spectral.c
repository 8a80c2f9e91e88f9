/* signal_spectral.c — shape inference for DFT (opset 17 attribute axis,
 * opset 20 axis input), STFT, the Hann/Hamming/Blackman windows and
 * MelWeightMatrix.  Complex values are a trailing dim of 2 (real input may
 * use 1).  Sizes read from scalar inputs are unknown (-1) until known.
 */
#include "core/dtype.h"
#include "core/ops/signal_ops.h"
#include "core/tensor.h"

static het_status bool_attr(const het_infer_ctx *ctx, const char *name,
                            int64_t dflt, bool *out) {
  int64_t v = het_node_attr_int(ctx->node, name, dflt);
  if (v != 0 && v != 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "attribute %s must be 0 or 1, is %lld", name,
                          (long long)v);
  *out = v != 0;
  return HET_OK;
}

/* Last dim of a signal: 1 (real) or 2 (complex) when known. */
static het_status check_complex_dim(const het_infer_ctx *ctx, int i,
                                    const char *what) {
  const het_shape *s = &ctx->inputs[i].shape;
  int64_t c = s->rank > 0 ? s->dims[s->rank - 1].value : -1;
  if (s->rank == 0 || (c >= 0 && c != 1 && c != 2))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "%s must end in a dim of 1 (real) or 2 (complex), "
                          "shape ends in %lld", what, (long long)c);
  return HET_OK;
}

/* DFT axis: attribute (opset 17..19, default 1) or input 2 (opset 20+,
 * default -2).  *known false when the axis input is not known yet. */
static het_status dft_axis(const het_infer_ctx *ctx, int rank, bool *known,
                           int *axis) {
  int64_t a = ctx->opset >= 20 ? -2 : het_node_attr_int(ctx->node, "axis", 1);
  *known = true;
  if (ctx->opset >= 20 && ctx->n_inputs > 2 && ctx->inputs[2].present) {
    HET_TRY(het_signal_scalar_i64(ctx, 2, "axis", known, &a));
    if (!*known)
      return HET_OK;
  }
  HET_TRY(het_infer_axis(ctx, a, rank, "axis", axis));
  if (*axis == rank - 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "axis %lld is the real/imaginary dim", (long long)a);
  return HET_OK;
}

het_status het_infer_dft(het_infer_ctx *ctx) {
  bool onesided = false, inverse = false, axis_known = false, len_known = false;
  HET_TRY(bool_attr(ctx, "onesided", 0, &onesided));
  HET_TRY(bool_attr(ctx, "inverse", 0, &inverse));
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  const het_shape *x = &ctx->inputs[0].shape;
  if (x->rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input must have rank >= 2, has %d", x->rank);
  HET_TRY(check_complex_dim(ctx, 0, "input"));
  int64_t n = -1;
  HET_TRY(het_signal_scalar_i64(ctx, 1, "dft_length", &len_known, &n));
  if (len_known && n < 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "dft_length must be >= 1, is %lld", (long long)n);
  int axis = -1;
  HET_TRY(dft_axis(ctx, x->rank, &axis_known, &axis));
  het_shape *y = &ctx->outputs[0].shape;
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  *y = *x;
  y->dims[x->rank - 1] = het_dim_known(2);
  if (!axis_known) {
    for (int i = 0; i < x->rank - 1; i++)
      y->dims[i] = het_dim_unknown();
    return HET_OK;
  }
  bool has_len = ctx->n_inputs > 1 && ctx->inputs[1].present;
  if (!has_len)
    n = x->dims[axis].value;
  if (n < 0)
    y->dims[axis] = het_dim_unknown();
  else if (!has_len && !onesided)
    y->dims[axis] = x->dims[axis];
  else
    y->dims[axis] = het_dim_known(onesided ? n / 2 + 1 : n);
  return HET_OK;
}

/* Frame length from frame_length and/or the window; -1 when unknown. */
static het_status stft_frame_length(const het_infer_ctx *ctx, int64_t *len) {
  bool known;
  int64_t fl = -1, wl = -1;
  HET_TRY(het_signal_scalar_i64(ctx, 3, "frame_length", &known, &fl));
  if (ctx->n_inputs > 2 && ctx->inputs[2].present) {
    const het_shape *w = &ctx->inputs[2].shape;
    if (w->rank != 1)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "window must have rank 1, has %d", w->rank);
    wl = w->dims[0].value;
  } else if (ctx->n_inputs <= 3 || !ctx->inputs[3].present)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "needs a window or a frame_length");
  if (known && fl < 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "frame_length must be >= 1, is %lld", (long long)fl);
  if (known && wl >= 0 && fl != wl)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "frame_length %lld differs from the window length "
                          "%lld", (long long)fl, (long long)wl);
  *len = known ? fl : wl;
  return HET_OK;
}

het_status het_infer_stft(het_infer_ctx *ctx) {
  bool onesided = true, step_known = false;
  HET_TRY(bool_attr(ctx, "onesided", 1, &onesided));
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  const het_shape *x = &ctx->inputs[0].shape;
  if (x->rank != 3)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "signal must have rank 3 [batch, length, 1|2], "
                          "has %d", x->rank);
  HET_TRY(check_complex_dim(ctx, 0, "signal"));
  if (ctx->n_inputs > 2 && ctx->inputs[2].present)
    HET_TRY(het_infer_require_type(ctx, 2, HET_TYPES_FLOAT));
  int64_t step = -1, len = -1;
  HET_TRY(het_signal_scalar_i64(ctx, 1, "frame_step", &step_known, &step));
  if (step_known && step < 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "frame_step must be >= 1, is %lld", (long long)step);
  HET_TRY(stft_frame_length(ctx, &len));
  int64_t sig = x->dims[1].value, frames = -1;
  if (sig >= 0 && len >= 0 && sig < len)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "signal length %lld is shorter than the frame "
                          "length %lld", (long long)sig, (long long)len);
  if (sig >= 0 && len >= 0 && step_known)
    frames = (sig - len) / step + 1;
  het_shape *y = &ctx->outputs[0].shape;
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  y->rank = 4;
  y->dims[0] = x->dims[0];
  y->dims[1] = frames >= 0 ? het_dim_known(frames) : het_dim_unknown();
  y->dims[2] = len < 0 ? het_dim_unknown()
                       : het_dim_known(onesided ? len / 2 + 1 : len);
  y->dims[3] = het_dim_known(2);
  return HET_OK;
}

static het_status output_datatype(het_infer_ctx *ctx, het_dtype *out) {
  int64_t t = het_node_attr_int(ctx->node, "output_datatype", 1);
  uint32_t ok = HET_TYPES_NUMERIC;
  if (t < 0 || t >= 32 || !((ok >> t) & 1u))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "output_datatype %lld is not a numeric type",
                          (long long)t);
  *out = (het_dtype)t;
  return HET_OK;
}

het_status het_infer_window(het_infer_ctx *ctx) {
  bool periodic = true, known = false;
  int64_t size = -1;
  HET_TRY(bool_attr(ctx, "periodic", 1, &periodic));
  HET_TRY(output_datatype(ctx, &ctx->outputs[0].dtype));
  HET_TRY(het_signal_scalar_i64(ctx, 0, "size", &known, &size));
  if (known && size < 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "size must be >= 0, is %lld", (long long)size);
  ctx->outputs[0].shape.rank = 1;
  ctx->outputs[0].shape.dims[0] =
      known ? het_dim_known(size) : het_dim_unknown();
  return HET_OK;
}

het_status het_infer_mel_weight_matrix(het_infer_ctx *ctx) {
  bool bins_known = false, len_known = false, rate_known = false;
  int64_t bins = -1, len = -1, rate = -1;
  HET_TRY(output_datatype(ctx, &ctx->outputs[0].dtype));
  HET_TRY(het_signal_scalar_i64(ctx, 0, "num_mel_bins", &bins_known, &bins));
  HET_TRY(het_signal_scalar_i64(ctx, 1, "dft_length", &len_known, &len));
  HET_TRY(het_signal_scalar_i64(ctx, 2, "sample_rate", &rate_known, &rate));
  HET_TRY(het_infer_require_type(ctx, 3, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 4, HET_TYPES_FLOAT));
  if ((bins_known && bins < 1) || (len_known && len < 1) ||
      (rate_known && rate < 1))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "num_mel_bins, dft_length and sample_rate must be "
                          ">= 1 (have %lld, %lld, %lld)", (long long)bins,
                          (long long)len, (long long)rate);
  het_shape *y = &ctx->outputs[0].shape;
  y->rank = 2;
  y->dims[0] = len_known ? het_dim_known(len / 2 + 1) : het_dim_unknown();
  y->dims[1] = bins_known ? het_dim_known(bins) : het_dim_unknown();
  return HET_OK;
}
