/* explain_format_json.c — the JSON placement report (also returned by
 * het_session_explain(s, "json", ...)).  One object: model, algorithm,
 * plan (a plan file's session: file, made, grade, why), warnings, nodes
 * (index, name, op_type, provider, precision (null where none),
 * placed_by, reason, subgraph,
 * est_seconds, boundary, bytes; with node times also estimate_seconds and
 * measured_seconds), edges, subgraphs, boundary_nodes, devices
 * (planned_peak, capacity, arena, intermediates, weights, estimated),
 * rules (label, where, actions, note, nodes, not_tested, not_followed),
 * estimated_unknown, estimates, node_times (null without a node-times
 * file) and, for a session that re-plans per shape regime, replan_gain,
 * max_regimes, regimes and regime_choices.  Strings are escaped so the
 * output always parses.
 */
#include <stdio.h>
#include <stdlib.h>

#include "report/explain_format.h"

static void json_key(het_sbuf *b, const char *key) {
  het_sbuf_json_str(b, key);
  het_sbuf_putc(b, ':');
}

static void json_nodes(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"nodes\": [");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    het_sbuf_puts(b, i ? ",\n    {" : "\n    {");
    het_sbuf_printf(b, "\"index\":%d,", i);
    json_key(b, "name");
    het_sbuf_json_str(b, n->name);
    het_sbuf_puts(b, ",");
    json_key(b, "op_type");
    het_sbuf_json_str(b, n->op_type);
    het_sbuf_puts(b, ",");
    json_key(b, "provider");
    het_sbuf_json_str(b, n->provider);
    het_sbuf_puts(b, ",");
    json_key(b, "precision");
    het_sbuf_json_str(b, n->precision);
    het_sbuf_puts(b, ",");
    json_key(b, "placed_by");
    het_sbuf_json_str(b, n->placed_by);
    het_sbuf_puts(b, ",");
    json_key(b, "reason");
    het_sbuf_json_str(b, n->reason);
    het_sbuf_printf(b, ",\"subgraph\":%d,\"est_seconds\":", n->subgraph);
    het_sbuf_json_num(b, n->est_seconds);
    het_sbuf_puts(b, ",");
    json_key(b, "boundary");
    het_sbuf_json_str(b, n->boundary);
    het_sbuf_puts(b, ",\"bytes\":");
    het_sbuf_json_num(b, n->bytes);
    if (e->node_times) {
      het_sbuf_puts(b, ",\"estimate_seconds\":");
      het_sbuf_json_num(b, n->model_seconds);
      het_sbuf_puts(b, ",\"measured_seconds\":");
      if (n->measured_seconds >= 0)
        het_sbuf_json_num(b, n->measured_seconds);
      else
        het_sbuf_puts(b, "null");
    }
    het_sbuf_putc(b, '}');
  }
  het_sbuf_puts(b, e->n_nodes ? "\n  ],\n" : "],\n");
}

static void json_edges(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"edges\": [");
  for (int k = 0; k < e->n_edges; k++) {
    const het_explain_edge *ed = &e->edges[k];
    het_sbuf_puts(b, k ? ",\n    {" : "\n    {");
    het_sbuf_printf(b, "\"from\":%d,\"to\":%d,", ed->from, ed->to);
    json_key(b, "value");
    het_sbuf_json_str(b, ed->value);
    het_sbuf_puts(b, ",\"bytes\":");
    het_sbuf_json_num(b, ed->bytes);
    het_sbuf_printf(b, ",\"crosses_device\":%s}",
                    het_explain_edge_crosses(e, k) ? "true" : "false");
  }
  het_sbuf_puts(b, e->n_edges ? "\n  ],\n" : "],\n");
}

static void json_subgraphs(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"subgraphs\": [");
  for (int s = 0; s < e->n_subgraphs; s++) {
    const het_explain_subgraph *g = &e->subgraphs[s];
    het_sbuf_puts(b, s ? ",\n    {" : "\n    {");
    het_sbuf_printf(b, "\"index\":%d,", s);
    json_key(b, "provider");
    het_sbuf_json_str(b, g->provider);
    het_sbuf_printf(b, ",\"n_nodes\":%d,\"est_seconds\":", g->n_nodes);
    het_sbuf_json_num(b, g->est_seconds);
    het_sbuf_putc(b, '}');
  }
  het_sbuf_puts(b, e->n_subgraphs ? "\n  ],\n" : "],\n");
}

