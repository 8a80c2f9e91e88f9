/* plan_order.c — pass 4 of het_plan_build: positions and the
 * happens-before order of a plan.  A run step has one position per node
 * (its stream runs them in order), a control-flow step two (the host
 * starts it once its waits are done and ends it with every stream drained),
 * every other step one.  Position q happens before p when a chain of these
 * edges leads from q to p: the previous position of the same step; the
 * last position of the previous step on the same stream; the step whose
 * event p's step waits for; the last step the host finished before
 * enqueueing p's (control flow, inline streams); for a control flow's end,
 * every stream's last step before it.  reach[p] holds the closure as a
 * bitset (edges only go forward, so one pass in order computes it).
 * Accesses: every position reading or writing each value (scratch of run
 * step k is value n_values + k); the memory planner asks through
 * het_plan_memplan_order.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan_internal.h"

static void het_bit_set(uint64_t *row, int q) {
  row[q >> 6] |= (uint64_t)1 << (q & 63);
}

static bool het_bit_get(const uint64_t *row, int q) {
  return (row[q >> 6] >> (q & 63)) & 1u;
}

bool het_plan_pos_before(const het_plan_builder *b, int a, int at) {
  return a != at && het_bit_get(b->reach + (size_t)at * (size_t)b->words, a);
}

/* reach[p] |= reach[q] + {q}. */
static void het_edge(het_plan_builder *b, int q, int p) {
  if (q < 0 || q >= p)
    return;
  uint64_t *rp = b->reach + (size_t)p * (size_t)b->words;
  const uint64_t *rq = b->reach + (size_t)q * (size_t)b->words;
  for (int w = 0; w < b->words; w++)
    rp[w] |= rq[w];
  het_bit_set(rp, q);
}

static int het_positions_of(const het_plan_builder *b, const het_pstep *s) {
  if (s->kind == HET_PSTEP_RUN)
    return b->prog->partition->subgraphs[s->sg].n_nodes;
  return s->kind == HET_PSTEP_CONTROL ? 2 : 1;
}

/* Positions and their edges. */
static het_status het_order_edges(het_plan_builder *b) {
  const het_plan *plan = b->plan;
  int n_slots = b->prog->layout->n_slots;
  int *last_on = calloc((size_t)n_slots + 1, sizeof *last_on);
  int *event_step = calloc((size_t)plan->n_events + 1, sizeof *event_step);
  if (!last_on || !event_step) {
    free(last_on);
    free(event_step);
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  }
  for (int s = 0; s < n_slots; s++)
    last_on[s] = -1;
  for (int t = 0; t < plan->n_steps; t++)
    if (plan->steps[t].record >= 0)
      event_step[plan->steps[t].record] = t;
  int host_last = -1; /* position the host finished last */
  for (int t = 0; t < plan->n_steps; t++) {
    het_pstep *T = &plan->steps[t];
    int p = T->first_pos;
    if (T->slot >= 0 && last_on[T->slot] >= 0)
      het_edge(b, plan->steps[last_on[T->slot]].last_pos, p);
    for (int k = 0; k < T->n_waits; k++)
      het_edge(b, plan->steps[event_step[T->waits[k]]].last_pos, p);
    het_edge(b, host_last, p);
    for (int q = p + 1; q <= T->last_pos; q++)
      het_edge(b, q - 1, q);
    if (T->kind == HET_PSTEP_CONTROL) /* ends with every stream drained */
      for (int s = 0; s < n_slots; s++)
        if (last_on[s] >= 0)
          het_edge(b, plan->steps[last_on[s]].last_pos, T->last_pos);
    if (T->slot >= 0)
      last_on[T->slot] = t;
    if (het_plan_host_ordered(plan, T))
      host_last = T->last_pos;
  }
  free(last_on);
  free(event_step);
  return HET_OK;
}

