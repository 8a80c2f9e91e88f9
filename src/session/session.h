/* session.h — the objects behind het_env, het_session_options and
 * het_session, and the session layer's internal entry points.  A session
 * is a tree of graph builds (the model's graph and, for every If, Loop and
 * Scan, its bodies), each partitioned, compiled and turned into an
 * executor program; plans are made per signature by the executor.
 * Invariant: a session is immutable after creation (plans and
 * measurements are internally locked), which is what makes
 * het_session_run safe from several threads.
 */
#ifndef HET_SESSION_SESSION_H
#define HET_SESSION_SESSION_H

#include <pthread.h>

#include "core/ir.h"
#include "executor/program.h"
#include "optimizer/optimizer.h"
#include "partitioner/cost.h"
#include "partitioner/partition.h"
#include "partitioner/policy.h"
#include "report/explain.h"

#define HET_MAX_PROVIDERS 8
#define HET_MAX_PROFILES 8
#define HET_ENV_MAX_DEVICES 32
#define HET_ENV_MAX_REGISTERED 16

/* A device an env opened (ABI 3 providers), shared by its sessions. */
typedef struct het_env_device {
  het_device dev;
  char *profile;  /* the profile it was opened with, or NULL */
  int sessions;   /* sessions using it */
} het_env_device;

struct het_env {
  pthread_mutex_t lock;
  int n_devices;
  het_env_device devices[HET_ENV_MAX_DEVICES];
  int n_registered;
  const het_provider_vtable *registered[HET_ENV_MAX_REGISTERED];
};

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

/* An input shape to plan for (shape=NAME=DIMS or a policy's shapes:). */
typedef struct het_shape_hint {
  char *input;
  int rank;
  int64_t dims[HET_POLICY_MAX_RANK];
} het_shape_hint;

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
  size_t max_memory;      /* max_memory=BYTES: host bytes one plan may
                             use (0: no cap), when max_memory_set */
  bool max_memory_set;    /* else het_options_max_memory's default */
  int64_t max_loop_iterations; /* max_loop_iterations=N (0: no cap), when
                                  max_loop_set */
  bool max_loop_set;
  char *node_times;       /* node_times=PATH: measured times to plan with */
  int n_kv;
  het_kv *kv;             /* provider options, key "<provider>.<key>" */
  int n_rules;
  het_node_rule *rules;
  int n_budgets;
  het_kv *budgets;        /* provider name → bytes (decimal text) */
  het_policy *policy;     /* policy=PATH / het_session_options_set_policy:
                             its rules (its global settings were applied
                             to these options when it was loaded) */
  int min_subgraph_nodes; /* device runs shorter than this go to a host
                             provider (0: no minimum) */
  int n_shapes;
  het_shape_hint *shapes; /* input shapes the cost model plans for */
  bool replan_off;        /* replan=off: one partition for every shape */
  bool plan_rebuild;      /* plan_mismatch=rebuild: an unusable plan is
                             partitioned and compiled afresh */
  bool plan_load_eager;   /* plan_load=eager: a plan's session compiles
                             before creation returns */
  bool deterministic;     /* deterministic=true: no timed choices
                             (het_provider_config.deterministic) */
  bool int8_off;          /* int8=off: QDQ islands compute in float, as
                             written (no QLinear fusion) */
  double replan_gain;     /* replan_gain=F (0: the default) */
  int max_regimes;        /* max_regimes=N (0: the default) */
};

/* What one policy rule did in a session (for explain and `hetrt policy
 * check`).  Strings live in the session arena; nodes is malloc'd. */
typedef struct het_rule_report {
  const char *label;      /* "rule 2 'attention'" */
  const char *where;      /* "policy.yaml:7:5" */
  const char *placed_by;  /* label (where): a node's placed_by */
  const char *biased_by;  /* "cost, biased by label (where)": prefer only */
  const char *actions;    /* "pin emu; forbid cuda" */
  const char *note;       /* why part of it is not applied, or NULL */
  int n_nodes, cap_nodes;
  const char **nodes;     /* report names of the nodes it matched */
  int n_unknown;          /* nodes a shape predicate could not test */
  int n_fallback;         /* matched nodes it could not be followed for */
  const char *fallback_node, *fallback_why; /* the first of those */
} het_rule_report;

/* One graph of the session (the model's, or a body) from partition to
 * program.  prog comes first: programs are cast back to their build. */
