/* provider.c — the CPU execution provider (ABI 3): one host-memory device
 * whose facts come from a device profile or a measurement; per session an
 * instance that claims nodes with a kernel in the kernel library, compiles
 * a subgraph into per-node kernel states (after the layout pass, layout.c,
 * has picked NHWC values) and runs it on a stream.  A stream is a core host
 * queue: inline (the enqueuing thread runs the kernels) or served by its
 * own thread, which then runs the kernels with the pool's workers.
 * Options: cpu.layout = auto (default) | nchw (no NHWC values);
 * cpu.conv_algo = auto (default: Winograd for a 3x3 Conv where it times
 * faster at compile) | direct | winograd; cpu.estimate = calibrated
 * (default: estimate.c) | roofline (the core's plain roofline);
 * cpu.threadpool = auto (default) | openmp | pthread (threadpool.h).
 * het_cpu_create_as makes the same instance under another provider's name
 * with a narrower claim (the INT8 provider, providers/registry.c).
 * Invariant: a compiled subgraph is immutable after compile, so
 * concurrent runs share it safely.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/cpuinfo.h"
#include "core/hostq.h"
#include "kernels/kernel.h"
#include "kernels/parallel.h"
#include "kernels/tuning.h"
#include "providers/cpu/blob.h"
#include "providers/cpu/cpu.h"
#include "providers/cpu/estimate.h"
#include "providers/cpu/layout.h"
#include "providers/cpu/profile.h"
#include "providers/cpu/threadpool.h"

/* cpu.threadpool: where the kernels' own parallel loops run.  auto:
 * the OpenMP team where the runtime is there (het_threadpool_openmp_
 * available), else the pthread pool. */
typedef enum het_cpu_pool_kind {
  HET_CPU_POOL_AUTO,
  HET_CPU_POOL_OPENMP,
  HET_CPU_POOL_PTHREAD,
} het_cpu_pool_kind;

typedef struct het_cpu_state {
  const char *name;     /* "cpu", or the provider made by het_cpu_create_as */
  het_cpu_claim_fn claim; /* NULL: every node a kernel supports */
  int threads;
  bool nchw_only;       /* cpu.layout=nchw */
  het_conv_algo conv_algo; /* cpu.conv_algo */
  bool bf16;               /* cpu.precision=bf16 */
  bool deterministic;      /* config->deterministic: nothing timed */
  het_cpu_pool_kind pool_kind; /* cpu.threadpool */
  het_threadpool *pool; /* threads-1 workers, or the OpenMP team */
  het_parallel par;     /* the kernels' view of pool */
  het_cpu_estimator est; /* estimate_cost's inputs (cpu.estimate) */
} het_cpu_state;

/* The device: its facts (from the profile, or measured). */
typedef struct het_cpu_device {
  het_device_info info;
  het_cpu_thread_rates thread; /* one thread's FLOP/s when measured, 0
                                  with a profile (its rates as given) */
} het_cpu_device;

/* Weights a node's kernel may prefetch while it runs (kernel.h,
 * het_kernel_ctx.prefetch). */
typedef struct het_cpu_ahead {
  const void *data;
  size_t bytes;
} het_cpu_ahead;

typedef struct het_cpu_compiled {
  const het_graph *graph;
  int n_nodes;
  int *nodes;
  const het_kernel **kernels;
  void **states;
  het_cpu_layout *layout; /* per node: NHWC bits from the layout pass */
  het_cpu_ahead *ahead;   /* per node: the next weights to prefetch */
  char *choices;          /* the timed kernel choices its prepare made or
                             reused ("key<TAB>value" lines, tuning.h): its
                             serialized form for ahead-of-time plans */
} het_cpu_compiled;

/* *out = the index of value among the n names of option cpu.<key>;
 * INVALID_ARGUMENT listing them when it is none. */