static void json_boundaries(const het_explain *e, het_sbuf *b) {
  int first = 1;
  het_sbuf_puts(b, "  \"boundary_nodes\": [");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    if (!n->boundary)
      continue;
    het_sbuf_puts(b, first ? "\n    {" : ",\n    {");
    first = 0;
    het_sbuf_printf(b, "\"node\":%d,", i);
    json_key(b, "name");
    het_sbuf_json_str(b, n->name);
    het_sbuf_puts(b, ",");
    json_key(b, "kind");
    het_sbuf_json_str(b, n->boundary);
    het_sbuf_puts(b, ",");
    json_key(b, "from_provider");
    het_sbuf_json_str(b, het_explain_boundary_source(e, i));
    het_sbuf_puts(b, ",");
    json_key(b, "to_provider");
    het_sbuf_json_str(b, n->provider);
    het_sbuf_puts(b, ",\"bytes\":");
    het_sbuf_json_num(b, n->bytes);
    het_sbuf_putc(b, '}');
  }
  het_sbuf_puts(b, first ? "],\n" : "\n  ],\n");
}

static void json_devices(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"devices\": [");
  for (int d = 0; d < e->n_devices; d++) {
    const het_explain_device *dev = &e->devices[d];
    het_sbuf_puts(b, d ? ",\n    {" : "\n    {");
    json_key(b, "provider");
    het_sbuf_json_str(b, dev->provider);
    het_sbuf_printf(b, ",\"planned_peak\":%zu,\"capacity\":%zu,"
                       "\"arena\":%zu,\"intermediates\":%zu,\"weights\":%zu,"
                       "\"estimated\":%s}",
                    dev->planned_peak, dev->capacity, dev->arena,
                    dev->intermediates, dev->weights,
                    dev->estimated ? "true" : "false");
  }
  het_sbuf_puts(b, e->n_devices ? "\n  ],\n" : "],\n");
}

static void json_estimates(const het_explain *e, het_sbuf *b) {
  double pct;
  het_sbuf_puts(b, "  \"estimates\": {\"total_seconds\":");
  het_sbuf_json_num(b, e->est_total);
  het_sbuf_puts(b, ",\"cost_seconds\":");
  het_sbuf_json_num(b, e->est_cost);
  het_sbuf_puts(b, ",\"priority_seconds\":");
  het_sbuf_json_num(b, e->est_priority);
  het_sbuf_puts(b, ",\"cost_vs_priority_percent\":");
  if (het_explain_gain_percent(e, &pct))
    het_sbuf_json_num(b, pct);
  else
    het_sbuf_puts(b, "null");
  het_sbuf_puts(b, "},\n");
}

/* "node_times": null, or the file and the totals over its measured nodes. */
static void json_node_times(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"node_times\": ");
  if (!e->node_times) {
    het_sbuf_puts(b, "null,\n");
    return;
  }
  het_sbuf_puts(b, "{\"file\":");
  het_sbuf_json_str(b, e->node_times);
  het_sbuf_printf(b, ",\"measured_nodes\":%d,\"compute_nodes\":%d,"
                     "\"estimate_seconds\":",
                  e->n_measured, e->n_compute);
  het_sbuf_json_num(b, e->model_total);
  het_sbuf_puts(b, ",\"measured_seconds\":");
  het_sbuf_json_num(b, e->measured_total);
  het_sbuf_puts(b, ",\"estimate_over_measured\":");
  if (e->measured_total > 0)
    het_sbuf_json_num(b, e->model_total / e->measured_total);
  else
    het_sbuf_puts(b, "null");
  het_sbuf_puts(b, ",\"placement_used\":\"measured\"},\n");
}

