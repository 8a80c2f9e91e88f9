/* session_build.c — from a loaded graph to a runnable session.  Pass 1
 * infers shapes, rewrites the graph (optimizer) and creates providers;
 * then every graph of the model, bodies first (session_program.c), goes
 * through: 2. claims (If/Loop/Scan are the host's: their bodies were
 * partitioned already) with pinned/forbidden constraints applied; 3.
 * assignment (priority, then cost unless asked for priority); 4. boundary
 * copies (with the values control flow captures); 5. compilation of the
 * compute steps and placement of initializer copies, once.  Last, the
 * executor programs are numbered and the static signature is planned.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "executor/plan.h"
#include "optimizer/optimizer.h"
#include "session/session_aot.h"
#include "session/session_build.h"
#include "transfer/boundary.h"
#include "transfer/convert.h"
#include "transfer/copy.h"

static int het_provider_index(const het_session *s, const char *name) {
  for (int i = 0; i < s->n_providers; i++)
    if (strcmp(s->providers[i].vt->name, name) == 0)
      return i;
  return -1;
}

/* Pass 2a: the policy's rules, then the C API's (which override a
 * policy's pins), and the budgets, for graph b (rule names are matched
 * against b's nodes with its report prefix). */
static het_status het_resolve_constraints(het_build_ctx *x,
                                          het_graph_build *b,
                                          het_constraints *c) {
  het_session *s = x->s;
  const het_session_options *o = x->o;
  const het_graph *g = b->prog.graph;
  memset(c, 0, sizeof *c);
  if (!o || (!o->n_rules && !o->n_budgets &&
             !(o->policy && o->policy->n_rules)))
    return HET_OK;
  size_t n = (size_t)g->n_nodes + 1;
  c->nodes = het_arena_calloc(&s->arena, n, sizeof *c->nodes);
  b->allowed = het_arena_calloc(&s->arena, n, sizeof *b->allowed);
  b->rule_of = het_arena_calloc(&s->arena, n, sizeof *b->rule_of);
  b->placed_by = het_arena_calloc(&s->arena, n, sizeof *b->placed_by);
  unsigned *api_pin = het_arena_calloc(&s->arena, n, sizeof *api_pin);
  if (!c->nodes || !b->allowed || !b->rule_of || !b->placed_by || !api_pin)
    return het_error(HET_ERR_OUT_OF_MEMORY, "constraints: out of memory");
  for (int k = 0; k < g->n_nodes; k++) {
    b->allowed[k] = (1u << s->n_providers) - 1u;
    b->rule_of[k] = -1;
  }
  /* Shape predicates see the shapes to plan for. */
  het_shape *saved = NULL;
  if (b == &s->top)
    HET_TRY(het_shape_hints_begin(o, b->prog.graph, &saved));
  het_status st = het_policy_apply(x, b, c);
  het_shape_hints_end(b->prog.graph, saved);
  HET_TRY(st);
  size_t plen = strlen(b->prefix);
  for (int i = 0; i < o->n_rules; i++) {
    const het_node_rule *r = &o->rules[i];
    if (strncmp(r->node, b->prefix, plen) != 0)
      continue;
    int m = -1;
    for (int k = 0; k < g->n_nodes && m < 0; k++)
      if (strcmp(g->nodes[k].name, r->node + plen) == 0)
        m = k;
    if (m < 0)
      continue;
    x->rule_hits[i]++;
    int p = het_provider_index(s, r->provider);
    if (p < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "placement constraint on '%s': provider '%s' is not "
                       "in the session",
                       r->node, r->provider);
    if (r->kind == HET_RULE_PIN)
      api_pin[m] |= 1u << p;
    else if (r->kind == HET_RULE_FORBID)
      c->nodes[m].forbidden |= 1u << p;
    else
      c->nodes[m].bias[p] = r->factor;
    b->placed_by[m] = "C API constraint";
    b->rule_of[m] = -1;
  }
  for (int k = 0; k < g->n_nodes; k++)
    if (api_pin[k])
      c->nodes[k].pinned = api_pin[k];
  for (int i = 0; i < o->n_budgets; i++) {
    int p = het_provider_index(s, o->budgets[i].key);
    if (p < 0 && o->non_strict) {
      if (b == &s->top)
        HET_TRY(het_session_warn(s, "memory budget for '%s' not used: the "
                                    "provider is not in the session",
                                 o->budgets[i].key));
      continue;
    }
    if (p < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "memory budget: provider '%s' is not in the session",
                       o->budgets[i].key);
    c->budget[p] = (size_t)strtoull(o->budgets[i].value, NULL, 10);
  }
  return HET_OK;
}

