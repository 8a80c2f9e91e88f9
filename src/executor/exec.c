/* exec.c — the executor (exec.h).  A run: (1) the plan of its signature
 * and a frame of it; (2) parameters and outputs bound into the frame
 * (static outputs written in place, dynamic ones taken from the frame at
 * the end); (3) every step enqueued in plan order: its waits (on the
 * stream, or by the host at a sync point), its work, its event; (4) the
 * streams synchronized, the first failure kept; (5) outputs handed over,
 * frame and plan given back.  Nothing here allocates in a steady run of a
 * static plan but the outputs the caller asked to receive.
 */
#include "executor/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/status.h"
#include "executor/exec_internal.h"
#include "transfer/convert.h"

/* ---- recording ----------------------------------------------------------- */

static void het_exec_record_node(void *ctx, int node, double t0, double t1) {
  het_exec_state *r = ctx;
  r->rec->record(r->rec->ctx, r->prog->node_base + node, t0, t1);
}

static void het_exec_stamp(void *arg) { *(double *)arg = het_clock_seconds(); }

/* After a run: the copies' and conversions' times. */
static void het_exec_report_steps(het_exec_state *r) {
  const het_plan *plan = r->plan;
  for (int t = 0; t < plan->n_steps; t++) {
    const het_pstep *T = &plan->steps[t];
    double *tt = &r->frame->times[2 * t];
    if ((T->kind == HET_PSTEP_COPY || T->kind == HET_PSTEP_CONVERT) &&
        tt[1] >= tt[0] && tt[0] > 0)
      r->rec->record(r->rec->ctx, r->prog->node_base + T->node, tt[0], tt[1]);
  }
}

/* ---- dynamic nodes -------------------------------------------------------- */

het_status het_exec_prepare_node(const het_kernel_io *io, int node,
                                 het_tensor *const *host_inputs) {
  het_frame *f = io->core;
  const het_plan *plan = f->plan;
  const het_program *p = plan->prog;
  const het_node *n = &p->graph->nodes[node];
  het_value_info in_small[16], out_small[16];
  het_value_info *in = in_small, *out = out_small;
  het_status st = HET_OK;
  if (n->n_inputs > 16 || n->n_outputs > 16) {
    in = calloc((size_t)n->n_inputs + 1, sizeof *in);
    out = calloc((size_t)n->n_outputs + 1, sizeof *out);
    if (!in || !out) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     n->name);
      goto done;
    }
  }
  for (int i = 0; i < n->n_inputs; i++) {
    memset(&in[i], 0, sizeof in[i]);
    in[i].shape.rank = -1;
    int v = n->inputs[i];
    const het_tensor *t = v < 0 ? NULL
                          : host_inputs && host_inputs[i] ? host_inputs[i]
                                                          : io->values[v];
    if (!t)
      continue;
    het_value_info_from_tensor(&in[i], t);
    if (!het_device_is_host(t->device))
      in[i].data = NULL; /* not host-readable */
  }
  for (int o = 0; o < n->n_outputs; o++) {
    memset(&out[o], 0, sizeof out[o]);
    out[o].present = n->outputs[o] >= 0;
    out[o].shape.rank = -1;
  }
  st = het_infer_node(n, n->n_inputs, in, n->n_outputs, out, NULL);
  for (int o = 0; st == HET_OK && o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (v < 0 || !plan->values[v].dynamic)
      continue;
    het_tensor *t = io->values[v];
    het_tensor_reset(t);
    t->dtype = out[o].dtype;
    t->rank = out[o].shape.rank < 0 ? 0 : out[o].shape.rank;
    if (!het_shape_is_concrete(&out[o].shape))
      continue; /* data-dependent: the kernel sizes it */
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < t->rank; i++)
      dims[i] = out[o].shape.dims[i].value;
    int sp = plan->values[v].space;
    /* Shaped only now, so outside the plan's max_memory check: one such
     * output alone may not exceed the cap either. */
    size_t nbytes;
    if (!sp && p->max_host_bytes &&
        het_tensor_check_shape(out[o].dtype, dims, t->rank, "output",
                               &nbytes) == HET_OK &&
        nbytes > p->max_host_bytes) {
      st = het_error(HET_ERR_CAPACITY,
                     "node '%s' output '%s': %zu bytes of %s are over the "
                     "session's max_memory of %zu bytes",
                     n->name, p->graph->values[v].name, nbytes,
                     het_dtype_str(out[o].dtype), p->max_host_bytes);
      break;
    }
    const het_device *dev = sp ? p->eps[sp - 1].device : NULL;
    if (!het_frame_reuse(f, v, dev, out[o].dtype, dims, t->rank))
      st = het_tensor_alloc_on(t, dev, out[o].dtype, dims, t->rank);
    if (st != HET_OK)
      het_error_wrap(st, "node '%s' output '%s'", n->name,
                     p->graph->values[v].name);
  }
