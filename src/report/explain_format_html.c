/* explain_format_html.c — the HTML placement report: one self-contained
 * file (inline CSS, a tiny inline script for sorting and filtering, an
 * inline SVG timeline of the subgraph estimates; no external references)
 * with the summary (with node times: the totals of each node's estimate
 * and measured time), warnings, devices, shape regimes, subgraphs,
 * boundary nodes and nodes (with node times: each node's estimate,
 * measured time and their ratio).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/explain_format.h"

static const char html_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<style>\n"
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\n"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;"
    "font-size:13px}\n"
    "th{background:#f0f0f0;cursor:pointer}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    ".sw{display:inline-block;width:.9em;height:.9em;border:1px solid #888;"
    "margin-right:4px;vertical-align:middle}\n"
    ".summary{font-size:15px;background:#f7f7f7;padding:.5em 1em;"
    "border-left:4px solid #1f78b4}\n"
    ".warn{color:#a33}\n.bar{background:#eee;width:120px;height:10px}\n"
    ".bar div{height:10px;background:#1f78b4}\n.over div{background:#d62728}\n"
    "</style>\n";

static const char html_script[] =
    "<script>\n"
    "document.querySelectorAll('table.sort th').forEach(function(th){\n"
    " th.onclick=function(){var t=th.closest('table'),b=t.tBodies[0],"
    "i=th.cellIndex,asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';\n"
    "  var r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){"
    "var p=x.cells[i].dataset.v,q=y.cells[i].dataset.v;\n"
    "   var k=(p!==undefined&&q!==undefined)?(p-q):x.cells[i].textContent"
    ".localeCompare(y.cells[i].textContent);return asc?k:-k;});\n"
    "  r.forEach(function(x){b.appendChild(x);});};});\n"
    "var f=document.getElementById('filter');\n"
    "f.oninput=function(){var v=f.value.toLowerCase();"
    "document.querySelectorAll('#nodes tbody tr').forEach(function(r){\n"
    " r.style.display=r.textContent.toLowerCase().indexOf(v)<0?'none':'';});};\n"
    "</script>\n";

static void html_cell(het_sbuf *b, const char *s) {
  het_sbuf_puts(b, "<td>");
  het_sbuf_html_text(b, s);
  het_sbuf_puts(b, "</td>");
}

static void html_provider(const het_explain *e, het_sbuf *b, const char *p) {
  het_sbuf_printf(b, "<td><span class=\"sw\" style=\"background:%s\"></span>",
                  het_explain_provider_color(e, p));
  het_sbuf_html_text(b, p);
  het_sbuf_puts(b, "</td>");
}

static void html_seconds(het_sbuf *b, double s) {
  char t[32];
  het_sbuf_printf(b, "<td class=\"n\" data-v=\"%.9g\">%s</td>", s,
                  het_explain_fmt_seconds(t, sizeof t, s));
}

static void html_bytes(het_sbuf *b, double v) {
  char t[32];
  het_sbuf_printf(b, "<td class=\"n\" data-v=\"%.0f\">%s</td>", v,
                  het_explain_fmt_bytes(t, sizeof t, v));
}

/* Subgraphs as consecutive bars, widths proportional to their estimates. */
static void html_timeline(const het_explain *e, het_sbuf *b) {
  const double width = 900.0;
  double sum = 0.0, x = 0.0;
  for (int s = 0; s < e->n_subgraphs; s++)
    if (e->subgraphs[s].est_seconds > 0.0)
      sum += e->subgraphs[s].est_seconds;
  if (e->n_subgraphs == 0)
    return;
  het_sbuf_puts(b, "<h2>Timeline (estimated, sequential)</h2>\n"
                   "<svg width=\"900\" height=\"28\" role=\"img\">\n");
  for (int s = 0; s < e->n_subgraphs; s++) {
    const het_explain_subgraph *g = &e->subgraphs[s];
    double v = g->est_seconds > 0.0 ? g->est_seconds : 0.0;
    double w = sum > 0.0 ? width * v / sum : width / e->n_subgraphs;
    if (!(w >= 0.0))
      w = 0.0;
    char t[32];
    het_sbuf_printf(b, "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"24\" "
                       "fill=\"%s\" stroke=\"#555\"><title>subgraph %d: ",
                    x, w, het_explain_provider_color(e, g->provider), s);
    het_sbuf_html_text(b, g->provider);
    het_sbuf_printf(b, ", %d node%s, %s</title></rect>\n", g->n_nodes,
                    g->n_nodes == 1 ? "" : "s",
                    het_explain_fmt_seconds(t, sizeof t, g->est_seconds));
    if (w > 40.0) {
      het_sbuf_printf(b, "<text x=\"%.1f\" y=\"19\" font-size=\"12\">", x + 4);
      het_sbuf_html_text(b, g->provider);
      het_sbuf_puts(b, "</text>\n");
    }
    x += w;
  }
  het_sbuf_puts(b, "</svg>\n");
}