/* Pass 2b: claims per provider, control flow given to host-memory
 * providers, pinned/forbidden applied (reasons say so). */
static het_status het_collect_claims(het_build_ctx *x, het_graph_build *b,
                                     het_constraints *c,
                                     het_claim **claims) {
  het_session *s = x->s;
  const het_graph *g = b->prog.graph;
  for (int p = 0; p < s->n_providers; p++) {
    claims[p] = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                                 sizeof **claims);
    if (!claims[p])
      return het_error(HET_ERR_OUT_OF_MEMORY, "claims: out of memory");
    het_ep *d = &s->providers[p];
    HET_TRY(d->vt->get_capability(d->state, g, claims[p]));
    for (int n = 0; n < g->n_nodes; n++) {
      het_claim *cl = &claims[p][n];
      if (b->prog.n_bodies[n]) {
        cl->claimed = s->host_memory[p];
        snprintf(cl->reason, sizeof cl->reason, "%s",
                 cl->claimed ? "control flow: the host runs it"
                             : "control flow runs on the host");
      }
    }
  }
  if (!c->nodes)
    return HET_OK;
  HET_TRY(het_policy_check_claims(x, b, c, claims));
  for (int p = 0; p < s->n_providers; p++) {
    for (int n = 0; n < g->n_nodes; n++) {
      het_claim *cl = &claims[p][n];
      const het_node_constraint *nc = &c->nodes[n];
      const char *by = b->placed_by[n] ? b->placed_by[n]
                                       : "a placement constraint";
      bool banned = (nc->forbidden >> p) & 1u;
      bool unpinned = nc->pinned && !((nc->pinned >> p) & 1u);
      if (banned || unpinned) {
        cl->claimed = false;
        snprintf(cl->reason, sizeof cl->reason, "%s %s",
                 banned ? "forbidden by" : "not allowed by", by);
      } else if (nc->pinned && cl->claimed) {
        snprintf(cl->reason, sizeof cl->reason, "allowed by %s", by);
      }
    }
  }
  return HET_OK;
}

/* Reason for a cost-chosen node: its estimate here and elsewhere. */
static const char *het_cost_reason(het_session *s, het_graph_build *b,
                                   het_claim **claims, int n, int chosen) {
  char why[256];
  size_t used = 0;
  const het_cost_table *t = &b->cost;
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
  if (used < sizeof why && b->cost_assign[n] != b->prio_assign[n])
    snprintf(why + used, sizeof why - used,
             " (moved from %s: fewer copies or faster)",
             s->providers[b->prio_assign[n]].vt->name);
  return het_arena_strdup(&s->arena, why);
}

/* A control-flow node's estimate: its bodies' (If: the slower branch). */
static void het_control_costs(het_graph_build *b) {
  het_cost_table *t = &b->cost;
  for (int n = 0; n < b->prog.graph->n_nodes; n++) {
    if (!b->prog.n_bodies[n])
      continue;
    double sec = 0;
    for (int k = 0; k < b->prog.n_bodies[n]; k++) {
      const het_graph_build *child = (const het_graph_build *)
          b->prog.bodies[n][k];
      double e = child->est_cost;
      sec = isfinite(e) && e > sec ? e : sec;
    }
    for (int d = 0; d < t->n_devices; d++)
      if (isfinite(t->node_time[n * t->n_devices + d]))
        t->node_time[n * t->n_devices + d] = sec;
  }
}

/* Pass 3b: min_subgraph_nodes on the chosen assignment; moved nodes say
 * so in their reason and placed_by. */
