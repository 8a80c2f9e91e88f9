/* explain_format_regimes.c — the shape regimes of a placement report: the
 * partitions a session made at run time for input shapes unlike those it
 * was planned for, and what the first run of each range of shapes
 * decided, as text, JSON and HTML.  Nothing is written for a session that
 * keeps one partition for every shape.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/explain_format.h"

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* "made by run 3: 35.2 ms with regime 0's placement, 12.1 ms re-planned;
 * 4 nodes placed differently (a emu->cpu, ...)" */
static void regime_line(const het_explain_regime *g, int k, het_sbuf *b) {
  char t0[32], t1[32];
  if (g->stored)
    het_sbuf_printf(b, "stored in the plan: estimated %s; %d node%s placed "
                       "unlike regime 0",
                    het_explain_fmt_seconds(t1, sizeof t1, g->est_after),
                    g->n_moved, g->n_moved == 1 ? "" : "s");
  else if (!k) {
    het_sbuf_puts(b, "made at session creation");
    return;
  } else {
    if (g->run)
      het_sbuf_printf(b, "made by run %ld", g->run);
    else
      het_sbuf_puts(b, "made before any run");
    het_sbuf_printf(b, ": %s with regime %d's placement, %s "
                       "re-planned; %d node%s placed differently",
                    het_explain_fmt_seconds(t0, sizeof t0, g->est_before),
                    g->from,
                    het_explain_fmt_seconds(t1, sizeof t1, g->est_after),
                    g->n_moved, g->n_moved == 1 ? "" : "s");
  }
  if (g->n_moved)
    het_sbuf_printf(b, " (%s)", or_dash(g->moved));
}

static void choice_line(const het_explain_regime_choice *c, het_sbuf *b) {
  char t0[32], t1[32];
  if (c->run)
    het_sbuf_printf(b, "run %ld, ", c->run);
  else
    het_sbuf_puts(b, "planned, ");
  het_sbuf_printf(b, "%s: regime %d (%s", or_dash(c->shapes), c->regime,
                  or_dash(c->why));
  if (!isnan(c->est_kept))
    het_sbuf_printf(b, "; regime %d's placement %s, re-planned %s", c->kept,
                    het_explain_fmt_seconds(t0, sizeof t0, c->est_kept),
                    het_explain_fmt_seconds(t1, sizeof t1, c->est_best));
  het_sbuf_putc(b, ')');
  if (c->failure)
    het_sbuf_printf(b, ": %s", c->failure);
}

void het_explain_regimes_text(const het_explain *e, het_sbuf *b) {
  if (!e->replans)
    return;
  if (e->regimes_stored)
    het_sbuf_puts(b, "\nshape regimes (stored in the plan: a run's shapes "
                     "take the regime planned for their range, or the "
                     "nearest):\n");
  else
    het_sbuf_printf(b, "\nshape regimes (a new placement when the estimate "
                       "for a run's shapes drops by %.0f%% or more; at most "
                       "%d):\n",
                    e->replan_gain * 100, e->max_regimes);
  for (int k = 0; k < e->n_regimes; k++) {
    het_sbuf_printf(b, "  regime %d: %s, ", k, or_dash(e->regimes[k].shapes));
    regime_line(&e->regimes[k], k, b);
    het_sbuf_putc(b, '\n');
  }
  if (!e->n_choices) {
    het_sbuf_puts(b, "  no run has yet seen shapes unlike those planned "
                     "for\n");
    return;
  }
  het_sbuf_puts(b, "  first runs (or plans) of new ranges of shapes:\n");
  for (int i = 0; i < e->n_choices; i++) {
    het_sbuf_puts(b, "    ");
    choice_line(&e->choices[i], b);
    het_sbuf_putc(b, '\n');
  }
}

