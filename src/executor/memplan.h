/* memplan.h — the memory planner: from tensor lifetimes to offsets in one
 * arena per memory space (greedy best fit, three placement orders), with
 * in-place reuse for eligible elementwise ops.  Lifetimes are intervals of
 * one total order of positions, or, when several streams run at once, a
 * happens-before oracle (het_memplan_order): a value may reuse another's
 * bytes only when every access of the other is ordered before its first.
 * Invariant of a plan: two planned values of one space whose lifetimes
 * overlap never share a byte, except an in-place output and the input whose
 * block it takes over at the position where that input dies.
 */
#ifndef HET_EXECUTOR_MEMPLAN_H
#define HET_EXECUTOR_MEMPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ir.h"

#define HET_MEMPLAN_ALIGN 64
#define HET_MEMPLAN_INPLACE 2     /* in-place candidates per value */
#define HET_MEMPLAN_NONE SIZE_MAX /* offset of a value the plan leaves out */

/* Planner input, one per value.  A value is planned when bytes > 0 and
 * skip is false; first is its producer's position; without an order it is
 * live over [first, last] (up to its last reader's position, inclusive). */
typedef struct het_memplan_value {
  size_t bytes;
  int space;   /* 0 = host, 1.. = device spaces (< n_spaces) */
  int first, last;
  bool skip;   /* graph input, initializer, output, placed constant, ... */
  /* Values whose block this one may take over: input X qualifies when X
   * is planned in the same space, dies at this value's first step and
   * has the same (aligned) size.  -1 = none. */
  int inplace[HET_MEMPLAN_INPLACE];
} het_memplan_value;

/* A plan.  Arrays are malloc'd; het_memplan_deinit frees them. */
typedef struct het_memplan {
  int n_values;
  size_t *offset;  /* per value: byte offset in its space's arena, or NONE */
  size_t *bytes;   /* per value: planned size (0 when not planned) */
  int *space;      /* per value: its space */
  int *shares;     /* per value: the value whose block it took over, or -1 */
  int n_spaces;
  size_t *peak;    /* per space: arena size (planned peak of intermediates) */
  size_t *total;   /* per space: sum of the planned values' sizes */
  size_t *resident; /* per space: bytes living outside the arena (filled by
                       the caller, e.g. weights; zero from compute) */
  size_t *weights; /* per space: of resident, initializers and placed
                      constants (filled by the caller) */
  size_t *loose;   /* per space: of resident, intermediates the plan leaves
                      out (filled by the caller); total + loose = what an
                      allocator without reuse needs for intermediates */
  int n_inplace;   /* values that took over an input's block */
} het_memplan;

/* A partial order of positions (several streams).  before(ctx, a, at):
 * every access of value a (producer and readers) happens before position
 * at, and at is not one of them.  dies_at(ctx, a, at): at is an access of
 * a and every other access of a happens before it. */
typedef struct het_memplan_order {
  bool (*before)(void *ctx, int a, int at);
  bool (*dies_at)(void *ctx, int a, int at);
  void *ctx;
} het_memplan_order;

/* Plans n values over n_spaces spaces into *out (caller deinits); order
 * NULL: the intervals [first, last] of one total order.
 * Errors: INVALID_ARGUMENT for a value with a bad space or interval,
 * OUT_OF_MEMORY. */
het_status het_memplan_compute(const het_memplan_value *values, int n,
                               int n_spaces, const het_memplan_order *order,
                               het_memplan *out);

/* Frees the plan's arrays.  Accepts a zeroed plan. */
void het_memplan_deinit(het_memplan *plan);

/* Checks the plan against values: alignment, arena bounds, and that no two
 * planned values of one space with overlapping lifetimes share bytes
 * (unless one took over the other's block in place where it died).
 * ERR_INTERNAL naming the two values (by id) otherwise. */
het_status het_memplan_validate(const het_memplan_value *values,
                                const het_memplan_order *order,
                                const het_memplan *plan);

/* Whether node's output out may take over the block of its input in:
 * an elementwise op whose kernel tolerates the output aliasing that input
 * (same element index, same byte size), or a copy op (Identity, Reshape,
 * ...) whose kernel skips the copy when the buffers are the same, or
 * hetrt.FusedConv's residual (input 3). */
bool het_memplan_inplace_ok(const het_node *node, int out, int in);

#endif