done:
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
  return st;
}

/* ---- steps ---------------------------------------------------------------- */

/* Conversion job: p = {src, dst, node, stamps}, n = {step kind}. */
static het_status het_exec_convert_job(const het_hostq_job *job) {
  const het_tensor *src = job->p[0];
  het_tensor *dst = job->p[1];
  const het_node *node = job->p[2];
  double *tt = job->p[3];
  if (tt)
    tt[0] = het_clock_seconds();
  het_step_kind kind = (het_step_kind)job->n[0];
  int64_t to = het_node_attr_int(node, "to", 0);
  het_status st;
  if (kind == HET_STEP_CAST)
    st = dst->data ? het_transfer_cast_into(src, dst)
                   : het_transfer_cast(src, (het_dtype)to, dst);
  else if (kind == HET_STEP_LAYOUT)
    st = dst->data ? het_transfer_layout_into(src, to != 0, dst)
                   : het_transfer_layout(src, to != 0, dst);
  else if (dst->data) {
    st = dst->nbytes == src->nbytes
             ? HET_OK
             : het_error(HET_ERR_INTERNAL, "copy: %zu bytes into %zu",
                         src->nbytes, dst->nbytes);
    if (st == HET_OK && src->nbytes)
      memcpy(dst->data, src->data, src->nbytes);
  } else {
    st = het_tensor_alloc(dst, src->dtype, src->dims, src->rank);
    if (st == HET_OK && src->nbytes)
      memcpy(dst->data, src->data, src->nbytes);
  }
  if (tt)
    tt[1] = het_clock_seconds();
  return st == HET_OK ? st : het_error_wrap(st, "%s", node->name);
}

static het_status het_exec_convert(het_exec_state *r, const het_pstep *T,
                                   het_stream *s) {
  const het_program *p = r->prog;
  const het_node *n = &p->graph->nodes[T->node];
  het_frame *f = r->frame;
  het_hostq_job job = {
      .fn = het_exec_convert_job,
      .p = {f->ptrs[n->inputs[0]], f->ptrs[n->outputs[0]], (void *)n,
            r->rec ? &f->times[2 * (T - r->plan->steps)] : NULL},
      .n = {p->partition->kind[T->node]}};
  return het_hostq_submit(s->q, &job);
}

static het_status het_exec_copy(het_exec_state *r, const het_pstep *T,
                                het_stream *s) {
  const het_program *p = r->prog;
  const het_node *n = &p->graph->nodes[T->node];
  het_frame *f = r->frame;
  het_tensor *src = f->ptrs[n->inputs[0]], *dst = f->ptrs[n->outputs[0]];
  int sp = r->plan->values[n->outputs[0]].space;
  const het_device *to = sp ? p->eps[sp - 1].device : NULL;
  if (!dst->data) /* dynamic: the host waited for the source */
    HET_TRY(het_tensor_alloc_on(dst, to, src->dtype, src->dims, src->rank));
  if (dst->nbytes != src->nbytes)
    return het_error(HET_ERR_INTERNAL, "%s: %zu bytes into %zu", n->name,
                     src->nbytes, dst->nbytes);
  double *tt = &f->times[2 * (T - r->plan->steps)];
  if (r->rec)
    HET_TRY(het_stream_host_func(s, het_exec_stamp, &tt[0]));
  HET_TRY(het_stream_copy(s, dst->data, dst->device, src->data, src->device,
                          src->nbytes));
  if (r->rec)
    HET_TRY(het_stream_host_func(s, het_exec_stamp, &tt[1]));
  return HET_OK;
}

