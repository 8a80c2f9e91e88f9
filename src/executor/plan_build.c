/* plan_build.c — building a het_plan for one signature (plan.h).  Passes:
 *   1. concrete inference over the partition's steps (parameters from the
 *      key, initializers with their data): every value gets its dtype and
 *      dims, or is dynamic (unknown until run time), as is every node that
 *      makes or reads a dynamic value;
 *   2. steps: one per non-static partition step, with the ep and stream
 *      slot doing the work (a copy is made by the device end's provider);
 *   3. waits and events: a step reading a value produced on another
 *      stream waits for an event recorded after the producer (none when
 *      the producer ran inline or on the host: the host's order covers
 *      it); control flow and dynamic copies make the host wait instead;
 *   4. positions and the happens-before order (plan_order.c);
 *   5. places and the memory plan (plan_memory.c);
 *   6. validation (plan_validate.c).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "executor/plan_internal.h"

static atomic_long het_builds;

long het_plan_builds(void) { return atomic_load(&het_builds); }

void het_plan_key(const het_program *p, het_tensor *const *params,
                  int64_t *key) {
  for (int i = 0; i < p->n_params; i++) {
    int64_t *k = key + (size_t)i * HET_PLAN_KEY_PER_PARAM;
    const het_tensor *t = params[i];
    memset(k, 0, HET_PLAN_KEY_PER_PARAM * sizeof *k);
    k[0] = t->dtype;
    k[1] = t->rank;
    memcpy(k + 2, t->dims, (size_t)t->rank * sizeof *k);
  }
}

void het_plan_destroy(het_plan *plan) {
  if (!plan)
    return;
  het_plan_frames_destroy(plan);
  het_memplan_deinit(&plan->mem);
  pthread_mutex_destroy(&plan->lock);
  het_arena_deinit(&plan->arena);
  free(plan);
}

/* ---- pass 1: concrete inference ------------------------------------------ */

/* Whether the node of program p is If, Loop or Scan (run by the host). */
bool het_plan_is_control(const het_program *p, int node) {
  return p->partition->kind[node] == HET_STEP_CONTROL;
}

static void het_info_unknown(het_value_info *x) {
  memset(x, 0, sizeof *x);
  x->shape.rank = -1;
}

static bool het_info_known(const het_value_info *x) {
  return x->present && x->dtype != HET_DTYPE_UNDEFINED &&
         het_shape_is_concrete(&x->shape);
}

/* Infers node n's outputs from info (its inputs) into info (those it
 * cannot tell stay unknown). */
static void het_infer_concrete(het_plan_builder *b, int n) {
  const het_node *node = &b->g->nodes[n];
  het_value_info in_small[16], out_small[16];
  het_value_info *in = in_small, *out = out_small;
  bool ok = true;
  if (node->n_inputs > 16 || node->n_outputs > 16) {
    in = calloc((size_t)node->n_inputs + 1, sizeof *in);
    out = calloc((size_t)node->n_outputs + 1, sizeof *out);
    ok = in && out;
  }
  for (int i = 0; ok && i < node->n_inputs; i++) {
    het_info_unknown(&in[i]);
    int v = node->inputs[i];
    if (v < 0)
      continue;
    in[i] = b->info[v];
    ok = het_info_known(&in[i]);
  }
  for (int o = 0; ok && o < node->n_outputs; o++) {
    het_info_unknown(&out[o]);
    out[o].present = node->outputs[o] >= 0;
  }
  if (ok && het_plan_is_control(b->prog, n))
    het_plan_control_infer(b, n, in, out);
  else if (ok)
    ok = het_infer_node(node, node->n_inputs, in, node->n_outputs, out,
                        &b->scratch) == HET_OK;
  het_error_clear();
  for (int o = 0; ok && o < node->n_outputs; o++)
    if (node->outputs[o] >= 0) {
      b->info[node->outputs[o]] = out[o];
      b->info[node->outputs[o]].present = true;
    }
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
}

/* A boundary step keeps the shape; a Cast sets the dtype. */
static void het_infer_boundary(het_plan_builder *b, int n, het_step_kind k) {
  const het_node *node = &b->g->nodes[n];
  het_value_info *y = &b->info[node->outputs[0]];
  *y = b->info[node->inputs[0]];
  y->data = NULL;
  if (het_step_base(k) == HET_STEP_CAST)
    y->dtype = (het_dtype)het_node_attr_int(node, "to", 0);
}

/* The initializer a placed value is a copy of (copies only, no cast or
 * layout on the way), whose host data inference may read; NULL if none. */
