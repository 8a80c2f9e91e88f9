/* program.h — what the executor runs: a program is one graph (the model's,
 * or a control-flow body's) after partitioning, boundary insertion and
 * compilation, with the providers it was compiled for, its bodies'
 * programs, its plan cache and the session's stream layout.  The session
 * layer builds programs (src/session/); the executor plans and runs them.
 * Invariants: a program is immutable once het_program_init has returned,
 * apart from its plan cache (internally locked), so runs share it.
 */
#ifndef HET_EXECUTOR_PROGRAM_H
#define HET_EXECUTOR_PROGRAM_H

#include <pthread.h>
#include <stdbool.h>

#include "core/ep.h"
#include "core/ir.h"
#include "partitioner/partition.h"

struct het_plan_cache;
struct het_stream_pool;

#define HET_MAX_EPS 8

/* Stream slots of a session: which ep (-1: the host) each serves and how.
 * The sequential form has one slot per provider (its compute and the
 * copies it makes) plus the host's, inline where the memory is the
 * host's; the streams form gives each device provider a compute, a
 * copy-in and a copy-out stream, each host-memory provider a compute
 * stream and the host one for conversions, all served by threads. */
typedef enum het_slot_role {
  HET_SLOT_COMPUTE,
  HET_SLOT_COPY_IN,
  HET_SLOT_COPY_OUT,
  HET_SLOT_HOST,
} het_slot_role;

typedef struct het_stream_layout {
  int n_slots;
  int ep[3 * HET_MAX_EPS + 1];           /* per slot: ep index, -1 host */
  het_slot_role role[3 * HET_MAX_EPS + 1];
  unsigned flags[3 * HET_MAX_EPS + 1];   /* HET_STREAM_* */
  bool streams;                          /* the streams form */
} het_stream_layout;

/* Per-run recording: every node a provider runs and every boundary step,
 * with node ids of the session (program->node_base + id). */
typedef struct het_exec_recorder {
  het_record_fn record;
  void *ctx;
} het_exec_recorder;

typedef struct het_program het_program;

struct het_program {
  het_graph *graph;
  const het_partition *partition; /* steps: its subgraphs, in order */
  void **compiled;                /* per subgraph (compute steps) */
  het_tensor **placed;            /* per value: an initializer placed on a
                                     device (NULL: none) */
  const het_ep *eps;              /* the session's providers */
  int n_eps;
  const het_stream_layout *layout;
  struct het_stream_pool *streams; /* the session's */
  /* Values bound per run, in order: the graph inputs without an
   * initializer (the model), or the body's graph inputs followed by the
   * values it captures from the enclosing graph (outer[k] bound from the
   * parent's value outer_src[k]). */
  int n_params;
  int *params;
  int n_outer;
  int *outer, *outer_src;
  /* Control-flow nodes: bodies[node][k] (n_bodies[node] of them; If:
   * then, else; Loop, Scan: body), NULL for other nodes. */
  het_program ***bodies;
  int *n_bodies;
  const het_program *parent;
  int node_base;     /* session-wide id of node 0 */
  const char *path;  /* "" for the model, "If_0/then_branch", ... */
  struct het_plan_cache *cache; /* plans per signature */
  size_t max_host_bytes; /* session option max_memory (0: no cap) */
  int64_t max_loop_iterations; /* per Loop node (0: no cap) */
};

/* Creates p's plan cache (p's other fields are set by the caller).
 * Caller deinits. */
het_status het_program_init(het_program *p);
/* Drops the cached plans (runs using one keep it until they end). */
void het_program_deinit(het_program *p);

/* The stream layout for eps in the sequential or streams form. */
void het_stream_layout_init(het_stream_layout *l, const het_ep *eps, int n_eps,
                            bool streams);

/* A pool of stream sets (one set per concurrent run), shared by the
 * programs of a session.  Caller owns (destroy after every run ended). */
het_status het_stream_pool_create(const het_stream_layout *layout,
                                  const het_ep *eps,
                                  struct het_stream_pool **out);
void het_stream_pool_destroy(struct het_stream_pool *pool);

#endif
