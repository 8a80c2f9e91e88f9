/* session_measure.c — per-node timing of runs.  Providers report every
 * node they run, and the executor every boundary and control-flow step,
 * through the run's het_exec_recorder (session-wide node ids); each run collects its records
 * and successful runs are merged into the session under a mutex.  With
 * measure=true the per-node means feed het_session_save_node_times_impl (the
 * profile-guided mode: a later session given node_times=PATH plans with
 * them); with trace=true every event is kept for het_session_save_trace.
 * File format, one node per line: NAME<TAB>PROVIDER<TAB>SECONDS<TAB>RUNS;
 * lines starting with '#' are comments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/status.h"
#include "session/session.h"

struct het_measure {
  pthread_mutex_t mu;
  int n_nodes;
  bool times;        /* measure=true: per-node sums */
  double *sum;
  long *runs;
  bool trace;        /* trace=true: every node of every run */
  het_trace_event *events;
  size_t n_events, cap_events;
  long n_runs;       /* successful traced runs */
  double origin;     /* het_clock_seconds() at creation: trace time zero */
};

/* One run's records, reached through the recorder's ctx. */
typedef struct het_run_rec {
  pthread_mutex_t mu; /* steps of one run may report from several streams */
  struct het_measure *m;
  double *seconds;
  het_trace_event *events;
  size_t n_events, cap_events;
  bool failed; /* out of memory: the run's records are dropped */
} het_run_rec;

het_status het_measure_create(het_session *s, bool times, bool trace) {
  struct het_measure *m = calloc(1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
  m->n_nodes = s->n_nodes_total;
  m->times = times;
  m->trace = trace;
  m->sum = calloc((size_t)m->n_nodes + 1, sizeof *m->sum);
  m->runs = calloc((size_t)m->n_nodes + 1, sizeof *m->runs);
  if (!m->sum || !m->runs) {
    free(m->sum);
    free(m->runs);
    free(m);
    return het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
  }
  pthread_mutex_init(&m->mu, NULL);
  m->origin = het_clock_seconds();
  s->measure = m;
  return HET_OK;
}

double het_measure_origin(const het_session *s) {
  return s->measure ? s->measure->origin : 0;
}

void het_measure_set_origin(het_session *s, double origin) {
  if (s->measure)
    s->measure->origin = origin;
}

void het_measure_destroy(het_session *s) {
  struct het_measure *m = s->measure;
  if (!m)
    return;
  pthread_mutex_destroy(&m->mu);
  free(m->sum);
  free(m->runs);
  free(m->events);
  free(m);
  s->measure = NULL;
}

static void het_rec_append(het_run_rec *r, int node, double t0, double t1) {
  r->seconds[node] += t1 - t0;
  if (!r->m->trace || r->failed)
    return;
  if (r->n_events == r->cap_events) {
    size_t cap = r->cap_events ? 2 * r->cap_events : 256;
    het_trace_event *e = realloc(r->events, cap * sizeof *e);
    if (!e) {
      r->failed = true;
      return;
    }
    r->events = e;
    r->cap_events = cap;
  }
  r->events[r->n_events++] = (het_trace_event){node, 0, t0 - r->m->origin,
                                               t1 - r->m->origin};
}

static void het_rec_node(void *recorder, int node, double t0, double t1) {
  het_run_rec *r = recorder;
  if (node < 0 || node >= r->m->n_nodes)
    return;
  pthread_mutex_lock(&r->mu);
  het_rec_append(r, node, t0, t1);
  pthread_mutex_unlock(&r->mu);
}

het_status het_measure_begin(het_session *s, het_exec_recorder *rec,
                             het_run_rec **run) {
  *run = NULL;
  rec->record = NULL;
  if (!s->measure)
    return HET_OK;
  het_run_rec *r = calloc(1, sizeof *r);
  if (r)
    r->seconds = calloc((size_t)s->measure->n_nodes + 1, sizeof(double));
  if (!r || !r->seconds) {
    free(r);
    return het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
  }
  r->m = s->measure;
  pthread_mutex_init(&r->mu, NULL);
  rec->record = het_rec_node;
  rec->ctx = r;
  *run = r;
  return HET_OK;
}

/* Appends a run's events to the session's trace (mutex held). */
static void het_trace_merge(struct het_measure *m, het_run_rec *r) {
  if (r->failed || m->n_events + r->n_events > HET_TRACE_MAX_EVENTS)
    return;
  if (m->n_events + r->n_events > m->cap_events) {
    size_t cap = m->cap_events ? m->cap_events : 1024;
    while (cap < m->n_events + r->n_events)
      cap *= 2;
    het_trace_event *e = realloc(m->events, cap * sizeof *e);
    if (!e)
      return;
    m->events = e;
    m->cap_events = cap;
  }
  for (size_t k = 0; k < r->n_events; k++) {
    r->events[k].run = m->n_runs;
    m->events[m->n_events++] = r->events[k];
  }
  m->n_runs++;
}

void het_measure_end(het_session *s, het_run_rec *r, het_status st) {
  struct het_measure *m = s->measure;
  if (!m || !r)
    return;
  if (st == HET_OK) {
    pthread_mutex_lock(&m->mu);
    for (int id = 0; m->times && id < m->n_nodes; id++) {
      int n;
      const het_graph_build *b = het_session_node(s, id, &n);
      if (b && b->partition.kind[n] == HET_STEP_COMPUTE && r->seconds[id] > 0) {
        m->sum[id] += r->seconds[id];
        m->runs[id]++;
      }
    }
    if (m->trace)
      het_trace_merge(m, r);
    pthread_mutex_unlock(&m->mu);
  }
  pthread_mutex_destroy(&r->mu);
  free(r->seconds);
  free(r->events);
  free(r);
}

void het_session_clear_trace_impl(het_session *s) {
  het_session *x = s;
  for (int k = 1; x; x = het_regime_session(s, k++, NULL)) {
    struct het_measure *m = x->measure;
    if (!m)
      continue;
    pthread_mutex_lock(&m->mu);
    m->n_events = 0;
    m->n_runs = 0;
    for (int id = 0; id < m->n_nodes; id++) {
      m->sum[id] = 0;
      m->runs[id] = 0;
    }
    pthread_mutex_unlock(&m->mu);
  }
}

het_status het_measure_snapshot(het_session *s, het_trace_event **events,
                                size_t *n, long *runs) {
  struct het_measure *m = s->measure;
  if (!m || !m->trace)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "trace: the session was not created with trace=true");
  pthread_mutex_lock(&m->mu);
  *events = malloc((m->n_events + 1) * sizeof **events);
  if (*events) {
    memcpy(*events, m->events, m->n_events * sizeof **events);
    *n = m->n_events;
    *runs = m->n_runs;
  }
  pthread_mutex_unlock(&m->mu);
  return *events ? HET_OK
                 : het_error(HET_ERR_OUT_OF_MEMORY, "trace: out of memory");
}

