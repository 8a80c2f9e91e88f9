/* run.c — the per-run value table: output preparation from concrete shape
 * inference and release of values after their last consumer.
 */
#include "executor/run.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

het_tensor *het_run_input(het_run_ctx *ctx, const het_node *node, int i) {
  int v = het_node_input(node, i);
  return v >= 0 ? ctx->values[v] : NULL;
}

het_status het_run_prepare_outputs(het_run_ctx *ctx, const het_node *node,
                                   het_tensor **outputs) {
  het_value_info in_small[16], out_small[16];
  het_value_info *in = in_small, *out = out_small;
  het_status st = HET_OK;
  if (node->n_inputs > 16 || node->n_outputs > 16) {
    in = calloc((size_t)node->n_inputs + 1, sizeof *in);
    out = calloc((size_t)node->n_outputs + 1, sizeof *out);
    if (!in || !out) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
      goto fail;
    }
  }
  for (int i = 0; i < node->n_inputs; i++) {
    het_tensor *t = het_run_input(ctx, node, i);
    memset(&in[i], 0, sizeof in[i]);
    in[i].shape.rank = -1;
    if (t)
      het_value_info_from_tensor(&in[i], t);
    else if (node->inputs[i] >= 0) {
      st = het_error(HET_ERR_INTERNAL, "node '%s': input '%s' not computed",
                     node->name, ctx->graph->values[node->inputs[i]].name);
      goto fail;
    }
  }
  for (int o = 0; o < node->n_outputs; o++) {
    memset(&out[o], 0, sizeof out[o]);
    out[o].present = node->outputs[o] >= 0;
  }
  st = het_infer_node(node, node->n_inputs, in, node->n_outputs, out, NULL);
  if (st != HET_OK)
    goto fail;
  for (int o = 0; o < node->n_outputs; o++) {
    outputs[o] = NULL;
    int v = node->outputs[o];
    if (v < 0)
      continue;
    het_tensor *t = calloc(1, sizeof *t);
    if (!t) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
      goto fail;
    }
    ctx->values[v] = t;
    ctx->owned[v] = true;
    outputs[o] = t;
    t->dtype = out[o].dtype;
    t->rank = out[o].shape.rank < 0 ? 0 : out[o].shape.rank;
    if (!het_shape_is_concrete(&out[o].shape))
      continue; /* data-dependent: the kernel sizes it */
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
      dims[i] = out[o].shape.dims[i].value;
    st = het_tensor_alloc(t, out[o].dtype, dims, t->rank);
    if (st != HET_OK) {
      het_error_wrap(st, "node '%s' output '%s'", node->name,
                     ctx->graph->values[v].name);
      goto fail;
    }
  }
fail:
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
  return st;
}

static void het_run_drop(het_run_ctx *ctx, int v) {
  if (ctx->owned[v])
    het_tensor_destroy(ctx->values[v]);
  ctx->values[v] = NULL;
  ctx->owned[v] = false;
}

void het_run_release_inputs(het_run_ctx *ctx, const het_node *node) {
  for (int i = 0; i < node->n_inputs; i++) {
    int v = node->inputs[i];
    if (v < 0 || ctx->remaining_uses[v] < 0)
      continue;
    if (--ctx->remaining_uses[v] == 0)
      het_run_drop(ctx, v);
  }
  for (int o = 0; o < node->n_outputs; o++) {
    int v = node->outputs[o];
    if (v >= 0 && ctx->remaining_uses[v] == 0)
      het_run_drop(ctx, v);
  }
}
