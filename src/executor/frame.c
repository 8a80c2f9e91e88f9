/* frame.c — frames: one run's instance of a plan.  A new frame allocates
 * the plan's arenas (host: pinned through a device provider where the plan
 * copies, device: its allocator), its own device allocations (ABI 1-2),
 * its events and kernel-I/O tables, and points every value's tensor at its
 * place; runs then only bind parameters and outputs.  Idle frames stay
 * with their plan (at most HET_FRAME_IDLE), so a steady run of one
 * signature allocates nothing here.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan_internal.h"

#define HET_FRAME_IDLE 8

/* Where zero-byte host tensors point (never written). */
static _Alignas(64) unsigned char het_empty_block[64];

static void het_block_free(het_frame_block *b) {
  if (b->data && b->device)
    het_device_free(b->device, b->data);
  else
    free(b->data);
  *b = (het_frame_block){0};
}

static void het_frame_destroy(het_frame *f) {
  if (!f)
    return;
  const het_plan *plan = f->plan;
  const het_program *p = plan->prog;
  for (int v = 0; f->tensors && v < plan->n_values; v++)
    het_tensor_reset(&f->tensors[v]);
  for (int v = 0; f->spare && v < plan->n_values; v++)
    het_block_free(&f->spare[v]);
  free(f->spare);
  free(f->lent);
  for (int sp = 0; f->arena && sp < plan->n_spaces; sp++) {
    if (!f->arena[sp])
      continue;
    if (sp == 0)
      het_device_host_free(f->host_device, f->arena[0], f->arena_pinned[0]);
    else
      het_device_free(p->eps[sp - 1].device, f->arena[sp]);
  }
  for (int e = 0; f->events && e < plan->n_events; e++)
    het_event_deinit(&f->events[e]);
  free(f->tensors);
  free(f->ptrs);
  free(f->arena);
  free(f->arena_pinned);
  free(f->events);
  free(f->ios);
  free(f->times);
  free(f);
}

void het_plan_frames_destroy(het_plan *plan) {
  while (plan->idle) {
    het_frame *f = plan->idle;
    plan->idle = f->next;
    het_frame_destroy(f);
  }
  plan->n_idle = 0;
}

/* The device whose pinned memory holds the host arena: the first device
 * provider with host_alloc, when the plan copies at all. */
static const het_device *het_pinning_device(const het_plan *plan) {
  bool copies = false;
  for (int t = 0; t < plan->n_steps && !copies; t++)
    copies = plan->steps[t].kind == HET_PSTEP_COPY;
  for (int e = 0; copies && e < plan->prog->n_eps; e++) {
    const het_device *d = plan->prog->eps[e].device;
    if (!het_device_is_host(d) && HET_PROVIDER_HAS(d->vt, 3, host_alloc))
      return d;
  }
  return NULL;
}

static het_status het_frame_arenas(het_frame *f) {
  const het_plan *plan = f->plan;
  const het_program *p = plan->prog;
  f->host_device = het_pinning_device(plan);
  for (int sp = 0; sp < plan->n_spaces; sp++) {
    size_t bytes = plan->arena_bytes[sp];
    if (!bytes)
      continue;
    het_status st =
        sp == 0 ? het_device_host_alloc(f->host_device, bytes, &f->arena[0],
                                        &f->arena_pinned[0])
                : het_device_alloc(p->eps[sp - 1].device, bytes, &f->arena[sp]);
    if (st != HET_OK)
      return het_error_wrap(st, "memory plan: the %zu-byte arena of %s", bytes,
                            sp ? p->eps[sp - 1].device->name : "the host");
  }
  return HET_OK;
}

static const het_device *het_space_device(const het_plan *plan, int sp) {
  return sp ? plan->prog->eps[sp - 1].device : NULL;
}

/* Points value v's tensor at its place. */
static het_status het_frame_value(het_frame *f, int v) {
  const het_plan *plan = f->plan;
  const het_program *p = plan->prog;
  const het_pvalue *pv = &plan->values[v];
  het_tensor *t = &f->tensors[v];
  t->dtype = pv->dtype;
  t->rank = pv->rank;
  memcpy(t->dims, pv->dims, sizeof t->dims);
  switch (pv->where) {
  case HET_PV_ARENA:
    t->nbytes = pv->nbytes;
    t->device = het_device_is_host(het_space_device(plan, pv->space))
                    ? NULL
                    : het_space_device(plan, pv->space);
    t->data = f->arena[pv->space]
                  ? (char *)f->arena[pv->space] + pv->offset
                  : (void *)het_empty_block;
    f->ptrs[v] = t;
    return HET_OK;
  case HET_PV_OWN: {
    f->ptrs[v] = t;
    het_status st = het_tensor_alloc_on(t, het_space_device(plan, pv->space),
                                        pv->dtype, pv->dims, pv->rank);
    return st == HET_OK ? HET_OK
                        : het_error_wrap(st, "value '%s'",
                                         p->graph->values[v].name);
  }
  case HET_PV_WEIGHT:
    f->ptrs[v] = p->graph->values[v].initializer;
    return HET_OK;
  case HET_PV_PLACED:
    f->ptrs[v] = p->placed[v];
    return HET_OK;
  case HET_PV_DYNAMIC:
    memset(t, 0, sizeof *t);
    f->ptrs[v] = t;
    return HET_OK;
  default: /* parameters and outputs are bound per run */
    memset(t, 0, sizeof *t);
    f->ptrs[v] = NULL;
    return HET_OK;
  }
}