static het_status het_exec_step(het_exec_state *r, int t) {
  const het_plan *plan = r->plan;
  const het_pstep *T = &plan->steps[t];
  het_frame *f = r->frame;
  het_stream *s = T->slot >= 0 ? &r->set->slots[T->slot] : NULL;
  for (int k = 0; k < T->n_waits; k++)
    HET_TRY(T->host_waits ? het_event_synchronize(&f->events[T->waits[k]])
                          : het_stream_wait(s, &f->events[T->waits[k]]));
  switch (T->kind) {
  case HET_PSTEP_RUN: {
    het_kernel_io *io = &f->ios[T->io];
    io->record = r->rec ? het_exec_record_node : NULL;
    io->recorder = r;
    HET_TRY(het_stream_run(s, r->prog->graph, r->prog->compiled[T->sg], io));
    break;
  }
  case HET_PSTEP_COPY:
    HET_TRY(het_exec_copy(r, T, s));
    break;
  case HET_PSTEP_CONVERT:
    HET_TRY(het_exec_convert(r, T, s));
    break;
  case HET_PSTEP_CONTROL:
    HET_TRY(het_exec_control(r, T));
    break;
  }
  if (T->record >= 0)
    HET_TRY(het_event_record(&f->events[T->record], s));
  return HET_OK;
}

/* Enqueues the steps, then synchronizes the streams (every slot of the set
 * when drain_all, else those the plan uses); the first failure. */
static het_status het_exec_steps(het_exec_state *r, bool drain_all) {
  het_status st = HET_OK;
  char msg[1024] = "";
  for (int t = 0; st == HET_OK && t < r->plan->n_steps; t++)
    st = het_exec_step(r, t);
  if (st != HET_OK)
    snprintf(msg, sizeof msg, "%s", het_last_error());
  for (int s = 0; s < r->set->n_slots; s++) {
    if (!drain_all && !r->plan->uses_slot[s])
      continue;
    het_status ss = het_stream_synchronize(&r->set->slots[s]);
    if (ss != HET_OK && st == HET_OK) {
      st = ss;
      snprintf(msg, sizeof msg, "%s", het_last_error());
    }
  }
  return st == HET_OK ? HET_OK : het_error(st, "%s", msg);
}

/* ---- outputs ---------------------------------------------------------------- */

static bool het_same_shape(const het_tensor *a, const het_tensor *b) {
  return a->dtype == b->dtype && a->rank == b->rank &&
         memcmp(a->dims, b->dims, (size_t)a->rank * sizeof *a->dims) == 0;
}

/* dst (a caller's or enclosing frame's host tensor: placed, or a shell
 * with data NULL) receives src's contents; when take, an owned src gives
 * its storage to a shell instead. */
het_status het_exec_fill(het_tensor *dst, het_tensor *src, bool take,
                         const char *name) {
  if (!het_device_is_host(src->device))
    return het_error(HET_ERR_INTERNAL, "output '%s' is not in host memory",
                     name);
  if (dst->data) {
    if (!het_same_shape(dst, src) || dst->nbytes != src->nbytes)
      return het_error(HET_ERR_SHAPE,
                       "output '%s': the run made %s with %d dims, the "
                       "tensor given holds %s with %d dims (or other dims)",
                       name, het_dtype_str(src->dtype), src->rank,
                       het_dtype_str(dst->dtype), dst->rank);
    if (src->nbytes && dst->data != src->data)
      memcpy(dst->data, src->data, src->nbytes);
    return HET_OK;
  }
  if (take && src->owned && src->data) {
    *dst = *src;
    src->owned = false;
    src->data = NULL;
    src->nbytes = 0;
    return HET_OK;
  }
  HET_TRY(het_tensor_alloc(dst, src->dtype, src->dims, src->rank));
  if (src->nbytes)
    memcpy(dst->data, src->data, src->nbytes);
  return HET_OK;
}

