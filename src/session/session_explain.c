/* session_explain.c — fills the placement report (report/explain.h)
 * from a built session and renders it (het_session_explain).  Nodes come
 * graph by graph: the model's, then every control-flow body (its nodes
 * named after the body's path, "If_0/then_branch/conv").
 * Planned peak memory per device comes from the model's plan for its
 * static input shapes (arena plus what lives outside it, shown next to
 * the sum of all intermediate sizes and the weights); with symbolic shapes
 * it is estimated by walking the execution order with load-time shapes
 * (unknown dims count as 1): outputs become live when produced and die
 * after their last reader; initializers and placed copies live throughout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan.h"
#include "report/explain.h"
#include "session/session.h"
#include "session/session_aot.h"
#include "session/session_regime.h"
#include "transfer/boundary.h"

double het_value_bytes(const het_value *v) {
  double n = 1;
  if (v->shape.rank < 0)
    return 0;
  for (int i = 0; i < v->shape.rank; i++)
    n *= v->shape.dims[i].value >= 0 ? (double)v->shape.dims[i].value : 1.0;
  return n * (double)het_dtype_size(v->dtype);
}

/* Memory space of a value of build b: -1 host, else device. */
static int het_value_space(const het_session *s, const het_graph_build *b,
                           int v) {
  const het_graph *g = b->prog.graph;
  int prod = g->values[v].producer;
  if (prod < 0) {
    const het_tensor *t = b->prog.placed ? b->prog.placed[v] : NULL;
    for (int p = 0; t && t->device && p < s->n_providers; p++)
      if (s->providers[p].device == t->device)
        return p;
    return -1;
  }
  int p = b->partition.provider[prod];
  return p >= 0 && !s->host_memory[p] ? p : -1;
}

/* The planner's figures for static input shapes; false when not static. */
static bool het_explain_planned(const het_session *s, het_explain_device *dev) {
  het_plan *plan = NULL;
  if (het_session_plan_for_report(s, false, &plan) != HET_OK) {
    het_error_clear();
    return false;
  }
  het_plan_summary *m = calloc((size_t)plan->n_spaces, sizeof *m);
  if (m)
    het_plan_summary_get(plan, m);
  for (int d = 0; m && d <= s->n_providers; d++) {
    dev[d].planned_peak = m[d].peak + m[d].resident;
    dev[d].arena = m[d].peak;
    dev[d].intermediates = m[d].intermediates;
    dev[d].weights = m[d].weights;
  }
  bool ok = m != NULL;
  free(m);
  het_plan_put(plan);
  return ok;
}

/* Symbolic shapes: sums and a lifetime walk over load-time shapes. */
static void het_explain_estimate(const het_session *s, het_explain_device *dev,
                                 double *live, int *left) {
  const het_graph_build *gb = &s->top;
  const het_graph *g = s->graph;
  int n_sp = s->n_providers + 1;
  for (int v = 0; v < g->n_values; v++) {
    const het_value *val = &g->values[v];
    size_t b = (size_t)het_value_bytes(val);
    int sp = het_value_space(s, gb, v) + 1;
    if (val->producer < 0)
      live[sp] += (double)b;
    if (val->producer < 0 &&
        (val->initializer || (gb->prog.placed && gb->prog.placed[v])))
      dev[sp].weights += b;
    else if (val->producer >= 0 && !(val->flags & HET_VALUE_GRAPH_OUTPUT))
      dev[sp].intermediates += b;
  }
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0)
        left[g->nodes[n].inputs[i]]++;
  double *peak = live + n_sp;
  for (int d = 0; d < n_sp; d++)
    peak[d] = live[d];
  for (int k = 0; k < g->n_nodes; k++) {
    const het_node *node = &g->nodes[g->order[k]];
    for (int o = 0; o < node->n_outputs; o++)
      if (node->outputs[o] >= 0)
        live[het_value_space(s, gb, node->outputs[o]) + 1] +=
            het_value_bytes(&g->values[node->outputs[o]]);
    for (int d = 0; d < n_sp; d++)
      peak[d] = fmax(peak[d], live[d]);
    for (int i = 0; i < node->n_inputs; i++) {
      int v = node->inputs[i];
      if (v >= 0 && --left[v] == 0 && g->values[v].producer >= 0 &&
          !(g->values[v].flags & HET_VALUE_GRAPH_OUTPUT))
        live[het_value_space(s, gb, v) + 1] -= het_value_bytes(&g->values[v]);
    }
  }
  for (int d = 0; d < n_sp; d++) {
    dev[d].planned_peak = (size_t)peak[d];
    dev[d].estimated = true;
  }
}

