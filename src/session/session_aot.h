/* session_aot.h — ahead-of-time plans in the session layer
 * (session_aot.c, docs/plan-format.md): saving a session as a plan file,
 * and what a session loaded from one reads back while it is built: the
 * stored placement of every graph, the providers' compiled blobs, and
 * the grade of the plan against this machine.
 */
#ifndef HET_SESSION_SESSION_AOT_H
#define HET_SESSION_SESSION_AOT_H

#include "executor/plan_file.h"
#include "session/session.h"

typedef enum het_plan_grade {
  HET_PLAN_OPTIMAL = 0,    /* made on a machine like this one */
  HET_PLAN_SUBOPTIMAL = 1, /* runs; its choices were made elsewhere */
  HET_PLAN_UNUSABLE = 2,   /* cannot run correctly here */
} het_plan_grade;

/* "optimal", "suboptimal", "unusable". */
const char *het_plan_grade_str(het_plan_grade g);

/* One stored placement of a graph build. */
typedef struct het_aot_build {
  int index;             /* among the PARTITION's builds (those of regime
                            k at k's first_build + the session's index) */
  const char *prefix;    /* "" or "If_0/then_branch/" */
  int n_nodes;           /* its model nodes */
  const char **node;     /* per node: its name as stored */
  const char **provider; /* per node: provider name, NULL for the host */
  const char **placed_by, **reason;
} het_aot_build;

typedef struct het_aot_blob {
  int build, subgraph, n_nodes, first_node;
  const char *provider;
  const void *data;
  size_t size;
} het_aot_blob;

/* A shape regime of the plan: its builds (consecutive in PARTITION) and
 * the shapes it was planned for.  Regime 0 is the plan's own (shapes:
 * META's option.shape lines). */
typedef struct het_aot_regime {
  int first_build, n_builds;
  int n_shapes;
  const char **shapes;   /* "NAME=DIMS" each */
} het_aot_regime;

/* A plan being loaded (or loaded): the file, its parsed sections. */
typedef struct het_aot {
  het_plan_file *file;
  const char *path;      /* what names it */
  het_arena arena;       /* the parsed strings and tables */
  int n_meta;
  const char **meta_key, **meta_value;
  int n_print;
  const char **print_key, **print_value;
  int n_builds;
  het_aot_build *builds;
  int n_blobs;
  het_aot_blob *blobs;
  int n_regimes;         /* 1 + PARTITION's regime lines */
  het_aot_regime regimes[HET_MAX_REGIMES];
  het_plan_grade grade;
  char why[1024];        /* the grade's reasons ("" when optimal) */
} het_aot;

/* Opens the plan at path (or size bytes at data when data is non-NULL)
 * and parses its sections; caller owns *out (het_aot_destroy).  Errors
 * name the plan and what is wrong. */
het_status het_aot_open(const char *path, const void *data, size_t size,
                        het_aot **out);
void het_aot_destroy(het_aot *a);

/* The value of key in the plan's META or FINGERPRINT text, or NULL. */
const char *het_aot_meta(const het_aot *a, const char *key);
const char *het_aot_print(const het_aot *a, const char *key);

/* The session a plan makes: its graph (the plan's optimized graph, with
 * weights in the file) placed as the plan says, its compiled blobs
 * restored, the rest of o (threads, executor, limits, measurement)
 * applied.  A plan graded unusable fails with ERR_UNSUPPORTED naming
 * what does not match, unless option plan_mismatch=rebuild, which
 * partitions and compiles the plan's graph afresh (with a warning). */
het_status het_session_create_plan(het_env *env, het_aot *a,
                                   const het_session_options *o,
                                   het_session **out);

/* During a plan session's build: graph build b's stored placement, or
 * NULL (a build the plan does not hold, or a session without a plan). */
const het_aot_build *het_aot_find_build(const het_session *s,
                                        const het_graph_build *b);
/* The blob of compute subgraph sg of build b, or NULL. */
const het_aot_blob *het_aot_find_blob(const het_session *s,
                                      const het_graph_build *b, int sg);
/* Grades s's providers against the plan's (after they are created);
 * folds their verdicts into s->aot's grade. */
void het_aot_grade_providers(het_session *s);

#endif
