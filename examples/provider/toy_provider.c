/* toy_provider.c — the toy's vtable (ABI 3): options, its one device
 * (host memory), claims and cost estimates for the partitioner, compile,
 * and run_async, which queues the subgraph's kernels on a stream
 * (toy_stream.c).  Invariant: a compiled subgraph is read-only after
 * compile, so concurrent runs share it.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toy_internal.h"
#include "toy_provider.h"

static atomic_long toy_nodes_run;

long toy_provider_nodes_run(void) { return atomic_load(&toy_nodes_run); }

/* ---- device: one, computing in host memory ------------------------------ */

static het_status toy_device_count(const char *profile_path, int *count) {
  (void)profile_path;
  *count = 1;
  return HET_OK;
}

static het_status toy_device_open(int index, const char *profile_path,
                                  void **device_state, het_device_info *info,
                                  char *name, size_t name_cap) {
  if (profile_path)
    return het_error_set(HET_ERR_INVALID_ARGUMENT,
                         "toy: takes no device profile (got '%s')", profile_path);
  if (index != 0)
    return het_error_set(HET_ERR_NO_DEVICE, "toy: no device %d", index);
  /* The facts the core's cost model and memory planner read.  Tensors
   * live in plain host memory, so no copies are needed between the toy
   * and the CPU provider, and the toy needs no allocator. */
  *info = (het_device_info){.host_memory = true,
                            .memory_capacity = 0,
                            .peak_flops_f32 = 1e9,
                            .memory_bandwidth = 4e9,
                            .launch_overhead = 1e-6,
                            .preferred_layout = HET_LAYOUT_NCHW,
                            .float32_as = HET_DTYPE_UNDEFINED};
  snprintf(name, name_cap, "toy:%d", index);
  *device_state = NULL; /* nothing to keep per device */
  return HET_OK;
}

/* ---- instance ------------------------------------------------------------ */

static het_status toy_create(const het_provider_config *config, void **state) {
  toy_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  s->bandwidth = 4e9;
  for (int i = 0; i < config->n_options; i++) {
    const char *key = config->option_keys[i], *value = config->option_values[i];
    char *end = NULL;
    double v = strtod(value, &end);
    if (strcmp(key, "bandwidth") == 0 && end != value && *end == '\0' &&
        v > 0 && isfinite(v)) {
      s->bandwidth = v;
    } else {
      free(s);
      return het_error_set(HET_ERR_INVALID_ARGUMENT,
                           "toy: unknown option or bad value '%s=%s' "
                           "(known: bandwidth=BYTES_PER_SECOND)",
                           key, value);
    }
  }
  *state = s;
  return HET_OK;
}

static void toy_destroy(void *state) { free(state); }

/* ---- claims and costs ------------------------------------------------------ */

typedef enum toy_op { TOY_RELU, TOY_ADD } toy_op;

/* Whether value v is float32 with a static shape; why not in why. */
static bool toy_value_ok(const het_graph *g, int v, het_value_desc *d,
                         char *why, size_t cap) {
  if (v < 0 || het_graph_get_value(g, v, d) != HET_OK) {
    snprintf(why, cap, "omitted input or output");
    return false;
  }
  if (d->dtype != HET_DTYPE_FLOAT32) {
    snprintf(why, cap, "'%s' is %s, not float32", d->name,
             het_dtype_str(d->dtype));
    return false;
  }
  bool known = d->rank >= 0;
  for (int i = 0; known && i < d->rank; i++)
    known = d->dims[i] >= 0;
  if (!known) {
    snprintf(why, cap, "shape of '%s' not known at load time", d->name);
    return false;
  }
  return true;
}

