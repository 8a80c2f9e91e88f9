/* session_build.c — from a loaded graph to a runnable session.
 * Pass 1 infers shapes, rewrites the graph (optimizer) and creates
 * providers; pass 2 collects claims and applies pinned/forbidden
 * constraints to them; pass 3 assigns (priority,
 * then cost unless asked for priority); pass 4 inserts boundary copies;
 * pass 5 compiles compute steps and places initializer copies once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/session_memory.h"
#include "core/infer.h"
#include "core/status.h"
#include "optimizer/optimizer.h"
#include "executor/run.h"
#include "transfer/boundary.h"

het_status het_session_add_providers(het_session *s,
                                     const het_session_options *o);

static int het_provider_index(const het_session *s, const char *name) {
  for (int i = 0; i < s->n_providers; i++)
    if (strcmp(s->providers[i].vt->name, name) == 0)
      return i;
  return -1;
}

static int het_node_by_name(const het_graph *g, const char *name) {
  for (int n = 0; n < g->n_nodes; n++)
    if (strcmp(g->nodes[n].name, name) == 0)
      return n;
  return -1;
}

/* Turns the options' rules and budgets into a het_constraints. */
static het_status het_resolve_constraints(het_session *s,
                                          const het_session_options *o,
                                          het_constraints *c) {
  memset(c, 0, sizeof *c);
  if (!o || (!o->n_rules && !o->n_budgets))
    return HET_OK;
  const het_graph *g = s->graph;
  c->nodes = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                              sizeof *c->nodes);
  if (!c->nodes)
    return het_error(HET_ERR_OUT_OF_MEMORY, "constraints: out of memory");
  for (int i = 0; i < o->n_rules; i++) {
    const het_node_rule *r = &o->rules[i];
    int n = het_node_by_name(g, r->node);
    if (n < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "placement constraint: no node named '%s'", r->node);
    int p = het_provider_index(s, r->provider);
    if (p < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "placement constraint on '%s': provider '%s' is not "
                       "in the session",
                       r->node, r->provider);
    if (r->kind == HET_RULE_PIN)
      c->nodes[n].pinned |= 1u << p;
    else if (r->kind == HET_RULE_FORBID)
      c->nodes[n].forbidden |= 1u << p;
    else
      c->nodes[n].bias[p] = r->factor;
  }
  for (int i = 0; i < o->n_budgets; i++) {
    int p = het_provider_index(s, o->budgets[i].key);
    if (p < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "memory budget: provider '%s' is not in the session",
                       o->budgets[i].key);
    c->budget[p] = (size_t)strtoull(o->budgets[i].value, NULL, 10);
  }
  return HET_OK;
}

/* Claims per provider with pinned/forbidden applied (reasons say so). */
static het_status het_collect_claims(het_session *s, const het_constraints *c,
                                     het_claim **claims) {
  const het_graph *g = s->graph;
  for (int p = 0; p < s->n_providers; p++) {
    claims[p] = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                                 sizeof **claims);
    if (!claims[p])
      return het_error(HET_ERR_OUT_OF_MEMORY, "claims: out of memory");
    het_device *d = &s->providers[p];
    HET_TRY(d->vt->get_capability(d->state, g, claims[p]));
    for (int n = 0; c->nodes && n < g->n_nodes; n++) {
      const het_node_constraint *nc = &c->nodes[n];
      bool banned = (nc->forbidden >> p) & 1u;
      bool unpinned = nc->pinned && !((nc->pinned >> p) & 1u);
      if (banned || unpinned) {
        claims[p][n].claimed = false;
        snprintf(claims[p][n].reason, sizeof claims[p][n].reason, "%s",
                 banned ? "forbidden by a placement constraint"
                        : "node is pinned to another provider");
      } else if (nc->pinned && claims[p][n].claimed) {
        snprintf(claims[p][n].reason, sizeof claims[p][n].reason,
                 "pinned by a placement constraint");
      }
    }
  }
  return HET_OK;
}

/* Reason for a cost-chosen node: its estimate here and elsewhere. */
static const char *het_cost_reason(het_session *s, het_claim **claims, int n,
                                   int chosen) {
  char why[256];
  size_t used = 0;
  const het_cost_table *t = &s->cost;
  used += (size_t)snprintf(why, sizeof why, "cost: %.3g us here",
                           t->node_time[n * t->n_devices + chosen] * 1e6);
  for (int p = 0; p < s->n_providers && used < sizeof why; p++) {
    double v = t->node_time[n * t->n_devices + p];
    if (p == chosen)
      continue;
    if (isinf(v))
      used += (size_t)snprintf(why + used, sizeof why - used, "; %s: %s",
                               s->providers[p].vt->name, claims[p][n].reason);
    else
      used += (size_t)snprintf(why + used, sizeof why - used,
                               "; %s: %.3g us", s->providers[p].vt->name,
                               v * 1e6);
  }
  if (used < sizeof why && s->cost_assign[n] != s->prio_assign[n])
    snprintf(why + used, sizeof why - used,
             " (moved from %s: fewer copies or faster)",
             s->providers[s->prio_assign[n]].vt->name);
  return het_arena_strdup(&s->arena, why);
}

