/* plan_validate.c — het_plan_validate: the invariants every plan keeps,
 * checked against the order its streams and events really give (the
 * happens-before closure is recomputed from the steps' slots, waits and
 * records, not taken from the builder):
 *   1. every input of a step lives where the step reads it (a run step:
 *      its provider's memory; a copy: source and destination where it
 *      moves them; conversions and control flow: host memory);
 *   2. every read of a value produced by another step is ordered after
 *      that step (same stream, an event, or the host);
 *   3. no two values of one arena that are live at once share a byte,
 *      except an in-place output and the input it took over where that
 *      input died.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan_internal.h"

static const char *het_space_name(const het_plan *plan, int sp) {
  return sp == 0 ? "host" : plan->prog->eps[sp - 1].device->name;
}

/* Where step t must find its inputs: a space, or -1 for a copy (checked
 * on its own). */
static int het_step_space(const het_plan *plan, const het_pstep *T) {
  if (T->kind == HET_PSTEP_RUN)
    return het_plan_space_of_ep(plan->prog, T->ep);
  return T->kind == HET_PSTEP_COPY ? -1 : 0;
}

typedef struct het_check {
  het_plan_builder b;
  const het_plan *plan;
} het_check;

static het_status het_check_read(het_plan_builder *b, int t, int v) {
  const het_plan *plan = b->plan;
  const het_pstep *T = &plan->steps[t];
  const het_pvalue *pv = &plan->values[v];
  const het_graph *g = plan->prog->graph;
  int want = het_step_space(plan, T);
  if (pv->where == HET_PV_NONE)
    return het_error(HET_ERR_INTERNAL,
                     "plan check: step '%s' reads '%s', which has no place",
                     g->nodes[T->node].name, g->values[v].name);
  if (want >= 0 && pv->space != want)
    return het_error(HET_ERR_INTERNAL,
                     "plan check: step '%s' on %s reads '%s' in %s memory",
                     g->nodes[T->node].name, het_space_name(plan, want),
                     g->values[v].name, het_space_name(plan, pv->space));
  int s = pv->producer_step;
  if (s < 0 || s == t)
    return HET_OK;
  if (!het_plan_pos_before(b, plan->steps[s].last_pos, T->first_pos))
    return het_error(HET_ERR_INTERNAL,
                     "plan check: step '%s' reads '%s' from step '%s' on "
                     "another stream with no event between them",
                     g->nodes[T->node].name, g->values[v].name,
                     g->nodes[plan->steps[s].node].name);
  return HET_OK;
}

/* Check 1 for copies: source and destination spaces. */
static het_status het_check_copy(const het_plan *plan, const het_pstep *T) {
  const het_program *p = plan->prog;
  const het_node *n = &p->graph->nodes[T->node];
  int from = plan->values[n->inputs[0]].space;
  int to = plan->values[n->outputs[0]].space;
  const het_ep *ep = &p->eps[T->ep];
  const het_device *src = from ? p->eps[from - 1].device : NULL;
  const het_device *dst = to ? p->eps[to - 1].device : NULL;
  if (from == to || !het_ep_can_copy(ep, src, dst))
    return het_error(HET_ERR_INTERNAL,
                     "plan check: copy '%s' by %s moves %s -> %s", n->name,
                     ep->vt->name, het_space_name(plan, from),
                     het_space_name(plan, to));
  return HET_OK;
}

/* Check 3: arena bytes of values live at once. */
static het_status het_check_arena(het_plan_builder *b, const het_plan *plan) {
  het_memplan_order order;
  het_plan_memplan_order(b, &order);
  int n = b->n_acc_values;
  for (int i = 0; i < n; i++) {
    size_t oi = plan->mem.offset[i];
    if (oi == HET_MEMPLAN_NONE)
      continue;
    for (int j = i + 1; j < n; j++) {
      size_t oj = plan->mem.offset[j];
      if (oj == HET_MEMPLAN_NONE || plan->mem.space[i] != plan->mem.space[j])
        continue;
      size_t bi = plan->mem.bytes[i], bj = plan->mem.bytes[j];
      if (oi >= oj + bj || oj >= oi + bi)
        continue;
      int fi = b->acc[b->acc_off[i]], fj = b->acc[b->acc_off[j]];
      for (int k = b->acc_off[i]; k < b->acc_off[i + 1]; k++)
        fi = b->acc[k] < fi ? b->acc[k] : fi;
      for (int k = b->acc_off[j]; k < b->acc_off[j + 1]; k++)
        fj = b->acc[k] < fj ? b->acc[k] : fj;
      bool ordered = order.before(b, i, fj) || order.before(b, j, fi);
      bool handoff = (plan->mem.shares[j] == i && order.dies_at(b, i, fj)) ||
                     (plan->mem.shares[i] == j && order.dies_at(b, j, fi));
      if (!ordered && !handoff)
        return het_error(HET_ERR_INTERNAL,
                         "plan check: values %d and %d share bytes of the %s "
                         "arena ([%zu, %zu) and [%zu, %zu)) while both are "
                         "live",
                         i, j, het_space_name(plan, plan->mem.space[i]), oi,
                         oi + bi, oj, oj + bj);
    }
  }
  return HET_OK;
}

het_status het_plan_validate(const het_plan *plan) {
  het_plan_builder b;
  memset(&b, 0, sizeof b);
  b.prog = plan->prog;
  b.g = plan->prog->graph;
  b.plan = (het_plan *)plan; /* read only: het_plan_order reads the steps */
  het_status st = het_plan_order(&b);
  for (int t = 0; st == HET_OK && t < plan->n_steps; t++) {
    const het_pstep *T = &plan->steps[t];
    if (T->kind == HET_PSTEP_COPY)
      st = het_check_copy(plan, T);
    if (st == HET_OK)
      st = het_plan_step_reads(&b, t, het_check_read, &b);
  }
  if (st == HET_OK)
    st = het_check_arena(&b, plan);
  het_plan_order_deinit(&b);
  return st;
}
