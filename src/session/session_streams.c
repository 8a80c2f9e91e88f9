/* session_streams.c — executor=streams: each step of the partition goes to
 * a stream (a provider's compute, copies into device memory, copies out to
 * host memory, host-side casts and layout changes) and waits only for the
 * steps whose outputs it reads, so a copy can proceed while another
 * stream computes.  Runs then use no memory-plan arena (its reuse of bytes
 * assumes the sequential order).  Graphs with If/Loop/Scan run
 * sequentially: their bodies read values outside their inputs.
 */
#include <pthread.h>
#include <stdlib.h>

#include "session/session.h"
#include "core/status.h"
#include "executor/run.h"

static int het_step_stream(const het_session *s, const het_subgraph *sg) {
  int p = s->n_providers;
  switch (sg->kind) {
  case HET_STEP_COMPUTE:
    return sg->provider;
  case HET_STEP_COPY:
    return sg->provider >= 0 && !s->host_memory[sg->provider] ? p : p + 1;
  case HET_STEP_CAST:
  case HET_STEP_LAYOUT:
    return p + 2;
  default:
    return -1; /* static: done at session creation */
  }
}

static bool het_has_subgraphs(const het_graph *g) {
  for (int n = 0; n < g->n_nodes; n++)
    for (int a = 0; a < g->nodes[n].n_attrs; a++)
      if (g->nodes[n].attrs[a].type == HET_ATTR_GRAPH ||
          g->nodes[n].attrs[a].type == HET_ATTR_GRAPHS)
        return true;
  return false;
}

het_status het_session_plan_streams(het_session *s) {
  const het_graph *g = s->graph;
  const het_partition *p = &s->partition;
  if (het_has_subgraphs(g))
    return HET_OK;
  int n = p->n_subgraphs;
  int *step_of = het_arena_calloc(&s->arena, (size_t)g->n_nodes + 1, sizeof(int));
  int *stream = het_arena_calloc(&s->arena, (size_t)n + 1, sizeof(int));
  int *start = het_arena_calloc(&s->arena, (size_t)n + 2, sizeof(int));
  size_t reads = 0;
  for (int k = 0; k < g->n_nodes; k++)
    reads += (size_t)g->nodes[k].n_inputs;
  int *deps = het_arena_calloc(&s->arena, reads + 1, sizeof(int));
  if (!step_of || !stream || !start || !deps)
    return het_error(HET_ERR_OUT_OF_MEMORY, "streams: out of memory");
  for (int i = 0; i < n; i++)
    for (int j = 0; j < p->subgraphs[i].n_nodes; j++)
      step_of[p->subgraphs[i].nodes[j]] = i;
  int used = 0;
  for (int i = 0; i < n; i++) {
    const het_subgraph *sg = &p->subgraphs[i];
    stream[i] = het_step_stream(s, sg);
    start[i] = used;
    for (int j = 0; stream[i] >= 0 && j < sg->n_nodes; j++) {
      const het_node *node = &g->nodes[sg->nodes[j]];
      for (int k = 0; k < node->n_inputs; k++) {
        int v = node->inputs[k];
        int prod = v >= 0 ? g->values[v].producer : -1;
        if (prod < 0 || step_of[prod] == i || s->placed[v])
          continue;
        bool seen = false;
        for (int d = start[i]; d < used && !seen; d++)
          seen = deps[d] == step_of[prod];
        if (!seen)
          deps[used++] = step_of[prod];
      }
    }
  }
  start[n] = used;
  s->streams = (het_stream_plan){.n_steps = n, .n_streams = s->n_providers + 3,
                                 .stream = stream, .dep_start = start,
                                 .deps = deps};
  return HET_OK;
}

typedef struct het_stream_job {
  het_session *s;
  het_run_ctx *ctx;
} het_stream_job;

static het_status het_stream_step(void *user, int step) {
  het_stream_job *j = user;
  return het_run_step(j->s, j->ctx, step);
}

het_status het_session_run_streams(het_session *s, het_run_ctx *ctx) {
  pthread_mutex_t lock;
  pthread_mutex_init(&lock, NULL);
  ctx->lock = &lock;
  het_stream_job job = {s, ctx};
  het_status st = het_streams_run(&s->streams, het_stream_step, &job);
  ctx->lock = NULL;
  pthread_mutex_destroy(&lock);
  return st;
}