typedef struct het_graph_build {
  het_program prog;
  het_partition partition;  /* after boundary insertion */
  int n_model_nodes;        /* nodes before boundary insertion */
  het_cost_table cost;
  int *prio_assign, *cost_assign; /* per model node */
  double est_priority, est_cost;
  const char *prefix;       /* "" or "If_0/then_branch/": report names */
  const char **names;       /* per node: prefix + name (NULL for the
                               model's graph: the names themselves) */
  /* Per model node, when the session has placement constraints (else
   * NULL): providers still allowed (bit per provider), the policy rule
   * that constrained it (-1: none) and what placed it ("rule 2 (p.yaml:7:5)",
   * "C API constraint", "min_subgraph_nodes"; NULL: the algorithm). */
  unsigned *allowed;
  int *rule_of;
  const char **placed_by;
  /* With node_times (profile-guided mode), per model node: the measured
   * seconds and the provider they were measured on (-1: none); NULL
   * without a node-times file.  cost.estimate keeps the estimates. */
  const double *measured;
  const int *measured_dev;
  int n_estimated_unknown;  /* nodes whose cost was estimated with a dim
                               unknown (no shape to plan for) */
  const char *estimated_unknown_example;
} het_graph_build;

struct het_session {
  het_env *env;
  het_graph *graph;
  het_arena arena;
  const char *model;  /* path or "<memory>" */
  int n_providers;
  het_ep providers[HET_MAX_PROVIDERS];
  het_env_device *env_dev[HET_MAX_PROVIDERS]; /* NULL: legacy (own) */
  het_device own_dev[HET_MAX_PROVIDERS];      /* ABI 1-2 providers' */
  bool host_memory[HET_MAX_PROVIDERS];
  het_stream_layout layout;
  struct het_stream_pool *streams;
  het_graph_build top;
  int n_builds;
  het_graph_build **builds; /* every build; builds[0] is &top; a build's
                               node ids start at its prog.node_base */
  int n_nodes_total;        /* nodes of every build */
  bool use_priority;
  int n_warnings, cap_warnings;
  const char **warnings;    /* malloc'd; strings in the arena */
  int n_rule_reports;
  het_rule_report *rule_reports; /* per policy rule */
  int n_shapes;             /* shapes to plan for the session was given */
  const char *node_times;   /* the node-times file planned with, or NULL */
  struct het_measure *measure; /* session_measure.c, when measure/trace */
  bool graph_ready;         /* graph came inferred and optimized (a shape
                               regime's copy): the build skips both */
  const het_ep *plans_only;  /* a provider on a device that only plans
                               (het_device.plans_only) that the placement
                               uses: runs are refused; NULL: none */
  bool plan_only;           /* stop once the model's graph is assigned
                               (a shape regime's trial): no compile, no
                               programs; the session cannot run */
  struct het_regimes *regimes; /* session_regime.c; NULL when the session
                                  keeps one partition for every shape */
  het_graph *optimized;     /* a copy of the graph after optimization,
                               before partitioning (weights borrowed from
                               graph): what plans and regimes start from;
                               NULL in a regime's trial */
  het_session_options *options; /* a copy of the creation options */
  /* The QDQ islands the optimizer weighed (session_islands.c), the int8
   * form run on islands_int8_on; malloc'd, names in the arena.
   * island_claims: which provider claims which node of the graph being
   * weighed (island_n nodes), malloc'd. */
  int n_islands, cap_islands;
  het_explain_island *islands;
  const char *islands_int8_on;
  bool *island_claims;
  int island_n;
  struct het_aot *aot;      /* session_aot.c: the plan the session was
                               loaded from (owned; its file holds the
                               graph's weights), or NULL */
  bool aot_rebuild;         /* the plan was unusable here and is being
                               partitioned afresh (plan_mismatch=rebuild) */
  int aot_regime;           /* the plan's shape regime this session is
                               (its builds, blobs); > 0: a regime's
                               session, borrowing the plan from the
                               session that loaded it */
  bool deferred;            /* compilation runs on a thread of its own
                               after creation (a plan's session): every
                               entry point that needs it waits
                               (het_session_ready) */
  struct het_ready *ready;  /* session_ready.c */
};

/* ---- session.c ---- */
/* A session over g, which the session takes (destroyed on failure too):
 * g is already inferred and optimized when graph_ready (then only its
 * bodies are optimized, at o's level); plan_only stops after the model's
 * graph is assigned (see het_session.plan_only).  model names it. */