static const het_tensor *het_placed_origin(const het_program *p, int v) {
  const het_graph *g = p->graph;
  while (v >= 0 && !g->values[v].initializer) {
    int n = g->values[v].producer;
    if (n < 0 ||
        het_step_base((het_step_kind)p->partition->kind[n]) != HET_STEP_COPY)
      return NULL;
    v = g->nodes[n].inputs[0];
  }
  return v >= 0 ? g->values[v].initializer : NULL;
}

static void het_pass_infer(het_plan_builder *b, const int64_t *key) {
  const het_graph *g = b->g;
  const het_program *p = b->prog;
  for (int v = 0; v < g->n_values; v++) {
    het_info_unknown(&b->info[v]);
    if (p->placed && p->placed[v]) {
      het_value_info_from_tensor(&b->info[v], p->placed[v]);
      b->info[v].data = het_placed_origin(p, v); /* device copy's source */
    } else if (g->values[v].initializer) {
      het_value_info_from_tensor(&b->info[v], g->values[v].initializer);
    }
  }
  for (int i = 0; i < p->n_params; i++) {
    const int64_t *k = key + (size_t)i * HET_PLAN_KEY_PER_PARAM;
    het_value_info *x = &b->info[p->params[i]];
    het_info_unknown(x);
    x->present = true;
    x->dtype = (het_dtype)k[0];
    het_shape_set(&x->shape, (int)k[1], k + 2);
  }
  for (int s = 0; s < p->partition->n_subgraphs; s++) {
    const het_subgraph *sg = &p->partition->subgraphs[s];
    if (het_step_is_static(sg->kind))
      continue;
    for (int j = 0; j < sg->n_nodes; j++) {
      int n = sg->nodes[j];
      het_step_kind k = (het_step_kind)p->partition->kind[n];
      if (k == HET_STEP_COMPUTE || k == HET_STEP_CONTROL)
        het_infer_concrete(b, n);
      else
        het_infer_boundary(b, n, k);
      for (int o = 0; o < g->nodes[n].n_outputs; o++) {
        int v = g->nodes[n].outputs[o];
        if (v < 0 || het_info_known(&b->info[v]))
          continue;
        b->dyn[v] = true;
        b->node_dynamic[n] = true;
        b->any_dynamic = true;
      }
    }
  }
}

/* ---- pass 2: steps -------------------------------------------------------- */

/* Memory space of values made in ep's memory (0 host, 1 + ep). */
int het_plan_space_of_ep(const het_program *p, int ep) {
  return ep < 0 || het_device_is_host(p->eps[ep].device) ? 0 : ep + 1;
}

/* The slot of ep (-1 host) with role (the sequential form has one). */
static int het_slot(const het_program *p, int ep, het_slot_role role) {
  const het_stream_layout *l = p->layout;
  int fallback = -1;
  for (int s = 0; s < l->n_slots; s++) {
    if (l->ep[s] != ep)
      continue;
    if (l->role[s] == role || !l->streams)
      return s;
    if (fallback < 0)
      fallback = s;
  }
  return fallback;
}

/* The ep that moves a value from space `from` to space `to`: the device
 * end's (the destination's when both are devices and it can). */
static het_status het_copy_ep(const het_program *p, int node, int from,
                              int to, int *ep, het_slot_role *role) {
  const het_device *src = from ? p->eps[from - 1].device : NULL;
  const het_device *dst = to ? p->eps[to - 1].device : NULL;
  if (to && het_ep_can_copy(&p->eps[to - 1], src, dst)) {
    *ep = to - 1;
    *role = HET_SLOT_COPY_IN;
    return HET_OK;
  }
  if (from && het_ep_can_copy(&p->eps[from - 1], src, dst)) {
    *ep = from - 1;
    *role = HET_SLOT_COPY_OUT;
    return HET_OK;
  }
  return het_error(HET_ERR_INTERNAL,
                   "plan: copy '%s': no provider copies %s -> %s",
                   p->graph->nodes[node].name, src ? src->name : "host",
                   dst ? dst->name : "host");
}

static het_status het_add_pstep(het_plan_builder *b, const het_pstep *s) {
  het_plan *plan = b->plan;
  plan->steps[plan->n_steps] = *s;
  plan->steps[plan->n_steps].record = -1;
  if (s->slot >= 0)
    plan->uses_slot[s->slot] = true;
  plan->n_steps++;
  return HET_OK;
}

