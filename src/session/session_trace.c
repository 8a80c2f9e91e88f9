/* session_trace.c — the traced runs of a session (option trace=true) as a
 * Chrome trace (chrome://tracing, Perfetto: one lane per device stream —
 * each provider's compute, the copies, the host-side conversions, control
 * flow) and as a per-op summary table (control-flow steps left out of it:
 * their bodies' nodes are in it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "session/session.h"
#include "session/session_regime.h"
#include "report/explain_format.h"

/* The kind of session-wide node id (its build and node in *b, *n). */
static het_step_kind het_trace_kind(const het_session *s, int id,
                                    const het_graph_build **b, int *n) {
  *b = het_session_node(s, id, n);
  return (het_step_kind)(*b)->partition.kind[*n];
}

/* Lane of a node: provider p's compute is p + 1; copies n + 1; host-side
 * casts and layout changes n + 2; control flow n + 3 (n = provider
 * count). */
static int het_trace_lane(const het_session *s, int id) {
  const het_graph_build *b;
  int n;
  het_step_kind k = het_trace_kind(s, id, &b, &n);
  if (k == HET_STEP_COMPUTE)
    return b->partition.provider[n] + 1;
  if (k == HET_STEP_CONTROL)
    return s->n_providers + 3;
  return het_step_base(k) == HET_STEP_COPY ? s->n_providers + 1
                                          : s->n_providers + 2;
}

static const char *het_trace_provider(const het_session *s, int id) {
  int n;
  const het_graph_build *b = het_session_node(s, id, &n);
  int p = b->partition.provider[n];
  return p >= 0 ? s->providers[p].vt->name : "host";
}

/* Process pid (one per shape regime) named title, and its lanes. */
static void het_trace_lanes(const het_session *s, int pid, const char *title,
                            het_sbuf *b) {
  static const char *const host_lanes[] = {"copies", "host conversions",
                                           "host control flow"};
  het_sbuf_printf(b, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
                     "\"args\":{\"name\":",
                  pid > 1 ? ",\n" : "", pid);
  het_sbuf_json_str(b, title);
  het_sbuf_puts(b, "}}");
  for (int lane = 1; lane <= s->n_providers + 3; lane++) {
    char name[96];
    if (lane <= s->n_providers)
      snprintf(name, sizeof name, "%s compute",
               s->providers[lane - 1].vt->name);
    else
      snprintf(name, sizeof name, "%s",
               host_lanes[lane - s->n_providers - 1]);
    het_sbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
                       "\"tid\":%d,\"args\":{\"name\":",
                    pid, lane);
    het_sbuf_json_str(b, name);
    het_sbuf_puts(b, "}}");
  }
}

static void het_trace_event_json(const het_session *s, int pid,
                                 const het_trace_event *e, het_sbuf *b) {
  const het_graph_build *gb;
  int id;
  het_step_kind kind = het_trace_kind(s, e->node, &gb, &id);
  const het_node *n = &gb->prog.graph->nodes[id];
  het_sbuf_puts(b, ",\n{\"name\":");
  het_sbuf_json_str(b, het_session_node_name(s, gb, id));
  het_sbuf_puts(b, ",\"cat\":");
  het_sbuf_json_str(b, n->op_type);
  het_sbuf_printf(b, ",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
                     "\"dur\":%.3f,\"args\":{\"provider\":",
                  pid, het_trace_lane(s, e->node), e->t0 * 1e6,
                  (e->t1 - e->t0) * 1e6);
  het_sbuf_json_str(b, het_trace_provider(s, e->node));
  het_sbuf_printf(b, ",\"run\":%ld", e->run);
  if (kind != HET_STEP_COMPUTE && kind != HET_STEP_CONTROL) {
    int moved = n->inputs[0];
    het_sbuf_printf(b, ",\"bytes\":%.0f",
                    het_value_bytes(&gb->prog.graph->values[moved]));
  }
  het_sbuf_puts(b, "}}");
}

/* Session x's lanes and events as process pid. */
static het_status het_trace_process(const het_session *x, int pid,
                                    const char *title, het_sbuf *b) {
  het_trace_event *ev;
  size_t n;
  long runs;
  HET_TRY(het_measure_snapshot((het_session *)x, &ev, &n, &runs));
  het_trace_lanes(x, pid, title, b);
  for (size_t k = 0; k < n; k++)
    het_trace_event_json(x, pid, &ev[k], b);
  free(ev);
  return HET_OK;
}

/* Each shape regime's runs as a process of its own (pid k + 1), and the
 * first run of each new key as an instant event in the session's
 * process, when it has regimes. */
static het_status het_trace_regimes(const het_session *s, het_sbuf *b) {
  const het_regimes *r = s->regimes;
  if (!r)
    return HET_OK;
  for (int k = 1;; k++) {
    const char *shapes = NULL;
    const het_session *x = het_regime_session(s, k, &shapes);
    if (!x)
      break;
    char title[320];
    snprintf(title, sizeof title, "hetrt session, shape regime %d (%s)", k,
             shapes);
    HET_TRY(het_trace_process(x, k + 1, title, b));
  }
  pthread_mutex_lock((pthread_mutex_t *)&r->lock);
  int n = r->n_choices;
  pthread_mutex_unlock((pthread_mutex_t *)&r->lock);
  for (int i = 0; i < n; i++) {
    const het_regime_choice *c = &r->choices[i];
    char what[768];
    snprintf(what, sizeof what, "shape regime %d for %s (%s)", c->regime,
             c->shapes, c->why);
    het_sbuf_puts(b, ",\n{\"name\":");
    het_sbuf_json_str(b, what);
    het_sbuf_printf(b, ",\"cat\":\"regime\",\"ph\":\"X\",\"pid\":1,"
                       "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                       "\"args\":{\"run\":%ld,\"regime\":%d,"
                       "\"kept_regime\":%d,\"est_kept_ms\":",
                    s->n_providers + 4, (c->at - het_measure_origin(s)) * 1e6,
                    c->seconds * 1e6,
                    c->run, c->regime, c->kept);
    het_sbuf_json_num(b, c->est_kept * 1e3);
    het_sbuf_puts(b, ",\"est_replanned_ms\":");
    het_sbuf_json_num(b, c->est_best * 1e3);
    if (c->failure[0]) {
      het_sbuf_puts(b, ",\"failure\":");
      het_sbuf_json_str(b, c->failure);
    }
    het_sbuf_puts(b, "}}");
  }
  het_sbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
                     "\"tid\":%d,\"args\":{\"name\":\"shape regimes\"}}",
                  s->n_providers + 4);
  return HET_OK;
}