het_status het_session_save_node_times_impl(het_session *s, const char *path) {
  struct het_measure *m = s->measure;
  if (!m || !m->times)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "node times: the session was not created with "
                     "measure=true");
  FILE *f = fopen(path, "w");
  if (!f)
    return het_error(HET_ERR_IO, "node times: cannot write '%s'", path);
  fprintf(f, "# hetrt node times: name, provider, mean seconds, runs\n");
  pthread_mutex_lock(&m->mu);
  for (int id = 0; id < m->n_nodes; id++) {
    int n;
    const het_graph_build *b = het_session_node(s, id, &n);
    int p = b && n < b->n_model_nodes ? b->partition.provider[n] : -1;
    if (m->runs[id] == 0 || p < 0)
      continue;
    fprintf(f, "%s\t%s\t%.9g\t%ld\n", het_session_node_name(s, b, n),
            s->providers[p].vt->name, m->sum[id] / (double)m->runs[id],
            m->runs[id]);
  }
  pthread_mutex_unlock(&m->mu);
  if (fclose(f) != 0)
    return het_error(HET_ERR_IO, "node times: cannot write '%s'", path);
  return HET_OK;
}

/* Splits a line at tabs into up to 4 fields; returns the count. */
static int het_split_tabs(char *line, char **fields) {
  int n = 0;
  line[strcspn(line, "\r\n")] = '\0';
  for (char *p = line; n < 4;) {
    fields[n++] = p;
    char *tab = strchr(p, '\t');
    if (!tab)
      break;
    *tab = '\0';
    p = tab + 1;
  }
  return n;
}

static int het_provider_named(const het_session *s, const char *name) {
  for (int i = 0; i < s->n_providers; i++)
    if (strcmp(s->providers[i].vt->name, name) == 0)
      return i;
  return -1;
}

het_status het_measure_load(het_session *s, const het_graph_build *b,
                            const char *path, double **seconds, int **device) {
  const het_graph *g = b->prog.graph;
  size_t plen = strlen(b->prefix);
  FILE *f = fopen(path, "r");
  if (!f)
    return het_error(HET_ERR_IO, "node times '%s': cannot open", path);
  double *sec = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof *sec);
  int *dev = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof *dev);
  het_status st = sec && dev ? HET_OK
                             : het_error(HET_ERR_OUT_OF_MEMORY, "node times: out of memory");
  for (int n = 0; st == HET_OK && n < g->n_nodes; n++) {
    sec[n] = -1; /* not measured */
    dev[n] = -1;
  }
  char line[1024];
  for (int lineno = 1; st == HET_OK && fgets(line, sizeof line, f); lineno++) {
    char *fld[4], *end = NULL;
    if (line[0] == '#' || line[0] == '\n')
      continue;
    int nf = het_split_tabs(line, fld);
    double v = nf >= 3 ? strtod(fld[2], &end) : -1;
    if (nf < 3 || end == fld[2] || *end || !(v >= 0)) {
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "node times '%s' line %d: expected NAME<TAB>PROVIDER<TAB>"
                     "SECONDS",
                     path, lineno);
      break;
    }
    int p = het_provider_named(s, fld[1]);
    bool here = strncmp(fld[0], b->prefix, plen) == 0;
    for (int n = 0; here && p >= 0 && n < g->n_nodes; n++)
      if (strcmp(g->nodes[n].name, fld[0] + plen) == 0) {
        sec[n] = v;
        dev[n] = p;
        break;
      }
  }
  fclose(f);
  if (st == HET_OK) {
    *seconds = sec;
    *device = dev;
  }
  return st;
}
