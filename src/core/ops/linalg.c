/* linalg.c — the linalg operator table (conv, matmul/gemm, pooling,
 * normalisation, recurrent) and BatchNormalization's inference.  The other
 * infer functions live in linalg_conv.c, linalg_gemm.c and linalg_rnn.c.
 */
#include "core/ops/linalg_geom.h"

/* BatchNormalization: Y like X.  Opset 14+ training_mode=1 adds
 * running_mean/running_var ([C]); before opset 14 the extra outputs are
 * training-only statistics, which hetrt does not compute. */
het_status het_infer_batch_norm(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  for (int i = 1; i < 5; i++)
    HET_TRY(het_infer_require_type(ctx, i, HET_TYPES_FLOAT));
  const het_value_info *x = &ctx->inputs[0];
  if (x->shape.rank >= 0 && x->shape.rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input X must have rank >= 2, got %d",
                          x->shape.rank);
  int64_t c = x->shape.rank >= 0 ? x->shape.dims[1].value : -1;
  for (int i = 1; i < 5; i++) {
    const het_shape *s = &ctx->inputs[i].shape;
    int64_t n = het_shape_count(s);
    if (c >= 0 && n >= 0 && s->rank == 1 && n != c)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "input %d has %lld values for %lld channels", i,
                            (long long)n, (long long)c);
  }
  bool training = ctx->opset >= 14 &&
                  het_node_attr_int(ctx->node, "training_mode", 0) != 0;
  for (int o = 1; o < ctx->n_outputs; o++) {
    if (!ctx->outputs[o].present)
      continue;
    if (!training || o > 2)
      return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                            "output %d is a training statistic; only "
                            "inference (and opset 14+ training_mode "
                            "running stats) is supported",
                            o);
    ctx->outputs[o].dtype = ctx->inputs[3].dtype;
    ctx->outputs[o].shape.rank = 1;
    ctx->outputs[o].shape.dims[0] =
        x->shape.rank >= 0 ? x->shape.dims[1] : het_dim_unknown();
  }
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

const het_op_def het_ops_linalg[] = {
    {"Conv", "", 2, 3, 1, 1, het_infer_conv},
    {"FusedConv", "hetrt", 2, 4, 1, 1, het_infer_fused_conv},
    {"FusedConvDw", "hetrt", 2, 5, 1, 1, het_infer_fused_conv_dw},
    {"FusedConvPool", "hetrt", 2, 3, 1, 1, het_infer_fused_conv_pool},
    {"ConvTranspose", "", 2, 3, 1, 1, het_infer_conv_transpose},
    {"ConvInteger", "", 2, 4, 1, 1, het_infer_conv_integer},
    {"QLinearConv", "", 8, 9, 1, 1, het_infer_qlinear_conv},
    {"MatMul", "", 2, 2, 1, 1, het_infer_matmul},
    {"MatMulInteger", "", 2, 4, 1, 1, het_infer_matmul_integer},
    {"QLinearMatMul", "", 8, 8, 1, 1, het_infer_qlinear_matmul},
    {"Gemm", "", 2, 3, 1, 1, het_infer_gemm},
    {"MaxPool", "", 1, 1, 1, 2, het_infer_pool},
    {"AveragePool", "", 1, 1, 1, 1, het_infer_pool},
    {"LpPool", "", 1, 1, 1, 1, het_infer_pool},
    {"GlobalAveragePool", "", 1, 1, 1, 1, het_infer_global_pool},
    {"GlobalMaxPool", "", 1, 1, 1, 1, het_infer_global_pool},
    {"GlobalLpPool", "", 1, 1, 1, 1, het_infer_global_pool},
    {"MaxUnpool", "", 2, 3, 1, 1, het_infer_max_unpool},
    {"BatchNormalization", "", 5, 5, 1, 5, het_infer_batch_norm},
    {"RNN", "", 3, 6, 0, 2, het_infer_rnn},
    {"GRU", "", 3, 6, 0, 2, het_infer_rnn},
    {"LSTM", "", 3, 8, 0, 3, het_infer_rnn},
    {0},
};