static het_status het_min_subgraph(het_session *s, het_graph_build *b,
                                   int min_nodes) {
  const het_graph *g = b->prog.graph;
  het_partition *p = &b->partition;
  int *assign = s->use_priority ? b->prio_assign : b->cost_assign;
  size_t n_nodes = (size_t)g->n_nodes + 1;
  bool *moved = het_arena_calloc(&s->arena, n_nodes, sizeof *moved);
  int *was = het_arena_calloc(&s->arena, n_nodes, sizeof *was);
  if (!moved || !was)
    return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  memcpy(was, assign, (size_t)g->n_nodes * sizeof *was);
  if (!het_assign_min_run(&b->cost, min_nodes, assign, moved))
    return HET_OK;
  if (!b->placed_by &&
      !(b->placed_by = het_arena_calloc(&s->arena, n_nodes,
                                        sizeof *b->placed_by)))
    return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    if (!moved[n])
      continue;
    char why[256];
    snprintf(why, sizeof why,
             "min_subgraph_nodes %d: its run on %s was shorter; moved to %s "
             "(%.3g us)",
             min_nodes, s->providers[was[n]].vt->name,
             s->providers[assign[n]].vt->name,
             b->cost.node_time[n * b->cost.n_devices + assign[n]] * 1e6);
    p->provider[n] = assign[n];
    p->reason[n] = het_arena_strdup(&s->arena, why);
    if (!p->reason[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
    b->placed_by[n] = "min_subgraph_nodes";
  }
  return het_cost_evaluate(&b->cost, assign,
                           s->use_priority ? &b->est_priority
                                           : &b->est_cost);
}

/* Pass 3, from a plan: every model node where the plan put it, with the
 * plan's reason; a node the provider refuses here, or a provider the
 * session lacks, fails naming it. */
static het_status het_assign_stored(het_session *s, het_graph_build *b,
                                    const het_aot_build *stored,
                                    het_claim **claims) {
  het_graph *g = b->prog.graph;
  het_partition *p = &b->partition;
  const char *plan = s->aot->path;
  if (stored->n_nodes != g->n_nodes)
    return het_error(HET_ERR_INVALID_MODEL,
                     "plan '%s': graph %d holds %d nodes, the plan places %d",
                     plan, stored->index, g->n_nodes, stored->n_nodes);
  if (!b->placed_by &&
      !(b->placed_by = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                                        sizeof *b->placed_by)))
    return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    const char *name = het_session_node_name(s, b, n);
    if (strcmp(stored->node[n], g->nodes[n].name) != 0)
      return het_error(HET_ERR_INVALID_MODEL,
                       "plan '%s': node %d is '%s' in the graph, '%s' in the "
                       "placement",
                       plan, n, name, stored->node[n]);
    int d = b->cost_assign[n]; /* control flow: the host's */
    if (stored->provider[n] && !b->prog.n_bodies[n]) {
      d = het_provider_index(s, stored->provider[n]);
      if (d < 0)
        return het_error(HET_ERR_UNSUPPORTED,
                         "plan '%s' places node '%s' on '%s', which this "
                         "session lacks",
                         plan, name, stored->provider[n]);
      if (!isfinite(b->cost.node_time[(size_t)n * b->cost.n_devices + d]))
        return het_error(HET_ERR_UNSUPPORTED,
                         "plan '%s' places node '%s' on '%s', which refuses "
                         "it here: %s",
                         plan, name, stored->provider[n], claims[d][n].reason);
    }
    b->cost_assign[n] = b->prio_assign[n] = d;
    p->provider[n] = d;
    p->reason[n] = stored->reason[n];
    char by[320];
    snprintf(by, sizeof by, "%s (plan)", stored->placed_by[n]);
    b->placed_by[n] = het_arena_strdup(&s->arena, by);
    if (!b->placed_by[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
    if (b->prog.n_bodies[n]) {
      p->provider[n] = -1;
      p->kind[n] = HET_STEP_CONTROL;
    }
  }
  HET_TRY(het_cost_evaluate(&b->cost, b->cost_assign, &b->est_cost));
  b->est_priority = b->est_cost;
  return HET_OK;
}

/* Pass 3: assignment. */
static het_status het_assign(het_build_ctx *x, het_graph_build *b,
                             const het_constraints *c, het_claim **claims) {
  het_session *s = x->s;
  const het_session_options *o = x->o;
  het_graph *g = b->prog.graph;
  het_partition *p = &b->partition;
  HET_TRY(het_partition_first_claim(g, s->providers, s->n_providers, claims,
                                    &s->arena, p));
  b->n_model_nodes = g->n_nodes;
  b->prio_assign = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                                    sizeof(int));
  b->cost_assign = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                                    sizeof(int));
  if (!b->prio_assign || !b->cost_assign)
    return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
  memcpy(b->prio_assign, p->provider, (size_t)g->n_nodes * sizeof(int));
  double *measured = NULL;
  int *measured_dev = NULL;
  if (o && o->node_times)
    HET_TRY(het_measure_load(s, b, o->node_times, &measured, &measured_dev));
  b->measured = measured;
  b->measured_dev = measured_dev;
  if (measured && !s->node_times &&
      !(s->node_times = het_arena_strdup(&s->arena, o->node_times)))
    return het_error(HET_ERR_OUT_OF_MEMORY, "node times: out of memory");
  het_shape *saved = NULL;
  if (b == &s->top)
    HET_TRY(het_shape_hints_begin(o, g, &saved));
  het_count_unknown(s, b);
  het_status st = het_cost_table_build(g, s->providers, s->n_providers,
                                       claims, c, measured, measured_dev,
                                       &s->arena, &b->cost);
  het_shape_hints_end(g, saved);
  HET_TRY(st);
  het_control_costs(b);
  const het_aot_build *stored = het_aot_find_build(s, b);
  if (stored)
    return het_assign_stored(s, b, stored, claims);
  if (s->aot && !s->aot_rebuild)
    return het_error(HET_ERR_INVALID_MODEL,
                     "plan '%s' holds no placement for graph '%s'",
                     s->aot->path, *b->prefix ? b->prefix : "(the model's)");
  HET_TRY(het_assign_cost(&b->cost, b->prio_assign, b->cost_assign));
  HET_TRY(het_cost_evaluate(&b->cost, b->prio_assign, &b->est_priority));
  HET_TRY(het_cost_evaluate(&b->cost, b->cost_assign, &b->est_cost));
  if (!s->use_priority)
    for (int n = 0; n < g->n_nodes; n++) {
      p->provider[n] = b->cost_assign[n];
      p->reason[n] = het_cost_reason(s, b, claims, n, b->cost_assign[n]);
      if (!p->reason[n])
        return het_error(HET_ERR_OUT_OF_MEMORY, "assignment: out of memory");
    }
  if (o && o->min_subgraph_nodes > 1)
    HET_TRY(het_min_subgraph(s, b, o->min_subgraph_nodes));
  /* Control flow is the host's: its step runs on no provider. */
  for (int n = 0; n < g->n_nodes; n++)
    if (b->prog.n_bodies[n]) {
      p->provider[n] = -1;
      p->kind[n] = HET_STEP_CONTROL;
      p->reason[n] = "control flow: the host runs it; its bodies are "
                     "partitioned on their own (listed after it)";
    }
  return HET_OK;
}

