/* session.h — the objects behind het_env, het_session_options and
 * het_session.  Invariant: a session is immutable after creation, which is
 * what makes het_session_run safe from several threads.
 */
#ifndef HET_API_SESSION_H
#define HET_API_SESSION_H

#include "core/ir.h"
#include "partitioner/partition.h"

struct het_env {
  int reserved;
};

#define HET_MAX_PROVIDERS 8

struct het_session_options {
  int n_providers;
  char *providers[HET_MAX_PROVIDERS];
  int threads;
};

struct het_session {
  het_graph *graph;
  het_arena arena;
  int n_providers;
  het_device providers[HET_MAX_PROVIDERS];
  het_partition partition;
  void **compiled;    /* per subgraph */
  int *uses;          /* per value: consumer count, -1 = keep for the run */
  int *inputs;        /* value ids a caller may bind (graph inputs) */
  int n_inputs;
};

/* Runs the session (see het_session_run) — in session_run.c. */
het_status het_session_execute(het_session *s, const char *const *in_names,
                               het_tensor *const *inputs, size_t n_in,
                               const char *const *out_names, size_t n_out,
                               het_tensor **outputs);

#endif
