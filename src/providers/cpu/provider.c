/* provider.c — the CPU execution provider: claims nodes that have a CPU
 * kernel, compiles a subgraph into per-node kernel states (after the
 * layout pass, layout.c, has picked NHWC values) and runs it on the host.
 * Options: cpu.layout = auto (default) | nchw (no NHWC values);
 * cpu.conv_algo = auto (default: Winograd for a 3x3 Conv where it times
 * faster at compile) | direct | winograd.
 * Invariant: a compiled subgraph is immutable after compile, so
 * concurrent runs share it safely.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/run.h"
#include "providers/cpu/cpu.h"
#include "kernels/kernel.h"
#include "providers/cpu/layout.h"
#include "providers/cpu/profile.h"
#include "providers/cpu/threadpool.h"

typedef struct het_cpu_state {
  int threads;
  bool nchw_only;       /* cpu.layout=nchw */
  het_conv_algo conv_algo; /* cpu.conv_algo */
  het_device_info info; /* from the profile, or measured */
  het_threadpool *pool; /* threads-1 workers; NULL for control-flow bodies
                         * (het_cpu_graph_run): their loops run inline */
  het_parallel par;     /* the kernels' view of pool */
} het_cpu_state;

typedef struct het_cpu_compiled {
  const het_graph *graph;
  int n_nodes;
  int *nodes;
  const het_kernel **kernels;
  void **states;
  het_cpu_layout *layout; /* per node: NHWC bits from the layout pass */
} het_cpu_compiled;

/* Applies option key=value to s. */
static het_status het_cpu_option(het_cpu_state *s, const char *key,
                                 const char *value) {
  static const char *const algos[] = {"auto", "direct", "winograd"};
  if (strcmp(key, "layout") == 0) {
    if (strcmp(value, "auto") && strcmp(value, "nchw"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'cpu.layout': '%s' is not auto or nchw",
                       value);
    s->nchw_only = strcmp(value, "nchw") == 0;
    return HET_OK;
  }
  if (strcmp(key, "conv_algo") == 0) {
    for (int i = 0; i < 3; i++)
      if (strcmp(value, algos[i]) == 0) {
        s->conv_algo = (het_conv_algo)i;
        return HET_OK;
      }
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "option 'cpu.conv_algo': '%s' is not auto, direct or "
                     "winograd",
                     value);
  }
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "provider 'cpu': unknown option 'cpu.%s' (known: "
                   "cpu.layout, cpu.conv_algo)",
                   key);
}

static het_status het_cpu_create(const het_provider_config *config,
                                 void **state) {
  het_cpu_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  s->threads = config && config->threads > 0 ? config->threads : 1;
  het_status st = HET_OK;
  for (int i = 0; st == HET_OK && config && i < config->n_options; i++)
    st = het_cpu_option(s, config->option_keys[i], config->option_values[i]);
  if (st == HET_OK)
    st = config && config->profile_path
             ? het_cpu_device_info_load(config->profile_path, &s->info)
             : het_cpu_device_info(&s->info);
  if (st == HET_OK)
    st = het_threadpool_create(s->threads, &s->pool);
  if (st == HET_OK)
    het_threadpool_parallel(s->pool, &s->par);
  if (st != HET_OK) {
    free(s);
    return st;
  }
  /* OpenBLAS's count is process-wide: the last CPU provider created sets
   * it for every session.  oneDNN's (OpenMP, per thread) is set per run. */
  het_kernel_set_blas_threads(s->threads);
  *state = s;
  return HET_OK;
}

static het_status het_cpu_get_device_info(void *state, het_device_info *out) {
  *out = ((het_cpu_state *)state)->info;
  return HET_OK;
}

static void het_cpu_destroy(void *state) {
  het_cpu_state *s = state;
  if (s)
    het_threadpool_destroy(s->pool);
  free(s);
}

static het_status het_cpu_get_capability(void *state, const het_graph *graph,
                                         het_claim *claims) {
  (void)state;
  for (int n = 0; n < graph->n_nodes; n++) {
    const het_node *node = &graph->nodes[n];
    het_claim *c = &claims[n];
    const het_kernel *k = het_kernel_find(node->domain, node->op_type);
    if (!k) {
      c->claimed = false;
      snprintf(c->reason, sizeof c->reason, "no CPU kernel for %s%s%s",
               *node->domain ? node->domain : "", *node->domain ? "." : "",
               node->op_type);
      continue;
    }
    if (k->supports &&
        !k->supports(graph, node, c->reason, sizeof c->reason)) {
      c->claimed = false;
      continue;
    }
    c->claimed = true;
    snprintf(c->reason, sizeof c->reason, "CPU kernel for %s", node->op_type);
  }
  return HET_OK;
}