/* Pass 4: boundary copies; control flow reads its bodies' captured values
 * in host memory, and the bodies bind the host versions. */
static het_status het_insert_boundaries(het_session *s, het_graph_build *b) {
  het_graph *g = b->prog.graph;
  int nd = s->n_providers;
  het_device_info info[HET_MAX_PROVIDERS];
  bool direct[HET_MAX_PROVIDERS * HET_MAX_PROVIDERS] = {false};
  for (int a = 0; a < nd; a++) {
    info[a] = s->providers[a].device->info;
    for (int c = 0; c < nd; c++) {
      const het_device *da = s->providers[a].device;
      const het_device *dc = s->providers[c].device;
      direct[a * nd + c] =
          a != c && !s->host_memory[a] && !s->host_memory[c] &&
          (het_ep_can_copy(&s->providers[c], da, dc) ||
           het_ep_can_copy(&s->providers[a], da, dc));
    }
  }
  het_boundary_reads extra = {0};
  extra.n = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof(int));
  extra.ids = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1,
                               sizeof(int *));
  if (!extra.n || !extra.ids)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    int total = 0;
    for (int k = 0; k < b->prog.n_bodies[n]; k++)
      total += b->prog.bodies[n][k]->n_outer;
    extra.ids[n] = het_arena_calloc(&s->arena, (size_t)total + 1, sizeof(int));
    if (!extra.ids[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
    for (int k = 0; k < b->prog.n_bodies[n]; k++) {
      const het_program *body = b->prog.bodies[n][k];
      for (int c = 0; c < body->n_outer; c++)
        extra.ids[n][extra.n[n]++] = body->outer_src[c];
    }
  }
  HET_TRY(het_boundary_insert(g, s->providers, info, s->host_memory, direct,
                              &extra, &s->arena, &b->partition));
  for (int n = 0; n < b->n_model_nodes; n++) {
    int at = 0;
    for (int k = 0; k < b->prog.n_bodies[n]; k++) {
      het_program *body = b->prog.bodies[n][k];
      for (int c = 0; c < body->n_outer; c++)
        body->outer_src[c] = extra.ids[n][at++];
    }
  }
  return HET_OK;
}