void het_explain_regimes_json(const het_explain *e, het_sbuf *b) {
  if (!e->replans)
    return;
  het_sbuf_puts(b, "  \"replan_gain\": ");
  het_sbuf_json_num(b, e->replan_gain);
  het_sbuf_printf(b, ",\n  \"max_regimes\": %d,\n  \"regimes_stored\": %s,"
                     "\n  \"regimes\": [",
                  e->max_regimes, e->regimes_stored ? "true" : "false");
  for (int k = 0; k < e->n_regimes; k++) {
    const het_explain_regime *g = &e->regimes[k];
    het_sbuf_printf(b, "%s{\"index\":%d,\"shapes\":", k ? ",\n    " : "\n    ",
                    k);
    het_sbuf_json_str(b, g->shapes);
    het_sbuf_printf(b, ",\"run\":%ld,\"from\":%d,\"est_before_seconds\":",
                    g->run, g->from);
    het_sbuf_json_num(b, g->est_before);
    het_sbuf_puts(b, ",\"est_seconds\":");
    het_sbuf_json_num(b, g->est_after);
    het_sbuf_printf(b, ",\"moved_nodes\":%d,\"moved\":", g->n_moved);
    het_sbuf_json_str(b, g->moved);
    het_sbuf_printf(b, ",\"stored\":%s}", g->stored ? "true" : "false");
  }
  het_sbuf_puts(b, e->n_regimes ? "\n  ],\n  \"regime_choices\": ["
                                : "],\n  \"regime_choices\": [");
  for (int i = 0; i < e->n_choices; i++) {
    const het_explain_regime_choice *c = &e->choices[i];
    het_sbuf_printf(b, "%s{\"run\":%ld,\"shapes\":", i ? ",\n    " : "\n    ",
                    c->run);
    het_sbuf_json_str(b, c->shapes);
    het_sbuf_printf(b, ",\"regime\":%d,\"kept\":%d,\"est_kept_seconds\":",
                    c->regime, c->kept);
    het_sbuf_json_num(b, c->est_kept);
    het_sbuf_puts(b, ",\"est_replanned_seconds\":");
    het_sbuf_json_num(b, c->est_best);
    het_sbuf_puts(b, ",\"why\":");
    het_sbuf_json_str(b, c->why);
    het_sbuf_puts(b, ",\"failure\":");
    het_sbuf_json_str(b, c->failure);
    het_sbuf_putc(b, '}');
  }
  het_sbuf_puts(b, e->n_choices ? "\n  ],\n" : "],\n");
}

/* line as an escaped list item; frees it. */
static void html_item(het_sbuf *line, het_sbuf *b) {
  het_sbuf_puts(b, "<li>");
  het_sbuf_html_text(b, line->data ? line->data : "");
  het_sbuf_puts(b, "</li>\n");
  if (line->failed)
    b->failed = true;
  free(line->data);
}

void het_explain_regimes_html(const het_explain *e, het_sbuf *b) {
  if (!e->replans)
    return;
  if (e->regimes_stored)
    het_sbuf_puts(b, "<h2>Shape regimes</h2>\n<p>Stored in the plan: a "
                     "run's shapes take the regime planned for their range, "
                     "or the nearest.</p>\n<ul>\n");
  else
    het_sbuf_printf(b, "<h2>Shape regimes</h2>\n<p>A new placement is made "
                       "when the estimate for a run's shapes drops by %.0f%% "
                       "or more (at most %d).</p>\n<ul>\n",
                    e->replan_gain * 100, e->max_regimes);
  for (int k = 0; k < e->n_regimes; k++) {
    het_sbuf line = {0};
    het_sbuf_printf(&line, "regime %d: %s, ", k, or_dash(e->regimes[k].shapes));
    regime_line(&e->regimes[k], k, &line);
    html_item(&line, b);
  }
  for (int i = 0; i < e->n_choices; i++) {
    het_sbuf line = {0};
    choice_line(&e->choices[i], &line);
    html_item(&line, b);
  }
  het_sbuf_puts(b, "</ul>\n");
}
