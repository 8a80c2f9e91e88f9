/* plan.h — het_plan: how one program runs for one concrete signature of
 * its bound values (dtype and dims of each parameter).  Built once per
 * signature and cached per program (plan_cache.c), validated after every
 * build (plan_validate.c), run by the executor (exec.c).
 *
 * A plan is a list of steps in an order the host enqueues them in: run a
 * compiled subgraph on its provider's stream, copy a value between memory
 * spaces, convert one on the host (cast, layout), or run control flow on
 * the host.  Each step waits for the events of the steps on other streams
 * whose values it reads, and records an event when a later step on
 * another stream (or the host) reads what it wrote.  Every value has a
 * place: an offset in the arena of its memory space, a binding (parameter,
 * output, initializer, placed constant), its own allocation (ABI 1-2
 * device memory), or none yet (dynamic: its shape is known only at run
 * time).  Lifetimes in an arena are planned over the positions of the
 * plan (a run step's nodes each get one) with the happens-before order
 * its streams and events define, so bytes are reused across streams only
 * after an event orders the last read before the next write.
 *
 * Sync points (the host waits on the device), all documented in the
 * step that has them: a control-flow step (it reads its condition, trip
 * count and inputs on the host), a copy of a dynamic value (its size is
 * read first), and the end of the run.  A node whose outputs have
 * data-dependent shapes (NonZero, Unique, a shape computed at run time)
 * makes its step dynamic: its provider infers and places its outputs on
 * the stream, just before running it (het_kernel_io.prepare_node).
 */
#ifndef HET_EXECUTOR_PLAN_H
#define HET_EXECUTOR_PLAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "executor/memplan.h"
#include "executor/program.h"

/* Per parameter in a signature key: dtype, rank, dims. */
#define HET_PLAN_KEY_PER_PARAM (2 + HET_MAX_RANK)

typedef enum het_pstep_kind {
  HET_PSTEP_RUN,     /* a compiled subgraph on its provider's stream */
  HET_PSTEP_COPY,    /* one value to another memory space */
  HET_PSTEP_CONVERT, /* cast or layout change on the host stream */
  HET_PSTEP_CONTROL, /* If / Loop / Scan, run by the host */
} het_pstep_kind;

typedef struct het_pstep {
  het_pstep_kind kind;
  int sg;            /* partition subgraph */
  int node;          /* its first node (the node of single-node steps) */
  int ep;            /* provider doing the work; -1 the host */
  int slot;          /* stream slot; -1 for control (the host itself) */
  int n_waits;
  int *waits;        /* event slots to wait for before the step */
  bool host_waits;   /* the host waits for them (sync point), not the
                        stream */
  int record;        /* event slot recorded after the step, or -1 */
  int first_pos, last_pos; /* positions of the step (run: one per node) */
  int io;            /* run steps: index of its kernel-I/O table */
  bool dynamic;      /* sizes known only at run time (see above) */
  size_t scratch_offset, scratch_bytes; /* run steps: in its space */
} het_pstep;

typedef enum het_pvalue_where {
  HET_PV_NONE = 0,    /* not used by this plan */
  HET_PV_ARENA,       /* offset in the arena of its space */
  HET_PV_OWN,         /* its own allocation per frame (ABI 1-2 device) */
  HET_PV_PARAM,       /* bound per run: params[param] */
  HET_PV_OUTPUT,      /* bound per run: graph output output */
  HET_PV_WEIGHT,      /* an initializer of the graph */
  HET_PV_PLACED,      /* program->placed[v] */
  HET_PV_DYNAMIC,     /* shaped and allocated at run time */
} het_pvalue_where;

typedef struct het_pvalue {
  het_pvalue_where where;
  het_dtype dtype;
  int rank;
  int64_t dims[HET_MAX_RANK];
  size_t nbytes;
  int space;          /* 0 host, 1 + ep for device memory */
  size_t offset;      /* HET_PV_ARENA */
  int index;          /* HET_PV_PARAM / HET_PV_OUTPUT: which one */
  int producer_step;  /* -1: none in this plan */
  bool dynamic;       /* shape known at run time only (DYNAMIC, OUTPUT) */
} het_pvalue;

typedef struct het_plan {
  het_program *prog;
  int n_key;
  int64_t *key;
  int n_steps;
  het_pstep *steps;
  int n_values;
  het_pvalue *values;  /* per value id */
  bool *dynamic_node;  /* per node id, NULL when no node is dynamic */
  int n_spaces;        /* 1 + n_eps */
  size_t *arena_bytes; /* per space */
  int n_events;
  int *event_ep;       /* per event slot: the ep of the stream recording
                          it (-1 host) */
  int n_io;            /* kernel-I/O tables (one per run step) */
  int n_positions;
  bool uses_slot[3 * HET_MAX_EPS + 1];
  /* The memory plan's figures (see het_plan_summary). */
  het_memplan mem;
  size_t *resident, *weights, *loose; /* per space */
  /* Frames of this plan not in use (plan_cache.c). */
  pthread_mutex_t lock;
  struct het_frame *idle;
  int n_idle;
  int refs;            /* the cache's + one per run using it */
  uint64_t stamp;
  het_arena arena;     /* the plan's arrays */
} het_plan;

/* The key of params (n_params tensors, in program order) into key
 * (n_params * HET_PLAN_KEY_PER_PARAM entries). */
void het_plan_key(const het_program *p, het_tensor *const *params,
                  int64_t *key);

/* Builds and validates the plan of p for key (caller destroys).  Errors:
 * ERR_CAPACITY when a device cannot hold it, naming the device and the
 * bytes; ERR_INTERNAL (naming the two values or the step) when
 * validation fails; errors of inference naming the node. */
het_status het_plan_build(het_program *p, const int64_t *key, het_plan **out);
void het_plan_destroy(het_plan *plan);

/* The checks every built plan passes: no two tensors live at once share
 * bytes of an arena; every read of a value produced on another stream is
 * ordered after its production by an event (or the host); every input of
 * a step lives in its provider's memory (a copy's source and destination
 * where the copy moves them).  ERR_INTERNAL naming what is wrong. */
het_status het_plan_validate(const het_plan *plan);

/* Plan for key from p's cache, built on a miss; referenced for the caller
 * (het_plan_put).  Thread-safe. */
het_status het_plan_get(het_program *p, const int64_t *key, het_plan **out);
void het_plan_put(het_plan *plan);
/* The most recently used cached plan of p, referenced, or NULL. */
het_plan *het_plan_latest(het_program *p);
/* Plans built since the process started (tests: a cached signature builds
 * none). */
long het_plan_builds(void);

/* What a plan uses per memory space (0 host, 1 + ep). */
typedef struct het_plan_summary {
  size_t peak;      /* arena bytes: the planned peak of intermediates */
  size_t total;     /* sum of the arena values' sizes */
  size_t resident;  /* bytes outside the arena: weights, parameters,
                       outputs, placed constants, own allocations */
  size_t intermediates; /* every intermediate tensor's size summed (in the
                           arena or not): an allocator without reuse */
  size_t weights;   /* of resident: initializers and placed constants */
  int n_planned;    /* values in the arena */
  int n_inplace;    /* of which took over an input's block */
} het_plan_summary;

/* summary receives plan->n_spaces entries. */
void het_plan_summary_get(const het_plan *plan, het_plan_summary *summary);

/* ERR_CAPACITY naming the device when a device's arena plus what lives
 * there outside it exceeds its capacity. */
het_status het_plan_check_capacity(const het_plan *plan);

#endif
