/* session_run.c — het_session_run: binds and checks inputs, runs each
 * subgraph on its provider in order, hands outputs to the caller.
 * Invariant: every tensor the run allocates is either handed out or freed;
 * nothing is written to outputs unless the whole run succeeds.
 */
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/session_memory.h"
#include "core/status.h"
#include "executor/run.h"
#include "transfer/boundary.h"
#include "transfer/copy.h"

static het_status het_check_input(const het_value *v, const het_tensor *t) {
  if (v->dtype != HET_DTYPE_UNDEFINED && t->dtype != v->dtype)
    return het_error(HET_ERR_TYPE, "input '%s': got %s, model expects %s",
                     v->name, het_dtype_str(t->dtype), het_dtype_str(v->dtype));
  if (v->shape.rank < 0)
    return HET_OK;
  if (t->rank != v->shape.rank)
    return het_error(HET_ERR_SHAPE, "input '%s': got rank %d, model expects %d",
                     v->name, t->rank, v->shape.rank);
  for (int i = 0; i < t->rank; i++)
    if (v->shape.dims[i].value >= 0 && v->shape.dims[i].value != t->dims[i])
      return het_error(HET_ERR_SHAPE,
                       "input '%s': dim %d is %lld, model expects %lld",
                       v->name, i, (long long)t->dims[i],
                       (long long)v->shape.dims[i].value);
  return HET_OK;
}

static het_status het_bind_inputs(het_session *s, het_run_ctx *ctx,
                                  const char *const *names,
                                  het_tensor *const *inputs, size_t n) {
  het_graph *g = s->graph;
  for (size_t i = 0; i < n; i++) {
    if (!names || !names[i] || !inputs || !inputs[i])
      return het_error(HET_ERR_INVALID_ARGUMENT, "input %zu: NULL name or tensor",
                       i);
    int v = het_graph_find_value(g, names[i]);
    if (v < 0 || !(g->values[v].flags & HET_VALUE_GRAPH_INPUT))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "'%s' is not an input of the model", names[i]);
    if (!inputs[i]->data && inputs[i]->nbytes)
      return het_error(HET_ERR_INVALID_ARGUMENT, "input '%s' has no data",
                       names[i]);
    HET_TRY(het_check_input(&g->values[v], inputs[i]));
    ctx->values[v] = inputs[i];
  }
  for (int i = 0; i < s->n_inputs; i++) {
    const het_value *v = &g->values[s->inputs[i]];
    if (!ctx->values[s->inputs[i]])
      return het_error(HET_ERR_INVALID_ARGUMENT, "input '%s' is not given",
                       v->name);
  }
  return HET_OK;
}

static het_status het_find_outputs(het_session *s, const char *const *names,
                                   size_t n, int *ids) {
  het_graph *g = s->graph;
  if (!names) {
    if (n != (size_t)g->n_outputs)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%zu outputs requested without names; the model has %d",
                       n, g->n_outputs);
    for (size_t i = 0; i < n; i++)
      ids[i] = g->outputs[i];
    return HET_OK;
  }
  for (size_t i = 0; i < n; i++) {
    int v = names[i] ? het_graph_find_value(g, names[i]) : -1;
    if (v < 0 || !(g->values[v].flags & HET_VALUE_GRAPH_OUTPUT))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "'%s' is not an output of the model",
                       names[i] ? names[i] : "(null)");
    ids[i] = v;
  }
  return HET_OK;
}

/* A copy from device memory into the host block the memory plan gives
 * its result; false (nothing done) when the plan does not cover it. */
static bool het_run_copy_planned(het_run_ctx *ctx, const het_node *n,
                                 const het_tensor *src, const het_device *to,
                                 het_tensor *dst, het_status *st) {
  const het_device *from = src->device;
  if ((to && to->vt->alloc) || !from || !from->vt->alloc ||
      !from->vt->copy_to_host)
    return false;
  void *at = het_run_planned(ctx, n->outputs[0], src->nbytes);
  if (!at)
    return false;
  *dst = *src;
  dst->data = at;
  dst->owned = false;
  dst->device = NULL;
  if (src->nbytes > HET_TRANSFER_CHUNK && het_transfer_has_staging(from))
    *st = het_transfer_staged(from, HET_COPY_TO_HOST, src->data, at,
                              src->nbytes, HET_TRANSFER_CHUNK);
  else
    *st = src->nbytes ? from->vt->copy_to_host(from->state, at, src->data,
                                               src->nbytes)
                      : HET_OK;
  if (*st != HET_OK)
    het_error_wrap(*st, "%s", n->name);
  return true;
}