static het_status het_pass_steps(het_plan_builder *b) {
  const het_program *p = b->prog;
  const het_partition *part = p->partition;
  for (int s = 0; s < part->n_subgraphs; s++) {
    const het_subgraph *sg = &part->subgraphs[s];
    if (het_step_is_static(sg->kind))
      continue;
    int n0 = sg->nodes[0];
    het_pstep st = {.sg = s, .node = n0, .ep = -1, .slot = -1, .io = -1};
    for (int j = 0; j < sg->n_nodes; j++)
      st.dynamic |= b->node_dynamic[sg->nodes[j]];
    const het_node *node = &b->g->nodes[n0];
    if (sg->kind == HET_STEP_CONTROL) {
      st.kind = HET_PSTEP_CONTROL;
    } else if (sg->kind == HET_STEP_COMPUTE) {
      st.kind = HET_PSTEP_RUN;
      st.ep = sg->provider;
      st.slot = het_slot(p, st.ep, HET_SLOT_COMPUTE);
      st.io = b->plan->n_io++;
    } else if (sg->kind == HET_STEP_COPY) {
      st.kind = HET_PSTEP_COPY;
      int from = b->space[node->inputs[0]];
      int to = het_plan_space_of_ep(p, part->provider[n0]);
      het_slot_role role = HET_SLOT_COPY_IN;
      if (from == to) { /* both in host memory: a host copy */
        st.kind = HET_PSTEP_CONVERT;
        st.slot = het_slot(p, -1, HET_SLOT_HOST);
      } else {
        HET_TRY(het_copy_ep(p, n0, from, to, &st.ep, &role));
        st.slot = het_slot(p, st.ep, role);
      }
    } else {
      st.kind = HET_PSTEP_CONVERT;
      st.slot = het_slot(p, -1, HET_SLOT_HOST);
    }
    if (st.kind != HET_PSTEP_CONTROL && st.slot < 0)
      return het_error(HET_ERR_INTERNAL, "plan: step '%s' has no stream",
                       node->name);
    int step = b->plan->n_steps;
    HET_TRY(het_add_pstep(b, &st));
    int out_space = st.kind == HET_PSTEP_RUN
                        ? het_plan_space_of_ep(p, st.ep)
                    : st.kind == HET_PSTEP_COPY
                        ? het_plan_space_of_ep(p, part->provider[n0])
                        : 0;
    for (int j = 0; j < sg->n_nodes; j++) {
      const het_node *m = &b->g->nodes[sg->nodes[j]];
      for (int o = 0; o < m->n_outputs; o++)
        if (m->outputs[o] >= 0) {
          b->producer_step[m->outputs[o]] = step;
          b->space[m->outputs[o]] = out_space;
        }
    }
  }
  return HET_OK;
}

/* ---- pass 3: waits and events ----------------------------------------------- */

/* Whether work of step s is done before the host enqueues anything later:
 * control flow (the host runs it) and steps on inline streams. */
bool het_plan_host_ordered(const het_plan *plan, const het_pstep *s) {
  return s->kind == HET_PSTEP_CONTROL ||
         (plan->prog->layout->flags[s->slot] & HET_STREAM_INLINE);
}

static het_status het_add_wait(het_plan_builder *b, int t, int v) {
  het_plan *plan = b->plan;
  het_pstep *T = &plan->steps[t];
  int s = v >= 0 ? b->producer_step[v] : -1;
  if (s < 0 || s == t)
    return HET_OK;
  het_pstep *S = &plan->steps[s];
  if (het_plan_host_ordered(plan, S))
    return HET_OK;
  if (!T->host_waits && S->slot == T->slot)
    return HET_OK;
  if (S->record < 0) {
    S->record = plan->n_events;
    plan->event_ep[plan->n_events++] = S->ep;
  }
  for (int k = 0; k < T->n_waits; k++)
    if (T->waits[k] == S->record)
      return HET_OK;
  T->waits[T->n_waits++] = S->record;
  return HET_OK;
}

/* Calls fn(b, t, v) for every value step t reads. */
het_status het_plan_step_reads(const het_plan_builder *b, int t,
                               het_status (*fn)(het_plan_builder *, int, int),
                               het_plan_builder *ctx) {
  const het_pstep *T = &b->plan->steps[t];
  const het_subgraph *sg = &b->prog->partition->subgraphs[T->sg];
  for (int j = 0; j < sg->n_nodes; j++) {
    const het_node *m = &b->g->nodes[sg->nodes[j]];
    for (int i = 0; i < m->n_inputs; i++)
      if (m->inputs[i] >= 0)
        HET_TRY(fn(ctx, t, m->inputs[i]));
  }
  if (T->kind == HET_PSTEP_CONTROL) {
    int n = T->node;
    for (int k = 0; k < b->prog->n_bodies[n]; k++) {
      const het_program *body = b->prog->bodies[n][k];
      for (int c = 0; c < body->n_outer; c++)
        HET_TRY(fn(ctx, t, body->outer_src[c]));
    }
  }
  return HET_OK;
}

