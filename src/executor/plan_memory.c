/* plan_memory.c — pass 5 of het_plan_build: where every value lives, the
 * memory plan of the arena values (memplan.c over the plan's positions
 * and happens-before order, with run steps' scratch as values of their
 * own), and the figures of het_plan_summary.  Also the capacity check.
 * Places, first rule that applies: parameter; placed constant;
 * initializer; graph output (bound per run); dynamic (shaped at run time);
 * its own allocation (device memory of an ABI 1-2 provider, or an empty
 * device tensor); the arena of its space.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan_internal.h"

static size_t het_info_nbytes(const het_value_info *x) {
  int64_t dims[HET_MAX_RANK];
  size_t n = 0;
  for (int i = 0; i < x->shape.rank; i++)
    dims[i] = x->shape.dims[i].value;
  if (x->dtype == HET_DTYPE_STRING ||
      het_tensor_check_shape(x->dtype, dims, x->shape.rank, "value", &n) !=
          HET_OK) {
    het_error_clear();
    return 0;
  }
  return n;
}

static void het_pvalue_shape(het_pvalue *pv, const het_value_info *x) {
  pv->dtype = x->dtype;
  pv->rank = x->shape.rank < 0 ? 0 : x->shape.rank;
  for (int i = 0; i < pv->rank; i++)
    pv->dims[i] = x->shape.dims[i].value;
  pv->nbytes = het_info_nbytes(x);
}

/* Step 1: places (everything but the arena offsets). */
static void het_places(het_plan_builder *b) {
  het_plan *plan = b->plan;
  const het_program *p = b->prog;
  const het_graph *g = b->g;
  for (int v = 0; v < g->n_values; v++) {
    het_pvalue *pv = &plan->values[v];
    const het_value *val = &g->values[v];
    pv->producer_step = b->producer_step[v];
    pv->space = b->space[v];
    pv->index = -1;
    bool known = b->info[v].present && !b->dyn[v] &&
                 het_shape_is_concrete(&b->info[v].shape) &&
                 b->info[v].dtype != HET_DTYPE_UNDEFINED;
    if (known)
      het_pvalue_shape(pv, &b->info[v]);
    pv->dynamic = !known;
    for (int i = 0; i < p->n_params && pv->index < 0; i++)
      if (p->params[i] == v) {
        pv->where = HET_PV_PARAM;
        pv->index = i;
        pv->dynamic = false;
      }
    if (pv->index >= 0)
      continue;
    if (p->placed && p->placed[v]) {
      pv->where = HET_PV_PLACED;
      pv->dynamic = false;
    } else if (val->initializer) {
      pv->where = HET_PV_WEIGHT;
      pv->dynamic = false;
    } else if ((val->flags & HET_VALUE_GRAPH_OUTPUT) && pv->producer_step >= 0) {
      pv->where = HET_PV_OUTPUT;
      for (int o = 0; o < g->n_outputs && pv->index < 0; o++)
        if (g->outputs[o] == v)
          pv->index = o;
    } else if (pv->producer_step < 0) {
      pv->where = HET_PV_NONE;
    } else if (pv->dynamic) {
      pv->where = HET_PV_DYNAMIC;
    } else if (pv->space > 0 &&
               (!het_device_has_offsets(p->eps[pv->space - 1].device) ||
                pv->nbytes == 0)) {
      pv->where = HET_PV_OWN;
    } else {
      pv->where = HET_PV_ARENA;
    }
  }
}

/* In-place candidates of arena value v (memplan.h). */
static void het_inplace(const het_plan_builder *b, int v,
                        het_memplan_value *mv) {
  const het_graph *g = b->g;
  const het_plan *plan = b->plan;
  int prod = g->values[v].producer;
  if (prod < 0 || plan->steps[plan->values[v].producer_step].kind !=
                      HET_PSTEP_RUN)
    return;
  const het_node *n = &g->nodes[prod];
  int o = 0, k = 0;
  while (o < n->n_outputs && n->outputs[o] != v)
    o++;
  for (int i = 0; i < n->n_inputs && k < HET_MEMPLAN_INPLACE; i++) {
    int x = n->inputs[i];
    if (x >= 0 && x != v && plan->values[x].where == HET_PV_ARENA &&
        plan->values[x].nbytes == plan->values[v].nbytes &&
        plan->values[x].dtype == plan->values[v].dtype &&
        het_memplan_inplace_ok(n, o, i))
      mv->inplace[k++] = x;
  }
}

