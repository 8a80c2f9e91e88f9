/* session_measure.c — per-node timing for the profile-guided mode.  With
 * option measure=true every run times each node (the providers add into
 * het_run_ctx.node_seconds) and successful runs are accumulated here under
 * a mutex; het_session_save_node_times writes the means, and a later
 * session given node_times=PATH plans with them instead of estimates.
 * File format, one node per line: NAME<TAB>PROVIDER<TAB>SECONDS<TAB>RUNS;
 * lines starting with '#' are comments.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/session.h"
#include "core/status.h"
#include "executor/run.h"

struct het_measure {
  pthread_mutex_t mu;
  int n_nodes;
  double *sum;
  long *runs;
};

het_status het_measure_create(het_session *s) {
  struct het_measure *m = calloc(1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
  m->n_nodes = s->graph->n_nodes;
  m->sum = calloc((size_t)m->n_nodes + 1, sizeof *m->sum);
  m->runs = calloc((size_t)m->n_nodes + 1, sizeof *m->runs);
  if (!m->sum || !m->runs) {
    free(m->sum);
    free(m->runs);
    free(m);
    return het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
  }
  pthread_mutex_init(&m->mu, NULL);
  s->measure = m;
  return HET_OK;
}

void het_measure_destroy(het_session *s) {
  struct het_measure *m = s->measure;
  if (!m)
    return;
  pthread_mutex_destroy(&m->mu);
  free(m->sum);
  free(m->runs);
  free(m);
  s->measure = NULL;
}

het_status het_measure_begin(het_session *s, het_run_ctx *ctx) {
  if (!s->measure)
    return HET_OK;
  ctx->node_seconds = calloc((size_t)s->measure->n_nodes + 1, sizeof(double));
  return ctx->node_seconds
             ? HET_OK
             : het_error(HET_ERR_OUT_OF_MEMORY, "measure: out of memory");
}

void het_measure_end(het_session *s, het_run_ctx *ctx, het_status st) {
  struct het_measure *m = s->measure;
  if (!m || !ctx->node_seconds)
    return;
  if (st == HET_OK) {
    pthread_mutex_lock(&m->mu);
    for (int n = 0; n < m->n_nodes; n++)
      if (s->partition.kind[n] == HET_STEP_COMPUTE) {
        m->sum[n] += ctx->node_seconds[n];
        m->runs[n]++;
      }
    pthread_mutex_unlock(&m->mu);
  }
  free(ctx->node_seconds);
  ctx->node_seconds = NULL;
}

het_status het_session_save_node_times(het_session *s, const char *path) {
  if (!s || !path)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_save_node_times: NULL argument");
  struct het_measure *m = s->measure;
  if (!m)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "node times: the session was not created with "
                     "measure=true");
  FILE *f = fopen(path, "w");
  if (!f)
    return het_error(HET_ERR_IO, "node times: cannot write '%s'", path);
  fprintf(f, "# hetrt node times: name, provider, mean seconds, runs\n");
  pthread_mutex_lock(&m->mu);
  for (int n = 0; n < s->n_model_nodes && n < m->n_nodes; n++) {
    int p = s->partition.provider[n];
    if (m->runs[n] == 0 || p < 0)
      continue;
    fprintf(f, "%s\t%s\t%.9g\t%ld\n", s->graph->nodes[n].name,
            s->providers[p].vt->name, m->sum[n] / (double)m->runs[n],
            m->runs[n]);
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

het_status het_measure_load(het_session *s, const char *path,
                            double **seconds, int **device) {
  const het_graph *g = s->graph;
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
    for (int n = 0; p >= 0 && n < g->n_nodes; n++)
      if (strcmp(g->nodes[n].name, fld[0]) == 0) {
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