static het_status het_cpu_choice(const het_cpu_state *s, const char *key,
                                 const char *value, const char *const *names,
                                 int n, int *out) {
  char list[96] = "";
  for (int i = 0; i < n; i++) {
    if (strcmp(value, names[i]) == 0) {
      *out = i;
      return HET_OK;
    }
    size_t len = strlen(list);
    snprintf(list + len, sizeof list - len, "%s%s",
             i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
  }
  return het_error(HET_ERR_INVALID_ARGUMENT, "option '%s.%s': '%s' is not %s",
                   s->name, key, value, list);
}

/* Applies option key=value to s. */
static het_status het_cpu_option(het_cpu_state *s, const char *key,
                                 const char *value) {
  static const char *const layouts[] = {"auto", "nchw"};
  static const char *const algos[] = {"auto", "direct", "winograd"};
  static const char *const precisions[] = {"fp32", "bf16"};
  static const char *const pools[] = {"auto", "openmp", "pthread"};
  static const char *const estimates[] = {"calibrated", "roofline"};
  int i = 0;
  if (strcmp(key, "layout") == 0) {
    HET_TRY(het_cpu_choice(s, key, value, layouts, 2, &i));
    s->nchw_only = i == 1;
    return HET_OK;
  }
  if (strcmp(key, "conv_algo") == 0) {
    HET_TRY(het_cpu_choice(s, key, value, algos, 3, &i));
    s->conv_algo = (het_conv_algo)i;
    return HET_OK;
  }
  if (strcmp(key, "precision") == 0) {
    char missing[32];
    HET_TRY(het_cpu_choice(s, key, value, precisions, 2, &i));
    s->bf16 = i == 1;
    if (s->bf16 && !het_cpuinfo_has_isa("avx512bf16", missing, sizeof missing))
      return het_error(HET_ERR_UNSUPPORTED,
                       "option '%s.precision=bf16': this CPU lacks AVX-512 "
                       "BF16 (bfloat16 arithmetic would be emulated)",
                       s->name);
    return HET_OK;
  }
  if (strcmp(key, "threadpool") == 0) {
    HET_TRY(het_cpu_choice(s, key, value, pools, 3, &i));
    s->pool_kind = (het_cpu_pool_kind)i;
    return HET_OK;
  }
  if (strcmp(key, "estimate") == 0) {
    HET_TRY(het_cpu_choice(s, key, value, estimates, 2, &i));
    s->est.roofline = i == 1;
    return HET_OK;
  }
  const char *p = s->name;
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "provider '%s': unknown option '%s.%s' (known: %s.layout, "
                   "%s.conv_algo, %s.precision, %s.estimate, %s.threadpool)",
                   p, p, key, p, p, p, p, p);
}

static het_status het_cpu_device_open(int index, const char *profile_path,
                                      void **device_state,
                                      het_device_info *info, char *name,
                                      size_t name_cap);