static void html_summary(const het_explain *e, het_sbuf *b) {
  char t[32];
  het_sbuf_puts(b, "<title>hetrt placement: ");
  het_sbuf_html_text(b, e->model);
  het_sbuf_puts(b, "</title>\n</head>\n<body>\n<h1>Placement report</h1>\n"
                   "<p>model <b>");
  het_sbuf_html_text(b, e->model);
  het_sbuf_puts(b, "</b>, algorithm <b>");
  het_sbuf_html_text(b, e->algorithm);
  het_sbuf_printf(b, "</b>, %d nodes, %d subgraphs</p>\n<div class=\"summary\">"
                     "<p>estimated total: <b>%s</b></p>\n<p>",
                  e->n_nodes, e->n_subgraphs,
                  het_explain_fmt_seconds(t, sizeof t, e->est_total));
  het_sbuf line = {0};
  het_explain_summary_line(&line, e);
  if (line.failed)
    b->failed = true;
  het_sbuf_html_text(b, line.data);
  free(line.data);
  het_sbuf_puts(b, "</p>");
  if (e->node_times) {
    het_sbuf times = {0};
    het_explain_node_times_line(&times, e);
    if (times.failed)
      b->failed = true;
    het_sbuf_puts(b, "\n<p>");
    het_sbuf_html_text(b, times.data);
    het_sbuf_puts(b, "</p>");
    free(times.data);
  }
  het_sbuf_puts(b, "</div>\n");
  if (e->plan) {
    het_sbuf_puts(b, "<p>plan <b>");
    het_sbuf_html_text(b, e->plan);
    het_sbuf_puts(b, "</b> (made by ");
    het_sbuf_html_text(b, e->plan_made);
    het_sbuf_puts(b, "): ");
    het_sbuf_html_text(b, e->plan_grade);
    het_sbuf_puts(b, " here");
    if (e->plan_why) {
      het_sbuf_puts(b, ": ");
      het_sbuf_html_text(b, e->plan_why);
    }
    het_sbuf_puts(b, "</p>\n");
  }
  if (e->n_warnings) {
    het_sbuf_puts(b, "<h2>Warnings</h2>\n<ul class=\"warn\">\n");
    for (int w = 0; w < e->n_warnings; w++) {
      het_sbuf_puts(b, "<li>");
      het_sbuf_html_text(b, e->warnings[w]);
      het_sbuf_puts(b, "</li>\n");
    }
    het_sbuf_puts(b, "</ul>\n");
  }
}

static void html_devices(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "<h2>Planned peak memory per device</h2>\n<table "
                   "class=\"sort\" id=\"devices\"><thead><tr><th>provider</th>"
                   "<th>planned peak</th><th>arena</th><th>intermediates "
                   "without reuse</th><th>weights</th><th>capacity</th>"
                   "<th>use</th></tr></thead><tbody>\n");
  for (int d = 0; d < e->n_devices; d++) {
    const het_explain_device *dev = &e->devices[d];
    het_sbuf_puts(b, "<tr>");
    html_provider(e, b, dev->provider);
    html_bytes(b, (double)dev->planned_peak);
    if (dev->estimated)
      het_sbuf_puts(b, "<td data-v=\"0\">no plan</td>");
    else
      html_bytes(b, (double)dev->arena);
    html_bytes(b, (double)dev->intermediates);
    html_bytes(b, (double)dev->weights);
    if (dev->capacity == 0) {
      het_sbuf_puts(b, "<td data-v=\"0\">unlimited</td><td></td></tr>\n");
      continue;
    }
    html_bytes(b, (double)dev->capacity);
    double pct = 100.0 * (double)dev->planned_peak / (double)dev->capacity;
    het_sbuf_printf(b, "<td data-v=\"%.2f\"><div class=\"bar%s\"><div "
                       "style=\"width:%.0f%%\"></div></div>%.0f%%</td></tr>\n",
                    pct, pct > 100.0 ? " over" : "", pct > 100.0 ? 100.0 : pct,
                    pct);
  }
  het_sbuf_puts(b, "</tbody></table>\n");
}

static void html_islands(const het_explain *e, het_sbuf *b) {
  if (!e->n_islands)
    return;
  het_sbuf_puts(b, "<h2>QDQ islands weighed (int8 on ");
  het_sbuf_html_text(b, e->islands_int8_on);
  het_sbuf_puts(b, ")</h2>\n<table class=\"sort\" id=\"islands\">"
                   "<thead><tr><th>name</th><th>precision</th><th>int8 "
                   "estimate</th><th>float estimate</th><th>float on</th>"
                   "<th>dims</th></tr>"
                   "</thead><tbody>\n");
  for (int i = 0; i < e->n_islands; i++) {
    const het_explain_island *x = &e->islands[i];
    het_sbuf_puts(b, "<tr>");
    html_cell(b, x->name);
    html_cell(b, x->fused ? "int8" : "float");
    html_seconds(b, x->int8_seconds);
    html_seconds(b, x->float_seconds);
    html_cell(b, x->float_on);
    html_cell(b, x->unknown_dims ? "unknown, taken as 1" : "known");
    het_sbuf_puts(b, "</tr>\n");
  }
  het_sbuf_puts(b, "</tbody></table>\n");
}

