/* kernels.c — compile and run on the emu.  Compile picks each node's CPU
 * kernel and prepares its state (as the CPU provider does); run checks that
 * every input lives in this emu's memory (else: a missing copy), allocates
 * outputs there, and runs the kernel on the compute stream's thread over
 * host views of the device blocks.  Invariant: a compiled subgraph is
 * read-only after compile, so concurrent runs share it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/run.h"
#include "kernels/kernel.h"
#include "providers/emu/emu_internal.h"
#include "core/tensor.h"

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

/* ---- run ----------------------------------------------------------------- */

typedef struct het_emu_kernel_job {
  het_emu_state *s;
  const het_kernel *kernel;
  het_kernel_ctx kc;
} het_emu_kernel_job;

static het_status het_emu_kernel_exec(void *arg) {
  het_emu_kernel_job *j = arg;
  long nth;
  if (het_emu_fault_hit(j->s, HET_EMU_FAULT_KERNEL, &nth))
    return het_error(HET_ERR_KERNEL,
                     "emu: injected fault: kernel #%ld (node '%s', %s) on "
                     "device '%s'",
                     nth, j->kc.node->name, j->kc.node->op_type,
                     j->s->profile.name);
  return j->kernel->run(&j->kc);
}

/* A host view of device tensor t: same shape, data = its block. */
static het_status het_emu_view(het_emu_state *s, const het_tensor *t,
                               het_tensor *view) {
  *view = *t;
  view->owned = false;
  view->device = NULL;
  return het_emu_memory_resolve(s->mem, t->data, t->nbytes, &view->data);
}

/* Per-node scratch: views and their pointer arrays. */
typedef struct het_emu_node_io {
  het_tensor *in_view, *out_view;
  het_tensor **in, **out;       /* kernel-facing (views or NULL) */
  het_tensor **out_dev;         /* the device tensors in ctx */
  void *block;
} het_emu_node_io;

static het_status het_emu_io_init(het_emu_node_io *io, const het_node *node) {
  size_t ni = (size_t)node->n_inputs + 1, no = (size_t)node->n_outputs + 1;
  size_t bytes = (ni + no) * sizeof(het_tensor) + (ni + 2 * no) * sizeof(void *);
  io->block = calloc(1, bytes);
  if (!io->block)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  io->in_view = io->block;
  io->out_view = io->in_view + ni;
  io->in = (het_tensor **)(io->out_view + no);
  io->out = io->in + ni;
  io->out_dev = io->out + no;
  return HET_OK;
}

/* Input k of node as a view, checking it lives here (else: missing copy). */
static het_status het_emu_input(het_emu_state *s, het_run_ctx *ctx,
                                const het_node *node, int k,
                                het_emu_node_io *io) {
  het_tensor *t = het_run_input(ctx, node, k);
  io->in[k] = NULL;
  if (!t) {
    if (node->inputs[k] < 0)
      return HET_OK;
    return het_error(HET_ERR_INTERNAL, "node '%s': input '%s' not computed",
                     node->name, ctx->graph->values[node->inputs[k]].name);
  }
  const het_value *val = &ctx->graph->values[node->inputs[k]];
  if (!het_emu_tensor_is_here(s, t))
    return het_error(
        HET_ERR_INTERNAL,
        "emu: node '%s' (%s): missing copy: input '%s'%s lives in %s%s "
        "memory, not on emu device '%s'",
        node->name, node->op_type, val->name,
        val->initializer == t ? " (an initializer)" : "",
        t->device ? t->device->vt->name : "host",
        t->device ? " device" : "", s->profile.name);
  const het_device *none = NULL;
  atomic_compare_exchange_strong(&s->self, &none, t->device);
  io->in[k] = &io->in_view[k];
  return het_emu_view(s, t, &io->in_view[k]);
}

/* Views of the outputs het_run_prepare_outputs placed on the device. */
static het_status het_emu_outputs(het_emu_state *s, het_run_ctx *ctx,
                                  const het_node *node, het_emu_node_io *io) {
  const het_device *dev = atomic_load(&s->self);
  HET_TRY(het_run_prepare_outputs(ctx, node, io->in, dev ? dev : &s->own_device,
                                  io->out_dev));
  for (int o = 0; o < node->n_outputs; o++) {
    het_tensor *t = io->out_dev[o];
    io->out[o] = NULL;
    if (!t)
      continue;
    if (!t->data)
      return het_error(HET_ERR_UNSUPPORTED,
                       "emu: node '%s' (%s): output '%s' has a data-dependent "
                       "shape",
                       node->name, node->op_type,
                       ctx->graph->values[node->outputs[o]].name);
    io->out[o] = &io->out_view[o];
    HET_TRY(het_emu_view(s, t, &io->out_view[o]));
  }
  return HET_OK;
}