het_status het_cpu_create_as(const het_provider_config *config,
                             const char *name, het_cpu_claim_fn claim,
                             void **state) {
  het_cpu_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s provider: out of memory",
                     name);
  s->name = name;
  s->claim = claim;
  s->threads = config && config->threads > 0 ? config->threads : 1;
  het_cpu_estimator_init(&s->est);
  const het_cpu_device *dev = config && config->device &&
                                      config->device->vt->device_open ==
                                          het_cpu_device_open
                                  ? config->device->state
                                  : NULL;
  het_cpu_thread_rates thread = dev ? dev->thread : het_cpu_thread_flops();
  if (dev)
    s->est.info = dev->info;
  else
    het_cpu_device_info(&s->est.info);
  s->est.gemm_flops = thread.gemm;
  s->est.blas_flops = thread.blas;
  s->est.threads = s->threads;
  s->deterministic = config && config->deterministic;
  het_status st = HET_OK;
  for (int i = 0; st == HET_OK && config && i < config->n_options; i++)
    st = het_cpu_option(s, config->option_keys[i], config->option_values[i]);
  s->est.nchw_only = s->nchw_only;
  s->est.winograd = s->conv_algo != HET_CONV_ALGO_DIRECT;
  s->est.bf16 = s->bf16;
  if (st == HET_OK)
    st = s->pool_kind == HET_CPU_POOL_OPENMP ||
                 (s->pool_kind == HET_CPU_POOL_AUTO &&
                  het_threadpool_openmp_available())
             ? het_threadpool_create_openmp(s->threads, &s->pool)
             : het_threadpool_create(s->threads, &s->pool);
  if (st == HET_OK)
    het_threadpool_parallel(s->pool, &s->par);
  if (st != HET_OK) {
    het_threadpool_destroy(s->pool);
    het_cpu_estimator_deinit(&s->est);
    free(s);
    return st;
  }
  /* OpenBLAS's count is process-wide: the last CPU provider created sets
   * it for every session.  oneDNN's (OpenMP, per thread) is set per run. */
  het_kernel_set_blas_threads(s->threads);
  *state = s;
  return HET_OK;
}

static het_status het_cpu_create(const het_provider_config *config,
                                 void **state) {
  return het_cpu_create_as(config, "cpu", NULL, state);
}

/* ---- the device ------------------------------------------------------- */

static het_status het_cpu_device_count(const char *profile_path, int *count) {
  (void)profile_path;
  *count = 1;
  return HET_OK;
}

static het_status het_cpu_device_open(int index, const char *profile_path,
                                      void **device_state,
                                      het_device_info *info, char *name,
                                      size_t name_cap) {
  if (index != 0)
    return het_error(HET_ERR_NO_DEVICE, "cpu: no device %d", index);
  het_cpu_device *d = calloc(1, sizeof *d);
  if (!d)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  het_status st = profile_path ? het_cpu_device_info_load(profile_path, &d->info)
                               : het_cpu_device_info(&d->info);
  if (!profile_path)
    d->thread = het_cpu_thread_flops();
  if (st != HET_OK) {
    free(d);
    return st;
  }
  *info = d->info;
  snprintf(name, name_cap, "cpu:%d", index);
  *device_state = d;
  return HET_OK;
}

static void het_cpu_device_close(void *device_state) { free(device_state); }

static void het_cpu_destroy(void *state) {
  het_cpu_state *s = state;
  if (!s)
    return;
  het_threadpool_destroy(s->pool);
  het_cpu_estimator_deinit(&s->est);
  free(s);
}

static het_status het_cpu_get_capability(void *state, const het_graph *graph,
                                         het_claim *claims) {
  het_cpu_state *s = state;
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
    if (s->claim)
      c->claimed = s->claim(graph, n, c->reason, sizeof c->reason);
  }
  /* the layouts its estimates assume, from the graph's own shapes */
  return het_cpu_estimator_plan(&s->est, graph, claims);
}

/* Under cpu.precision=bf16 the nodes het_cpu_bf16_node names (oneDNN's
 * float32 Convs, MatMuls, their fused forms and Gemms) compute in
 * bfloat16; everything else as its tensors say. */
static het_dtype het_cpu_compute_type(void *state, const het_graph *graph,
                                      int node) {
  const het_cpu_state *s = state;
  return s->bf16 && het_cpu_bf16_node(graph, node) ? HET_DTYPE_BFLOAT16
                                                   : HET_DTYPE_UNDEFINED;
}

static het_status het_cpu_estimate_cost(void *state, const het_graph *graph,
                                        int node, double *seconds) {
  het_cpu_state *s = state;
  return het_cpu_estimate(&s->est, graph, node, seconds);
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
  free(c->ahead);
  free(c->choices);
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
                         .conv_algo = s ? s->conv_algo : HET_CONV_ALGO_AUTO,
                         .bf16 = s && s->bf16,
                         .threads = s ? s->threads : 1};
    bool nhwc = (prep.nhwc_in | prep.nhwc_out) != 0;
    het_status st = HET_OK;
    het_kernel_presets_node(i); /* a plan's weights for this node */
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