/* Step 2: run steps' scratch bytes (compiled_scratch over the shapes). */
static het_status het_scratch_sizes(het_plan_builder *b) {
  het_plan *plan = b->plan;
  const het_program *p = b->prog;
  het_tensor *shells = NULL;
  het_tensor **ptrs = NULL;
  het_status st = HET_OK;
  for (int t = 0; st == HET_OK && t < plan->n_steps; t++) {
    het_pstep *T = &plan->steps[t];
    const het_ep *ep = T->ep >= 0 ? &p->eps[T->ep] : NULL;
    if (T->kind != HET_PSTEP_RUN || !ep ||
        !HET_PROVIDER_HAS(ep->vt, 3, compiled_scratch))
      continue;
    if (!shells) {
      shells = calloc((size_t)plan->n_values + 1, sizeof *shells);
      ptrs = calloc((size_t)plan->n_values + 1, sizeof *ptrs);
      if (!shells || !ptrs) {
        st = het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
        break;
      }
      for (int v = 0; v < plan->n_values; v++) {
        const het_pvalue *pv = &plan->values[v];
        shells[v].dtype = pv->dtype;
        shells[v].rank = pv->rank;
        memcpy(shells[v].dims, pv->dims, sizeof pv->dims);
        shells[v].nbytes = pv->nbytes;
        ptrs[v] = pv->dynamic ? NULL : &shells[v];
      }
    }
    het_kernel_io io = {.values = ptrs, .n_values = plan->n_values,
                        .dynamic = b->node_dynamic};
    size_t bytes = 0;
    st = ep->vt->compiled_scratch(ep->state, p->compiled[T->sg], &io, &bytes);
    T->scratch_bytes = bytes;
  }
  free(shells);
  free(ptrs);
  return st;
}

/* Step 3: the memplan input, one entry per value and per run step. */
static void het_memplan_input(het_plan_builder *b, het_memplan_value *mv) {
  het_plan *plan = b->plan;
  for (int v = 0; v < b->n_acc_values; v++) {
    het_memplan_value *m = &mv[v];
    memset(m, 0, sizeof *m);
    m->skip = true;
    for (int c = 0; c < HET_MEMPLAN_INPLACE; c++)
      m->inplace[c] = -1;
    int step = -1;
    if (v < plan->n_values && plan->values[v].where == HET_PV_ARENA) {
      m->bytes = plan->values[v].nbytes;
      m->space = plan->values[v].space;
      step = plan->values[v].producer_step;
    } else if (v >= plan->n_values) {
      for (int t = 0; t < plan->n_steps && step < 0; t++)
        if (plan->steps[t].io == v - plan->n_values)
          step = t;
      m->bytes = plan->steps[step].scratch_bytes;
      m->space = het_plan_space_of_ep(b->prog, plan->steps[step].ep);
    }
    if (step < 0 || m->bytes == 0)
      continue;
    m->skip = false;
    m->first = INT32_MAX;
    for (int k = b->acc_off[v]; k < b->acc_off[v + 1]; k++) {
      int q = b->acc[k];
      m->first = q < m->first ? q : m->first;
      m->last = q > m->last ? q : m->last;
    }
    if (v < plan->n_values) {
      /* first = the producer's position (a node's, inside a run step) */
      const het_pstep *S = &plan->steps[step];
      if (S->kind == HET_PSTEP_RUN) {
        const het_subgraph *sg = &b->prog->partition->subgraphs[S->sg];
        for (int j = 0; j < sg->n_nodes; j++)
          if (sg->nodes[j] == b->g->values[v].producer)
            m->first = S->first_pos + j;
      } else {
        m->first = S->first_pos;
      }
      het_inplace(b, v, m);
    }
  }
}

/* Step 5: bytes outside the arena per space. */
static void het_residents(het_plan_builder *b) {
  het_plan *plan = b->plan;
  const het_program *p = b->prog;
  for (int v = 0; v < plan->n_values; v++) {
    const het_pvalue *pv = &plan->values[v];
    int sp = pv->space;
    switch (pv->where) {
    case HET_PV_PLACED: {
      const het_tensor *t = p->placed[v];
      plan->resident[sp] += t->nbytes;
      plan->weights[sp] += t->nbytes;
      break;
    }
    case HET_PV_WEIGHT:
      plan->resident[0] += b->g->values[v].initializer->nbytes;
      plan->weights[0] += b->g->values[v].initializer->nbytes;
      break;
    case HET_PV_PARAM:
    case HET_PV_OUTPUT:
      plan->resident[0] += pv->dynamic ? 0 : pv->nbytes;
      break;
    case HET_PV_OWN:
      plan->resident[sp] += pv->nbytes;
      plan->loose[sp] += pv->nbytes;
      break;
    default:
      break;
    }
  }
}

