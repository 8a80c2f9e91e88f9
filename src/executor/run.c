/* run.c — the per-run value table: output preparation from concrete shape
 * inference and release of values after their last consumer.
 */
#include "executor/run.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/memplan.h"

het_status het_run_ctx_init(het_run_ctx *ctx, const het_graph *g,
                            const int *uses, const het_run_ctx *outer) {
  size_t nv = (size_t)g->n_values + 1;
  memset(ctx, 0, sizeof *ctx);
  ctx->graph = g;
  ctx->outer = outer;
  ctx->values = calloc(nv, sizeof *ctx->values);
  ctx->remaining_uses = malloc(nv * sizeof *ctx->remaining_uses);
  ctx->owned = calloc(nv, sizeof *ctx->owned);
  if (!ctx->values || !ctx->remaining_uses || !ctx->owned) {
    het_run_ctx_deinit(ctx);
    return het_error(HET_ERR_OUT_OF_MEMORY, "run: out of memory");
  }
  memcpy(ctx->remaining_uses, uses, (size_t)g->n_values * sizeof *uses);
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].initializer)
      ctx->values[v] = g->values[v].initializer;
  return HET_OK;
}

void het_run_ctx_deinit(het_run_ctx *ctx) {
  for (int v = 0; ctx->owned && v < ctx->graph->n_values; v++)
    if (ctx->owned[v])
      het_tensor_destroy(ctx->values[v]);
  free(ctx->values);
  free(ctx->remaining_uses);
  free(ctx->owned);
  ctx->values = NULL;
  ctx->remaining_uses = NULL;
  ctx->owned = NULL;
}

het_status het_run_take_outputs(het_run_ctx *ctx, const int *ids, size_t n,
                                het_tensor **outputs) {
  for (size_t i = 0; i < n; i++) {
    het_tensor *t = ctx->values[ids[i]];
    het_status st = HET_OK;
    if (!t)
      st = het_error(HET_ERR_INTERNAL, "output '%s' was not computed",
                     ctx->graph->values[ids[i]].name);
    else if (ctx->owned[ids[i]] && (t->owned || !t->data)) {
      outputs[i] = t;
      ctx->owned[ids[i]] = false; /* values[] still reads it for repeats */
      continue;
    } else
      st = het_tensor_clone(t, &outputs[i]);
    if (st != HET_OK) {
      for (size_t k = 0; k < i; k++) {
        het_tensor_destroy(outputs[k]);
        outputs[k] = NULL;
      }
      return st;
    }
  }
  return HET_OK;
}

het_tensor *het_run_input(het_run_ctx *ctx, const het_node *node, int i) {
  int v = het_node_input(node, i);
  return v >= 0 ? ctx->values[v] : NULL;
}

void *het_run_planned(const het_run_ctx *ctx, int v, size_t nbytes) {
  const het_memplan *p = ctx->plan;
  if (!p || !ctx->arena || v < 0 || v >= p->n_values ||
      p->offset[v] == HET_MEMPLAN_NONE || p->space[v] != 0 ||
      nbytes > p->bytes[v])
    return NULL;
  return ctx->arena + p->offset[v];
}

/* Points t (an empty shell) at v's block in the arena when the plan covers
 * it; leaves t->data NULL otherwise. */
static het_status het_run_place(het_run_ctx *ctx, int v, het_tensor *t,
                                het_dtype dtype, const int64_t *dims) {
  size_t nbytes;
  if (!ctx->plan || dtype == HET_DTYPE_STRING)
    return HET_OK;
  HET_TRY(het_tensor_check_shape(dtype, dims, t->rank, "tensor", &nbytes));
  void *at = het_run_planned(ctx, v, nbytes);
  if (!at)
    return HET_OK;
  t->dtype = dtype;
  for (int i = 0; i < t->rank; i++)
    t->dims[i] = dims[i];
  t->data = at;
  t->nbytes = nbytes;
  t->owned = false;
  t->device = NULL;
  return HET_OK;
}

het_status het_run_prepare_outputs(het_run_ctx *ctx, const het_node *node,
                                   het_tensor *const *inputs,
                                   const het_device *device,
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
    het_tensor *t = inputs[i];
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
    if (!device || !device->vt->alloc)
      st = het_run_place(ctx, v, t, out[o].dtype, dims);
    if (st == HET_OK && !t->data)
      st = het_tensor_alloc_on(t, device, out[o].dtype, dims, t->rank);
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
  if (ctx->lock)
    pthread_mutex_lock(ctx->lock);
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
  if (ctx->lock)
    pthread_mutex_unlock(ctx->lock);
}

het_tensor *het_run_lookup_outer(const het_run_ctx *ctx, const char *name) {
  for (; ctx; ctx = ctx->outer) {
    int v = het_graph_find_value((het_graph *)ctx->graph, name);
    if (v >= 0 && ctx->values[v])
      return ctx->values[v];
  }
  return NULL;
}

/* Marks, in top, the values that sub (nested in top) reads from outside. */
static void het_mark_subgraph(const het_graph *top, const het_graph *sub,
                              int *uses) {
  for (int v = 0; v < sub->n_values; v++) {
    const het_value *val = &sub->values[v];
    if (val->producer >= 0 ||
        (val->flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER)))
      continue;
    int outer = het_graph_find_value((het_graph *)top, val->name);
    if (outer >= 0)
      uses[outer] = -1;
  }
  for (int n = 0; n < sub->n_nodes; n++)
    for (int a = 0; a < sub->nodes[n].n_attrs; a++) {
      const het_attr *at = &sub->nodes[n].attrs[a];
      if (at->type == HET_ATTR_GRAPH && at->g)
        het_mark_subgraph(top, at->g, uses);
    }
}

void het_run_mark_outer_uses(const het_graph *g, int *uses) {
  for (int n = 0; n < g->n_nodes; n++)
    for (int a = 0; a < g->nodes[n].n_attrs; a++) {
      const het_attr *at = &g->nodes[n].attrs[a];
      if (at->type == HET_ATTR_GRAPH && at->g)
        het_mark_subgraph(g, at->g, uses);
    }
}
