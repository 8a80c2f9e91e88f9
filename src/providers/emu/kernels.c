/* kernels.c — compile and run on the emu.  Compile picks each node's
 * kernel from the kernel library and prepares its state; run_async queues
 * one job on the stream that runs the subgraph's nodes in order, each on
 * the compute engine (paced to its modelled time in timed mode), over host
 * views of the device blocks the plan placed.  A device that keeps rank-4
 * tensors NHWC reorders them through the run's scratch (compiled_scratch
 * sizes it) around the NCHW kernels.  Invariant: a compiled subgraph is
 * read-only after compile, so concurrent runs share it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/kernel.h"
#include "providers/emu/emu_internal.h"

typedef struct het_emu_compiled {
  const het_graph *graph;
  int n_nodes;
  int *nodes;
  const het_kernel **kernels;
  void **states;
  double *modeled_s; /* per node: estimated device time (timed mode) */
} het_emu_compiled;

void het_emu_destroy_compiled(void *state, void *compiled) {
  (void)state;
  het_emu_compiled *c = compiled;
  if (!c)
    return;
  for (int i = 0; i < c->n_nodes; i++)
    if (c->states[i] && c->kernels[i]->destroy_state)
      c->kernels[i]->destroy_state(c->states[i]);
  free(c->nodes);
  free(c->kernels);
  free(c->states);
  free(c->modeled_s);
  free(c);
}

het_status het_emu_compile(void *state, const het_graph *graph,
                           const int *nodes, int n_nodes, void **out) {
  het_emu_state *s = state;
  het_status st = HET_OK;
  het_emu_compiled *c = calloc(1, sizeof *c);
  size_t n = (size_t)(n_nodes > 0 ? n_nodes : 0) + 1;
  if (c) {
    c->graph = graph;
    c->nodes = calloc(n, sizeof *c->nodes);
    c->kernels = calloc(n, sizeof *c->kernels);
    c->states = calloc(n, sizeof *c->states);
    c->modeled_s = calloc(n, sizeof *c->modeled_s);
  }
  if (!c || !c->nodes || !c->kernels || !c->states || !c->modeled_s) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
    goto fail;
  }
  for (int i = 0; i < n_nodes; i++) {
    const het_node *node = &graph->nodes[nodes[i]];
    char why[HET_CLAIM_REASON_CAP];
    if (!het_emu_node_check(s, graph, node, why, sizeof why)) {
      st = het_error(HET_ERR_UNSUPPORTED, "node '%s': %s", node->name, why);
      goto fail;
    }
    c->nodes[i] = nodes[i];
    c->kernels[i] = het_kernel_find(node->domain, node->op_type);
    c->n_nodes = i + 1;
    st = het_emu_estimate_cost(s, graph, nodes[i], &c->modeled_s[i]);
    if (st == HET_OK && c->kernels[i]->prepare)
      st = c->kernels[i]->prepare(graph, node, &c->states[i]);
    if (st != HET_OK)
      goto fail;
  }
  *out = c;
  return HET_OK;
fail:
  het_emu_destroy_compiled(state, c);
  return st;
}

#define HET_EMU_MAX_IO 64

/* ---- scratch: NHWC reorders and the kernels' own ------------------------- */

static size_t het_emu_align(size_t n) { return (n + 63) & ~(size_t)63; }

/* Bytes of node's rank-4 inputs and outputs (reordered through scratch). */
static size_t het_emu_node_scratch(const het_node *node,
                                   het_tensor *const *values) {
  size_t b = 0;
  for (int k = 0; k < node->n_inputs + node->n_outputs; k++) {
    int v = k < node->n_inputs ? node->inputs[k]
                               : node->outputs[k - node->n_inputs];
    const het_tensor *t = v >= 0 ? values[v] : NULL;
    if (t && t->rank == 4)
      b += het_emu_align(het_dims_count(t->dims, 4) *
                         (int64_t)het_dtype_size(t->dtype));
  }
  return b;
}

/* Bytes node i's kernel asks for (after its NHWC reorders). */
static size_t het_emu_kernel_scratch(const het_emu_compiled *c, int i,
                                     het_tensor *const *values) {
  const het_node *node = &c->graph->nodes[c->nodes[i]];
  if (!c->kernels[i]->scratch || node->n_inputs > HET_EMU_MAX_IO ||
      node->n_outputs > HET_EMU_MAX_IO)
    return 0;
  het_tensor *in[HET_EMU_MAX_IO], *out[HET_EMU_MAX_IO];
  for (int k = 0; k < node->n_inputs; k++)
    in[k] = node->inputs[k] >= 0 ? values[node->inputs[k]] : NULL;
  for (int o = 0; o < node->n_outputs; o++) {
    out[o] = node->outputs[o] >= 0 ? values[node->outputs[o]] : NULL;
    if (node->outputs[o] >= 0 && !out[o])
      return 0; /* dynamic */
  }
  het_kernel_ctx kc = {.node = node, .opset = node->opset,
                       .n_inputs = node->n_inputs, .inputs = in,
                       .n_outputs = node->n_outputs, .outputs = out,
                       .state = c->states[i], .threads = 1};
  return het_emu_align(c->kernels[i]->scratch(&kc));
}