/* For each node, the weights of the next node holding any, when that
 * one's kernel asks for them to be prefetched (state_prefetch): the nodes
 * between (activations, adds, pooling) hold none and run briefly.
 * ResNet-50 int8, one thread: each 1x1 Conv on hetrt's VNNI kernel
 * fetching the next 3x3 Conv's oneDNN weights took the 3x3s 5-24 us less
 * at 28x28-14x14 and 17-55 us less at 7x7 (2.3 MiB of weights each), the
 * 1x1s 0-25 us more: node sum -0.7% to -1.2% (docs/quantize.md). */
static void het_cpu_plan_ahead(het_cpu_compiled *c) {
  het_cpu_ahead next = {NULL, 0}; /* of the nodes after i */
  for (int i = c->n_nodes - 1; i >= 0; i--) {
    c->ahead[i] = next;
    const het_kernel *k = c->kernels[i];
    if (!c->states[i] || (!k->state_prefetch && !k->state_weights))
      continue;
    next = (het_cpu_ahead){NULL, 0};
    if (k->state_prefetch)
      next.bytes = k->state_prefetch(c->states[i], &next.data);
    if (!next.bytes)
      next.data = NULL;
  }
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
  c->ahead = calloc((size_t)n_nodes + 1, sizeof *c->ahead);
  if (!c->nodes || !c->kernels || !c->states || !c->layout || !c->ahead) {
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
  /* deterministic: no timing (a plan's choices are replayed already) */
  bool fixed = state && ((het_cpu_state *)state)->deterministic &&
               het_tuning_may_time();
  if (fixed)
    het_tuning_replay_begin("", 0);
  het_tuning_capture_begin();
  st = het_cpu_plan_and_prepare(state, c, graph);
  c->choices = het_tuning_capture_end();
  if (fixed)
    het_tuning_replay_end();
  if (st == HET_OK && !c->choices)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  if (st != HET_OK)
    goto fail;
  het_cpu_plan_ahead(c);
  *out = c;
  return HET_OK;
fail:
  het_cpu_destroy_compiled(state, c);
  return st;
}

/* Scratch of one run: the most any node's kernel asks for (nodes run one
 * after another, each given all of it). */
static het_status het_cpu_compiled_scratch(void *state, void *compiled,
                                           const het_kernel_io *io,
                                           size_t *bytes) {
  het_cpu_state *s = state;
  het_cpu_compiled *c = compiled;
  *bytes = 0;
  for (int i = 0; i < c->n_nodes; i++) {
    const het_node *node = &c->graph->nodes[c->nodes[i]];
    if (!c->kernels[i]->scratch || node->n_inputs > 32 ||
        node->n_outputs > 32)
      continue;
    het_tensor *in[32], *out[32];
    bool shaped = true;
    for (int k = 0; k < node->n_inputs; k++) {
      in[k] = node->inputs[k] >= 0 ? io->values[node->inputs[k]] : NULL;
      shaped &= node->inputs[k] < 0 || in[k];
    }
    for (int o = 0; o < node->n_outputs; o++) {
      out[o] = node->outputs[o] >= 0 ? io->values[node->outputs[o]] : NULL;
      shaped &= node->outputs[o] < 0 || out[o];
    }
    if (!shaped)
      continue; /* dynamic shapes: the kernel allocates what it needs */
    het_kernel_ctx kc = {.node = node, .opset = node->opset,
                         .n_inputs = node->n_inputs, .inputs = in,
                         .n_outputs = node->n_outputs, .outputs = out,
                         .state = c->states[i], .threads = s->threads,
                         .nhwc_in = c->layout[i].nhwc_in,
                         .nhwc_out = c->layout[i].nhwc_out};
    size_t b = c->kernels[i]->scratch(&kc);
    *bytes = b > *bytes ? b : *bytes;
  }
  return HET_OK;
}

/* Runs compiled node i over io's tensors on the calling thread. */
static het_status het_cpu_run_node(het_cpu_state *s, het_cpu_compiled *c,
                                   int i, const het_kernel_io *io) {
  int id = c->nodes[i];
  const het_node *node = &c->graph->nodes[id];
  het_tensor *in_small[32], *out_small[32];
  het_tensor **in = in_small, **out = out_small;
  het_status st = HET_OK;
  if (node->n_inputs > 32 || node->n_outputs > 32) {
    in = calloc((size_t)node->n_inputs + 1, sizeof *in);
    out = calloc((size_t)node->n_outputs + 1, sizeof *out);
    if (!in || !out) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
      goto fail;
    }
  }
  if (io->dynamic && io->dynamic[id])
    st = io->prepare_node(io, id, NULL);
  for (int k = 0; k < node->n_inputs; k++)
    in[k] = node->inputs[k] >= 0 ? io->values[node->inputs[k]] : NULL;
  for (int o = 0; o < node->n_outputs; o++)
    out[o] = node->outputs[o] >= 0 ? io->values[node->outputs[o]] : NULL;
  het_kernel_ctx kc = {
      .node = node,
      .opset = node->opset,
      .n_inputs = node->n_inputs,
      .inputs = in,
      .n_outputs = node->n_outputs,
      .outputs = out,
      .state = c->states[i],
      .threads = s->threads,
      .par = s->pool ? &s->par : NULL,
      .nhwc_in = c->layout[i].nhwc_in,
      .nhwc_out = c->layout[i].nhwc_out,
      .scratch = io->scratch,
      .scratch_size = io->scratch_bytes,
      .prefetch = c->ahead[i].data,
      .prefetch_bytes = c->ahead[i].bytes,
  };
  double t0 = io->record ? het_clock_seconds() : 0;
  if (st == HET_OK)
    st = c->kernels[i]->run(&kc);
  for (int o = 0; st == HET_OK && o < node->n_outputs; o++)
    if (out[o] && !out[o]->data)
      st = het_error(HET_ERR_INTERNAL, "node '%s' (%s): output %d not sized",
                     node->name, node->op_type, o);
  if (st == HET_OK && io->record)
    io->record(io->recorder, id, t0, het_clock_seconds());
fail:
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
  return st;
}