/* Only static boundary steps read value v (so it is not needed at run
 * time once they have run). */
static bool het_only_static_readers(const het_graph_build *b, int v) {
  const het_graph *g = b->prog.graph;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v &&
          !het_step_is_static((het_step_kind)b->partition.kind[n]))
        return false;
  return !(g->values[v].flags & HET_VALUE_GRAPH_OUTPUT);
}

/* One static boundary step (an initializer's copy, cast or layout). */
static het_status het_place_one(het_session *s, het_graph_build *b, int n,
                                const het_tensor *src, het_tensor *dst) {
  const het_node *node = &b->prog.graph->nodes[n];
  het_step_kind kind = het_step_base((het_step_kind)b->partition.kind[n]);
  int to = b->partition.provider[n];
  int64_t conv = het_node_attr_int(node, "to", 0);
  if (kind == HET_STEP_COPY)
    return het_transfer_copy(s->providers, s->n_providers, src,
                             to >= 0 ? s->providers[to].device : NULL, dst);
  if (kind == HET_STEP_CAST)
    return het_transfer_cast(src, (het_dtype)conv, dst);
  return het_transfer_layout(src, conv != 0, dst);
}

/* On device d, which only plans: a tensor of out's type and shape (src's
 * where out's is not known) and no data, so that the memory plan counts
 * it where it would be; the session never runs (plans_only). */
static het_status het_place_planned(const het_value *out,
                                    const het_tensor *src, const het_device *d,
                                    het_tensor *dst) {
  bool known = out->dtype != HET_DTYPE_UNDEFINED && out->shape.rank >= 0 &&
               het_shape_is_concrete(&out->shape);
  dst->dtype = known ? out->dtype : src->dtype;
  dst->rank = known ? out->shape.rank : src->rank;
  for (int i = 0; i < dst->rank; i++)
    dst->dims[i] = known ? out->shape.dims[i].value : src->dims[i];
  int64_t count = het_dims_count(dst->dims, dst->rank);
  if (count < 0)
    return het_error(HET_ERR_INTERNAL, "placement: '%s' has no size",
                     out->name);
  dst->nbytes = (size_t)count * het_dtype_size(dst->dtype);
  dst->device = d;
  return HET_OK;
}

/* Pass 5b: runs the static boundary steps once, in order; run-time
 * readers find their results placed (on a device that only plans, their
 * size: het_place_planned). */
static het_status het_place_initializers(het_session *s, het_graph_build *b) {
  het_graph *g = b->prog.graph;
  het_tensor **placed = het_arena_calloc(&s->arena, (size_t)g->n_values + 1,
                                         sizeof *placed);
  if (!placed)
    return het_error(HET_ERR_OUT_OF_MEMORY, "placement: out of memory");
  b->prog.placed = placed;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (!het_step_is_static((het_step_kind)b->partition.kind[n]))
      continue;
    const het_node *node = &g->nodes[n];
    int in = node->inputs[0];
    const het_tensor *src = placed[in] ? placed[in] : g->values[in].initializer;
    het_tensor *dst = calloc(1, sizeof *dst);
    if (!dst)
      return het_error(HET_ERR_OUT_OF_MEMORY, "placement: out of memory");
    int to = b->partition.provider[n];
    const het_device *d = to >= 0 ? s->providers[to].device : NULL;
    het_status st = d && d->plans_only
                        ? het_place_planned(&g->values[node->outputs[0]], src,
                                            d, dst)
                        : het_place_one(s, b, n, src, dst);
    if (st != HET_OK) {
      het_tensor_destroy(dst);
      return het_error_wrap(st, "preparing initializer '%s' (%s)",
                            g->values[in].name, node->name);
    }
    placed[node->outputs[0]] = dst;
  }
  for (int v = 0; v < g->n_values; v++)
    if (placed[v] && het_only_static_readers(b, v)) {
      het_tensor_destroy(placed[v]);
      placed[v] = NULL;
    }
  return HET_OK;
}

