/* reduce.c — shape inference for the reduce operator group: the Reduce*
 * family (axes attribute before opset 13/18, axes input after, keepdims,
 * noop_with_empty_axes) and ArgMax/ArgMin, plus the group's table
 * het_ops_reduce (the other ops' infer functions live in reduce_*.c).
 */
#include <string.h>

#include "core/ops/reduce_ops.h"
#include "core/status.h"
#include "core/tensor.h"

/* Fills mask[] with the reduced axes of a Reduce* node.  *noop is set when
 * the node is an identity (empty axes with noop_with_empty_axes); *known is
 * false when the axes input exists but its value is not known yet. */
static het_status het_reduce_axes(const het_infer_ctx *ctx, int rank,
                                  bool *mask, bool *noop, bool *known) {
  const het_node *n = ctx->node;
  *noop = false;
  *known = true;
  for (int d = 0; d < HET_MAX_RANK; d++)
    mask[d] = false;
  size_t count = 0;
  bool from_input = ctx->n_inputs > 1 && ctx->inputs[1].present;
  if (from_input) {
    const het_tensor *t = ctx->inputs[1].data;
    if (!t) {
      *known = false;
      return HET_OK;
    }
    if (t->dtype != HET_DTYPE_INT64 && t->dtype != HET_DTYPE_INT32)
      return het_infer_fail(ctx, HET_ERR_TYPE, "axes must be int64, got %s",
                            het_dtype_str(t->dtype));
    count = (size_t)het_tensor_count(t);
    for (size_t i = 0; i < count; i++) {
      int a;
      HET_TRY(het_infer_axis(ctx, het_tensor_get_i64(t, (int64_t)i), rank,
                             "axes", &a));
      mask[a] = true;
    }
  } else {
    const int64_t *axes = het_node_attr_ints(n, "axes", &count);
    for (size_t i = 0; i < count; i++) {
      int a;
      HET_TRY(het_infer_axis(ctx, axes[i], rank, "axes", &a));
      mask[a] = true;
    }
  }
  if (count == 0) {
    if (het_node_attr_int(n, "noop_with_empty_axes", 0) != 0)
      *noop = true;
    else
      for (int d = 0; d < rank; d++)
        mask[d] = true;
  }
  return HET_OK;
}

static het_status het_infer_reduce(het_infer_ctx *ctx) {
  const het_value_info *x = &ctx->inputs[0];
  int rank = x->shape.rank;
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  if (ctx->n_inputs > 1 && ctx->inputs[1].present)
    HET_TRY(het_infer_require_type(
        ctx, 1, (1u << HET_DTYPE_INT64) | (1u << HET_DTYPE_INT32)));
  bool keep = het_node_attr_int(ctx->node, "keepdims", 1) != 0;
  bool mask[HET_MAX_RANK], noop, known;
  HET_TRY(het_reduce_axes(ctx, rank, mask, &noop, &known));
  het_value_info *y = &ctx->outputs[0];
  y->dtype = x->dtype;
  if (noop) {
    het_infer_copy(ctx, 0, 0);
    return HET_OK;
  }
  if (!known) {
    y->shape.rank = keep ? rank : -1;
    for (int d = 0; d < rank; d++)
      y->shape.dims[d] = het_dim_unknown();
    return HET_OK;
  }
  int r = 0;
  for (int d = 0; d < rank; d++) {
    if (!mask[d])
      y->shape.dims[r++] = x->shape.dims[d];
    else if (keep)
      y->shape.dims[r++] = het_dim_known(1);
  }
  y->shape.rank = r;
  return HET_OK;
}

static het_status het_infer_argreduce(het_infer_ctx *ctx) {
  const het_value_info *x = &ctx->inputs[0];
  int rank = x->shape.rank;
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_NUMERIC));
  int axis;
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 0), rank,
                         "axis", &axis));
  bool keep = het_node_attr_int(ctx->node, "keepdims", 1) != 0;
  het_value_info *y = &ctx->outputs[0];
  y->dtype = HET_DTYPE_INT64;
  int r = 0;
  for (int d = 0; d < rank; d++) {
    if (d != axis)
      y->shape.dims[r++] = x->shape.dims[d];
    else if (keep)
      y->shape.dims[r++] = het_dim_known(1);
  }
  y->shape.rank = r;
  return HET_OK;
}

const het_op_def het_ops_reduce[] = {
    {"ReduceSum", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceMean", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceMax", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceMin", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceProd", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceL1", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceL2", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceLogSum", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceLogSumExp", "", 1, 2, 1, 1, het_infer_reduce},
    {"ReduceSumSquare", "", 1, 2, 1, 1, het_infer_reduce},
    {"ArgMax", "", 1, 1, 1, 1, het_infer_argreduce},
    {"ArgMin", "", 1, 1, 1, 1, het_infer_argreduce},
    {"Softmax", "", 1, 1, 1, 1, het_infer_softmax},
    {"LogSoftmax", "", 1, 1, 1, 1, het_infer_softmax},
    {"Hardmax", "", 1, 1, 1, 1, het_infer_softmax},
    {"LayerNormalization", "", 2, 3, 1, 3, het_infer_layernorm},
    {"InstanceNormalization", "", 3, 3, 1, 1, het_infer_instancenorm},
    {"MeanVarianceNormalization", "", 1, 1, 1, 1, het_infer_mvn},
    {"LRN", "", 1, 1, 1, 1, het_infer_lrn},
    {"TopK", "", 1, 2, 2, 2, het_infer_topk},
    {"CumSum", "", 2, 2, 1, 1, het_infer_cumsum},
    {"Det", "", 1, 1, 1, 1, het_infer_det},
    {"NegativeLogLikelihoodLoss", "", 2, 3, 1, 1, het_infer_nllloss},
    {"SoftmaxCrossEntropyLoss", "", 2, 3, 1, 2, het_infer_sceloss},
    {"Einsum", "", 1, -1, 1, 1, het_infer_einsum},
    {0},
};