/* dev[0] host, dev[p + 1] provider p's memory space. */
static void het_explain_memory(const het_session *s, het_explain_device *dev) {
  if (het_explain_planned(s, dev))
    return;
  size_t n_sp = (size_t)s->n_providers + 1;
  double *live = calloc(2 * n_sp, sizeof *live);
  int *left = calloc((size_t)s->graph->n_values + 1, sizeof *left);
  if (live && left)
    het_explain_estimate(s, dev, live, left);
  free(live);
  free(left);
}

static const char *het_space_label(const het_session *s, int p) {
  return p >= 0 ? s->providers[p].vt->name : "host";
}

/* Estimated seconds of one copy node: the cost model's transfer time
 * (the figure the assignment was optimised with). */
static double het_copy_seconds(const het_session *s, const het_graph_build *b,
                               int node, double bytes) {
  const het_node *n = &b->prog.graph->nodes[node];
  return het_cost_transfer(&b->cost, het_value_space(s, b, n->inputs[0]),
                           b->partition.provider[node], bytes);
}

/* Host memory bandwidth: the first host-memory provider's, or 10 GB/s. */
static double het_host_bandwidth(const het_session *s) {
  for (int p = 0; p < s->n_providers; p++)
    if (s->host_memory[p] && s->providers[p].device->info.memory_bandwidth > 0)
      return s->providers[p].device->info.memory_bandwidth;
  return 1e10;
}

/* With node times: the provider's estimate of a compute node next to its
 * measured time on that provider (-1: none measured there). */
static void het_explain_node_measured(const het_graph_build *b, int node,
                                      int p, het_explain_node *en) {
  en->model_seconds = en->est_seconds;
  en->measured_seconds = -1;
  if (!b->cost.estimate || node >= b->n_model_nodes || p < 0 ||
      b->partition.kind[node] != HET_STEP_COMPUTE)
    return;
  double t = b->cost.estimate[node * b->cost.n_devices + p];
  en->model_seconds = isfinite(t) ? t : 0;
  if (b->measured_dev[node] == p && b->measured[node] >= 0)
    en->measured_seconds = b->measured[node];
}

static void het_explain_node_fill(const het_session *s,
                                  const het_graph_build *b, int node,
                                  het_explain_node *en) {
  const het_graph *g = b->prog.graph;
  const het_node *n = &g->nodes[node];
  int p = b->partition.provider[node];
  en->name = het_session_node_name(s, b, node);
  en->op_type = n->op_type;
  en->provider = het_space_label(s, p);
  en->reason = b->partition.reason[node];
  het_step_kind kind = (het_step_kind)b->partition.kind[node];
  if (kind == HET_STEP_CONTROL)
    en->placed_by = "control flow";
  else if (kind != HET_STEP_COMPUTE)
    en->placed_by = "boundary";
  else if (node < b->n_model_nodes && b->placed_by && b->placed_by[node])
    en->placed_by = b->placed_by[node];
  else
    en->placed_by = s->use_priority ? "priority" : "cost";
  if (kind == HET_STEP_CONTROL) {
    int at = s->use_priority ? b->prio_assign[node] : b->cost_assign[node];
    en->est_seconds = b->cost.node_time
                          ? b->cost.node_time[node * b->cost.n_devices + at]
                          : 0;
  } else if (kind != HET_STEP_COMPUTE) {
    het_step_kind base = het_step_base(kind);
    en->boundary = base == HET_STEP_COPY   ? "copy"
                   : base == HET_STEP_CAST ? "cast"
                                           : "layout";
    en->bytes = het_value_bytes(&g->values[n->inputs[0]]);
    if (het_step_is_static(kind))
      en->est_seconds = 0;
    else if (base == HET_STEP_COPY)
      en->est_seconds = het_copy_seconds(s, b, node, en->bytes);
    else /* read and write once in host memory */
      en->est_seconds = 2 * en->bytes / het_host_bandwidth(s);
  } else if (node < b->n_model_nodes && p >= 0 && b->cost.node_time) {
    double t = b->cost.node_time[node * b->cost.n_devices + p];
    en->est_seconds = isfinite(t) ? t : 0;
  }
  if (kind == HET_STEP_COMPUTE) {
    het_precision pr = het_session_precision(s, g, node, p);
    en->precision = pr == HET_PRECISION_ANY ? NULL : het_precision_str(pr);
  }
  if (!isfinite(en->est_seconds))
    en->est_seconds = 0;
  het_explain_node_measured(b, node, p, en);
}

