/* explain_format_text.c — the plain-text placement report (partview's
 * default and `hetrt run --explain`): warnings, every node with provider,
 * precision, subgraph, estimate (with node times: the estimate, the measured time and
 * their ratio), what placed it and reason, the subgraphs, the
 * boundary nodes with the bytes they move, planned peak memory per device
 * (next to the arena, the sum of all intermediates without reuse and the
 * weights), the policy's rules with the nodes each matched, how many nodes
 * were estimated with unknown dims, the node times' totals, and the cost
 * estimates.  Also the
 * "rules" format: warnings and rules only (`hetrt policy check`).
 */
#include <stdio.h>
#include <string.h>

#include "report/explain_format.h"

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

static int text_width(const char *s, int w) {
  int n = (int)strlen(or_dash(s));
  return n > w ? (n > 40 ? 40 : n) : w;
}

/* The time columns of node n: the estimate, and with node times the
 * provider's estimate, the measured time and their ratio ("-" where the
 * file has none). */
static void text_node_times(const het_explain *e, const het_explain_node *n,
                            het_sbuf *b) {
  char t[32], m[32], r[32];
  if (!e->node_times) {
    het_sbuf_printf(b, "%10s",
                    het_explain_fmt_seconds(t, sizeof t, n->est_seconds));
    return;
  }
  bool have = n->measured_seconds >= 0;
  snprintf(r, sizeof r, "-");
  if (n->measured_seconds > 0)
    snprintf(r, sizeof r, "%.2f", n->model_seconds / n->measured_seconds);
  const char *meas =
      have ? het_explain_fmt_seconds(m, sizeof m, n->measured_seconds) : "-";
  het_sbuf_printf(b, "%10s  %10s  %8s",
                  het_explain_fmt_seconds(t, sizeof t, n->model_seconds), meas,
                  r);
}

static void text_nodes(const het_explain *e, het_sbuf *b) {
  int wn = 4, wo = 7, wp = 8, wb = 9;
  for (int i = 0; i < e->n_nodes; i++) {
    wn = text_width(e->nodes[i].name, wn);
    wo = text_width(e->nodes[i].op_type, wo);
    wp = text_width(e->nodes[i].provider, wp);
    wb = text_width(e->nodes[i].placed_by, wb);
  }
  het_sbuf_printf(b, "nodes (%d):\n", e->n_nodes);
  het_sbuf_printf(b, "  %4s  %-*s  %-*s  %-*s  %-4s  %4s  ", "#", wn, "name",
                  wo, "op_type", wp, "provider", "prec", "sg");
  if (e->node_times)
    het_sbuf_printf(b, "%10s  %10s  %8s", "estimate", "measured", "est/meas");
  else
    het_sbuf_printf(b, "%10s", "estimate");
  het_sbuf_printf(b, "  %-*s  %s\n", wb, "placed by", "reason");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    char sg[16];
    if (n->subgraph >= 0)
      snprintf(sg, sizeof sg, "%d", n->subgraph);
    else
      snprintf(sg, sizeof sg, "-");
    het_sbuf_printf(b, "  %4d  %-*s  %-*s  %-*s  %-4s  %4s  ", i, wn,
                    or_dash(n->name), wo, or_dash(n->op_type), wp,
                    or_dash(n->provider), or_dash(n->precision), sg);
    text_node_times(e, n, b);
    het_sbuf_printf(b, "  %-*s  %s\n", wb, or_dash(n->placed_by),
                    or_dash(n->reason));
  }
}

static void text_subgraphs(const het_explain *e, het_sbuf *b) {
  het_sbuf_printf(b, "\nsubgraphs (%d):\n", e->n_subgraphs);
  het_sbuf_printf(b, "  %4s  %-10s  %6s  %10s\n", "sg", "provider", "nodes",
                  "estimate");
  for (int s = 0; s < e->n_subgraphs; s++) {
    const het_explain_subgraph *g = &e->subgraphs[s];
    char t[32];
    het_sbuf_printf(b, "  %4d  %-10s  %6d  %10s\n", s, or_dash(g->provider),
                    g->n_nodes,
                    het_explain_fmt_seconds(t, sizeof t, g->est_seconds));
  }
}