het_status het_plan_memory(het_plan_builder *b) {
  het_plan *plan = b->plan;
  size_t ns = (size_t)plan->n_spaces;
  plan->resident = het_arena_calloc(&plan->arena, ns, sizeof(size_t));
  plan->weights = het_arena_calloc(&plan->arena, ns, sizeof(size_t));
  plan->loose = het_arena_calloc(&plan->arena, ns, sizeof(size_t));
  if (!plan->resident || !plan->weights || !plan->loose)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_places(b);
  HET_TRY(het_scratch_sizes(b));
  het_memplan_value *mv = calloc((size_t)b->n_acc_values + 1, sizeof *mv);
  if (!mv)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_memplan_input(b, mv);
  het_memplan_order order;
  het_plan_memplan_order(b, &order);
  het_status st = het_memplan_compute(mv, b->n_acc_values, plan->n_spaces,
                                      &order, &plan->mem);
  free(mv);
  HET_TRY(st);
  for (int v = 0; v < plan->n_values; v++)
    if (plan->values[v].where == HET_PV_ARENA)
      plan->values[v].offset = plan->mem.offset[v] == HET_MEMPLAN_NONE
                                   ? 0
                                   : plan->mem.offset[v];
  for (int t = 0; t < plan->n_steps; t++) {
    het_pstep *T = &plan->steps[t];
    if (T->kind == HET_PSTEP_RUN && T->scratch_bytes)
      T->scratch_offset = plan->mem.offset[plan->n_values + T->io];
  }
  for (int sp = 0; sp < plan->n_spaces; sp++)
    plan->arena_bytes[sp] = plan->mem.peak[sp];
  het_residents(b);
  return het_plan_check_capacity(plan);
}

het_status het_plan_check_capacity(const het_plan *plan) {
  const het_program *p = plan->prog;
  size_t host = plan->arena_bytes[0] + plan->resident[0];
  if (p->max_host_bytes && host > p->max_host_bytes)
    return het_error(HET_ERR_CAPACITY,
                     "memory plan%s%s: these input shapes need %zu bytes of "
                     "host memory (%zu planned for intermediates + %zu "
                     "resident), over the session's max_memory of %zu bytes",
                     *p->path ? " of " : "", p->path, host,
                     plan->arena_bytes[0], plan->resident[0],
                     p->max_host_bytes);
  for (int d = 0; d < p->n_eps; d++) {
    const het_device *dev = p->eps[d].device;
    size_t cap = dev->info.memory_capacity;
    size_t need = plan->arena_bytes[d + 1] + plan->resident[d + 1];
    if (het_device_is_host(dev) || !cap || need <= cap)
      continue;
    return het_error(HET_ERR_CAPACITY,
                     "memory plan: %s device needs %zu bytes (%zu planned "
                     "for intermediates + %zu resident) but its capacity is "
                     "%zu bytes",
                     p->eps[d].vt->name, need, plan->arena_bytes[d + 1],
                     plan->resident[d + 1], cap);
  }
  return HET_OK;
}

void het_plan_summary_get(const het_plan *plan, het_plan_summary *summary) {
  for (int sp = 0; sp < plan->n_spaces; sp++) {
    het_plan_summary *m = &summary[sp];
    memset(m, 0, sizeof *m);
    m->peak = plan->arena_bytes[sp];
    m->total = plan->mem.total[sp];
    m->resident = plan->resident[sp];
    m->intermediates = plan->mem.total[sp] + plan->loose[sp];
    m->weights = plan->weights[sp];
  }
  for (int v = 0; v < plan->n_values; v++)
    if (plan->values[v].where == HET_PV_ARENA &&
        plan->mem.offset[v] != HET_MEMPLAN_NONE) {
      het_plan_summary *m = &summary[plan->values[v].space];
      m->n_planned++;
      m->n_inplace += plan->mem.shares[v] >= 0;
    }
}
