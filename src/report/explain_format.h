/* explain_format.h — internals shared by the placement-report renderers
 * (explain_format*.c): a growable string buffer whose allocation failure is
 * sticky (checked once at the end), escaping for JSON/DOT/HTML, human units
 * for seconds and bytes, the provider colour palette and the
 * "cost vs priority" summary line.  Not part of any public API.
 */
#ifndef HET_PARTITIONER_EXPLAIN_FORMAT_H
#define HET_PARTITIONER_EXPLAIN_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "report/explain.h"

/* Invariant: data is NUL-terminated when non-NULL; after an allocation
 * failure `failed` stays set and further appends do nothing. */
typedef struct het_sbuf {
  char *data;
  size_t len, cap;
  bool failed;
} het_sbuf;

void het_sbuf_puts(het_sbuf *b, const char *s);
/* n bytes of data, any values (a NUL is kept, the terminator follows). */
void het_sbuf_put(het_sbuf *b, const void *data, size_t n);
void het_sbuf_putc(het_sbuf *b, char c);
void het_sbuf_printf(het_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A JSON string literal with quotes ("null" for NULL); invalid UTF-8
 * bytes become U+FFFD so the output always parses. */
void het_sbuf_json_str(het_sbuf *b, const char *s);
/* A JSON number; non-finite values become null. */
void het_sbuf_json_num(het_sbuf *b, double v);
/* Text for inside a DOT double-quoted string (quotes, backslashes and
 * control characters escaped; NULL as ""). */
void het_sbuf_dot_text(het_sbuf *b, const char *s);
/* Text for HTML element content or attribute values. */
void het_sbuf_html_text(het_sbuf *b, const char *s);
/* Moves the buffer to *out (caller frees); ERR_OUT_OF_MEMORY after a
 * failed append (the buffer is freed either way). */
het_status het_sbuf_finish(het_sbuf *b, char **out);

/* "1.23 ms", "456.00 us", "2.00 s", "inf" into buf (cap >= 32). */
const char *het_explain_fmt_seconds(char *buf, size_t cap, double s);
/* "1.50 MiB", "512 B" into buf (cap >= 32). */
const char *het_explain_fmt_bytes(char *buf, size_t cap, double bytes);

/* Fill colour "#rrggbb" of a provider: cpu light blue, emu orange, cuda
 * green, int8 purple, host (copies through host memory) grey; any other
 * provider takes the next colour of a fixed list in the order providers
 * first appear in e->devices then e->nodes. */
const char *het_explain_provider_color(const het_explain *e,
                                       const char *provider);

/* True when edge k joins nodes on different providers. */
bool het_explain_edge_crosses(const het_explain *e, int k);

/* Appends "estimated latency: cost X vs priority Y (-47%)" (no newline). */
void het_explain_summary_line(het_sbuf *b, const het_explain *e);

/* With node times (e->node_times), appends "node times (FILE): N of M
 * compute nodes measured on their provider; their estimate X vs measured
 * Y (estimate / measured R); placement used the measured times (the
 * estimate for a node without one)" (no newline); nothing without. */
void het_explain_node_times_line(het_sbuf *b, const het_explain *e);

/* Appends "arena A vs intermediates I without reuse (Nx), weights W" for
 * dev, or, when dev->estimated, "no plan (symbolic input shapes):
 * intermediates I without reuse, weights W" (no newline). */
void het_explain_memory_line(het_sbuf *b, const het_explain_device *dev);

/* Percentage change of cost relative to priority; false when it cannot be
 * computed (priority not positive or either value non-finite). */
bool het_explain_gain_percent(const het_explain *e, double *pct);

/* Where the data of boundary node n comes from: the provider of the node
 * producing its input (first edge into it), or "host" for a graph input or
 * initializer.  It goes to the boundary node's own provider. */
const char *het_explain_boundary_source(const het_explain *e, int n);

/* The shape regimes (explain_format_regimes.c), when e->replans: a text
 * section, the JSON keys "regimes" and "regime_choices" (each line ends
 * with a comma), an HTML section. */
void het_explain_regimes_text(const het_explain *e, het_sbuf *b);
void het_explain_regimes_json(const het_explain *e, het_sbuf *b);
void het_explain_regimes_html(const het_explain *e, het_sbuf *b);

/* Renderers, one per format; they only append to b. */
void het_explain_render_text(const het_explain *e, het_sbuf *b);
void het_explain_render_json(const het_explain *e, het_sbuf *b);
void het_explain_render_dot(const het_explain *e, het_sbuf *b);
void het_explain_render_html(const het_explain *e, het_sbuf *b);
void het_explain_render_rules(const het_explain *e, het_sbuf *b);

#endif