het_status het_session_create_graph(het_env *env, het_graph *g,
                                    const char *model,
                                    const het_session_options *o,
                                    bool graph_ready, bool plan_only,
                                    het_session **out);

/* A session over a plan's graph g (inferred, optimized) placed and
 * compiled as plan a says (session_aot.h); takes g and a, destroyed on
 * failure too. */
struct het_aot;
het_status het_session_create_aot(het_env *env, het_graph *g,
                                  struct het_aot *a,
                                  const het_session_options *o,
                                  het_session **out);
/* The session of stored shape regime k (>= 1) of plan a, over g (a copy
 * of the loading session's optimized graph; taken, destroyed on failure
 * too); a stays the loading session's. */
het_status het_session_create_aot_regime(het_env *env, het_graph *g,
                                         struct het_aot *a, int k,
                                         const het_session_options *o,
                                         het_session **out);

/* ---- session_ready.c: compilation after creation ---- */
typedef struct het_ready het_ready;
/* Starts compiling every build of s (and planning its static signature)
 * on a thread of its own. */
het_status het_session_start_compile(het_session *s);
/* Waits for that compilation (returns at once when there is none or it
 * is done) and returns its status, its message restated on the calling
 * thread.  Thread-safe. */
het_status het_session_ready(const het_session *s);
/* Joins the thread (session destruction). */
void het_session_ready_destroy(het_session *s);

/* ---- session_regime.c: a partition per shape regime ---- */
#define HET_DEFAULT_REPLAN_GAIN 0.2
#define HET_DEFAULT_MAX_REGIMES 4
#define HET_MAX_REGIMES 16
/* At creation, after the providers: when s may re-plan placement for new
 * input shapes (replan not off, two or more providers, the cost
 * algorithm, an input with a dim the model leaves open), keeps a copy of
 * the optimized graph and of o for the regimes made later. */
het_status het_regimes_init(het_session *s, const het_session_options *o);
void het_regimes_destroy(het_session *s);
/* The session a run with these parameters (the model's inputs, in
 * params order) runs in: s itself, or the session of the shape regime
 * its shapes fall in, made now when the estimated gain of a partition
 * for them passes replan_gain.  Thread-safe. */
het_status het_regime_select(het_session *s, het_tensor *const *params,
                             het_session **run_in);
/* The shape regimes a plan stores beyond its first, made (each a session
 * of its own over a copy of the optimized graph, placed and compiled from
 * the plan) once s's own builds are compiled; a run's shapes then take
 * the stored regime of their key or of the nearest key, never a new
 * partition.  Nothing for a plan of one regime. */
het_status het_regimes_load(het_session *s);
/* Regime k's session (k >= 1; NULL when there is no such regime) and the
 * shapes it was made for, for traces and reports. */
het_session *het_regime_session(const het_session *s, int k,
                                const char **shapes);

/* ---- session_providers.c ---- */
/* Creates the session's provider instances on their devices (opened in
 * s->env), honouring strict / non-strict. */
het_status het_session_add_providers(het_session *s,
                                     const het_session_options *o);
void het_session_remove_providers(het_session *s);

/* ---- session_build.c ---- */
/* Everything between a loaded graph and a runnable session. */
het_status het_session_build(het_session *s, const het_session_options *o);
/* Frees what the builds own (compiled subgraphs, placed tensors). */
void het_session_builds_destroy(het_session *s);
/* Node node of build b as reports and node-times files name it: the
 * node's name after its body's path ("If_0/then_branch/conv"). */
const char *het_session_node_name(const het_session *s,
                                  const het_graph_build *b, int node);
/* The build and node of session-wide node id; NULL when out of range. */
const het_graph_build *het_session_node(const het_session *s, int id,
                                        int *node);

/* ---- session_plan.c: the plan of the model's static signature ---- */
/* The plan for the model's load-time input shapes when they are all
 * concrete, else (latest) the plan of the most recent run; referenced
 * (het_plan_put).  ERR_SHAPE when there is none. */
struct het_plan;
het_status het_session_plan_for_report(const het_session *s, bool latest,
                                       struct het_plan **out);
/* At session creation: with static input shapes, builds that plan (it is
 * cached for the runs) and fails with ERR_CAPACITY, naming the device and
 * the bytes, when a device cannot hold it. */
het_status het_session_plan_check(het_session *s);

/* ---- session_explain.c ---- */
/* Bytes of v from its load-time shape (unknown dims count 1, unknown
 * rank 0), for reports and traces. */