static het_status het_pass_waits(het_plan_builder *b) {
  het_plan *plan = b->plan;
  for (int t = 0; t < plan->n_steps; t++) {
    het_pstep *T = &plan->steps[t];
    const het_node *node = &b->g->nodes[T->node];
    T->host_waits = T->kind == HET_PSTEP_CONTROL ||
                    (T->kind == HET_PSTEP_COPY && b->dyn[node->inputs[0]]);
    T->waits = het_arena_calloc(&plan->arena, (size_t)b->reads_of[t] + 1,
                                sizeof(int));
    if (!T->waits)
      return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
    HET_TRY(het_plan_step_reads(b, t, het_add_wait, b));
  }
  return HET_OK;
}

static het_status het_count_read(het_plan_builder *b, int t, int v) {
  (void)v;
  b->reads_of[t]++;
  return HET_OK;
}

/* ---- driver --------------------------------------------------------------- */

static het_status het_builder_init(het_plan_builder *b, het_program *p,
                                   const int64_t *key) {
  memset(b, 0, sizeof *b);
  b->prog = p;
  b->g = p->graph;
  het_arena_init(&b->scratch);
  het_plan *plan = calloc(1, sizeof *plan);
  if (!plan)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  b->plan = plan;
  het_arena_init(&plan->arena);
  pthread_mutex_init(&plan->lock, NULL);
  plan->prog = p;
  plan->n_values = b->g->n_values;
  plan->n_spaces = p->n_eps + 1;
  plan->n_key = p->n_params * HET_PLAN_KEY_PER_PARAM;
  size_t nv = (size_t)b->g->n_values + 1, nn = (size_t)b->g->n_nodes + 1;
  size_t ns = (size_t)p->partition->n_subgraphs + 1;
  plan->key = het_arena_calloc(&plan->arena, (size_t)plan->n_key + 1,
                               sizeof *plan->key);
  plan->steps = het_arena_calloc(&plan->arena, ns, sizeof *plan->steps);
  plan->values = het_arena_calloc(&plan->arena, nv, sizeof *plan->values);
  plan->event_ep = het_arena_calloc(&plan->arena, ns, sizeof(int));
  plan->arena_bytes = het_arena_calloc(&plan->arena, (size_t)plan->n_spaces,
                                       sizeof(size_t));
  b->info = het_arena_calloc(&b->scratch, nv, sizeof *b->info);
  b->dyn = het_arena_calloc(&b->scratch, nv, sizeof(bool));
  b->node_dynamic = het_arena_calloc(&plan->arena, nn, sizeof(bool));
  b->producer_step = het_arena_calloc(&b->scratch, nv, sizeof(int));
  b->space = het_arena_calloc(&b->scratch, nv, sizeof(int));
  b->reads_of = het_arena_calloc(&b->scratch, ns, sizeof(int));
  if (!plan->key || !plan->steps || !plan->values || !plan->event_ep ||
      !plan->arena_bytes || !b->info || !b->dyn || !b->node_dynamic ||
      !b->producer_step || !b->space || !b->reads_of)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  memcpy(plan->key, key, (size_t)plan->n_key * sizeof *key);
  for (int v = 0; v < b->g->n_values; v++) {
    b->producer_step[v] = -1;
    const het_tensor *pl = p->placed ? p->placed[v] : NULL;
    for (int e = 0; pl && e < p->n_eps; e++)
      if (pl->device && pl->device == p->eps[e].device)
        b->space[v] = het_plan_space_of_ep(p, e);
  }
  return HET_OK;
}

het_status het_plan_build(het_program *p, const int64_t *key, het_plan **out) {
  het_plan_builder b;
  het_status st = het_builder_init(&b, p, key);
  if (st == HET_OK) {
    het_pass_infer(&b, key);
    st = het_pass_steps(&b);
  }
  for (int t = 0; st == HET_OK && t < b.plan->n_steps; t++)
    st = het_plan_step_reads(&b, t, het_count_read, &b);
  if (st == HET_OK)
    st = het_pass_waits(&b);
  if (st == HET_OK) {
    het_plan_positions(&b);
    st = het_plan_order(&b);
  }
  if (st == HET_OK)
    st = het_plan_memory(&b);
  if (st == HET_OK)
    st = het_plan_validate(b.plan);
  if (st == HET_OK && b.any_dynamic)
    b.plan->dynamic_node = b.node_dynamic;
  het_plan_order_deinit(&b);
  het_arena_deinit(&b.scratch);
  if (st != HET_OK) {
    het_plan_destroy(b.plan);
    return st;
  }
  atomic_fetch_add(&het_builds, 1);
  *out = b.plan;
  return HET_OK;
}