/* Binds the top-level outputs into the frame before the steps. */
static het_status het_exec_bind_outputs(het_exec_state *r, const int *out_index,
                                        size_t n_out, het_exec_outputs mode,
                                        het_tensor **given,
                                        het_tensor **results) {
  const het_plan *plan = r->plan;
  const het_graph *g = r->prog->graph;
  het_frame *f = r->frame;
  for (int v = 0; v < plan->n_values; v++) {
    const het_pvalue *pv = &plan->values[v];
    if (pv->where != HET_PV_OUTPUT)
      continue;
    het_tensor *t = &f->tensors[v];
    if (pv->dynamic) {
      f->ptrs[v] = t;
      continue;
    }
    size_t i = 0;
    while (i < n_out && g->outputs[out_index[i]] != v)
      i++;
    if (i < n_out && mode == HET_EXEC_ALLOCATE) {
      het_status st = het_tensor_create_empty(pv->dtype, pv->dims, pv->rank,
                                              &results[i]);
      if (st != HET_OK)
        return het_error_wrap(st, "output '%s'", g->values[v].name);
      f->ptrs[v] = results[i];
    } else if (i < n_out) {
      het_tensor want = {.dtype = pv->dtype, .rank = pv->rank,
                         .nbytes = pv->nbytes};
      memcpy(want.dims, pv->dims, sizeof want.dims);
      if (!het_same_shape(given[i], &want) || given[i]->nbytes != pv->nbytes ||
          !het_device_is_host(given[i]->device) ||
          (pv->nbytes && !given[i]->data))
        return het_error(HET_ERR_SHAPE,
                         "output '%s': the model makes %s with %d dims here; "
                         "the tensor given differs",
                         g->values[v].name, het_dtype_str(pv->dtype),
                         pv->rank);
      f->ptrs[v] = given[i];
    } else {
      het_status st = HET_OK;
      if (!t->data) /* not asked for: the frame keeps a buffer */
        st = het_tensor_alloc(t, pv->dtype, pv->dims, pv->rank);
      if (st != HET_OK)
        return het_error_wrap(st, "output '%s'", g->values[v].name);
      f->ptrs[v] = t;
    }
  }
  return HET_OK;
}

/* After the steps: dynamic outputs, outputs that are parameters or
 * initializers, repeated requests. */
static het_status het_exec_collect(het_exec_state *r, const int *out_index,
                                   size_t n_out, het_exec_outputs mode,
                                   het_tensor **given, het_tensor **results) {
  const het_graph *g = r->prog->graph;
  het_frame *f = r->frame;
  for (size_t i = 0; i < n_out; i++) {
    int v = g->outputs[out_index[i]];
    het_tensor *src = f->ptrs[v];
    het_tensor *want = mode == HET_EXEC_ALLOCATE ? results[i] : given[i];
    if (src && src == want)
      continue; /* written in place */
    if (!src)
      return het_error(HET_ERR_INTERNAL, "output '%s' was not computed",
                       g->values[v].name);
    /* the frame's own shell of a dynamic output gives up its storage */
    bool take = src == &f->tensors[v] && r->plan->values[v].dynamic;
    if (mode == HET_EXEC_INTO) {
      HET_TRY(het_exec_fill(given[i], src, false, g->values[v].name));
      continue;
    }
    het_tensor *t = calloc(1, sizeof *t);
    if (!t)
      return het_error(HET_ERR_OUT_OF_MEMORY, "run: out of memory");
    het_status st = het_exec_fill(t, src, take, g->values[v].name);
    if (st != HET_OK) {
      free(t);
      return st;
    }
    results[i] = t;
    if (take)
      f->ptrs[v] = t; /* a repeated request copies from it */
  }
  return HET_OK;
}

/* ---- runs ------------------------------------------------------------------ */

/* The plan and a frame for params; *key_buf is freed by the caller. */
static het_status het_exec_begin(het_exec_state *r, het_program *p,
                                 het_tensor *const *params) {
  int64_t small[8 * HET_PLAN_KEY_PER_PARAM];
  size_t n_key = (size_t)p->n_params * HET_PLAN_KEY_PER_PARAM;
  int64_t *key = n_key <= 8 * HET_PLAN_KEY_PER_PARAM
                     ? small
                     : malloc(n_key * sizeof *key);
  if (!key)
    return het_error(HET_ERR_OUT_OF_MEMORY, "run: out of memory");
  het_plan_key(p, params, key);
  het_status st = het_plan_get(p, key, &r->plan);
  if (key != small)
    free(key);
  HET_TRY(st);
  st = het_frame_acquire(r->plan, &r->frame);
  if (st != HET_OK) {
    het_plan_put(r->plan);
    return st;
  }
  r->frame->run = r;
  for (int i = 0; i < p->n_params; i++)
    r->frame->ptrs[p->params[i]] = params[i];
  return HET_OK;
}