/* Names last: copy names embed tensor names and can be long. */
static void text_boundaries(const het_explain *e, het_sbuf *b) {
  int count = 0;
  double total = 0.0;
  char h[32];
  for (int i = 0; i < e->n_nodes; i++)
    if (e->nodes[i].boundary) {
      count++;
      total += e->nodes[i].bytes;
    }
  het_sbuf_printf(b, "\nboundary nodes (%d):\n", count);
  if (count == 0)
    return;
  het_sbuf_printf(b, "  %4s  %-6s  %-16s  %-24s  %s\n", "#", "kind",
                  "from -> to", "bytes", "name");
  for (int i = 0; i < e->n_nodes; i++) {
    const het_explain_node *n = &e->nodes[i];
    if (!n->boundary)
      continue;
    char dir[96], bytes[64];
    snprintf(dir, sizeof dir, "%s -> %s",
             or_dash(het_explain_boundary_source(e, i)), or_dash(n->provider));
    snprintf(bytes, sizeof bytes, "%.0f (%s)", n->bytes,
             het_explain_fmt_bytes(h, sizeof h, n->bytes));
    het_sbuf_printf(b, "  %4d  %-6s  %-16s  %-24s  %s\n", i, n->boundary, dir,
                    bytes, or_dash(n->name));
  }
  het_sbuf_printf(b, "  total moved: %.0f bytes (%s)\n", total,
                  het_explain_fmt_bytes(h, sizeof h, total));
}

static void text_devices(const het_explain *e, het_sbuf *b) {
  het_sbuf_printf(b, "\nplanned peak memory per device (%d):\n", e->n_devices);
  for (int d = 0; d < e->n_devices; d++) {
    const het_explain_device *dev = &e->devices[d];
    char p[32], c[32];
    het_sbuf_printf(b, "  %-10s  peak %s (%zu bytes)", or_dash(dev->provider),
                    het_explain_fmt_bytes(p, sizeof p, (double)dev->planned_peak),
                    dev->planned_peak);
    if (dev->capacity == 0)
      het_sbuf_puts(b, " of unlimited capacity\n");
    else
      het_sbuf_printf(b, " of %s capacity (%.0f%%)%s\n",
                      het_explain_fmt_bytes(c, sizeof c, (double)dev->capacity),
                      100.0 * (double)dev->planned_peak / (double)dev->capacity,
                      dev->planned_peak > dev->capacity ? "  OVER CAPACITY" : "");
    het_sbuf_puts(b, "              ");
    het_explain_memory_line(b, dev);
    het_sbuf_printf(b, "\n              bytes: arena %zu, intermediates %zu, "
                       "weights %zu\n",
                    dev->arena, dev->intermediates, dev->weights);
  }
}

/* The QDQ islands the optimizer weighed, kept-float ones first. */
static void text_islands(const het_explain *e, het_sbuf *b) {
  if (!e->n_islands)
    return;
  int fused = 0, unknown = 0;
  for (int i = 0; i < e->n_islands; i++) {
    fused += e->islands[i].fused;
    unknown += e->islands[i].unknown_dims;
  }
  het_sbuf_printf(b,
                  "\nQDQ islands weighed (%d): %d int8 on %s, %d kept float "
                  "(float form estimated cheaper)",
                  e->n_islands, fused, or_dash(e->islands_int8_on),
                  e->n_islands - fused);
  if (unknown)
    het_sbuf_printf(b, "; %d weighed with unknown dims taken as 1 (marked ?)",
                    unknown);
  het_sbuf_printf(b, "\n  %-9s  %10s  %10s  %-8s  %s\n", "precision",
                  "int8 est", "float est", "float on", "name");
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < e->n_islands; i++) {
      const het_explain_island *x = &e->islands[i];
      if (x->fused != (pass == 1))
        continue;
      char t8[32], tf[32];
      het_sbuf_printf(
          b, "  %-9s  %10s  %10s  %-8s  %s%s\n", x->fused ? "int8" : "float",
          het_explain_fmt_seconds(t8, sizeof t8, x->int8_seconds),
          het_explain_fmt_seconds(tf, sizeof tf, x->float_seconds),
          or_dash(x->float_on), or_dash(x->name), x->unknown_dims ? " ?" : "");
    }
}