double het_value_bytes(const het_value *v);

/* ---- session_measure.c: per-node timing of runs and node times ---- */
#define HET_TRACE_MAX_EVENTS 2000000
typedef struct het_trace_event {
  int node;         /* session-wide node id */
  long run;         /* index of the traced run */
  double t0, t1;    /* seconds since the session was created */
} het_trace_event;
het_status het_measure_create(het_session *s, bool times, bool trace);
/* The trace's time zero (het_clock_seconds() at creation; 0 without
 * measurement), and setting it (a shape regime's session shares its
 * session's, so their traces line up). */
double het_measure_origin(const het_session *s);
void het_measure_set_origin(het_session *s, double origin);
het_status het_measure_snapshot(het_session *s, het_trace_event **events,
                                size_t *n, long *runs);
void het_measure_destroy(het_session *s);
/* Starts recording one run into rec (NULL record when measurement is
 * off); *run must be handed to het_measure_end. */
struct het_run_rec;
het_status het_measure_begin(het_session *s, het_exec_recorder *rec,
                             struct het_run_rec **run);
void het_measure_end(het_session *s, struct het_run_rec *run, het_status st);
/* Reads a node-times file into per-node seconds and provider indices of
 * build b (entries for unknown nodes or providers are ignored; malformed
 * lines are errors naming the line).  Arrays from s->arena, NaN = not
 * measured. */
het_status het_measure_load(het_session *s, const het_graph_build *b,
                            const char *path, double **seconds, int **device);

/* ---- options_ext.c: the extended keys of het_session_options_set ---- */
het_status het_options_set_ext(het_session_options *o, const char *key,
                               const char *value, bool *handled);
void het_options_ext_clear(het_session_options *o);

/* Iterations one Loop node may run when max_loop_iterations is not set. */
#define HET_DEFAULT_MAX_LOOP_ITERATIONS (INT64_C(1) << 24)

/* The limits of a session made with o (NULL: the defaults).  Host bytes
 * one plan may use: max_memory, or by default the machine's physical
 * memory (more could only thrash); 0 means no cap. */
size_t het_options_max_memory(const het_session_options *o);
/* Iterations one Loop node may run (0: no cap). */
int64_t het_options_max_loop_iterations(const het_session_options *o);
/* Adds (or replaces) the shape to plan input for. */
het_status het_options_add_shape(het_session_options *o, const char *input,
                                 int rank, const int64_t *dims);

/* *out = a deep copy of src (NULL: the defaults); caller owns
 * (het_session_options_destroy).  The policy is shared (het_policy_ref). */
het_status het_options_copy(const het_session_options *src,
                            het_session_options **out);

/* option shape=NAME=DIMS. */
het_status het_options_set_shape(het_session_options *o, const char *value);

/* Appends a warning (het_session_get_warning, explain). */
het_status het_session_warn(het_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- session_policy.c: YAML placement policies ---- */
/* Parses policy text (source names it in messages) or a policy file, and
 * applies its global settings to o as their own setters would; o keeps
 * its rules.  A bad policy changes nothing in o. */
het_status het_options_set_policy(het_session_options *o, const char *text,
                                  size_t len, const char *source);
het_status het_options_load_policy(het_session_options *o, const char *path);
/* Frees the rule reports' node lists. */
void het_policy_reports_destroy(het_session *s);
/* Sets out's weighing of QDQ islands (session_islands.c) for a graph of
 * s whose report names start with prefix; nothing when s has no CPU
 * provider with estimates. */
het_status het_island_weighing(het_session *s, const char *prefix,
                               het_optimize_int8 *out);
/* The int8 choices the optimizer makes for graph g (a body's report
 * names start with prefix): option int8=off, each node's precision from
 * the policy's rules (the last precision rule that matches a node
 * decides), and the weighing of the other islands (het_island_weighing,
 * recorded in s->islands).  Names point into g, the arrays into s's
 * arena. */
het_status het_policy_int8_choices(het_session *s, const het_session_options *o,
                                   const het_graph *g, const char *prefix,
                                   het_optimize_int8 *out);
/* The precision node n of g computes in on provider p (-1: as its tensors
 * say): INT8 for the integer quantized operators (and a MaxPool of 8-bit
 * values), the float type of its
 * output as the provider computes it (its compute_type slot, else the
 * device's float32_as), ANY for a node with no such arithmetic. */
het_precision het_session_precision(const het_session *s, const het_graph *g,
                                    int n, int p);

#endif