/* Calls add(b, v, pos) for every access of every step. */
static void het_order_accesses(het_plan_builder *b,
                               void (*add)(het_plan_builder *, int, int)) {
  const het_plan *plan = b->plan;
  for (int t = 0; t < plan->n_steps; t++) {
    const het_pstep *T = &plan->steps[t];
    const het_subgraph *sg = &b->prog->partition->subgraphs[T->sg];
    bool control = T->kind == HET_PSTEP_CONTROL;
    for (int j = 0; j < sg->n_nodes; j++) {
      const het_node *m = &b->g->nodes[sg->nodes[j]];
      int at = control ? T->last_pos : T->first_pos + j;
      for (int i = 0; i < m->n_inputs; i++)
        if (m->inputs[i] >= 0)
          add(b, m->inputs[i], at);
      for (int o = 0; o < m->n_outputs; o++)
        if (m->outputs[o] >= 0) {
          add(b, m->outputs[o], control ? T->first_pos : at);
          if (control)
            add(b, m->outputs[o], T->last_pos);
        }
    }
    if (control)
      for (int k = 0; k < b->prog->n_bodies[T->node]; k++) {
        const het_program *body = b->prog->bodies[T->node][k];
        for (int c = 0; c < body->n_outer; c++)
          add(b, body->outer_src[c], T->last_pos);
      }
    if (T->kind == HET_PSTEP_RUN)
      for (int q = T->first_pos; q <= T->last_pos; q++)
        add(b, plan->n_values + T->io, q);
  }
}

static void het_count_access(het_plan_builder *b, int v, int pos) {
  (void)pos;
  b->acc_off[v + 1]++;
}

static void het_put_access(het_plan_builder *b, int v, int pos) {
  b->acc[b->acc_off[v] + b->acc_off[b->n_acc_values + 1 + v]++] = pos;
}

void het_plan_positions(het_plan_builder *b) {
  het_plan *plan = b->plan;
  int pos = 0;
  for (int t = 0; t < plan->n_steps; t++) {
    plan->steps[t].first_pos = pos;
    pos += het_positions_of(b, &plan->steps[t]);
    plan->steps[t].last_pos = pos - 1;
  }
  plan->n_positions = pos;
}

het_status het_plan_order(het_plan_builder *b) {
  const het_plan *plan = b->plan;
  int pos = plan->n_positions;
  b->n_pos = pos;
  b->words = (pos + 63) / 64;
  b->reach = calloc((size_t)pos * (size_t)b->words + 1, sizeof *b->reach);
  b->pos_step = malloc(((size_t)pos + 1) * sizeof *b->pos_step);
  b->n_acc_values = plan->n_values + plan->n_io;
  /* acc_off: [0, n] offsets, then [n + 1, 2n + 1] fill counters. */
  b->acc_off = calloc(2 * (size_t)b->n_acc_values + 2, sizeof *b->acc_off);
  if (!b->reach || !b->pos_step || !b->acc_off)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory (%d "
                                            "positions)", pos);
  for (int t = 0; t < plan->n_steps; t++)
    for (int q = plan->steps[t].first_pos; q <= plan->steps[t].last_pos; q++)
      b->pos_step[q] = t;
  HET_TRY(het_order_edges(b));
  het_order_accesses(b, het_count_access);
  for (int v = 0; v < b->n_acc_values; v++)
    b->acc_off[v + 1] += b->acc_off[v];
  b->acc = malloc(((size_t)b->acc_off[b->n_acc_values] + 1) * sizeof *b->acc);
  if (!b->acc)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_order_accesses(b, het_put_access);
  return HET_OK;
}

void het_plan_order_deinit(het_plan_builder *b) {
  free(b->reach);
  free(b->pos_step);
  free(b->acc_off);
  free(b->acc);
  b->reach = NULL;
  b->pos_step = b->acc_off = b->acc = NULL;
}

/* ---- the memory planner's oracle ---------------------------------------- */

static bool het_order_before(void *ctx, int a, int at) {
  het_plan_builder *b = ctx;
  for (int k = b->acc_off[a]; k < b->acc_off[a + 1]; k++)
    if (!het_plan_pos_before(b, b->acc[k], at))
      return false;
  return true;
}

static bool het_order_dies_at(void *ctx, int a, int at) {
  het_plan_builder *b = ctx;
  bool touches = false;
  for (int k = b->acc_off[a]; k < b->acc_off[a + 1]; k++) {
    int q = b->acc[k];
    if (q == at)
      touches = true;
    else if (!het_plan_pos_before(b, q, at))
      return false;
  }
  return touches;
}

void het_plan_memplan_order(het_plan_builder *b, het_memplan_order *out) {
  *out = (het_memplan_order){het_order_before, het_order_dies_at, b};
}