/* NHWC devices keep rank-4 tensors in NHWC; the CPU kernels compute in
 * NCHW.  Inputs are reordered into scratch before a kernel and outputs
 * written to scratch are reordered into device memory after it. */
typedef struct het_emu_layout_scratch {
  void **bufs;  /* per input, then per output: scratch or NULL */
  void **dev;   /* per output: the device block behind the view */
  int n_in, n_out;
} het_emu_layout_scratch;

static het_status het_emu_to_nchw(het_emu_node_io *io, const het_node *node,
                                  het_emu_layout_scratch *ls) {
  ls->n_in = node->n_inputs;
  ls->n_out = node->n_outputs;
  ls->bufs = calloc((size_t)(ls->n_in + 2 * ls->n_out) + 1, sizeof(void *));
  if (!ls->bufs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  ls->dev = ls->bufs + ls->n_in + ls->n_out;
  for (int k = 0; k < ls->n_in + ls->n_out; k++) {
    het_tensor *v = k < ls->n_in ? io->in[k] : io->out[k - ls->n_in];
    if (!v || v->rank != 4 || v->nbytes == 0)
      continue;
    if (!(ls->bufs[k] = malloc(v->nbytes)))
      return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                       node->name);
    if (k < ls->n_in)
      het_layout_permute(v->data, ls->bufs[k], v->dims,
                         het_dtype_size(v->dtype), false);
    else
      ls->dev[k - ls->n_in] = v->data;
    v->data = ls->bufs[k];
  }
  return HET_OK;
}

static void het_emu_from_nchw(het_emu_node_io *io, het_emu_layout_scratch *ls,
                              bool write_back) {
  for (int o = 0; write_back && o < ls->n_out; o++)
    if (ls->dev[o])
      het_layout_permute(ls->bufs[ls->n_in + o], ls->dev[o], io->out[o]->dims,
                         het_dtype_size(io->out[o]->dtype), true);
  for (int k = 0; ls->bufs && k < ls->n_in + ls->n_out; k++)
    free(ls->bufs[k]);
  free(ls->bufs);
}

static het_status het_emu_run_node(het_emu_state *s, het_emu_compiled *c,
                                   int i, het_run_ctx *ctx) {
  const het_node *node = &c->graph->nodes[c->nodes[i]];
  het_emu_node_io io = {0};
  het_status st = het_emu_io_init(&io, node);
  for (int k = 0; st == HET_OK && k < node->n_inputs; k++)
    st = het_emu_input(s, ctx, node, k, &io);
  if (st == HET_OK)
    st = het_emu_outputs(s, ctx, node, &io);
  bool nhwc = s->profile.preferred_layout == HET_LAYOUT_NHWC;
  het_emu_layout_scratch ls = {0};
  if (st == HET_OK && nhwc)
    st = het_emu_to_nchw(&io, node, &ls);
  if (st == HET_OK) {
    het_emu_kernel_job kj = {
        .s = s,
        .kernel = c->kernels[i],
        .kc = {.node = node, .opset = node->opset, .n_inputs = node->n_inputs,
               .inputs = io.in, .n_outputs = node->n_outputs,
               .outputs = io.out, .state = c->states[i],
               .threads = s->threads, .run = ctx},
    };
    het_emu_job job = {.fn = het_emu_kernel_exec, .arg = &kj};
    if (s->mode == HET_EMU_TIMED)
      job.pace_s = c->modeled_s[i];
    het_emu_stream_submit(s->compute, &job);
    st = het_emu_stream_wait(s->compute, &job);
  }
  if (nhwc)
    het_emu_from_nchw(&io, &ls, st == HET_OK);
  if (st == HET_OK)
    het_run_release_inputs(ctx, node);
  free(io.block);
  return st;
}

het_status het_emu_run(void *state, void *compiled, het_run_ctx *ctx) {
  het_emu_compiled *c = compiled;
  for (int i = 0; i < c->n_nodes; i++) {
    double t0 = ctx->record ? het_run_clock() : 0;
    HET_TRY(het_emu_run_node(state, c, i, ctx));
    if (ctx->record)
      ctx->record(ctx->recorder, c->nodes[i], t0, het_run_clock());
  }
  return HET_OK;
}