/* p = {state, compiled, io}. */
static het_status het_cpu_run_job(const het_hostq_job *job) {
  het_cpu_state *s = job->p[0];
  het_cpu_compiled *c = job->p[1];
  het_kernel_set_omp_threads(s->threads);
  for (int i = 0; i < c->n_nodes; i++)
    HET_TRY(het_cpu_run_node(s, c, i, job->p[2]));
  return HET_OK;
}

static het_status het_cpu_run_async(void *state, void *compiled, void *stream,
                                    const het_kernel_io *io) {
  het_hostq_job job = {.fn = het_cpu_run_job,
                       .p = {state, compiled, (void *)io}};
  return het_hostq_submit(stream, &job);
}

/* ---- streams and events: core host queues ---------------------------- */

static het_status het_cpu_stream_create(void *state, unsigned flags,
                                        void **stream) {
  (void)state;
  return het_hostq_create("cpu", (flags & HET_STREAM_INLINE) != 0,
                          (het_hostq **)stream);
}

static void het_cpu_stream_destroy(void *state, void *stream) {
  (void)state;
  het_hostq_destroy(stream);
}

static het_status het_cpu_stream_synchronize(void *state, void *stream) {
  (void)state;
  return het_hostq_synchronize(stream);
}

static het_status het_cpu_event_create(void *state, void **event) {
  (void)state;
  *event = calloc(1, sizeof(het_hostq_event));
  return *event ? HET_OK
                : het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of "
                                                   "memory");
}