static het_status het_assign(het_session *s, const het_session_options *o,
                             const het_constraints *c, het_claim **claims) {
  het_graph *g = s->graph;
  het_partition *p = &s->partition;
  HET_TRY(het_partition_first_claim(g, s->providers, s->n_providers, claims,
                                    &s->arena, p));
  s->n_model_nodes = g->n_nodes;
  s->prio_assign = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof(int));
  s->cost_assign = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof(int));
  if (!s->prio_assign || !s->cost_assign)
    return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  memcpy(s->prio_assign, p->provider, (size_t)g->n_nodes * sizeof(int));
  double *measured = NULL;
  int *measured_dev = NULL;
  if (o && o->node_times)
    HET_TRY(het_measure_load(s, o->node_times, &measured, &measured_dev));
  HET_TRY(het_cost_table_build(g, s->providers, s->n_providers, claims, c,
                               measured, measured_dev, &s->arena, &s->cost));
  HET_TRY(het_assign_cost(&s->cost, s->prio_assign, s->cost_assign));
  s->est_priority = het_cost_evaluate(&s->cost, s->prio_assign);
  s->est_cost = het_cost_evaluate(&s->cost, s->cost_assign);
  s->use_priority = o && o->use_priority;
  if (s->use_priority)
    return HET_OK;
  for (int n = 0; n < g->n_nodes; n++) {
    p->provider[n] = s->cost_assign[n];
    p->reason[n] = het_cost_reason(s, claims, n, s->cost_assign[n]);
    if (!p->reason[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  }
  return HET_OK;
}

/* Only static boundary steps read value v (so it is not needed at run
 * time once they have run). */
static bool het_only_static_readers(const het_session *s, int v) {
  const het_graph *g = s->graph;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v &&
          !het_step_is_static((het_step_kind)s->partition.kind[n]))
        return false;
  return !(g->values[v].flags & HET_VALUE_GRAPH_OUTPUT);
}

/* Runs the static boundary steps (initializer casts, layouts, copies)
 * once, in order; run-time readers find their results placed. */
static het_status het_place_initializers(het_session *s) {
  het_graph *g = s->graph;
  het_partition *p = &s->partition;
  s->placed = het_arena_calloc(&s->arena, (size_t)g->n_values + 1,
                               sizeof *s->placed);
  if (!s->placed)
    return het_error(HET_ERR_OUT_OF_MEMORY, "placement: out of memory");
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    het_step_kind kind = (het_step_kind)p->kind[n];
    if (!het_step_is_static(kind))
      continue;
    const het_node *node = &g->nodes[n];
    int in = node->inputs[0];
    const het_tensor *src = s->placed[in] ? s->placed[in]
                                          : g->values[in].initializer;
    het_tensor *dst = calloc(1, sizeof *dst);
    if (!dst)
      return het_error(HET_ERR_OUT_OF_MEMORY, "placement: out of memory");
    const het_device *to = p->provider[n] >= 0 ? &s->providers[p->provider[n]]
                                               : NULL;
    het_status st = het_boundary_run(het_step_base(kind), node, src, to, dst);
    if (st != HET_OK) {
      het_tensor_destroy(dst);
      return het_error_wrap(st, "preparing initializer '%s'",
                            g->values[in].name);
    }
    s->placed[node->outputs[0]] = dst;
  }
  for (int v = 0; v < g->n_values; v++)
    if (s->placed[v] && het_only_static_readers(s, v)) {
      het_tensor_destroy(s->placed[v]);
      s->placed[v] = NULL;
    }
  return HET_OK;
}

static het_status het_compile_steps(het_session *s) {
  het_partition *p = &s->partition;
  s->compiled = calloc((size_t)p->n_subgraphs + 1, sizeof(void *));
  if (!s->compiled)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int i = 0; i < p->n_subgraphs; i++) {
    het_subgraph *sg = &p->subgraphs[i];
    if (sg->kind != HET_STEP_COMPUTE)
      continue;
    het_device *d = &s->providers[sg->provider];
    HET_TRY(d->vt->compile(d->state, s->graph, sg->nodes, sg->n_nodes,
                           &s->compiled[i]));
  }
  return HET_OK;
}

/* Consumer counts per value: the run frees a value after its last use. */
static het_status het_count_uses(het_session *s) {
  het_graph *g = s->graph;
  s->uses = calloc((size_t)g->n_values + 1, sizeof *s->uses);
  s->inputs = calloc((size_t)g->n_inputs + 1, sizeof *s->inputs);
  if (!s->uses || !s->inputs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0)
        s->uses[g->nodes[n].inputs[i]]++;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].flags & (HET_VALUE_GRAPH_OUTPUT | HET_VALUE_INITIALIZER |
                              HET_VALUE_GRAPH_INPUT) ||
        s->placed[v])
      s->uses[v] = -1;
  het_run_mark_outer_uses(g, s->uses);
  for (int i = 0; i < g->n_inputs; i++)
    if (!g->values[g->inputs[i]].initializer)
      s->inputs[s->n_inputs++] = g->inputs[i];
  return HET_OK;
}

het_status het_session_build(het_session *s, const het_session_options *o) {
  het_constraints c;
  het_claim *claims[HET_MAX_PROVIDERS] = {0};
  HET_TRY(het_graph_infer_shapes(s->graph));
  HET_TRY(het_optimize(s->graph, o ? o->opt_level : HET_OPT_ALL, NULL));
  HET_TRY(het_session_add_providers(s, o));
  HET_TRY(het_resolve_constraints(s, o, &c));
  HET_TRY(het_collect_claims(s, &c, claims));
  HET_TRY(het_assign(s, o, &c, claims));
  HET_TRY(het_boundary_insert(s->graph, s->providers, s->info, s->host_memory,
                              &s->arena, &s->partition));
  if (o && o->streams) { /* fine-grained steps, so streams can interleave */
    s->partition.node_steps = true;
    HET_TRY(het_partition_group(s->graph, &s->arena, &s->partition));
  }
  HET_TRY(het_compile_steps(s));
  HET_TRY(het_place_initializers(s));
  if (o && (o->measure || o->trace))
    HET_TRY(het_measure_create(s, o->measure, o->trace));
  HET_TRY(het_count_uses(s));
  if (o && o->streams)
    HET_TRY(het_session_plan_streams(s));
  return het_session_memory_check(s);
}
