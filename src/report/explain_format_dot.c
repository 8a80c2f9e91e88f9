/* explain_format_dot.c — the Graphviz DOT placement report: one node per
 * graph node filled with its provider's colour (reason as tooltip),
 * boundary nodes drawn as distinct shapes (copy: cds, layout:
 * parallelogram, cast: hexagon) with the bytes they move, subgraphs with
 * compute nodes as clusters, edges that cross devices drawn bold and labelled with bytes, a
 * provider legend and, as the graph label, the cost-vs-priority line,
 * per device the planned peak, arena, intermediates without reuse, weights
 * and, with node times, their totals (each node's estimate and measured
 * time in its tooltip).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/explain_format.h"

#define DOT_LABEL_MAX 32

/* s cut to at most max bytes on a UTF-8 boundary, "..." appended if cut. */
static void dot_short(het_sbuf *b, const char *s) {
  char buf[DOT_LABEL_MAX + 4];
  if (!s)
    return;
  size_t n = strlen(s);
  if (n <= DOT_LABEL_MAX) {
    het_sbuf_dot_text(b, s);
    return;
  }
  n = DOT_LABEL_MAX - 3;
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
    n--;
  memcpy(buf, s, n);
  memcpy(buf + n, "...", 4);
  het_sbuf_dot_text(b, buf);
}

static const char *dot_shape(const char *boundary) {
  if (!boundary)
    return "box";
  if (strcmp(boundary, "copy") == 0)
    return "cds";
  if (strcmp(boundary, "layout") == 0)
    return "parallelogram";
  if (strcmp(boundary, "cast") == 0)
    return "hexagon";
  return "diamond";
}

static void dot_node(const het_explain *e, int i, het_sbuf *b,
                     const char *indent) {
  const het_explain_node *n = &e->nodes[i];
  char t[32];
  het_sbuf_printf(b, "%sn%d [shape=%s, fillcolor=\"%s\", label=\"", indent, i,
                  dot_shape(n->boundary),
                  het_explain_provider_color(e, n->provider));
  if (n->boundary) {
    /* The kind first, unless the name already starts with it. */
    if (!n->name || strncmp(n->name, n->boundary, strlen(n->boundary)) != 0) {
      het_sbuf_dot_text(b, n->boundary);
      het_sbuf_puts(b, "\\n");
    }
    dot_short(b, n->name);
    het_sbuf_printf(b, "\\n%s", het_explain_fmt_bytes(t, sizeof t, n->bytes));
  } else {
    dot_short(b, n->name && *n->name ? n->name : n->op_type);
    het_sbuf_puts(b, "\\n");
    dot_short(b, n->op_type);
  }
  het_sbuf_puts(b, "\", tooltip=\"");
  het_sbuf_dot_text(b, n->name);
  het_sbuf_puts(b, " (");
  het_sbuf_dot_text(b, n->op_type);
  het_sbuf_puts(b, ") on ");
  het_sbuf_dot_text(b, n->provider);
  het_sbuf_printf(b, ", %s",
                  het_explain_fmt_seconds(t, sizeof t, n->est_seconds));
  if (e->node_times && n->measured_seconds >= 0) {
    char m[32];
    het_sbuf_printf(b, " (estimate %s, measured %s)",
                    het_explain_fmt_seconds(t, sizeof t, n->model_seconds),
                    het_explain_fmt_seconds(m, sizeof m, n->measured_seconds));
  }
  het_sbuf_puts(b, ": ");
  het_sbuf_dot_text(b, n->reason);
  het_sbuf_puts(b, "\"];\n");
}

/* True when subgraph s holds a compute node (boundary-only subgraphs are
 * drawn without a cluster: their shape already says what they are). */
static bool dot_has_compute(const het_explain *e, int s) {
  for (int i = 0; i < e->n_nodes; i++)
    if (e->nodes[i].subgraph == s && !e->nodes[i].boundary)
      return true;
  return false;
}

