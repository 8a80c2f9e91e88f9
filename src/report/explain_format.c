/* explain_format.c — het_explain_format(): checks a placement report for
 * consistency (indices in range) and dispatches to the text, JSON, DOT or
 * HTML renderer; also the shared string buffer, escaping, units, provider
 * palette and the "cost vs priority" line the renderers use.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "report/explain_format.h"

/* ---- string buffer -------------------------------------------------------- */

static bool sbuf_reserve(het_sbuf *b, size_t extra) {
  if (b->failed)
    return false;
  if (b->len + extra + 1 <= b->cap)
    return true;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->len + extra + 1) {
    if (cap > ((size_t)-1) / 2) {
      b->failed = true;
      return false;
    }
    cap *= 2;
  }
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

void het_sbuf_puts(het_sbuf *b, const char *s) {
  size_t n = strlen(s);
  if (!sbuf_reserve(b, n))
    return;
  memcpy(b->data + b->len, s, n + 1);
  b->len += n;
}

void het_sbuf_put(het_sbuf *b, const void *data, size_t n) {
  if (!sbuf_reserve(b, n))
    return;
  if (n)
    memcpy(b->data + b->len, data, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void het_sbuf_putc(het_sbuf *b, char c) {
  if (!sbuf_reserve(b, 1))
    return;
  b->data[b->len++] = c;
  b->data[b->len] = '\0';
}

void het_sbuf_printf(het_sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = true;
    return;
  }
  if (!sbuf_reserve(b, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

het_status het_sbuf_finish(het_sbuf *b, char **out) {
  if (!b->failed && !b->data)
    het_sbuf_puts(b, "");
  if (b->failed) {
    free(b->data);
    *b = (het_sbuf){0};
    return het_error(HET_ERR_OUT_OF_MEMORY, "explain: out of memory");
  }
  *out = b->data;
  *b = (het_sbuf){0};
  return HET_OK;
}

/* ---- escaping ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static int utf8_len(const unsigned char *s) {
  int n;
  unsigned min;
  unsigned cp;
  if (s[0] < 0x80)
    return 1;
  if ((s[0] & 0xE0) == 0xC0) {
    n = 2, min = 0x80, cp = s[0] & 0x1F;
  } else if ((s[0] & 0xF0) == 0xE0) {
    n = 3, min = 0x800, cp = s[0] & 0x0F;
  } else if ((s[0] & 0xF8) == 0xF0) {
    n = 4, min = 0x10000, cp = s[0] & 0x07;
  } else {
    return 0;
  }
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

void het_sbuf_json_str(het_sbuf *b, const char *s) {
  if (!s) {
    het_sbuf_puts(b, "null");
    return;
  }
  het_sbuf_putc(b, '"');
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned char c = *p;
    int n = utf8_len(p);
    if (c == '"' || c == '\\') {
      het_sbuf_putc(b, '\\');
      het_sbuf_putc(b, (char)c);
    } else if (c == '\n') {
      het_sbuf_puts(b, "\\n");
    } else if (c == '\t') {
      het_sbuf_puts(b, "\\t");
    } else if (c == '\r') {
      het_sbuf_puts(b, "\\r");
    } else if (c < 0x20 || c == 0x7F) {
      het_sbuf_printf(b, "\\u%04x", c);
    } else if (n == 0) {
      het_sbuf_puts(b, "\\ufffd");
      n = 1;
    } else {
      for (int i = 0; i < n; i++)
        het_sbuf_putc(b, (char)p[i]);
    }
    p += n ? n : 1;
  }
  het_sbuf_putc(b, '"');
}

void het_sbuf_json_num(het_sbuf *b, double v) {
  if (!isfinite(v))
    het_sbuf_puts(b, "null");
  else
    het_sbuf_printf(b, "%.9g", v);
}

void het_sbuf_dot_text(het_sbuf *b, const char *s) {
  if (!s)
    return;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      het_sbuf_putc(b, '\\');
      het_sbuf_putc(b, (char)*p);
    } else if (*p == '\n') {
      het_sbuf_puts(b, "\\n");
    } else if (*p < 0x20 || *p == 0x7F) {
      het_sbuf_putc(b, ' ');
    } else {
      het_sbuf_putc(b, (char)*p);
    }
  }
}

void het_sbuf_html_text(het_sbuf *b, const char *s) {
  if (!s)
    return;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '&': het_sbuf_puts(b, "&amp;"); break;
    case '<': het_sbuf_puts(b, "&lt;"); break;
    case '>': het_sbuf_puts(b, "&gt;"); break;
    case '"': het_sbuf_puts(b, "&quot;"); break;
    case '\'': het_sbuf_puts(b, "&#39;"); break;
    default:
      het_sbuf_putc(b, (char)(*p < 0x20 && *p != '\n' && *p != '\t' ? ' ' : *p));
    }
  }
}

/* ---- units, colours, summary ------------------------------------------------ */

const char *het_explain_fmt_seconds(char *buf, size_t cap, double s) {
  if (!isfinite(s))
    snprintf(buf, cap, "%s", isnan(s) ? "n/a" : "inf");
  else if (s >= 1.0)
    snprintf(buf, cap, "%.2f s", s);
  else if (s >= 1e-3 || s == 0.0)
    snprintf(buf, cap, "%.2f ms", s * 1e3);
  else if (s >= 1e-6)
    snprintf(buf, cap, "%.2f us", s * 1e6);
  else
    snprintf(buf, cap, "%.2f ns", s * 1e9);
  return buf;
}

const char *het_explain_fmt_bytes(char *buf, size_t cap, double bytes) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (!isfinite(bytes) || bytes < 1024.0) {
    snprintf(buf, cap, "%.0f B", bytes);
    return buf;
  }
  double v = bytes / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 3) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, cap, "%.2f %s", v, units[u]);
  return buf;
}

void het_explain_memory_line(het_sbuf *b, const het_explain_device *dev) {
  char a[32], i[32], w[32];
  het_explain_fmt_bytes(i, sizeof i, (double)dev->intermediates);
  het_explain_fmt_bytes(w, sizeof w, (double)dev->weights);
  if (dev->estimated) {
    het_sbuf_printf(b, "no plan (symbolic input shapes): intermediates %s "
                       "without reuse, weights %s", i, w);
    return;
  }
  het_sbuf_printf(b, "arena %s vs intermediates %s without reuse",
                  het_explain_fmt_bytes(a, sizeof a, (double)dev->arena), i);
  if (dev->arena > 0)
    het_sbuf_printf(b, " (%.1fx)",
                    (double)dev->intermediates / (double)dev->arena);
  het_sbuf_printf(b, ", weights %s", w);
}

static bool str_eq(const char *a, const char *b) {
  return a && b && strcmp(a, b) == 0;
}

const char *het_explain_provider_color(const het_explain *e,
                                       const char *provider) {
  static const char *const fixed[][2] = {
      {"cpu", "#a6cee3"}, {"emu", "#fdbf6f"}, {"cuda", "#b2df8a"},
      {"int8", "#cab2d6"}, {"host", "#e0e0e0"}};
  static const char *const others[] = {"#fb9a99", "#ffff99", "#8dd3c7",
                                       "#e5d8bd", "#bc80bd", "#ccebc5",
                                       "#d9d9d9", "#fddaec"};
  const int n_fixed = (int)(sizeof fixed / sizeof fixed[0]);
  const int n_others = (int)(sizeof others / sizeof others[0]);
  if (!provider)
    return "#ffffff";
  for (int i = 0; i < n_fixed; i++)
    if (strcmp(provider, fixed[i][0]) == 0)
      return fixed[i][1];
  /* Rank of provider among the distinct non-fixed names, devices first;
   * names past the palette's length share its colours. */
  const char *seen[sizeof others / sizeof others[0]];
  int n_seen = 0;
  int total = e->n_devices + e->n_nodes;
  for (int k = 0; k < total; k++) {
    const char *p = k < e->n_devices ? e->devices[k].provider
                                     : e->nodes[k - e->n_devices].provider;
    if (!p)
      continue;
    if (strcmp(p, provider) == 0)
      break;
    bool known = false;
    for (int i = 0; i < n_fixed && !known; i++)
      known = strcmp(p, fixed[i][0]) == 0;
    for (int j = 0; j < n_seen && !known; j++)
      known = strcmp(p, seen[j]) == 0;
    if (!known && n_seen < n_others)
      seen[n_seen++] = p;
  }
  return others[n_seen % n_others];
}

bool het_explain_edge_crosses(const het_explain *e, int k) {
  const het_explain_edge *ed = &e->edges[k];
  const char *a = e->nodes[ed->from].provider;
  const char *b = e->nodes[ed->to].provider;
  return !(a == b || str_eq(a, b));
}

bool het_explain_gain_percent(const het_explain *e, double *pct) {
  if (!isfinite(e->est_cost) || !isfinite(e->est_priority) ||
      e->est_priority <= 0.0)
    return false;
  *pct = (e->est_cost - e->est_priority) / e->est_priority * 100.0;
  return true;
}

void het_explain_summary_line(het_sbuf *b, const het_explain *e) {
  char c[32], p[32];
  double pct;
  het_sbuf_printf(b, "estimated latency: cost %s vs priority %s",
                  het_explain_fmt_seconds(c, sizeof c, e->est_cost),
                  het_explain_fmt_seconds(p, sizeof p, e->est_priority));
  if (het_explain_gain_percent(e, &pct))
    het_sbuf_printf(b, " (%+.0f%%)", pct);
  else
    het_sbuf_puts(b, " (n/a)");
}

const char *het_explain_boundary_source(const het_explain *e, int n) {
  for (int k = 0; k < e->n_edges; k++)
    if (e->edges[k].to == n)
      return e->nodes[e->edges[k].from].provider;
  return "host";
}

/* ---- entry point -------------------------------------------------------------- */

static het_status explain_check(const het_explain *e) {
  if (e->n_nodes < 0 || e->n_edges < 0 || e->n_subgraphs < 0 ||
      e->n_devices < 0 || e->n_warnings < 0 || e->n_islands < 0)
    return het_error(HET_ERR_INVALID_ARGUMENT, "explain: negative count");
  if ((e->n_nodes && !e->nodes) || (e->n_edges && !e->edges) ||
      (e->n_subgraphs && !e->subgraphs) || (e->n_devices && !e->devices) ||
      (e->n_warnings && !e->warnings) || (e->n_rules && !e->rules) ||
      (e->n_islands && !e->islands))
    return het_error(HET_ERR_INVALID_ARGUMENT, "explain: NULL array");
  for (int i = 0; i < e->n_nodes; i++) {
    int sg = e->nodes[i].subgraph;
    if (sg < -1 || sg >= e->n_subgraphs)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "explain: node '%s' has subgraph %d of %d",
                       e->nodes[i].name ? e->nodes[i].name : "?", sg,
                       e->n_subgraphs);
  }
  for (int k = 0; k < e->n_edges; k++) {
    const het_explain_edge *ed = &e->edges[k];
    if (ed->from < 0 || ed->from >= e->n_nodes || ed->to < 0 ||
        ed->to >= e->n_nodes)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "explain: edge '%s' joins nodes %d and %d of %d",
                       ed->value ? ed->value : "?", ed->from, ed->to,
                       e->n_nodes);
  }
  return HET_OK;
}