static het_status het_frame_create(het_plan *plan, het_frame **out) {
  het_frame *f = calloc(1, sizeof *f);
  if (!f)
    return het_error(HET_ERR_OUT_OF_MEMORY, "frame: out of memory");
  f->plan = plan;
  size_t nv = (size_t)plan->n_values + 1, ns = (size_t)plan->n_spaces + 1;
  f->tensors = calloc(nv, sizeof *f->tensors);
  f->spare = calloc(nv, sizeof *f->spare);
  f->lent = calloc(nv, sizeof *f->lent);
  f->ptrs = calloc(nv, sizeof *f->ptrs);
  f->arena = calloc(ns, sizeof *f->arena);
  f->arena_pinned = calloc(ns, sizeof *f->arena_pinned);
  f->events = calloc((size_t)plan->n_events + 1, sizeof *f->events);
  f->ios = calloc((size_t)plan->n_io + 1, sizeof *f->ios);
  f->times = calloc(2 * (size_t)plan->n_steps + 1, sizeof *f->times);
  het_status st = f->tensors && f->spare && f->lent && f->ptrs &&
                          f->arena && f->arena_pinned && f->events && f->ios &&
                          f->times
                      ? HET_OK
                      : het_error(HET_ERR_OUT_OF_MEMORY, "frame: out of memory");
  if (st == HET_OK)
    st = het_frame_arenas(f);
  for (int v = 0; st == HET_OK && v < plan->n_values; v++)
    st = het_frame_value(f, v);
  const het_program *p = plan->prog;
  for (int e = 0; st == HET_OK && e < plan->n_events; e++)
    st = het_event_init(&f->events[e],
                        plan->event_ep[e] >= 0 ? &p->eps[plan->event_ep[e]]
                                               : NULL);
  for (int t = 0; st == HET_OK && t < plan->n_steps; t++) {
    const het_pstep *T = &plan->steps[t];
    if (T->kind != HET_PSTEP_RUN)
      continue;
    int sp = het_plan_space_of_ep(p, T->ep);
    f->ios[T->io] = (het_kernel_io){
        .values = f->ptrs,
        .n_values = plan->n_values,
        .dynamic = plan->dynamic_node,
        .prepare_node = het_exec_prepare_node,
        .scratch = T->scratch_bytes ? (char *)f->arena[sp] + T->scratch_offset
                                    : NULL,
        .scratch_bytes = T->scratch_bytes,
        .core = f,
    };
  }
  if (st != HET_OK) {
    het_frame_destroy(f);
    return st;
  }
  *out = f;
  return HET_OK;
}

het_status het_frame_acquire(het_plan *plan, het_frame **out) {
  pthread_mutex_lock(&plan->lock);
  het_frame *f = plan->idle;
  if (f) {
    plan->idle = f->next;
    plan->n_idle--;
  }
  pthread_mutex_unlock(&plan->lock);
  if (f) {
    *out = f;
    return HET_OK;
  }
  return het_frame_create(plan, out);
}

bool het_frame_reuse(het_frame *f, int v, const het_device *device,
                     het_dtype dtype, const int64_t *dims, int rank) {
  het_frame_block *b = &f->spare[v];
  const het_device *d = het_device_is_host(device) ? NULL : device;
  size_t nbytes;
  if (!b->data ||
      het_tensor_check_shape(dtype, dims, rank, "tensor", &nbytes) != HET_OK) {
    het_error_clear();
    return false;
  }
  if (b->device != d || b->bytes < nbytes) {
    het_block_free(b);
    return false;
  }
  het_tensor *t = &f->tensors[v];
  het_tensor_reset(t);
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  t->data = b->data;
  t->nbytes = nbytes;
  t->owned = true;
  t->device = d;
  f->lent[v] = *b;
  *b = (het_frame_block){0};
  return true;
}

void het_frame_release(het_frame *f) {
  het_plan *plan = f->plan;
  for (int v = 0; v < plan->n_values; v++) {
    const het_pvalue *pv = &plan->values[v];
    if (pv->where == HET_PV_DYNAMIC ||
        (pv->where == HET_PV_OUTPUT && pv->dynamic)) {
      het_tensor *t = &f->tensors[v];
      if (t->owned && t->data) { /* still the frame's: kept for the next run */
        het_block_free(&f->spare[v]);
        f->spare[v] = (het_frame_block){
            .data = t->data,
            .bytes = t->data == f->lent[v].data ? f->lent[v].bytes : t->nbytes,
            .device = t->device};
        t->owned = false;
      }
      het_tensor_reset(t);
      memset(t, 0, sizeof *t);
      f->lent[v] = (het_frame_block){0};
    }
    if (pv->where == HET_PV_PARAM || pv->where == HET_PV_OUTPUT)
      f->ptrs[v] = NULL;
  }
  f->run = NULL;
  pthread_mutex_lock(&plan->lock);
  bool keep = plan->n_idle < HET_FRAME_IDLE;
  if (keep) {
    f->next = plan->idle;
    plan->idle = f;
    plan->n_idle++;
  }
  pthread_mutex_unlock(&plan->lock);
  if (!keep)
    het_frame_destroy(f);
}