static void dot_clusters(const het_explain *e, het_sbuf *b) {
  for (int s = 0; s < e->n_subgraphs; s++) {
    const het_explain_subgraph *g = &e->subgraphs[s];
    char t[32];
    if (!dot_has_compute(e, s))
      continue;
    het_sbuf_printf(b, "  subgraph cluster_sg%d {\n    label=\"subgraph %d: ",
                    s, s);
    het_sbuf_dot_text(b, g->provider);
    het_sbuf_printf(b, ", %d node%s, %s\";\n", g->n_nodes,
                    g->n_nodes == 1 ? "" : "s",
                    het_explain_fmt_seconds(t, sizeof t, g->est_seconds));
    het_sbuf_printf(b, "    style=\"rounded,dashed\"; color=\"#555555\"; "
                       "bgcolor=\"%s30\";\n",
                    het_explain_provider_color(e, g->provider));
    for (int i = 0; i < e->n_nodes; i++)
      if (e->nodes[i].subgraph == s)
        dot_node(e, i, b, "    ");
    het_sbuf_puts(b, "  }\n");
  }
  for (int i = 0; i < e->n_nodes; i++) {
    int s = e->nodes[i].subgraph;
    if (s < 0 || !dot_has_compute(e, s))
      dot_node(e, i, b, "  ");
  }
}

static void dot_edges(const het_explain *e, het_sbuf *b) {
  for (int k = 0; k < e->n_edges; k++) {
    const het_explain_edge *ed = &e->edges[k];
    het_sbuf_printf(b, "  n%d -> n%d", ed->from, ed->to);
    if (het_explain_edge_crosses(e, k)) {
      char h[32];
      het_sbuf_printf(b, " [penwidth=2, color=\"#d62728\", label=\"%s\", "
                         "tooltip=\"",
                      het_explain_fmt_bytes(h, sizeof h, ed->bytes));
      het_sbuf_dot_text(b, ed->value);
      het_sbuf_puts(b, "\"]");
    }
    het_sbuf_puts(b, ";\n");
  }
}

/* One legend entry per distinct provider, devices first. */
static void dot_legend(const het_explain *e, het_sbuf *b) {
  int total = e->n_devices + e->n_nodes, shown = 0;
  het_sbuf_puts(b, "  subgraph cluster_legend {\n    label=\"providers\"; "
                   "style=rounded; color=\"#999999\";\n");
  for (int k = 0; k < total; k++) {
    const char *p = k < e->n_devices ? e->devices[k].provider
                                     : e->nodes[k - e->n_devices].provider;
    bool seen = !p;
    for (int j = 0; j < k && !seen; j++) {
      const char *q = j < e->n_devices ? e->devices[j].provider
                                       : e->nodes[j - e->n_devices].provider;
      seen = q && strcmp(p, q) == 0;
    }
    if (seen)
      continue;
    het_sbuf_printf(b, "    legend%d [shape=box, fillcolor=\"%s\", label=\"",
                    shown++, het_explain_provider_color(e, p));
    het_sbuf_dot_text(b, p);
    het_sbuf_puts(b, "\"];\n");
  }
  het_sbuf_puts(b, "  }\n");
}

void het_explain_render_dot(const het_explain *e, het_sbuf *b) {
  char t[32];
  het_sbuf_puts(b, "digraph partition {\n  graph [fontname=\"Helvetica\", "
                   "fontsize=11, labelloc=t, nodesep=0.25, ranksep=0.3, "
                   "label=\"");
  het_sbuf_dot_text(b, e->model);
  het_sbuf_puts(b, " (algorithm ");
  het_sbuf_dot_text(b, e->algorithm);
  het_sbuf_printf(b, ", total %s)\\n",
                  het_explain_fmt_seconds(t, sizeof t, e->est_total));
  het_sbuf summary = {0};
  het_explain_summary_line(&summary, e);
  if (summary.failed)
    b->failed = true;
  for (int d = 0; d < e->n_devices; d++) {
    het_sbuf_puts(&summary, "\n");
    het_sbuf_puts(&summary, e->devices[d].provider ? e->devices[d].provider
                                                   : "-");
    het_sbuf_printf(&summary, ": peak %s, ",
                    het_explain_fmt_bytes(t, sizeof t,
                                          (double)e->devices[d].planned_peak));
    het_explain_memory_line(&summary, &e->devices[d]);
  }
  if (e->node_times) {
    het_sbuf_puts(&summary, "\n");
    het_explain_node_times_line(&summary, e);
  }
  if (summary.failed)
    b->failed = true;
  het_sbuf_dot_text(b, summary.data);
  free(summary.data);
  het_sbuf_puts(b, "\"];\n  node [style=\"rounded,filled\", "
                   "fontname=\"Helvetica\", fontsize=10];\n  edge "
                   "[fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n");
  dot_legend(e, b);
  dot_clusters(e, b);
  dot_edges(e, b);
  het_sbuf_puts(b, "}\n");
}