/* Nodes, subgraphs and edges of build b, appended to e (pos: scratch per
 * node of b). */
static void het_explain_build(const het_session *s, const het_graph_build *b,
                              int *pos, het_explain *e) {
  const het_graph *g = b->prog.graph;
  int k = e->n_nodes;
  for (int si = 0; si < b->partition.n_subgraphs; si++) {
    const het_subgraph *sg = &b->partition.subgraphs[si];
    bool compute = sg->kind == HET_STEP_COMPUTE;
    het_explain_subgraph *es = compute ? &e->subgraphs[e->n_subgraphs] : NULL;
    if (es) {
      es->provider = het_space_label(s, sg->provider);
      es->n_nodes = sg->n_nodes;
      if (sg->provider >= 0)
        es->est_seconds = s->providers[sg->provider].device->info
                              .launch_overhead;
    }
    for (int j = 0; j < sg->n_nodes; j++, k++) {
      pos[sg->nodes[j]] = k;
      het_explain_node_fill(s, b, sg->nodes[j], &e->nodes[k]);
      e->nodes[k].subgraph = es ? e->n_subgraphs : -1;
      if (es)
        es->est_seconds += e->nodes[k].est_seconds;
    }
    if (es)
      e->n_subgraphs++;
  }
  e->n_nodes = k;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++) {
      int v = g->nodes[n].inputs[i];
      if (v < 0 || g->values[v].producer < 0)
        continue;
      het_explain_edge *ed = &e->edges[e->n_edges++];
      ed->from = pos[g->values[v].producer];
      ed->to = pos[n];
      ed->value = g->values[v].name;
      ed->bytes = het_value_bytes(&g->values[v]);
    }
}

/* With node times: how many compute nodes were measured, and the measured
 * and estimated totals over them. */
static void het_explain_totals(const het_session *s, het_explain *e) {
  e->node_times = s->top.cost.estimate ? s->node_times : NULL;
  for (int i = 0; e->node_times && i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    if (n->subgraph < 0)
      continue; /* boundary and control-flow steps */
    e->n_compute++;
    if (n->measured_seconds < 0)
      continue;
    e->n_measured++;
    e->measured_total += n->measured_seconds;
    e->model_total += n->model_seconds;
  }
}