static void het_cpu_destroy_compiled(void *state, void *compiled) {
  (void)state;
  het_cpu_compiled *c = compiled;
  if (!c)
    return;
  for (int i = 0; i < c->n_nodes; i++)
    if (c->states && c->states[i] && c->kernels[i]->destroy_state)
      c->kernels[i]->destroy_state(c->states[i]);
  free(c->nodes);
  free(c->kernels);
  free(c->states);
  free(c->layout);
  free(c);
}

/* Prepares every node's state for c->layout and s's options; *failed =
 * the node whose NHWC prepare was refused (HET_ERR_UNSUPPORTED), else -1. */
static het_status het_cpu_prepare_all(const het_cpu_state *s,
                                      het_cpu_compiled *c,
                                      const het_graph *graph,
                                      const uint8_t *limit, int *failed) {
  *failed = -1;
  for (int i = 0; i < c->n_nodes; i++) {
    if (limit[i] == HET_CPU_LAYOUT_NO_STATE)
      continue;
    const het_node *node = &graph->nodes[c->nodes[i]];
    const het_kernel *k = c->kernels[i];
    het_kernel_prep prep = {.nhwc_in = c->layout[i].nhwc_in,
                         .nhwc_out = c->layout[i].nhwc_out,
                         .conv_algo = s ? s->conv_algo : HET_CONV_ALGO_AUTO};
    bool nhwc = (prep.nhwc_in | prep.nhwc_out) != 0;
    het_status st = HET_OK;
    if (k->prepare_with)
      st = k->prepare_with(graph, node, &prep, &c->states[i]);
    else if (k->prepare)
      st = k->prepare(graph, node, &c->states[i]);
    if (st == HET_ERR_UNSUPPORTED && nhwc)
      *failed = i;
    if (st != HET_OK)
      return st;
  }
  return HET_OK;
}

static void het_cpu_release_states(het_cpu_compiled *c) {
  for (int i = 0; i < c->n_nodes; i++) {
    if (c->states[i] && c->kernels[i]->destroy_state)
      c->kernels[i]->destroy_state(c->states[i]);
    c->states[i] = NULL;
  }
}

/* Layout pass, then prepare; a node whose NHWC prepare is refused is
 * planned again under a tighter limit (het_cpu_layout_back_off), and the
 * pass runs again (each retry tightens one node). */
static het_status het_cpu_plan_and_prepare(const het_cpu_state *s,
                                           het_cpu_compiled *c,
                                           const het_graph *graph) {
  uint8_t *limit = calloc((size_t)c->n_nodes + 1, sizeof *limit);
  if (!limit)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  het_status st = HET_OK;
  for (;;) {
    if (s && !s->nchw_only)
      st = het_cpu_layout_plan(graph, c->nodes, c->n_nodes, limit,
                               c->layout);
    int failed = -1;
    if (st == HET_OK)
      st = het_cpu_prepare_all(s, c, graph, limit, &failed);
    if (st == HET_OK || failed < 0)
      break;
    het_error_clear();
    het_cpu_release_states(c);
    limit[failed] = het_cpu_layout_back_off(
        graph, &graph->nodes[c->nodes[failed]], limit[failed]);
  }
  free(limit);
  return st;
}