static void text_rules(const het_explain *e, het_sbuf *b) {
  het_sbuf_printf(b, "policy rules (%d):\n", e->n_rules);
  for (int r = 0; r < e->n_rules; r++) {
    const het_explain_rule *x = &e->rules[r];
    het_sbuf_printf(b, "  %s (%s): %s: %d node%s", or_dash(x->label),
                    or_dash(x->where), or_dash(x->actions), x->n_nodes,
                    x->n_nodes == 1 ? "" : "s");
    if (x->n_unknown)
      het_sbuf_printf(b, ", %d not tested (shape unknown)", x->n_unknown);
    if (x->n_fallback)
      het_sbuf_printf(b, ", %d not followed", x->n_fallback);
    if (x->note)
      het_sbuf_printf(b, " (%s)", x->note);
    het_sbuf_putc(b, '\n');
    for (int i = 0; i < x->n_nodes; i++)
      het_sbuf_printf(b, "      %s\n", or_dash(x->nodes[i]));
  }
}

/* The estimate's confidence: how many nodes were costed blind. */
static void text_unknown(const het_explain *e, het_sbuf *b) {
  if (!e->n_unknown)
    return;
  het_sbuf_printf(b,
                  "estimated with unknown dims: %d of %d nodes (e.g. '%s'); "
                  "the total below is a guess: give the shapes to plan for "
                  "(--shape NAME=DIMS, option shape, policy shapes:)\n",
                  e->n_unknown, e->n_model_nodes, or_dash(e->unknown_example));
}

void het_explain_render_rules(const het_explain *e, het_sbuf *b) {
  for (int w = 0; w < e->n_warnings; w++)
    het_sbuf_printf(b, "warning: %s\n", or_dash(e->warnings[w]));
  text_rules(e, b);
}

void het_explain_render_text(const het_explain *e, het_sbuf *b) {
  char t[32];
  het_sbuf_printf(b, "placement report: %s\nalgorithm: %s\n", or_dash(e->model),
                  or_dash(e->algorithm));
  if (e->plan)
    het_sbuf_printf(b, "plan: %s (made by %s): %s here%s%s\n", e->plan,
                    or_dash(e->plan_made), or_dash(e->plan_grade),
                    e->plan_why ? ": " : "", e->plan_why ? e->plan_why : "");
  for (int w = 0; w < e->n_warnings; w++)
    het_sbuf_printf(b, "warning: %s\n", or_dash(e->warnings[w]));
  het_sbuf_putc(b, '\n');
  text_nodes(e, b);
  text_subgraphs(e, b);
  text_boundaries(e, b);
  text_devices(e, b);
  text_islands(e, b);
  if (e->n_rules) {
    het_sbuf_putc(b, '\n');
    text_rules(e, b);
  }
  het_sbuf_putc(b, '\n');
  text_unknown(e, b);
  if (e->node_times) {
    het_explain_node_times_line(b, e);
    het_sbuf_putc(b, '\n');
  }
  het_sbuf_printf(b, "estimated total: %s (%d subgraph%s)\n",
                  het_explain_fmt_seconds(t, sizeof t, e->est_total),
                  e->n_subgraphs, e->n_subgraphs == 1 ? "" : "s");
  het_explain_summary_line(b, e);
  het_sbuf_putc(b, '\n');
  het_explain_regimes_text(e, b);
}