static het_status het_explain_fill(const het_session *s, het_arena *a,
                                   het_explain *e) {
  memset(e, 0, sizeof *e);
  e->model = s->model;
  e->algorithm = s->use_priority ? "priority" : "cost";
  size_t nodes = 1, edges = 1, subgraphs = 1, most = 1;
  for (int k = 0; k < s->n_builds; k++) {
    const het_graph *g = s->builds[k]->prog.graph;
    nodes += (size_t)g->n_nodes;
    most = (size_t)g->n_nodes > most ? (size_t)g->n_nodes : most;
    subgraphs += (size_t)s->builds[k]->partition.n_subgraphs;
    for (int n = 0; n < g->n_nodes; n++)
      edges += (size_t)g->nodes[n].n_inputs;
  }
  e->nodes = het_arena_calloc(a, nodes, sizeof *e->nodes);
  int *pos = het_arena_calloc(a, most, sizeof(int));
  e->edges = het_arena_calloc(a, edges, sizeof *e->edges);
  e->subgraphs = het_arena_calloc(a, subgraphs, sizeof *e->subgraphs);
  e->devices = het_arena_calloc(a, (size_t)s->n_providers + 2,
                                sizeof *e->devices);
  het_explain_device *space = het_arena_calloc(
      a, (size_t)s->n_providers + 2, sizeof *space);
  if (!e->nodes || !pos || !e->edges || !e->subgraphs || !e->devices || !space)
    return het_error(HET_ERR_OUT_OF_MEMORY, "explain: out of memory");
  /* Compute steps are the report's subgraphs; copies belong to none. */
  for (int k = 0; k < s->n_builds; k++)
    het_explain_build(s, s->builds[k], pos, e);
  het_explain_memory(s, space);
  space[0].provider = "host";
  e->devices[e->n_devices++] = space[0];
  for (int p = 0; p < s->n_providers; p++)
    if (!s->host_memory[p]) {
      space[p + 1].provider = s->providers[p].vt->name;
      /* the lower of the device's capacity and the session's budget */
      space[p + 1].capacity = s->top.cost.n_devices > p && s->top.cost.capacity[p]
                                  ? s->top.cost.capacity[p]
                                  : s->providers[p].device->info.memory_capacity;
      e->devices[e->n_devices++] = space[p + 1];
    }
  e->est_priority = s->top.est_priority;
  e->est_cost = s->top.est_cost;
  e->est_total = s->use_priority ? s->top.est_priority : s->top.est_cost;
  e->n_warnings = s->n_warnings;
  e->warnings = (const char **)s->warnings;
  e->n_islands = s->n_islands;
  e->islands = s->islands;
  e->islands_int8_on = s->islands_int8_on;
  e->n_unknown = s->top.n_estimated_unknown;
  e->unknown_example = s->top.estimated_unknown_example;
  e->n_model_nodes = s->top.n_model_nodes;
  e->n_shapes = s->n_shapes;
  het_explain_totals(s, e);
  if (s->n_rule_reports) {
    e->rules = het_arena_calloc(a, (size_t)s->n_rule_reports, sizeof *e->rules);
    if (!e->rules)
      return het_error(HET_ERR_OUT_OF_MEMORY, "explain: out of memory");
    e->n_rules = s->n_rule_reports;
  }
  for (int r = 0; r < e->n_rules; r++) {
    const het_rule_report *rep = &s->rule_reports[r];
    e->rules[r] = (het_explain_rule){
        .label = rep->label, .where = rep->where, .actions = rep->actions,
        .note = rep->note, .n_nodes = rep->n_nodes, .nodes = rep->nodes,
        .n_unknown = rep->n_unknown, .n_fallback = rep->n_fallback};
  }
  if (s->aot) {
    const het_aot *x = s->aot;
    char made[512];
    snprintf(made, sizeof made, "hetrt %s, %s, from %s",
             het_aot_meta(x, "hetrt") ? het_aot_meta(x, "hetrt") : "?",
             het_aot_meta(x, "created") ? het_aot_meta(x, "created") : "?",
             het_aot_meta(x, "model") ? het_aot_meta(x, "model") : "?");
    e->plan = x->path;
    e->plan_made = het_arena_strdup(a, made);
    e->plan_grade = het_plan_grade_str(x->grade);
    e->plan_why = x->why[0] ? x->why : NULL;
    if (!e->plan_made)
      return het_error(HET_ERR_OUT_OF_MEMORY, "explain: out of memory");
  }
  return het_regimes_explain(s, a, e);
}

het_status het_session_explain_impl(const het_session *s, const char *format,
                               char **out) {
  HET_TRY(het_session_ready(s));
  het_arena a;
  het_explain e;
  het_arena_init(&a);
  het_status st = het_explain_fill(s, &a, &e);
  if (st == HET_OK)
    st = het_explain_format(&e, format, out);
  het_arena_deinit(&a);
  return st;
}