het_status het_emu_compiled_scratch(void *state, void *compiled,
                                    const het_kernel_io *io, size_t *bytes) {
  het_emu_state *s = state;
  het_emu_compiled *c = compiled;
  *bytes = 0;
  bool nhwc = s->dev->profile.preferred_layout == HET_LAYOUT_NHWC;
  for (int i = 0; i < c->n_nodes; i++) {
    size_t b = het_emu_kernel_scratch(c, i, io->values);
    if (nhwc)
      b += het_emu_node_scratch(&c->graph->nodes[c->nodes[i]], io->values);
    if (b > *bytes)
      *bytes = b;
  }
  return HET_OK;
}

/* ---- run ----------------------------------------------------------------- */

/* The views of one node's inputs and outputs (host memory behind the
 * device addresses), with the kernel-facing pointer arrays. */
typedef struct het_emu_node_io {
  het_tensor view[2 * HET_EMU_MAX_IO];
  het_tensor *in[HET_EMU_MAX_IO], *out[HET_EMU_MAX_IO];
  void *dev_out[HET_EMU_MAX_IO]; /* NHWC: device storage of outputs */
} het_emu_node_io;

/* A host view of device tensor t. */
static het_status het_emu_view(het_emu_state *s, const het_tensor *t,
                               het_tensor *view) {
  *view = *t;
  view->owned = false;
  view->device = NULL;
  return het_emu_memory_resolve(s->dev->mem, t->data, t->nbytes, &view->data);
}

static het_status het_emu_missing_copy(het_emu_state *s, const het_graph *g,
                                       const het_node *node, int v,
                                       const het_tensor *t) {
  const het_value *val = &g->values[v];
  return het_error(HET_ERR_INTERNAL,
                   "emu: node '%s' (%s): missing copy: input '%s'%s lives in "
                   "%s memory, not on emu device '%s'",
                   node->name, node->op_type, val->name,
                   val->initializer ? " (an initializer)" : "",
                   t && t->device ? t->device->name : "host",
                   s->dev->profile.name);
}

static het_status het_emu_inputs(het_emu_state *s, const het_graph *g,
                                 const het_node *node, const het_kernel_io *io,
                                 het_emu_node_io *nio) {
  for (int k = 0; k < node->n_inputs; k++) {
    int v = node->inputs[k];
    nio->in[k] = NULL;
    if (v < 0)
      continue;
    het_tensor *t = io->values[v];
    if (!t || !t->data || t->device != s->self)
      return het_emu_missing_copy(s, g, node, v, t);
    nio->in[k] = &nio->view[k];
    HET_TRY(het_emu_view(s, t, nio->in[k]));
  }
  return HET_OK;
}

static het_status het_emu_outputs(het_emu_state *s, const het_graph *g,
                                  const het_node *node,
                                  const het_kernel_io *io,
                                  het_emu_node_io *nio) {
  for (int o = 0; o < node->n_outputs; o++) {
    int v = node->outputs[o];
    nio->out[o] = NULL;
    if (v < 0)
      continue;
    het_tensor *t = io->values[v];
    if (!t || !t->data || t->device != s->self)
      return het_error(HET_ERR_INTERNAL,
                       "emu: node '%s' (%s): output '%s' is not placed on "
                       "emu device '%s'",
                       node->name, node->op_type, g->values[v].name,
                       s->dev->profile.name);
    nio->out[o] = &nio->view[node->n_inputs + o];
    HET_TRY(het_emu_view(s, t, nio->out[o]));
  }
  return HET_OK;
}

/* NHWC device: rank-4 inputs are reordered into scratch (NCHW) for the
 * kernel, and rank-4 outputs are computed there, to be reordered back by
 * het_emu_from_scratch. */
static het_status het_emu_to_scratch(const het_node *node,
                                     const het_kernel_io *io, char *base,
                                     het_emu_node_io *nio) {
  size_t need = het_emu_node_scratch(node, io->values), used = 0;
  if (need == 0)
    return HET_OK;
  if (!base || io->scratch_bytes < need)
    return het_error(HET_ERR_INTERNAL,
                     "emu: node '%s': %zu bytes of scratch planned, %zu needed",
                     node->name, io->scratch_bytes, need);
  for (int k = 0; k < node->n_inputs + node->n_outputs; k++) {
    bool in = k < node->n_inputs;
    het_tensor *v = in ? nio->in[k] : nio->out[k - node->n_inputs];
    if (!v || v->rank != 4)
      continue;
    char *slot = base + used;
    used += het_emu_align(v->nbytes);
    if (in)
      het_layout_permute(v->data, slot, v->dims, het_dtype_size(v->dtype),
                         false);
    else
      nio->dev_out[k - node->n_inputs] = v->data;
    v->data = slot;
  }
  return HET_OK;
}