static void json_rules(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"rules\": [");
  for (int r = 0; r < e->n_rules; r++) {
    const het_explain_rule *x = &e->rules[r];
    het_sbuf_puts(b, r ? ",\n    {" : "\n    {");
    const char *keys[] = {"label", "where", "actions", "note"};
    const char *vals[] = {x->label, x->where, x->actions, x->note};
    for (int k = 0; k < 4; k++) {
      json_key(b, keys[k]);
      het_sbuf_json_str(b, vals[k]);
      het_sbuf_putc(b, ',');
    }
    het_sbuf_printf(b, "\"not_tested\":%d,\"not_followed\":%d,\"nodes\":[",
                    x->n_unknown, x->n_fallback);
    for (int i = 0; i < x->n_nodes; i++) {
      if (i)
        het_sbuf_putc(b, ',');
      het_sbuf_json_str(b, x->nodes[i]);
    }
    het_sbuf_puts(b, "]}");
  }
  het_sbuf_puts(b, e->n_rules ? "\n  ],\n" : "],\n");
  het_sbuf_printf(b, "  \"estimated_unknown\": {\"nodes\":%d,\"of\":%d,"
                     "\"example\":",
                  e->n_unknown, e->n_model_nodes);
  het_sbuf_json_str(b, e->unknown_example);
  het_sbuf_printf(b, ",\"shapes_given\":%d},\n", e->n_shapes);
}

static void json_islands(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "  \"qdq_islands\": {\"int8_on\":");
  het_sbuf_json_str(b, e->islands_int8_on);
  het_sbuf_puts(b, ",\"islands\":[");
  for (int i = 0; i < e->n_islands; i++) {
    const het_explain_island *x = &e->islands[i];
    het_sbuf_puts(b, i ? ",\n    {" : "\n    {");
    json_key(b, "name");
    het_sbuf_json_str(b, x->name);
    het_sbuf_printf(b, ",\"precision\":\"%s\",\"int8_seconds\":",
                    x->fused ? "int8" : "float");
    het_sbuf_json_num(b, x->int8_seconds);
    het_sbuf_puts(b, ",\"float_seconds\":");
    het_sbuf_json_num(b, x->float_seconds);
    het_sbuf_puts(b, ",\"float_on\":");
    het_sbuf_json_str(b, x->float_on);
    het_sbuf_printf(b, ",\"unknown_dims\":%s}",
                    x->unknown_dims ? "true" : "false");
  }
  het_sbuf_puts(b, e->n_islands ? "\n  ]},\n" : "]},\n");
}

void het_explain_render_json(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "{\n  \"model\": ");
  het_sbuf_json_str(b, e->model);
  het_sbuf_puts(b, ",\n  \"algorithm\": ");
  het_sbuf_json_str(b, e->algorithm);
  if (e->plan) {
    het_sbuf_puts(b, ",\n  \"plan\": {\"file\":");
    het_sbuf_json_str(b, e->plan);
    het_sbuf_puts(b, ",\"made\":");
    het_sbuf_json_str(b, e->plan_made);
    het_sbuf_puts(b, ",\"grade\":");
    het_sbuf_json_str(b, e->plan_grade);
    het_sbuf_puts(b, ",\"why\":");
    het_sbuf_json_str(b, e->plan_why);
    het_sbuf_putc(b, '}');
  }
  het_sbuf_puts(b, ",\n  \"warnings\": [");
  for (int w = 0; w < e->n_warnings; w++) {
    if (w)
      het_sbuf_puts(b, ", ");
    het_sbuf_json_str(b, e->warnings[w]);
  }
  het_sbuf_puts(b, "],\n");
  json_nodes(e, b);
  json_edges(e, b);
  json_subgraphs(e, b);
  json_boundaries(e, b);
  json_devices(e, b);
  json_rules(e, b);
  json_islands(e, b);
  json_estimates(e, b);
  json_node_times(e, b);
  het_explain_regimes_json(e, b);
  /* The human line last, so every key before it ends with a comma. */
  het_sbuf line = {0};
  het_explain_summary_line(&line, e);
  if (line.failed)
    b->failed = true;
  het_sbuf_puts(b, "  \"summary\": ");
  het_sbuf_json_str(b, line.data ? line.data : "");
  free(line.data);
  het_sbuf_puts(b, "\n}\n");
}