/* Pass 5a: compiles the compute steps. */
static het_status het_compile_steps(het_session *s, het_graph_build *b) {
  het_partition *p = &b->partition;
  b->prog.compiled = calloc((size_t)p->n_subgraphs + 1, sizeof(void *));
  if (!b->prog.compiled)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int i = 0; i < p->n_subgraphs; i++) {
    het_subgraph *sg = &p->subgraphs[i];
    if (sg->kind != HET_STEP_COMPUTE)
      continue;
    het_ep *d = &s->providers[sg->provider];
    const het_aot_blob *blob = het_aot_find_blob(s, b, i);
    bool restore = s->aot && !s->aot_rebuild &&
                   HET_PROVIDER_HAS(d->vt, 3, compiled_deserialize);
    if (restore && !blob)
      return het_error(HET_ERR_INVALID_MODEL,
                       "plan '%s' holds no compiled blob for subgraph %d of "
                       "graph '%s' (%s)",
                       s->aot->path, i, *b->prefix ? b->prefix : "(the model's)",
                       d->vt->name);
    if (restore) {
      het_status st = d->vt->compiled_deserialize(
          d->state, b->prog.graph, sg->nodes, sg->n_nodes, blob->data,
          blob->size, &b->prog.compiled[i]);
      if (st != HET_OK)
        return het_error_wrap(st, "plan '%s'", s->aot->path);
    } else
      HET_TRY(d->vt->compile(d->state, b->prog.graph, sg->nodes, sg->n_nodes,
                             &b->prog.compiled[i]));
  }
  return HET_OK;
}

het_status het_build_graph(het_build_ctx *x, het_graph_build *b) {
  het_session *s = x->s;
  het_constraints c;
  het_claim *claims[HET_MAX_PROVIDERS] = {0};
  HET_TRY(het_resolve_constraints(x, b, &c));
  HET_TRY(het_collect_claims(x, b, &c, claims));
  HET_TRY(het_assign(x, b, &c, claims));
  if (s->plan_only && b == &s->top)
    return HET_OK; /* a regime's trial: the assignment is what it wants */
  HET_TRY(het_insert_boundaries(s, b));
  for (int n = 0; n < b->prog.graph->n_nodes && !s->plans_only; n++) {
    int p = b->partition.provider[n];
    if (p < 0 || !s->providers[p].device ||
        !s->providers[p].device->plans_only)
      continue;
    s->plans_only = &s->providers[p];
    HET_TRY(het_session_warn(
        s,
        "provider '%s' places nodes on %s, which stands for hardware that "
        "is not present (device profile '%s'): this session plans but "
        "cannot run",
        s->providers[p].vt->name, s->providers[p].device->name,
        s->env_dev[p] && s->env_dev[p]->profile ? s->env_dev[p]->profile
                                                : "?"));
  }
  if (x->o && x->o->streams) { /* fine-grained steps: streams interleave */
    b->partition.node_steps = true;
    HET_TRY(het_partition_group(b->prog.graph, &s->arena, &b->partition));
  }
  b->prog.partition = &b->partition;
  if (s->deferred)
    return HET_OK; /* het_build_compile, in the background (session_ready.c) */
  return het_build_compile(s, b);
}

het_status het_build_compile(het_session *s, het_graph_build *b) {
  HET_TRY(het_compile_steps(s, b));
  return het_place_initializers(s, b);
}

void het_session_builds_destroy(het_session *s) {
  for (int k = 0; s->builds && k < s->n_builds; k++) {
    het_graph_build *b = s->builds[k];
    het_program *p = &b->prog;
    het_program_deinit(p);
    for (int i = 0; p->compiled && i < b->partition.n_subgraphs; i++) {
      if (!p->compiled[i])
        continue;
      het_ep *d = &s->providers[b->partition.subgraphs[i].provider];
      if (d->vt->destroy_compiled)
        d->vt->destroy_compiled(d->state, p->compiled[i]);
    }
    free(p->compiled);
    p->compiled = NULL;
    for (int v = 0; p->placed && v < p->graph->n_values; v++)
      het_tensor_destroy(p->placed[v]);
    p->placed = NULL;
  }
}