static het_status het_cpu_compile(void *state, const het_graph *graph,
                                  const int *nodes, int n_nodes, void **out) {
  het_status st = HET_OK;
  if (state) /* oneDNN prepares (reorders weights) on this thread */
    het_kernel_set_omp_threads(((het_cpu_state *)state)->threads);
  het_cpu_compiled *c = calloc(1, sizeof *c);
  if (!c)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  c->graph = graph;
  c->nodes = malloc(((size_t)n_nodes + 1) * sizeof *c->nodes);
  c->kernels = calloc((size_t)n_nodes + 1, sizeof *c->kernels);
  c->states = calloc((size_t)n_nodes + 1, sizeof *c->states);
  c->layout = calloc((size_t)n_nodes + 1, sizeof *c->layout);
  if (!c->nodes || !c->kernels || !c->states || !c->layout) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
    goto fail;
  }
  for (int i = 0; i < n_nodes; i++) {
    const het_node *node = &graph->nodes[nodes[i]];
    c->nodes[i] = nodes[i];
    c->kernels[i] = het_kernel_find(node->domain, node->op_type);
    c->n_nodes = i + 1;
    if (!c->kernels[i]) {
      st = het_error(HET_ERR_UNSUPPORTED, "node '%s': no CPU kernel for %s",
                     node->name, node->op_type);
      goto fail;
    }
  }
  st = het_cpu_plan_and_prepare(state, c, graph);
  if (st != HET_OK)
    goto fail;
  *out = c;
  return HET_OK;
fail:
  het_cpu_destroy_compiled(state, c);
  return st;
}

static het_status het_cpu_run_node(het_cpu_state *s, het_cpu_compiled *c,
                                   int i, het_run_ctx *ctx) {
  const het_node *node = &c->graph->nodes[c->nodes[i]];
  het_tensor *in_small[16], *out_small[16];
  het_tensor **in = in_small, **out = out_small;
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
  for (int k = 0; k < node->n_inputs; k++) {
    in[k] = het_run_input(ctx, node, k);
    if (in[k] && in[k]->device && in[k]->device->vt->alloc) {
      st = het_error(HET_ERR_INTERNAL,
                     "node '%s' (%s): input '%s' lives on %s memory; a "
                     "copy to the host is missing",
                     node->name, node->op_type,
                     c->graph->values[node->inputs[k]].name,
                     in[k]->device->vt->name);
      goto fail;
    }
  }
  st = het_run_prepare_outputs(ctx, node, in, NULL, out);
  if (st != HET_OK)
    goto fail;
  het_kernel_ctx kc = {
      .node = node,
      .opset = node->opset,
      .n_inputs = node->n_inputs,
      .inputs = in,
      .n_outputs = node->n_outputs,
      .outputs = out,
      .state = c->states[i],
      .threads = s->threads,
      .run = ctx,
      .par = s->pool ? &s->par : NULL,
      .nhwc_in = c->layout[i].nhwc_in,
      .nhwc_out = c->layout[i].nhwc_out,
  };
  st = c->kernels[i]->run(&kc);
  if (st != HET_OK)
    goto fail;
  for (int o = 0; o < node->n_outputs; o++)
    if (out[o] && !out[o]->data) {
      st = het_error(HET_ERR_INTERNAL, "node '%s' (%s): output %d not sized",
                     node->name, node->op_type, o);
      goto fail;
    }
  het_run_release_inputs(ctx, node);
fail:
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
  return st;
}

static het_status het_cpu_run(void *state, void *compiled, het_run_ctx *ctx) {
  het_cpu_compiled *c = compiled;
  het_kernel_set_omp_threads(((het_cpu_state *)state)->threads);
  for (int i = 0; i < c->n_nodes; i++) {
    double t0 = ctx->record ? het_run_clock() : 0;
    HET_TRY(het_cpu_run_node(state, c, i, ctx));
    if (ctx->record)
      ctx->record(ctx->recorder, c->nodes[i], t0, het_run_clock());
  }
  return HET_OK;
}

het_status het_cpu_graph_compile(const het_graph *g, void **out) {
  return het_cpu_compile(NULL, g, g->order, g->n_nodes, out);
}

het_status het_cpu_graph_run(void *compiled, int threads, het_run_ctx *ctx) {
  het_cpu_state s = {.threads = threads};
  return het_cpu_run(&s, compiled, ctx);
}

void het_cpu_graph_destroy(void *compiled) {
  het_cpu_destroy_compiled(NULL, compiled);
}

const het_provider_vtable het_cpu_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "cpu",
    .device_kind = HET_DEVICE_CPU,
    .create = het_cpu_create,
    .destroy = het_cpu_destroy,
    .get_capability = het_cpu_get_capability,
    .estimate_cost = NULL,
    .compile = het_cpu_compile,
    .run = het_cpu_run,
    .destroy_compiled = het_cpu_destroy_compiled,
    .get_device_info = het_cpu_get_device_info,
};
