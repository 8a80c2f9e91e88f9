/* session.h — the objects behind het_env, het_session_options and
 * het_session.  Invariant: a session is immutable after creation, which is
 * what makes het_session_run safe from several threads.
 */
#ifndef HET_API_SESSION_H
#define HET_API_SESSION_H

#include "core/ir.h"
#include "executor/streams.h"
#include "partitioner/cost.h"
#include "partitioner/partition.h"


struct het_env {
  int reserved;
};

#define HET_MAX_PROVIDERS 8
#define HET_MAX_PROFILES 8

typedef enum het_rule_kind {
  HET_RULE_PIN,
  HET_RULE_FORBID,
  HET_RULE_PREFER,
} het_rule_kind;

/* One per-node constraint as given through the C API. */
typedef struct het_node_rule {
  het_rule_kind kind;
  char *node;
  char *provider;
  double factor;
} het_node_rule;

/* A "<provider>.<key>" option or a memory budget. */
typedef struct het_kv {
  char *key;
  char *value;
} het_kv;

struct het_session_options {
  int n_providers;
  char *providers[HET_MAX_PROVIDERS];
  int threads;
  int n_profiles;
  char *profiles[HET_MAX_PROFILES];
  bool use_priority;      /* algorithm=priority */
  int opt_level;          /* optimization: 0 none, 1 basic, 2 extended,
                           3 all */
  bool non_strict;        /* strict=false */
  bool measure;           /* measure=true: time every node of every run */
  bool trace;             /* trace=true: keep every node's start and end */
  bool streams;           /* executor=streams */
  char *node_times;       /* node_times=PATH: measured times to plan with */
  int n_kv;
  het_kv *kv;             /* provider options, key "<provider>.<key>" */
  int n_rules;
  het_node_rule *rules;
  int n_budgets;
  het_kv *budgets;        /* provider name → bytes (decimal text) */
};

struct het_session {
  het_graph *graph;
  het_arena arena;
  const char *model;  /* path or "<memory>" */
  int n_providers;
  het_device providers[HET_MAX_PROVIDERS];
  het_device_info info[HET_MAX_PROVIDERS];
  bool host_memory[HET_MAX_PROVIDERS];
  het_partition partition;
  void **compiled;    /* per subgraph (NULL for copy steps) */
  int *uses;          /* per value: consumer count, -1 = keep for the run */
  int *inputs;        /* value ids a caller may bind (graph inputs) */
  int n_inputs;
  het_tensor **placed; /* per value: initializer copy placed on a device */
  /* The placement report's inputs (see session_explain.c). */
  bool use_priority;
  int n_model_nodes;  /* nodes before boundary insertion */
  het_cost_table cost;
  int *prio_assign, *cost_assign; /* per model node */
  double est_priority, est_cost;
  int n_warnings;
  const char *warnings[HET_MAX_PROVIDERS];
  /* Per-node measurements (session_measure.c), when measure=true. */
  struct het_measure *measure;
  /* executor=streams: the steps' streams and events (session_streams.c);
   * n_steps == 0 when runs are sequential. */
  het_stream_plan streams;
  uint64_t plan_fp;   /* het_session_memory_check: the memory plans' key
                         besides input shapes (0 until then) */
};

/* session_streams.c: the stream plan (executor=streams) and its run. */
het_status het_session_plan_streams(het_session *s);
het_status het_session_run_streams(het_session *s, het_run_ctx *ctx);
/* session_run.c: runs step i of the partition (compute or boundary). */
het_status het_run_step(het_session *s, het_run_ctx *ctx, int i);

/* session_explain.c: bytes of v from its load-time shape (unknown dims
 * count 1, unknown rank 0), for reports and traces. */
double het_value_bytes(const het_value *v);

/* session_measure.c: per-node timing of runs and the node-times file. */
#define HET_TRACE_MAX_EVENTS 2000000
typedef struct het_trace_event {
  int node;
  long run;         /* index of the traced run */
  double t0, t1;    /* seconds since the session was created */
} het_trace_event;
het_status het_measure_create(het_session *s, bool times, bool trace);
/* A copy of the trace (caller frees *events). */
het_status het_measure_snapshot(het_session *s, het_trace_event **events,
                                size_t *n, long *runs);
void het_measure_destroy(het_session *s);
het_status het_measure_begin(het_session *s, het_run_ctx *ctx);
void het_measure_end(het_session *s, het_run_ctx *ctx, het_status st);
/* Reads a node-times file into per-node seconds and provider indices
 * (entries for unknown nodes or providers are ignored; malformed lines
 * are errors naming the line).  Arrays from s->arena, NaN = not measured. */
het_status het_measure_load(het_session *s, const char *path,
                            double **seconds, int **device);

/* session_build.c: everything between a loaded graph and a runnable
 * session (providers, constraints, assignment, boundaries, compile). */
het_status het_session_build(het_session *s, const het_session_options *o);

/* options_ext.c: the extended keys of het_session_options_set. */
het_status het_options_set_ext(het_session_options *o, const char *key,
                               const char *value, bool *handled);
void het_options_ext_clear(het_session_options *o);

/* Runs the session (see het_session_run) — in session_run.c. */
het_status het_session_execute(het_session *s, const char *const *in_names,
                               het_tensor *const *inputs, size_t n_in,
                               const char *const *out_names, size_t n_out,
                               het_tensor **outputs);

#endif
