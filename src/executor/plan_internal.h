/* plan_internal.h — the passes of het_plan_build and what they share
 * (plan_build.c, plan_order.c, plan_memory.c, plan_control.c); frames
 * (frame.c) and the run loop (exec.c).  Only src/executor includes it.
 */
#ifndef HET_EXECUTOR_PLAN_INTERNAL_H
#define HET_EXECUTOR_PLAN_INTERNAL_H

#include <stdint.h>

#include "core/infer.h"
#include "executor/plan.h"

/* State of one build. */
typedef struct het_plan_builder {
  het_program *prog;
  const het_graph *g;
  het_plan *plan;
  het_arena scratch;     /* freed after the build */
  het_value_info *info;  /* per value: what inference knows */
  bool *dyn;             /* per value: shape known only at run time */
  bool *node_dynamic;    /* per node: its outputs are shaped at run time */
  bool any_dynamic;
  int *producer_step;    /* per value: step writing it, -1 none */
  int *space;            /* per value: 0 host, 1 + ep */
  int *reads_of;         /* per step: values it reads (with repeats) */
  /* pass 4 (plan_order.c) */
  int n_pos;
  int *pos_step;         /* per position: its step */
  int words;             /* uint64 words per position bitset */
  uint64_t *reach;       /* [pos * words]: positions happening before */
  int *acc_off, *acc;    /* CSR per value (+ scratch values after them):
                            the positions accessing it */
  int n_acc_values;
} het_plan_builder;

/* ---- plan_build.c ---- */
bool het_plan_is_control(const het_program *p, int node);
int het_plan_space_of_ep(const het_program *p, int ep);
/* Whether step s is done before the host enqueues later steps (control
 * flow; inline streams). */
bool het_plan_host_ordered(const het_plan *plan, const het_pstep *s);
/* Calls fn(ctx, t, v) for each value step t reads. */
het_status het_plan_step_reads(const het_plan_builder *b, int t,
                               het_status (*fn)(het_plan_builder *, int, int),
                               het_plan_builder *ctx);

/* ---- plan_order.c: pass 4 ---- */
/* Numbers the positions of b->plan's steps (first_pos, last_pos). */
void het_plan_positions(het_plan_builder *b);
/* The order and the access lists of b->plan (positions numbered); reads
 * the plan only, so validation recomputes it. */
het_status het_plan_order(het_plan_builder *b);
void het_plan_order_deinit(het_plan_builder *b);
/* Whether position a happens before position at. */
bool het_plan_pos_before(const het_plan_builder *b, int a, int at);
/* The memplan oracle over b's access lists. */
void het_plan_memplan_order(het_plan_builder *b, het_memplan_order *out);

/* ---- plan_memory.c: pass 5 ---- */
het_status het_plan_memory(het_plan_builder *b);

/* ---- plan_control.c ---- */
/* Plan-time inference of control-flow node n: true when its outputs'
 * shapes follow from its inputs' (both If branches agree, a Loop's carried
 * values keep their shapes, a Scan's slices stack), out filled. */
bool het_plan_control_infer(het_plan_builder *b, int n,
                            const het_value_info *in, het_value_info *out);

/* ---- frame.c ---- */

/* Storage a dynamic value held in an earlier run of the frame: data
 * (NULL: none), its size in bytes, and its device (NULL: host memory). */
typedef struct het_frame_block {
  void *data;
  size_t bytes;
  const het_device *device;
} het_frame_block;

/* One run's instance of a plan: tensors, arenas, events, kernel-I/O
 * tables.  A frame serves one run at a time; plans keep idle ones. */
typedef struct het_frame {
  het_plan *plan;
  het_tensor *tensors;  /* per value: the frame's tensor objects */
  /* per dynamic value: its storage kept from the last run for the next
   * (spare), and the block lent to its tensor in this run (lent) */
  het_frame_block *spare, *lent;
  het_tensor **ptrs;    /* per value: what steps read and write */
  void **arena;         /* per space: the block (NULL: none) */
  bool *arena_pinned;
  const het_device *host_device; /* whose host_alloc made arena[0] */
  het_event *events;    /* per event slot */
  het_kernel_io *ios;   /* per run step */
  double *times;        /* per step: start and end (recording) */
  struct het_frame *next;
  struct het_exec_state *run; /* the run using it */
} het_frame;

/* A frame of plan: an idle one, or a new one (arenas allocated, events
 * created).  Thread-safe. */
het_status het_frame_acquire(het_plan *plan, het_frame **out);
/* Back to the plan's idle list (its dynamic tensors reset, their
 * storage kept as spares for the next run of the frame). */
void het_frame_release(het_frame *f);
/* Gives the tensor of dynamic value v the spare storage of an earlier
 * run when that is on device (NULL or host: host memory) and holds
 * dtype/dims; false otherwise (a spare that does not fit is freed). */
bool het_frame_reuse(het_frame *f, int v, const het_device *device,
                     het_dtype dtype, const int64_t *dims, int rank);
/* Frees the plan's idle frames. */
void het_plan_frames_destroy(het_plan *plan);

/* ---- exec.c ---- */
/* het_kernel_io.prepare_node of every frame: infers node's outputs from
 * its inputs (host_inputs, or the frame's tensors) and places the dynamic
 * ones in the memory of the step's provider. */
het_status het_exec_prepare_node(const het_kernel_io *io, int node,
                                 het_tensor *const *host_inputs);

#endif
