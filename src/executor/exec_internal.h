/* exec_internal.h — what the run loop (exec.c) and control flow
 * (exec_control.c) share.  Only src/executor includes it. */
#ifndef HET_EXECUTOR_EXEC_INTERNAL_H
#define HET_EXECUTOR_EXEC_INTERNAL_H

#include "executor/exec.h"
#include "executor/plan_internal.h"

/* One run of one program (the model's, or a body's inside a run). */
typedef struct het_exec_state {
  het_program *prog;
  het_plan *plan;
  het_frame *frame;
  het_stream_set *set;
  const het_exec_recorder *rec; /* NULL: not recording */
} het_exec_state;

/* Runs control-flow step T of r on the host: its inputs are ready (the
 * host waited for them). */
het_status het_exec_control(het_exec_state *r, const het_pstep *T);

/* dst (placed, or a shell with data NULL) receives src's contents (host
 * memory); when take, an owned src hands its storage to a shell. */
het_status het_exec_fill(het_tensor *dst, het_tensor *src, bool take,
                         const char *name);

#endif
