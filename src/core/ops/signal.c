/* signal.c — shape inference for the signal/vision group: the group table,
 * NonMaxSuppression (data-dependent [-1, 3] output), GridSample and
 * RoiAlign.  The spectral ops (DFT, STFT, windows, MelWeightMatrix) live in
 * signal_spectral.c.
 */
#include <string.h>

#include "core/dtype.h"
#include "core/ops/signal_ops.h"
#include "core/tensor.h"

static het_status infer_nms(het_infer_ctx *ctx);
static het_status infer_grid_sample(het_infer_ctx *ctx);
static het_status infer_roi_align(het_infer_ctx *ctx);

const het_op_def het_ops_signal[] = {
    {"NonMaxSuppression", "", 2, 5, 1, 1, infer_nms},
    {"GridSample", "", 2, 2, 1, 1, infer_grid_sample},
    {"RoiAlign", "", 3, 3, 1, 1, infer_roi_align},
    {"DFT", "", 1, 3, 1, 1, het_infer_dft},
    {"STFT", "", 2, 4, 1, 1, het_infer_stft},
    {"HannWindow", "", 1, 1, 1, 1, het_infer_window},
    {"HammingWindow", "", 1, 1, 1, 1, het_infer_window},
    {"BlackmanWindow", "", 1, 1, 1, 1, het_infer_window},
    {"MelWeightMatrix", "", 5, 5, 1, 1, het_infer_mel_weight_matrix},
    {0},
};

het_status het_signal_scalar_i64(const het_infer_ctx *ctx, int i,
                                 const char *what, bool *known, int64_t *v) {
  *known = false;
  if (i >= ctx->n_inputs || !ctx->inputs[i].present)
    return HET_OK;
  const het_value_info *in = &ctx->inputs[i];
  if (in->dtype != HET_DTYPE_UNDEFINED && !het_dtype_is_int(in->dtype))
    return het_infer_fail(ctx, HET_ERR_TYPE, "%s must be an integer, is %s",
                          what, het_dtype_str(in->dtype));
  if (in->shape.rank > 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "%s must be a scalar, has rank %d",
                          what, in->shape.rank);
  if (!in->data)
    return HET_OK;
  if (het_tensor_count(in->data) != 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "%s must have one element, has %lld", what,
                          (long long)het_tensor_count(in->data));
  *v = het_tensor_get_i64(in->data, 0);
  *known = true;
  return HET_OK;
}

/* dims[i] of input `in` must equal `want` when both are known. */
static het_status check_dim(const het_infer_ctx *ctx, int in, int d,
                            int64_t want, const char *what) {
  int64_t got = ctx->inputs[in].shape.dims[d].value;
  if (got >= 0 && want >= 0 && got != want)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "%s is %lld, expected %lld",
                          what, (long long)got, (long long)want);
  return HET_OK;
}

static het_status check_rank(const het_infer_ctx *ctx, int in, int rank,
                             const char *what) {
  int r = ctx->inputs[in].shape.rank;
  if (r >= 0 && r != rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "%s must have rank %d, has %d",
                          what, rank, r);
  return HET_OK;
}

/* Optional scalar input of NMS: present → rank <= 1, at most one element. */
static het_status check_nms_scalar(const het_infer_ctx *ctx, int i,
                                   const char *what, uint32_t types) {
  if (i >= ctx->n_inputs || !ctx->inputs[i].present)
    return HET_OK;
  HET_TRY(het_infer_require_type(ctx, i, types));
  const het_shape *s = &ctx->inputs[i].shape;
  int64_t n = het_shape_count(s);
  if (s->rank > 1 || n > 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "%s must be a scalar", what);
  return HET_OK;
}

static het_status infer_nms(het_infer_ctx *ctx) {
  const uint32_t f = (1u << HET_DTYPE_FLOAT32) | (1u << HET_DTYPE_FLOAT64) |
                     (1u << HET_DTYPE_FLOAT16);
  int64_t cpb = het_node_attr_int(ctx->node, "center_point_box", 0);
  if (cpb != 0 && cpb != 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "center_point_box must be 0 or 1, is %lld",
                          (long long)cpb);
  HET_TRY(het_infer_require_type(ctx, 0, f));
  HET_TRY(het_infer_require_type(ctx, 1, f));
  HET_TRY(check_rank(ctx, 0, 3, "boxes"));
  HET_TRY(check_rank(ctx, 1, 3, "scores"));
  HET_TRY(check_dim(ctx, 0, 2, 4, "boxes dim 2"));
  HET_TRY(check_dim(ctx, 1, 0, ctx->inputs[0].shape.dims[0].value,
                    "scores dim 0 (batches)"));
  HET_TRY(check_dim(ctx, 1, 2, ctx->inputs[0].shape.dims[1].value,
                    "scores dim 2 (boxes per batch)"));
  HET_TRY(check_nms_scalar(ctx, 2, "max_output_boxes_per_class",
                           HET_TYPES_INT));
  HET_TRY(check_nms_scalar(ctx, 3, "iou_threshold", f));
  HET_TRY(check_nms_scalar(ctx, 4, "score_threshold", f));
  ctx->outputs[0].dtype = HET_DTYPE_INT64;
  ctx->outputs[0].shape.rank = 2;
  ctx->outputs[0].shape.dims[0] = het_dim_unknown();
  ctx->outputs[0].shape.dims[1] = het_dim_known(3);
  return HET_OK;
}