/* A boundary step (copy, cast, layout) of base kind `kind`. */
static het_status het_run_boundary(het_session *s, het_run_ctx *ctx, int node,
                                   het_step_kind kind) {
  const het_node *n = &s->graph->nodes[node];
  int prov = s->partition.provider[node];
  const het_device *to = prov >= 0 ? &s->providers[prov] : NULL;
  het_tensor *src = ctx->values[n->inputs[0]];
  if (!src)
    return het_error(HET_ERR_INTERNAL, "%s: source not computed", n->name);
  het_tensor *dst = calloc(1, sizeof *dst);
  if (!dst)
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s: out of memory", n->name);
  het_status st = HET_OK;
  double t0 = ctx->record ? het_run_clock() : 0;
  if (kind != HET_STEP_COPY || !het_run_copy_planned(ctx, n, src, to, dst, &st))
    st = het_boundary_run(kind, n, src, to, dst);
  if (ctx->record)
    ctx->record(ctx->recorder, node, t0, het_run_clock());
  if (st != HET_OK) {
    het_tensor_destroy(dst);
    return st;
  }
  ctx->values[n->outputs[0]] = dst;
  ctx->owned[n->outputs[0]] = true;
  het_run_release_inputs(ctx, n);
  return HET_OK;
}

het_status het_run_step(het_session *s, het_run_ctx *ctx, int i) {
  const het_subgraph *sg = &s->partition.subgraphs[i];
  if (het_step_is_static(sg->kind))
    return HET_OK; /* prepared at session creation */
  if (sg->kind != HET_STEP_COMPUTE)
    return het_run_boundary(s, ctx, sg->nodes[0], sg->kind);
  het_device *p = &s->providers[sg->provider];
  return p->vt->run(p->state, s->compiled[i], ctx);
}

het_status het_session_execute(het_session *s, const char *const *in_names,
                               het_tensor *const *inputs, size_t n_in,
                               const char *const *out_names, size_t n_out,
                               het_tensor **outputs) {
  het_run_ctx ctx;
  het_plan_entry *mem = NULL;
  het_tensor **result = calloc(n_out + 1, sizeof *result);
  int *ids = calloc(n_out + 1, sizeof *ids);
  if (!result || !ids) {
    free(result);
    free(ids);
    return het_error(HET_ERR_OUT_OF_MEMORY, "run: out of memory");
  }
  het_status st = het_run_ctx_init(&ctx, s->graph, s->uses, NULL);
  if (st == HET_OK)
    st = het_measure_begin(s, &ctx);
  if (st != HET_OK)
    goto fail;
  st = het_find_outputs(s, out_names, n_out, ids);
  if (st == HET_OK)
    st = het_bind_inputs(s, &ctx, in_names, inputs, n_in);
  for (int v = 0; st == HET_OK && v < s->graph->n_values; v++)
    if (s->placed[v])
      ctx.values[v] = s->placed[v];
  if (st == HET_OK && s->streams.n_steps)
    st = het_session_run_streams(s, &ctx);
  else if (st == HET_OK)
    st = het_session_memory_acquire(s, &ctx, &mem);
  for (int i = 0; st == HET_OK && !s->streams.n_steps &&
                  i < s->partition.n_subgraphs; i++)
    st = het_run_step(s, &ctx, i);
  if (st == HET_OK)
    st = het_run_take_outputs(&ctx, ids, n_out, result);
  if (st == HET_OK)
    memcpy(outputs, result, n_out * sizeof *outputs);
  het_measure_end(s, &ctx, st);
  het_run_ctx_deinit(&ctx);
  het_session_memory_release(mem, &ctx);
fail:
  free(result);
  free(ids);
  return st;
}

het_status het_session_run(het_session *s, const char *const *input_names,
                           het_tensor *const *inputs, size_t n_inputs,
                           const char *const *output_names, size_t n_outputs,
                           het_tensor **outputs) {
  if (!s || !outputs || (n_inputs && (!input_names || !inputs)))
    return het_error(HET_ERR_INVALID_ARGUMENT, "het_session_run: NULL argument");
  return het_session_execute(s, input_names, inputs, n_inputs, output_names,
                             n_outputs, outputs);
}