het_status het_session_save_trace_impl(het_session *s, const char *path) {
  het_sbuf b = {0};
  het_sbuf_puts(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  het_status st = het_trace_process(s, 1, "hetrt session", &b);
  if (st == HET_OK)
    st = het_trace_regimes(s, &b);
  if (st != HET_OK) {
    free(b.data);
    return st;
  }
  het_sbuf_puts(&b, "\n]}\n");
  FILE *f = b.failed ? NULL : fopen(path, "w");
  if (b.failed)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "trace: out of memory");
  else if (!f || fwrite(b.data, 1, b.len, f) != b.len)
    st = het_error(HET_ERR_IO, "trace: cannot write '%s'", path);
  if (f && fclose(f) != 0 && st == HET_OK)
    st = het_error(HET_ERR_IO, "trace: cannot write '%s'", path);
  free(b.data);
  return st;
}

typedef struct het_op_row {
  const char *op, *provider;
  long calls;
  double seconds;
} het_op_row;

static int het_op_row_cmp(const void *a, const void *b) {
  double x = ((const het_op_row *)a)->seconds;
  double y = ((const het_op_row *)b)->seconds;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Adds session x's events to the rows per (op type, provider). */
static void het_op_rows(const het_session *x, const het_trace_event *ev,
                        size_t n, het_op_row *rows, size_t *n_rows,
                        double *total) {
  for (size_t k = 0; k < n; k++) {
    const het_graph_build *gb;
    int id;
    if (het_trace_kind(x, ev[k].node, &gb, &id) == HET_STEP_CONTROL)
      continue; /* its body's nodes are counted themselves */
    const char *op = gb->prog.graph->nodes[id].op_type;
    const char *prov = het_trace_provider(x, ev[k].node);
    size_t r = 0;
    while (r < *n_rows &&
           (strcmp(rows[r].op, op) || strcmp(rows[r].provider, prov)))
      r++;
    if (r == *n_rows)
      rows[(*n_rows)++] = (het_op_row){op, prov, 0, 0};
    rows[r].calls++;
    rows[r].seconds += ev[k].t1 - ev[k].t0;
    *total += ev[k].t1 - ev[k].t0;
  }
}

/* Rows over the traced runs of s and of its shape regimes, sorted by
 * time; *rows is malloc'd (caller frees). */
static het_status het_profile_rows(het_session *s, het_op_row **rows,
                                   size_t *n_rows, long *runs,
                                   double *total) {
  *rows = NULL;
  *n_rows = 0;
  *runs = 0;
  *total = 0;
  size_t cap = 0;
  het_status st = HET_OK;
  het_session *x = s;
  for (int k = 1; x && st == HET_OK; x = het_regime_session(s, k++, NULL)) {
    het_trace_event *ev;
    size_t n;
    long r;
    HET_TRY(het_measure_snapshot(x, &ev, &n, &r));
    het_op_row *grown = realloc(*rows, (cap + n + 1) * sizeof *grown);
    if (grown) {
      *rows = grown;
      cap += n;
      het_op_rows(x, ev, n, *rows, n_rows, total);
      *runs += r;
    } else {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "profile: out of memory");
    }
    free(ev);
  }
  if (st == HET_OK)
    qsort(*rows, *n_rows, sizeof **rows, het_op_row_cmp);
  return st;
}

het_status het_session_get_profile_summary_impl(het_session *s, char **out) {
  het_op_row *rows;
  size_t n_rows;
  long runs;
  double total;
  het_status st = het_profile_rows(s, &rows, &n_rows, &runs, &total);
  if (st != HET_OK) {
    free(rows);
    return st;
  }
  long per = runs > 0 ? runs : 1;
  het_sbuf b = {0};
  het_sbuf_printf(&b, "per-op time over %ld run%s (%.3f ms per run in "
                      "nodes and boundary steps)\n",
                  runs, runs == 1 ? "" : "s", total * 1e3 / (double)per);
  het_sbuf_printf(&b, "  %-22s %-8s %8s %12s %12s %7s\n", "op", "provider",
                  "calls/run", "total ms", "ms/run", "share");
  for (size_t r = 0; r < n_rows; r++)
    het_sbuf_printf(&b, "  %-22s %-8s %8.1f %12.3f %12.4f %6.1f%%\n",
                    rows[r].op, rows[r].provider,
                    (double)rows[r].calls / (double)per, rows[r].seconds * 1e3,
                    rows[r].seconds * 1e3 / (double)per,
                    total > 0 ? 100.0 * rows[r].seconds / total : 0.0);
  free(rows);
  if (b.failed) {
    free(b.data);
    return het_error(HET_ERR_OUT_OF_MEMORY, "profile: out of memory");
  }
  *out = b.data;
  return HET_OK;
}