static bool one_of(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0)
      return true;
  return false;
}

static het_status infer_grid_sample(het_infer_ctx *ctx) {
  static const char *const modes[] = {"bilinear", "nearest", "bicubic",
                                      "linear",   "cubic",   NULL};
  static const char *const pads[] = {"zeros", "border", "reflection", NULL};
  const char *mode = het_node_attr_string(ctx->node, "mode");
  const char *pad = het_node_attr_string(ctx->node, "padding_mode");
  if (mode && !one_of(mode, modes))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "unknown mode '%s'",
                          mode);
  if (pad && !one_of(pad, pads))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "unknown padding_mode '%s'", pad);
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_FLOAT));
  HET_TRY(check_rank(ctx, 0, 4, "X (only 4-D input is supported)"));
  HET_TRY(check_rank(ctx, 1, 4, "grid"));
  const het_shape *x = &ctx->inputs[0].shape, *g = &ctx->inputs[1].shape;
  HET_TRY(check_dim(ctx, 1, 3, 2, "grid dim 3"));
  HET_TRY(check_dim(ctx, 1, 0, x->dims[0].value, "grid dim 0 (batch)"));
  het_shape *y = &ctx->outputs[0].shape;
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  y->rank = 4;
  y->dims[0] = x->dims[0].value >= 0 ? x->dims[0] : g->dims[0];
  y->dims[1] = x->dims[1];
  y->dims[2] = g->dims[1];
  y->dims[3] = g->dims[2];
  return HET_OK;
}

static het_status roi_align_attrs(het_infer_ctx *ctx, int64_t *oh,
                                  int64_t *ow) {
  const char *mode = het_node_attr_string(ctx->node, "mode");
  if (mode && strcmp(mode, "avg") != 0 && strcmp(mode, "max") != 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "unknown mode '%s'",
                          mode);
  const char *ctm =
      het_node_attr_string(ctx->node, "coordinate_transformation_mode");
  if (ctm && strcmp(ctm, "half_pixel") != 0 &&
      strcmp(ctm, "output_half_pixel") != 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "unknown coordinate_transformation_mode '%s'", ctm);
  if (ctm && ctx->opset < 16)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "coordinate_transformation_mode needs opset 16, "
                          "model imports %d", ctx->opset);
  *oh = het_node_attr_int(ctx->node, "output_height", 1);
  *ow = het_node_attr_int(ctx->node, "output_width", 1);
  int64_t sr = het_node_attr_int(ctx->node, "sampling_ratio", 0);
  if (*oh < 1 || *ow < 1 || sr < 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "output_height/output_width must be >= 1 and "
                          "sampling_ratio >= 0 (have %lld, %lld, %lld)",
                          (long long)*oh, (long long)*ow, (long long)sr);
  return HET_OK;
}

static het_status infer_roi_align(het_infer_ctx *ctx) {
  int64_t oh = 1, ow = 1;
  HET_TRY(roi_align_attrs(ctx, &oh, &ow));
  const uint32_t f = (1u << HET_DTYPE_FLOAT32) | (1u << HET_DTYPE_FLOAT64) |
                     (1u << HET_DTYPE_FLOAT16);
  HET_TRY(het_infer_require_type(ctx, 0, f));
  HET_TRY(het_infer_require_type(ctx, 1, f));
  HET_TRY(het_infer_require_type(ctx, 2, HET_TYPES_INT));
  HET_TRY(check_rank(ctx, 0, 4, "X"));
  HET_TRY(check_rank(ctx, 1, 2, "rois"));
  HET_TRY(check_rank(ctx, 2, 1, "batch_indices"));
  HET_TRY(check_dim(ctx, 1, 1, 4, "rois dim 1"));
  const het_dim nr = ctx->inputs[1].shape.dims[0];
  HET_TRY(check_dim(ctx, 2, 0, nr.value, "batch_indices length"));
  het_shape *y = &ctx->outputs[0].shape;
  ctx->outputs[0].dtype = ctx->inputs[0].dtype;
  y->rank = 4;
  y->dims[0] = nr.value >= 0 ? nr : ctx->inputs[2].shape.dims[0];
  y->dims[1] = ctx->inputs[0].shape.dims[1];
  y->dims[2] = het_dim_known(oh);
  y->dims[3] = het_dim_known(ow);
  return HET_OK;
}
