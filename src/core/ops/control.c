/* control.c — shape inference for If, Loop and Scan.  Output types come
 * from the body graphs; shapes that can change per run or per iteration
 * stay unknown, so the kernels size those outputs themselves.
 */
#include "core/infer.h"

static het_status het_body_attr(const het_infer_ctx *ctx, const char *name,
                                const het_graph **out) {
  const het_attr *a = het_node_find_attr(ctx->node, name);
  if (!a || a->type != HET_ATTR_GRAPH || !a->g)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "graph attribute '%s' is missing", name);
  *out = a->g;
  return HET_OK;
}

static het_dtype het_body_output_type(const het_graph *g, int i) {
  return i < g->n_outputs ? g->values[g->outputs[i]].dtype
                          : HET_DTYPE_UNDEFINED;
}

static het_status het_infer_if(het_infer_ctx *ctx) {
  const het_graph *then_g = NULL, *else_g = NULL;
  HET_TRY(het_body_attr(ctx, "then_branch", &then_g));
  HET_TRY(het_body_attr(ctx, "else_branch", &else_g));
  if (then_g->n_outputs != ctx->n_outputs ||
      else_g->n_outputs != ctx->n_outputs)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "branches have %d and %d outputs, node has %d",
                          then_g->n_outputs, else_g->n_outputs,
                          ctx->n_outputs);
  if (ctx->inputs[0].dtype != HET_DTYPE_BOOL &&
      ctx->inputs[0].dtype != HET_DTYPE_UNDEFINED)
    return het_infer_fail(ctx, HET_ERR_TYPE, "cond must be bool, got %s",
                          het_dtype_str(ctx->inputs[0].dtype));
  for (int o = 0; o < ctx->n_outputs; o++) {
    ctx->outputs[o].dtype = het_body_output_type(then_g, o);
    ctx->outputs[o].shape.rank = -1; /* depends on the branch taken */
  }
  return HET_OK;
}

static het_status het_infer_loop(het_infer_ctx *ctx) {
  const het_graph *body = NULL;
  HET_TRY(het_body_attr(ctx, "body", &body));
  int carried = ctx->n_inputs - 2;
  if (carried < 0 || body->n_inputs != carried + 2 ||
      body->n_outputs < carried + 1 ||
      ctx->n_outputs != body->n_outputs - 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "body has %d inputs and %d outputs for %d loop-"
                          "carried values and %d node outputs",
                          body->n_inputs, body->n_outputs, carried,
                          ctx->n_outputs);
  for (int o = 0; o < ctx->n_outputs; o++) {
    ctx->outputs[o].dtype = o < carried ? ctx->inputs[2 + o].dtype
                                        : het_body_output_type(body, 1 + o);
    ctx->outputs[o].shape.rank = -1;
  }
  return HET_OK;
}

static het_status het_infer_scan(het_infer_ctx *ctx) {
  const het_graph *body = NULL;
  HET_TRY(het_body_attr(ctx, "body", &body));
  int64_t m = het_node_attr_int(ctx->node, "num_scan_inputs", -1);
  int first = ctx->opset < 9 ? 1 : 0; /* Scan-8: sequence_lens first */
  int states = ctx->n_inputs - first - (int)m;
  if (m < 1 || states < 0 || body->n_inputs != states + m ||
      ctx->n_outputs != body->n_outputs || body->n_outputs < states)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "num_scan_inputs %lld does not fit %d inputs and a "
                          "body with %d inputs, %d outputs",
                          (long long)m, ctx->n_inputs, body->n_inputs,
                          body->n_outputs);
  for (int o = 0; o < ctx->n_outputs; o++) {
    ctx->outputs[o].dtype = o < states ? ctx->inputs[first + o].dtype
                                       : het_body_output_type(body, o);
    ctx->outputs[o].shape.rank = -1;
  }
  return HET_OK;
}

const het_op_def het_ops_control[] = {
    {"If", "", 1, 1, 1, -1, het_infer_if},
    {"Loop", "", 2, -1, 1, -1, het_infer_loop},
    {"Scan", "", 1, -1, 1, -1, het_infer_scan},
    {0},
};