static void het_exec_end(het_exec_state *r) {
  het_frame_release(r->frame);
  het_plan_put(r->plan);
}

het_status het_exec_run(het_program *p, het_tensor *const *params,
                        const int *out_index, size_t n_out,
                        het_exec_outputs mode, het_tensor **outputs,
                        const het_exec_recorder *rec) {
  het_tensor *small[16] = {0};
  het_tensor **results = n_out <= 16 ? small : calloc(n_out, sizeof *results);
  if (!results)
    return het_error(HET_ERR_OUT_OF_MEMORY, "run: out of memory");
  het_exec_state r = {.prog = p, .rec = rec && rec->record ? rec : NULL};
  het_status st = het_exec_begin(&r, p, params);
  if (st != HET_OK)
    goto fail;
  st = het_stream_set_acquire(p->streams, &r.set);
  if (st == HET_OK) {
    st = het_exec_bind_outputs(&r, out_index, n_out, mode, outputs, results);
    if (st == HET_OK)
      st = het_exec_steps(&r, false);
    if (st == HET_OK)
      st = het_exec_collect(&r, out_index, n_out, mode, outputs, results);
    if (st == HET_OK && r.rec)
      het_exec_report_steps(&r);
    het_stream_set_release(r.set);
  }
  het_exec_end(&r);
fail:
  if (st == HET_OK && mode == HET_EXEC_ALLOCATE)
    memcpy(outputs, results, n_out * sizeof *outputs);
  if (st != HET_OK && mode == HET_EXEC_ALLOCATE)
    for (size_t i = 0; i < n_out; i++)
      het_tensor_destroy(results[i]);
  if (results != small)
    free(results);
  return st;
}

het_status het_exec_body(het_program *body, het_stream_set *set,
                         het_tensor *const *params, het_tensor **outputs,
                         const het_exec_recorder *rec) {
  het_exec_state r = {.prog = body, .set = set, .rec = rec};
  HET_TRY(het_exec_begin(&r, body, params));
  const het_plan *plan = r.plan;
  const het_graph *g = body->graph;
  het_frame *f = r.frame;
  het_status st = HET_OK;
  /* Static outputs are written where the enclosing frame wants them. */
  for (int o = 0; st == HET_OK && o < g->n_outputs; o++) {
    int v = g->outputs[o];
    const het_pvalue *pv = &plan->values[v];
    if (pv->where != HET_PV_OUTPUT || f->ptrs[v])
      continue; /* a repeat, or not made by a step */
    if (pv->dynamic) {
      f->ptrs[v] = &f->tensors[v];
      continue;
    }
    het_tensor *dst = outputs[o];
    if (!dst->data) {
      st = het_tensor_alloc(dst, pv->dtype, pv->dims, pv->rank);
      if (st != HET_OK)
        het_error_wrap(st, "body output '%s'", g->values[v].name);
    } else if (dst->dtype != pv->dtype || dst->rank != pv->rank ||
             memcmp(dst->dims, pv->dims, (size_t)pv->rank * sizeof *pv->dims))
      st = het_error(HET_ERR_SHAPE,
                     "body output '%s' does not fit the planned output",
                     g->values[v].name);
    f->ptrs[v] = dst;
  }
  if (st == HET_OK)
    st = het_exec_steps(&r, true);
  for (int o = 0; st == HET_OK && o < g->n_outputs; o++) {
    int v = g->outputs[o];
    het_tensor *src = f->ptrs[v];
    if (src == outputs[o])
      continue;
    bool take = src == &f->tensors[v];
    st = src ? het_exec_fill(outputs[o], src, take, g->values[v].name)
             : het_error(HET_ERR_INTERNAL, "body output '%s' not computed",
                         g->values[v].name);
    if (take)
      f->ptrs[v] = outputs[o]; /* a repeat copies from it */
  }
  if (st == HET_OK && r.rec)
    het_exec_report_steps(&r);
  het_exec_end(&r);
  return st;
}