static bool toy_same_shape(const het_value_desc *a, const het_value_desc *b) {
  if (a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

/* Whether the toy runs node; which op in *op, and why (or why not: the
 * core shows a refusal as "(toy: REASON)", so it does not name the toy). */
static bool toy_node_check(const het_graph *g, int node, toy_op *op, char *why,
                           size_t cap) {
  het_node_desc n;
  het_value_desc in0, in1, out;
  if (het_graph_get_node(g, node, &n) != HET_OK) {
    snprintf(why, cap, "no node %d", node);
    return false;
  }
  bool relu = strcmp(n.op_type, "Relu") == 0, add = strcmp(n.op_type, "Add") == 0;
  if (n.domain[0] || !(relu || add)) {
    snprintf(why, cap, "op %s%s%s not supported", n.domain,
             n.domain[0] ? "." : "", n.op_type);
    return false;
  }
  if (n.n_inputs != (relu ? 1 : 2) || n.n_outputs != 1) {
    snprintf(why, cap, "%s with %d inputs", n.op_type, n.n_inputs);
    return false;
  }
  if (!toy_value_ok(g, n.inputs[0], &in0, why, cap) ||
      (add && !toy_value_ok(g, n.inputs[1], &in1, why, cap)) ||
      !toy_value_ok(g, n.outputs[0], &out, why, cap))
    return false;
  if (add && (!toy_same_shape(&in0, &in1) || !toy_same_shape(&in0, &out))) {
    snprintf(why, cap, "Add with broadcasting not supported");
    return false;
  }
  *op = relu ? TOY_RELU : TOY_ADD;
  snprintf(why, cap, "toy kernel for float32 %s", n.op_type);
  return true;
}

static het_status toy_get_capability(void *state, const het_graph *graph,
                                     het_claim *claims) {
  (void)state;
  for (int i = 0; i < het_graph_get_node_count(graph); i++) {
    toy_op op;
    claims[i].claimed = toy_node_check(graph, i, &op, claims[i].reason,
                                       sizeof claims[i].reason);
  }
  return HET_OK;
}

/* Elementwise kernels are bound by memory: one launch, then every input
 * and output element streamed once at the toy's bandwidth. */
static het_status toy_estimate_cost(void *state, const het_graph *graph,
                                    int node, double *seconds) {
  const toy_state *s = state;
  het_node_desc n;
  het_value_desc out;
  het_status r = het_graph_get_node(graph, node, &n);
  if (r == HET_OK)
    r = het_graph_get_value(graph, n.outputs[0], &out);
  if (r != HET_OK)
    return r; /* the accessor set the message */
  double elements = 1;
  for (int i = 0; i < out.rank; i++)
    elements *= out.dims[i] > 0 ? (double)out.dims[i] : 1;
  double bytes = elements * sizeof(float) * (double)(n.n_inputs + 1);
  *seconds = 1e-6 + bytes / s->bandwidth;
  return HET_OK;
}

/* ---- compile ------------------------------------------------------------- */

typedef struct toy_step {
  int node;         /* node id in the graph */
  const char *name; /* the node's, borrowed from the graph */
  toy_op op;
  int in[2], out;   /* value ids */
} toy_step;

typedef struct toy_compiled {
  int n_steps;
  toy_step steps[]; /* in the order compile received them (topological) */
} toy_compiled;

static het_status toy_compile(void *state, const het_graph *graph,
                              const int *nodes, int n_nodes, void **out) {
  (void)state;
  toy_compiled *c = calloc(1, sizeof *c + (size_t)n_nodes * sizeof(toy_step));
  if (!c)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  for (int i = 0; i < n_nodes; i++) {
    char why[HET_CLAIM_REASON_CAP];
    het_node_desc n;
    toy_step *st = &c->steps[i];
    if (!toy_node_check(graph, nodes[i], &st->op, why, sizeof why) ||
        het_graph_get_node(graph, nodes[i], &n) != HET_OK) {
      free(c);
      return het_error_set(HET_ERR_UNSUPPORTED, "toy: cannot compile node %d: %s",
                           nodes[i], why);
    }
    st->node = nodes[i];
    st->name = n.name;
    st->in[0] = n.inputs[0];
    st->in[1] = st->op == TOY_ADD ? n.inputs[1] : -1;
    st->out = n.outputs[0];
  }
  c->n_steps = n_nodes;
  *out = c;
  return HET_OK;
}

static void toy_destroy_compiled(void *state, void *compiled) {
  (void)state;
  free(compiled);
}

/* ---- run ------------------------------------------------------------------ */

static double toy_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The float data of value v, which must be placed in host memory with n
 * elements. */
static het_status toy_data(const het_kernel_io *io, const toy_step *st, int v,
                           int64_t n, float **data) {
  het_tensor *t = v >= 0 && v < io->n_values ? io->values[v] : NULL;
  if (!t || het_tensor_get_device(t) != NULL || !het_tensor_get_data(t) ||
      het_tensor_get_dtype(t) != HET_DTYPE_FLOAT32)
    return het_error_set(HET_ERR_INTERNAL,
                         "toy: node '%s': value %d is not float32 in host memory",
                         st->name, v);
  if (het_tensor_get_count(t) != n)
    return het_error_set(HET_ERR_SHAPE,
                         "toy: node '%s': value %d has %lld elements, wanted %lld",
                         st->name, v, (long long)het_tensor_get_count(t),
                         (long long)n);
  *data = het_tensor_get_data(t);
  return HET_OK;
}

static het_status toy_run_step(const het_kernel_io *io, const toy_step *st) {
  /* A node whose output shape is known only at run time is shaped (and
   * its output placed) just before it runs.  Relu and Add have none
   * unless the plan says so; host memory: no host views to pass. */
  het_status r = HET_OK;
  if (io->dynamic && io->dynamic[st->node])
    r = io->prepare_node(io, st->node, NULL);
  het_tensor *o = st->out < io->n_values ? io->values[st->out] : NULL;
  int64_t n = o ? het_tensor_get_count(o) : -1;
  float *y = NULL, *a = NULL, *b = NULL;
  if (r == HET_OK)
    r = toy_data(io, st, st->out, n, &y);
  if (r == HET_OK)
    r = toy_data(io, st, st->in[0], n, &a);
  if (r == HET_OK && st->op == TOY_ADD)
    r = toy_data(io, st, st->in[1], n, &b);
  if (r != HET_OK)
    return r;
  double t0 = toy_now();
  if (st->op == TOY_RELU)
    for (int64_t i = 0; i < n; i++)
      y[i] = a[i] > 0.0f ? a[i] : 0.0f;
  else
    for (int64_t i = 0; i < n; i++)
      y[i] = a[i] + b[i];
  if (io->record)
    io->record(io->recorder, st->node, t0, toy_now());
  atomic_fetch_add(&toy_nodes_run, 1);
  return HET_OK;
}

/* Work item: a = compiled, b = io. */
static het_status toy_run_work(toy_work *w, het_status failure,
                               const char *message) {
  (void)failure;
  (void)message;
  const toy_compiled *c = w->a;
  for (int i = 0; i < c->n_steps; i++) {
    het_status r = toy_run_step(w->b, &c->steps[i]);
    if (r != HET_OK)
      return r;
  }
  return HET_OK;
}

static het_status toy_run_async(void *state, void *compiled, void *stream,
                                const het_kernel_io *io) {
  (void)state;
  if (!compiled || !io)
    return het_error_set(HET_ERR_INVALID_ARGUMENT, "toy: run without a subgraph");
  toy_work *w = calloc(1, sizeof *w);
  if (!w)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  w->run = toy_run_work;
  w->a = compiled;
  w->b = (void *)io; /* valid until the stream has finished the run */
  return toy_stream_enqueue(stream, w);
}

/* ---- the vtable ------------------------------------------------------------ */

const het_provider_vtable toy_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "toy",
    .device_kind = HET_DEVICE_CPU,
    .create = toy_create,
    .destroy = toy_destroy,
    .get_capability = toy_get_capability,
    .estimate_cost = toy_estimate_cost,
    .compile = toy_compile,
    .destroy_compiled = toy_destroy_compiled,
    .device_count = toy_device_count,
    .device_open = toy_device_open,
    .stream_create = toy_stream_create,
    .stream_destroy = toy_stream_destroy,
    .stream_synchronize = toy_stream_synchronize,
    .event_create = toy_event_create,
    .event_destroy = toy_event_destroy,
    .event_record = toy_event_record,
    .stream_wait = toy_stream_wait,
    .event_synchronize = toy_event_synchronize,
    .event_query = toy_event_query,
    .host_func = toy_host_func,
    .run_async = toy_run_async,
};