const het_graph_build *het_session_node(const het_session *s, int id,
                                        int *node) {
  for (int k = 0; k < s->n_builds; k++) {
    const het_graph_build *b = s->builds[k];
    if (id >= b->prog.node_base &&
        id < b->prog.node_base + b->prog.graph->n_nodes) {
      *node = id - b->prog.node_base;
      return b;
    }
  }
  return NULL;
}

/* A plan's grade once the providers are known: an unusable plan fails
 * or, under plan_mismatch=rebuild, is partitioned afresh; a suboptimal
 * one warns.  Either way the report says why. */
static het_status het_plan_verdict(het_session *s, const het_session_options *o) {
  het_aot_grade_providers(s);
  het_aot *a = s->aot;
  if (a->grade == HET_PLAN_UNUSABLE && !(o && o->plan_rebuild))
    return het_error(HET_ERR_UNSUPPORTED,
                     "plan '%s' is unusable here: %s (compile the model "
                     "again on this machine, or load with "
                     "plan_mismatch=rebuild)",
                     a->path, a->why);
  s->aot_rebuild = a->grade == HET_PLAN_UNUSABLE;
  if (a->grade != HET_PLAN_OPTIMAL)
    HET_TRY(het_session_warn(s, "plan '%s' is %s here: %s%s", a->path,
                             het_plan_grade_str(a->grade), a->why,
                             s->aot_rebuild ? "; partitioned and compiled "
                                              "afresh"
                                            : ""));
  return HET_OK;
}

het_status het_session_build(het_session *s, const het_session_options *o) {
  /* providers first: the optimizer weighs QDQ islands on their estimates */
  HET_TRY(het_session_add_providers(s, o));
  if (!s->graph_ready) {
    het_optimize_int8 int8;
    HET_TRY(het_graph_infer_shapes(s->graph));
    HET_TRY(het_policy_int8_choices(s, o, s->graph, "", &int8));
    HET_TRY(het_optimize_with(s->graph, NULL,
                              o ? o->opt_level : HET_OPT_ALL, &int8, NULL));
  }
  if (!s->plan_only) {
    if (!s->graph_ready || (s->aot && !s->aot_regime))
      HET_TRY(het_graph_clone(s->graph, &s->optimized));
    HET_TRY(het_options_copy(o, &s->options));
  }
  if (s->aot && !s->aot_regime) { /* a regime's session: its loader's */
    HET_TRY(het_plan_verdict(s, o));
    s->deferred = !s->aot_rebuild && !(o && o->plan_load_eager);
    if (!s->deferred) /* the weights' hash, before they are used */
      HET_TRY(het_plan_file_verify(s->aot->file));
  }
  s->use_priority = o && o->use_priority;
  s->n_shapes = o ? o->n_shapes : 0;
  het_stream_layout_init(&s->layout, s->providers, s->n_providers,
                         o && o->streams);
  HET_TRY(het_stream_pool_create(&s->layout, s->providers, &s->streams));
  het_build_ctx x = {.s = s, .o = o};
  HET_TRY(het_policy_prepare(&x));
  if (o && o->n_rules) {
    x.rule_hits = het_arena_calloc(&s->arena, (size_t)o->n_rules, sizeof(int));
    if (!x.rule_hits)
      return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  }
  if (!s->plan_only)
    HET_TRY(het_regimes_init(s, o));
  HET_TRY(het_build_programs(&x));
  if (s->plan_only)
    return HET_OK;
  for (int i = 0; o && i < o->n_rules; i++)
    if (!x.rule_hits[i])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "placement constraint: no node named '%s'",
                       o->rules[i].node);
  HET_TRY(het_policy_finish(&x));
  if (o && (o->measure || o->trace))
    HET_TRY(het_measure_create(s, o->measure, o->trace));
  if (s->deferred)
    return het_session_start_compile(s);
  HET_TRY(het_session_plan_check(s));
  return het_regimes_load(s);
}