het_status het_explain_format(const het_explain *e, const char *format,
                              char **out) {
  static const struct {
    const char *name;
    void (*render)(const het_explain *, het_sbuf *);
  } formats[] = {{"text", het_explain_render_text},
                 {"json", het_explain_render_json},
                 {"dot", het_explain_render_dot},
                 {"html", het_explain_render_html},
                 {"rules", het_explain_render_rules}};
  if (!e || !format || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "explain: NULL report, format or output");
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    if (strcmp(format, formats[i].name) != 0)
      continue;
    HET_TRY(explain_check(e));
    het_sbuf b = {0};
    formats[i].render(e, &b);
    return het_sbuf_finish(&b, out);
  }
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "unknown explain format '%s' (expected text, json, dot or html)",
                   format);
}

void het_explain_node_times_line(het_sbuf *b, const het_explain *e) {
  char m[32], t[32];
  if (!e->node_times)
    return;
  het_sbuf_printf(b, "node times (%s): %d of %d compute nodes measured on "
                     "their provider; their estimate %s vs measured %s",
                  e->node_times, e->n_measured, e->n_compute,
                  het_explain_fmt_seconds(m, sizeof m, e->model_total),
                  het_explain_fmt_seconds(t, sizeof t, e->measured_total));
  if (e->measured_total > 0)
    het_sbuf_printf(b, " (estimate / measured %.2f)",
                    e->model_total / e->measured_total);
  het_sbuf_puts(b, "; placement used the measured times (the estimate for "
                   "a node without one)");
}
