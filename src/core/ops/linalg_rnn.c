/* linalg_rnn.c — shape/type inference for RNN, GRU and LSTM: direction,
 * hidden_size (or R's last dim), layout (opset 14+) and the Y / Y_h / Y_c
 * output shapes; weight shapes are checked against them when known.
 */
#include <string.h>

#include "core/ops/linalg_geom.h"

static het_status rnn_dirs(het_infer_ctx *ctx, int *num_dir) {
  const char *d = het_node_attr_string(ctx->node, "direction");
  if (!d || strcmp(d, "forward") == 0 || strcmp(d, "reverse") == 0)
    *num_dir = 1;
  else if (strcmp(d, "bidirectional") == 0)
    *num_dir = 2;
  else
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "unknown direction '%s'", d);
  return HET_OK;
}

static int rnn_gates(const char *op) {
  return strcmp(op, "LSTM") == 0 ? 4 : strcmp(op, "GRU") == 0 ? 3 : 1;
}

static het_status rnn_check_weights(het_infer_ctx *ctx, int num_dir,
                                    int64_t hidden) {
  int gates = rnn_gates(ctx->node->op_type);
  for (int i = 1; i <= 2; i++) {
    const het_shape *w = &ctx->inputs[i].shape;
    if (w->rank < 0)
      continue;
    if (w->rank != 3)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "%s must be 3-D, got rank %d",
                            i == 1 ? "W" : "R", w->rank);
    int64_t d0 = w->dims[0].value, d1 = w->dims[1].value;
    if ((d0 >= 0 && d0 != num_dir) ||
        (hidden >= 0 && d1 >= 0 && d1 != gates * hidden))
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "%s has dims [%lld, %lld, ...], expected [%d, "
                            "%lld, ...]",
                            i == 1 ? "W" : "R", (long long)d0, (long long)d1,
                            num_dir, (long long)(gates * hidden));
  }
  return HET_OK;
}

het_status het_infer_rnn(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 2, HET_TYPES_FLOAT));
  if (ctx->n_inputs > 4 && ctx->inputs[4].present)
    HET_TRY(het_infer_require_type(ctx, 4, 1u << HET_DTYPE_INT32));
  const het_shape *x = &ctx->inputs[0].shape, *r = &ctx->inputs[2].shape;
  int num_dir = 1;
  HET_TRY(rnn_dirs(ctx, &num_dir));
  int64_t layout = ctx->opset >= 14 ? het_node_attr_int(ctx->node, "layout", 0)
                                    : 0;
  if (layout != 0 && layout != 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "layout must be 0 or 1, got %lld", (long long)layout);
  if (x->rank >= 0 && x->rank != 3)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "X must be 3-D, got rank %d",
                          x->rank);
  int64_t hidden = het_node_attr_int(ctx->node, "hidden_size", -1);
  if (hidden < 0 && r->rank == 3)
    hidden = r->dims[2].value;
  HET_TRY(rnn_check_weights(ctx, num_dir, hidden));
  het_dim seq = x->rank == 3 ? x->dims[layout ? 1 : 0] : het_dim_unknown();
  het_dim batch = x->rank == 3 ? x->dims[layout ? 0 : 1] : het_dim_unknown();
  het_dim hid = hidden >= 0 ? het_dim_known(hidden) : het_dim_unknown();
  het_dim nd = het_dim_known(num_dir);
  for (int o = 0; o < ctx->n_outputs; o++) {
    het_value_info *y = &ctx->outputs[o];
    y->dtype = ctx->inputs[0].dtype;
    if (o == 0) {
      het_dim d0[4] = {seq, nd, batch, hid}, d1[4] = {batch, seq, nd, hid};
      y->shape.rank = 4;
      memcpy(y->shape.dims, layout ? d1 : d0, sizeof d0);
    } else {
      het_dim d0[3] = {nd, batch, hid}, d1[3] = {batch, nd, hid};
      y->shape.rank = 3;
      memcpy(y->shape.dims, layout ? d1 : d0, sizeof d0);
    }
  }
  return HET_OK;
}
