/* elementwise_train.c — the ai.onnx.preview.training optimizer updates
 * Adagrad, Adam and Momentum.  Inputs are R, T and then n groups of
 * same-shaped tensors (X..., G..., state...); outputs are X_new... and the
 * new states.  Each element is updated in double precision.
 */
#include <math.h>
#include <string.h>

#include "kernels/elementwise_internal.h"

/* Checks the n-group layout: inputs 2 + groups_in*n, outputs
 * groups_out*n, every tensor of group k shaped like X_k. */
static het_status het_ew_train_layout(const het_kernel_ctx *ctx,
                                      int groups_in, int groups_out,
                                      int *n_out) {
  int n = (ctx->n_inputs - 2) / groups_in;
  if (n < 1 || 2 + n * groups_in != ctx->n_inputs ||
      ctx->n_outputs != n * groups_out)
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (%s): %d inputs and "
                     "%d outputs do not form %d-tensor groups",
                     ctx->node->name, ctx->node->op_type, ctx->n_inputs,
                     ctx->n_outputs, groups_in);
  for (int k = 0; k < n; k++) {
    int64_t c = het_tensor_count(ctx->inputs[2 + k]);
    for (int g = 1; g < groups_in; g++)
      if (het_tensor_count(ctx->inputs[2 + g * n + k]) != c)
        return het_error(HET_ERR_SHAPE, "node '%s' (%s): input %d differs "
                         "in size from input %d", ctx->node->name,
                         ctx->node->op_type, 2 + g * n + k, 2 + k);
    for (int g = 0; g < groups_out; g++)
      if (!ctx->outputs[g * n + k] ||
          het_tensor_count(ctx->outputs[g * n + k]) != c)
        return het_error(HET_ERR_SHAPE, "node '%s' (%s): output %d differs "
                         "in size from input %d", ctx->node->name,
                         ctx->node->op_type, g * n + k, 2 + k);
  }
  *n_out = n;
  return HET_OK;
}

static double het_ew_scalar(const het_tensor *t) {
  return het_tensor_count(t) > 0 ? het_ew_load(t, 0) : 0.0;
}

static void het_ew_put(het_tensor *t, int64_t i, double v) {
  het_dtype_store_f64(t->dtype, t->data, i, v);
}

het_status het_kernel_ew_run_Adagrad(het_kernel_ctx *ctx) {
  int n = 0;
  HET_TRY(het_ew_train_layout(ctx, 3, 2, &n));
  const het_node *nd = ctx->node;
  double norm = het_node_attr_float(nd, "norm_coefficient", 0.0f);
  double eps = het_node_attr_float(nd, "epsilon", 1e-6f);
  double decay = het_node_attr_float(nd, "decay_factor", 0.0f);
  double r = het_ew_scalar(ctx->inputs[0]), t = het_ew_scalar(ctx->inputs[1]);
  double rr = r / (1 + t * decay);
  for (int k = 0; k < n; k++) {
    const het_tensor *x = ctx->inputs[2 + k], *g = ctx->inputs[2 + n + k];
    const het_tensor *h = ctx->inputs[2 + 2 * n + k];
    for (int64_t i = 0, c = het_tensor_count(x); i < c; i++) {
      double xv = het_ew_load(x, i);
      double gr = norm * xv + het_ew_load(g, i);
      double hn = het_ew_load(h, i) + gr * gr;
      het_ew_put(ctx->outputs[k], i, xv - rr * gr / (sqrt(hn) + eps));
      het_ew_put(ctx->outputs[n + k], i, hn);
    }
  }
  return HET_OK;
}

het_status het_kernel_ew_run_Adam(het_kernel_ctx *ctx) {
  int n = 0;
  HET_TRY(het_ew_train_layout(ctx, 4, 3, &n));
  const het_node *nd = ctx->node;
  double norm = het_node_attr_float(nd, "norm_coefficient", 0.0f);
  double post = het_node_attr_float(nd, "norm_coefficient_post", 0.0f);
  double alpha = het_node_attr_float(nd, "alpha", 0.9f);
  double beta = het_node_attr_float(nd, "beta", 0.999f);
  double eps = het_node_attr_float(nd, "epsilon", 1e-6f);
  double r = het_ew_scalar(ctx->inputs[0]), t = het_ew_scalar(ctx->inputs[1]);
  double ra = t > 0 ? r * sqrt(1 - pow(beta, t)) / (1 - pow(alpha, t)) : r;
  for (int k = 0; k < n; k++) {
    const het_tensor *x = ctx->inputs[2 + k], *g = ctx->inputs[2 + n + k];
    const het_tensor *v = ctx->inputs[2 + 2 * n + k];
    const het_tensor *h = ctx->inputs[2 + 3 * n + k];
    for (int64_t i = 0, c = het_tensor_count(x); i < c; i++) {
      double xv = het_ew_load(x, i);
      double gr = norm * xv + het_ew_load(g, i);
      double vn = alpha * het_ew_load(v, i) + (1 - alpha) * gr;
      double hn = beta * het_ew_load(h, i) + (1 - beta) * gr * gr;
      double xn = xv - ra * (vn / (sqrt(hn) + eps));
      het_ew_put(ctx->outputs[k], i, (1 - post) * xn);
      het_ew_put(ctx->outputs[n + k], i, vn);
      het_ew_put(ctx->outputs[2 * n + k], i, hn);
    }
  }
  return HET_OK;
}

het_status het_kernel_ew_run_Momentum(het_kernel_ctx *ctx) {
  int n = 0;
  HET_TRY(het_ew_train_layout(ctx, 3, 2, &n));
  const het_node *nd = ctx->node;
  double norm = het_node_attr_float(nd, "norm_coefficient", 0.0f);
  double alpha = het_node_attr_float(nd, "alpha", 0.0f);
  double beta = het_node_attr_float(nd, "beta", 0.0f);
  const char *mode = het_node_attr_string(nd, "mode");
  bool nesterov = mode && strcmp(mode, "nesterov") == 0;
  if (mode && !nesterov && strcmp(mode, "standard") != 0)
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (Momentum): mode "
                     "'%s' is not standard or nesterov", nd->name, mode);
  double r = het_ew_scalar(ctx->inputs[0]), t = het_ew_scalar(ctx->inputs[1]);
  double ba = t > 0 ? beta : 1.0;
  for (int k = 0; k < n; k++) {
    const het_tensor *x = ctx->inputs[2 + k], *g = ctx->inputs[2 + n + k];
    const het_tensor *v = ctx->inputs[2 + 2 * n + k];
    for (int64_t i = 0, c = het_tensor_count(x); i < c; i++) {
      double xv = het_ew_load(x, i);
      double gr = norm * xv + het_ew_load(g, i);
      double vn = alpha * het_ew_load(v, i) + ba * gr;
      double step = nesterov ? gr + alpha * vn : vn;
      het_ew_put(ctx->outputs[k], i, xv - r * step);
      het_ew_put(ctx->outputs[n + k], i, vn);
    }
  }
  return HET_OK;
}