static void het_cpu_event_destroy(void *state, void *event) {
  (void)state;
  free(event);
}

static het_status het_cpu_event_record(void *state, void *event,
                                       void *stream) {
  (void)state;
  het_hostq_record(stream, event);
  return HET_OK;
}

static het_status het_cpu_stream_wait(void *state, void *stream,
                                      const het_event_ref *event) {
  (void)state;
  if (event->vt == &het_cpu_provider)
    return het_hostq_wait_event(stream, event->event);
  return het_hostq_wait_ref(stream, event);
}

static het_status het_cpu_event_synchronize(void *state, void *event) {
  (void)state;
  return het_hostq_event_wait(event);
}

static het_status het_cpu_event_query(void *state, void *event, bool *done) {
  (void)state;
  *done = het_hostq_event_done(event);
  return HET_OK;
}

static het_status het_cpu_host_func(void *state, void *stream,
                                    void (*fn)(void *), void *arg) {
  (void)state;
  return het_hostq_call(stream, fn, arg);
}

/* A compiled subgraph's serialized form (blob.c): its kernel choices and
 * its prepared weights (the rest is rebuilt from the graph; the choices
 * make that rebuild untimed and the same as the original, the weights
 * spare it every reorder). */
static het_status het_cpu_compiled_serialize(void *state, const void *compiled,
                                             void **data, size_t *size) {
  (void)state;
  const het_cpu_compiled *c = compiled;
  return het_cpu_blob_write(c->choices, c->n_nodes, c->kernels, c->states,
                            data, size);
}

static het_status het_cpu_compiled_deserialize(void *state,
                                               const het_graph *graph,
                                               const int *nodes, int n_nodes,
                                               const void *data, size_t size,
                                               void **compiled) {
  het_cpu_blob b;
  HET_TRY(het_cpu_blob_parse(data, size, &b));
  het_tuning_replay_begin(b.choices, b.choices_len);
  het_kernel_presets_begin(b.weights, b.n_weights);
  het_status st = het_cpu_compile(state, graph, nodes, n_nodes, compiled);
  het_kernel_presets_end();
  het_tuning_replay_end();
  het_cpu_blob_free(&b);
  return st;
}

/* The libraries whose kernels a plan's choices name; a plan from another
 * version runs, re-choosing (docs/plan-format.md). */
static const char *het_cpu_compat_string(void *state) {
  (void)state;
  return het_kernel_libraries();
}

const het_provider_vtable het_cpu_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "cpu",
    .device_kind = HET_DEVICE_CPU,
    .create = het_cpu_create,
    .destroy = het_cpu_destroy,
    .get_capability = het_cpu_get_capability,
    .estimate_cost = het_cpu_estimate_cost,
    .compile = het_cpu_compile,
    .destroy_compiled = het_cpu_destroy_compiled,
    .device_count = het_cpu_device_count,
    .device_open = het_cpu_device_open,
    .device_close = het_cpu_device_close,
    .stream_create = het_cpu_stream_create,
    .stream_destroy = het_cpu_stream_destroy,
    .stream_synchronize = het_cpu_stream_synchronize,
    .event_create = het_cpu_event_create,
    .event_destroy = het_cpu_event_destroy,
    .event_record = het_cpu_event_record,
    .stream_wait = het_cpu_stream_wait,
    .event_synchronize = het_cpu_event_synchronize,
    .event_query = het_cpu_event_query,
    .host_func = het_cpu_host_func,
    .run_async = het_cpu_run_async,
    .compiled_scratch = het_cpu_compiled_scratch,
    .compiled_serialize = het_cpu_compiled_serialize,
    .compiled_deserialize = het_cpu_compiled_deserialize,
    .compat_string = het_cpu_compat_string,
    .compute_type = het_cpu_compute_type,
};