static void html_subgraphs(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "<h2>Subgraphs</h2>\n<table class=\"sort\" id=\"subgraphs\">"
                   "<thead><tr><th>#</th><th>provider</th><th>nodes</th>"
                   "<th>estimate</th></tr></thead><tbody>\n");
  for (int s = 0; s < e->n_subgraphs; s++) {
    const het_explain_subgraph *g = &e->subgraphs[s];
    het_sbuf_printf(b, "<tr><td class=\"n\" data-v=\"%d\">%d</td>", s, s);
    html_provider(e, b, g->provider);
    het_sbuf_printf(b, "<td class=\"n\" data-v=\"%d\">%d</td>", g->n_nodes,
                    g->n_nodes);
    html_seconds(b, g->est_seconds);
    het_sbuf_puts(b, "</tr>\n");
  }
  het_sbuf_puts(b, "</tbody></table>\n");
}

static void html_boundaries(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "<h2>Boundary nodes</h2>\n<table class=\"sort\" "
                   "id=\"boundaries\"><thead><tr><th>#</th><th>name</th>"
                   "<th>kind</th><th>from</th><th>to</th><th>bytes</th></tr>"
                   "</thead><tbody>\n");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    if (!n->boundary)
      continue;
    het_sbuf_printf(b, "<tr><td class=\"n\" data-v=\"%d\">%d</td>", i, i);
    html_cell(b, n->name);
    html_cell(b, n->boundary);
    html_provider(e, b, het_explain_boundary_source(e, i));
    html_provider(e, b, n->provider);
    html_bytes(b, n->bytes);
    het_sbuf_puts(b, "</tr>\n");
  }
  het_sbuf_puts(b, "</tbody></table>\n");
}

/* With node times: the measured time and estimate / measured of node n
 * ("-", sorted first, where the file has none). */
static void html_measured(het_sbuf *b, const het_explain_node *n) {
  if (n->measured_seconds < 0) {
    het_sbuf_puts(b, "<td class=\"n\" data-v=\"-1\">-</td>"
                     "<td class=\"n\" data-v=\"-1\">-</td>");
    return;
  }
  html_seconds(b, n->measured_seconds);
  if (n->measured_seconds > 0) {
    double r = n->model_seconds / n->measured_seconds;
    het_sbuf_printf(b, "<td class=\"n\" data-v=\"%.6g\">%.2f</td>", r, r);
  } else {
    het_sbuf_puts(b, "<td class=\"n\" data-v=\"-1\">-</td>");
  }
}

static void html_nodes(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, "<h2>Nodes</h2>\n<p><input id=\"filter\" "
                   "placeholder=\"filter nodes\"></p>\n<table class=\"sort\" "
                   "id=\"nodes\"><thead><tr><th>#</th><th>name</th>"
                   "<th>op_type</th><th>provider</th><th>precision</th>"
                   "<th>subgraph</th>"
                   "<th>estimate</th>");
  if (e->node_times)
    het_sbuf_puts(b, "<th>measured</th><th>estimate / measured</th>");
  het_sbuf_puts(b, "<th>placed by</th><th>reason</th></tr></thead><tbody>\n");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    het_sbuf_printf(b, "<tr><td class=\"n\" data-v=\"%d\">%d</td>", i, i);
    html_cell(b, n->name);
    html_cell(b, n->op_type ? n->op_type : n->boundary);
    html_provider(e, b, n->provider);
    html_cell(b, n->precision);
    het_sbuf_printf(b, "<td class=\"n\" data-v=\"%d\">%d</td>", n->subgraph,
                    n->subgraph);
    html_seconds(b, e->node_times ? n->model_seconds : n->est_seconds);
    if (e->node_times)
      html_measured(b, n);
    html_cell(b, n->placed_by);
    html_cell(b, n->reason);
    het_sbuf_puts(b, "</tr>\n");
  }
  het_sbuf_puts(b, "</tbody></table>\n");
}

void het_explain_render_html(const het_explain *e, het_sbuf *b) {
  het_sbuf_puts(b, html_head);
  html_summary(e, b);
  html_timeline(e, b);
  html_devices(e, b);
  html_islands(e, b);
  het_explain_regimes_html(e, b);
  html_subgraphs(e, b);
  html_boundaries(e, b);
  html_nodes(e, b);
  het_sbuf_puts(b, html_script);
  het_sbuf_puts(b, "</body>\n</html>\n");
}