static void het_emu_from_scratch(const het_node *node, het_emu_node_io *nio) {
  for (int o = 0; o < node->n_outputs; o++)
    if (nio->dev_out[o]) {
      het_tensor *v = nio->out[o];
      het_layout_permute(v->data, nio->dev_out[o], v->dims,
                         het_dtype_size(v->dtype), true);
    }
}

typedef struct het_emu_kernel_call {
  het_emu_state *s;
  const het_kernel *kernel;
  het_kernel_ctx kc;
} het_emu_kernel_call;

static het_status het_emu_kernel_exec(void *arg) {
  het_emu_kernel_call *j = arg;
  long nth;
  if (het_emu_fault_hit(j->s, HET_EMU_FAULT_KERNEL, &nth))
    return het_error(HET_ERR_KERNEL,
                     "emu: injected fault: kernel #%ld (node '%s', %s) on "
                     "device '%s'",
                     nth, j->kc.node->name, j->kc.node->op_type,
                     j->s->dev->profile.name);
  return j->kernel->run(&j->kc);
}

static het_status het_emu_run_node(het_emu_stream *st, het_emu_compiled *c,
                                   int i, const het_kernel_io *io) {
  het_emu_state *s = st->s;
  const het_graph *g = c->graph;
  int id = c->nodes[i];
  const het_node *node = &g->nodes[id];
  if (node->n_inputs > HET_EMU_MAX_IO || node->n_outputs > HET_EMU_MAX_IO)
    return het_error(HET_ERR_UNSUPPORTED,
                     "emu: node '%s' has more than %d inputs or outputs",
                     node->name, HET_EMU_MAX_IO);
  het_emu_node_io nio;
  memset(nio.dev_out, 0, sizeof nio.dev_out);
  HET_TRY(het_emu_inputs(s, g, node, io, &nio));
  if (io->dynamic && io->dynamic[id])
    HET_TRY(io->prepare_node(io, id, nio.in));
  HET_TRY(het_emu_outputs(s, g, node, io, &nio));
  bool nhwc = s->dev->profile.preferred_layout == HET_LAYOUT_NHWC;
  char *base = NULL; /* the run's scratch, as host memory */
  if (io->scratch && io->scratch_bytes) {
    void *p;
    HET_TRY(het_emu_memory_resolve(s->dev->mem, io->scratch, io->scratch_bytes,
                                   &p));
    base = p;
  }
  size_t reorders = nhwc ? het_emu_node_scratch(node, io->values) : 0;
  if (nhwc)
    HET_TRY(het_emu_to_scratch(node, io, base, &nio));
  het_emu_kernel_call call = {
      .s = s,
      .kernel = c->kernels[i],
      .kc = {.node = node, .opset = node->opset, .n_inputs = node->n_inputs,
             .inputs = nio.in, .n_outputs = node->n_outputs,
             .outputs = nio.out, .state = c->states[i],
             .threads = s->threads,
             .scratch = base && io->scratch_bytes > reorders ? base + reorders
                                                             : NULL,
             .scratch_size = base && io->scratch_bytes > reorders
                                 ? io->scratch_bytes - reorders
                                 : 0},
  };
  double t0, t1;
  HET_TRY(het_emu_engine_run(st, HET_EMU_ENGINE_COMPUTE, c->modeled_s[i],
                             het_emu_kernel_exec, &call, &t0, &t1));
  if (nhwc)
    het_emu_from_scratch(node, &nio);
  if (io->record)
    io->record(io->recorder, id, t0, t1);
  return HET_OK;
}

/* p = {stream, compiled, io}. */
static het_status het_emu_run_job(const het_hostq_job *job) {
  het_emu_stream *st = job->p[0];
  het_emu_compiled *c = job->p[1];
  for (int i = 0; i < c->n_nodes; i++)
    HET_TRY(het_emu_run_node(st, c, i, job->p[2]));
  return HET_OK;
}

het_status het_emu_run_async(void *state, void *compiled, void *stream,
                             const het_kernel_io *io) {
  (void)state;
  het_emu_stream *st = stream;
  het_hostq_job job = {.fn = het_emu_run_job,
                       .p = {st, compiled, (void *)io}};
  return het_hostq_submit(st->q, &job);
}
