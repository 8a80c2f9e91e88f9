/* session_memory.h — memory plans of a session (session_memory.c): one per
 * concrete input-shape signature, cached (LRU), each run taking a host
 * arena block of the planned size; planned peaks per device.
 */
#ifndef HET_API_SESSION_MEMORY_H
#define HET_API_SESSION_MEMORY_H

#include "session/session.h"
#include "executor/memplan.h"
#include "executor/run.h"

/* A cached plan; runs hold a reference while they use it. */
typedef struct het_plan_entry het_plan_entry;

/* Finds or builds the plan for the inputs bound in ctx (graph inputs of s
 * must be set), checks it against every device's capacity (ERR_CAPACITY
 * naming the device and the bytes), and points ctx->plan / ctx->arena at
 * it and at a host arena block of this run.  On success *entry must be
 * handed back with het_session_memory_release after the run (ctx's tensors
 * may point into the arena until then).  Thread-safe. */
het_status het_session_memory_acquire(het_session *s, het_run_ctx *ctx,
                                      het_plan_entry **entry);
/* Returns ctx's arena block and the reference.  Accepts a NULL entry. */
void het_session_memory_release(het_plan_entry *entry, het_run_ctx *ctx);

/* Summary of one memory space's plan (space 0 = host, p + 1 = device p). */
typedef struct het_memory_summary {
  size_t peak;      /* arena bytes: the planned peak of intermediates */
  size_t total;     /* sum of the planned intermediates' sizes */
  size_t resident;  /* bytes outside the arena: weights, inputs, outputs,
                       placed constants, values the plan leaves out */
  size_t intermediates; /* sum of every intermediate tensor's size (planned
                           or not; no graph inputs/outputs or weights):
                           what an allocator without reuse would need */
  size_t weights;   /* of resident: initializers and placed constants */
  int n_planned;    /* values placed in the arena */
  int n_inplace;    /* of which took over an input's block */
} het_memory_summary;

/* The plan for the model's load-time input shapes when they are all
 * concrete, else (when latest) the plan of the most recent run's
 * signature; ERR_SHAPE when there is none.  check_capacity: fail with
 * ERR_CAPACITY as a run would.  summary receives s->n_providers + 1
 * entries. */
het_status het_session_memory_summary(const het_session *s, bool latest,
                                      bool check_capacity,
                                      het_memory_summary *summary);

/* Drops the cached plans of s's model (runs still using one keep it until
 * they end).  For het_session_destroy.  Accepts a partly built session. */
void het_session_memory_forget(const het_session *s);

/* At session creation: records the plans' key (s->plan_fp); when the
 * input shapes are static, plans them (the plan is cached for the runs)
 * and fails with ERR_CAPACITY, naming the device and the bytes, when a
 * device cannot hold it.  HET_OK for symbolic shapes (checked per
 * signature at run time). */
het_status het_session_memory_check(het_session *s);

/* Number of plans computed since the process started (for tests: a cached
 * signature computes none). */
long het_session_memory_plans_computed(void);

#endif
