/* broadcast.h — numpy-broadcasting iteration for CPU kernels.
 * An operation over an output and up to HET_BCAST_MAX_INPUTS inputs is
 * reduced to rows: the shapes are right-aligned, size-1 output dims dropped
 * and adjacent dims merged where every operand is contiguous (or broadcast)
 * across them, so each row is a 1-D loop in which every operand advances
 * by 0 or 1 element.  Row functions see only raw pointers and those steps.
 */
#ifndef HET_CPU_BROADCAST_H
#define HET_CPU_BROADCAST_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "hetrt/hetrt.h"

#define HET_BCAST_MAX_INPUTS 4
#define HET_BCAST_MAX_OPS (HET_BCAST_MAX_INPUTS + 1)

/* One row: ptrs[0] is the output, ptrs[1..n_in] the inputs; steps[k] is 0
 * (operand k repeats one element) or 1 (contiguous); n >= 1 elements.
 * user is passed through unchanged.  Output and inputs may be the same
 * buffer only at the same offsets (in-place). */
typedef void (*het_bcast_row_fn)(void *const *ptrs, const int64_t *steps,
                                 int64_t n, const void *user);

/* One input of a broadcast operation: its data, element size and shape
 * (rank <= the output rank; dims right-aligned against the output). */
typedef struct het_bcast_operand {
  const void *data;
  size_t elem_size;
  int rank;
  const int64_t *dims;
} het_bcast_operand;

/* Plan of a broadcast: rows of dims[rank-1] elements over the outer dims.
 * strides are in elements, per operand (0 = output), 0 when broadcast. */
typedef struct het_bcast {
  int n_ops;
  int rank; /* >= 1 */
  int64_t dims[HET_MAX_RANK];
  int64_t strides[HET_BCAST_MAX_OPS][HET_MAX_RANK];
  int64_t count; /* output elements */
} het_bcast;

/* Builds the plan for an output of out_dims[out_rank] and n_in inputs.
 * Errors: ERR_SHAPE when an input dim is neither 1 nor the output dim, or
 * an input has a higher rank than the output; ERR_INVALID_ARGUMENT for
 * n_in outside 1..HET_BCAST_MAX_INPUTS.  Messages name the input index. */
het_status het_bcast_init(het_bcast *b, const int64_t *out_dims, int out_rank,
                          int n_in, const int *in_ranks,
                          const int64_t *const *in_dims);

struct het_parallel;

/* Calls fn for every row of the plan.  out/in are the operands' base
 * pointers with their element sizes.  Does nothing when count is 0. */
void het_bcast_for_each(const het_bcast *b, void *out, size_t out_elem_size,
                        const het_bcast_operand *in, het_bcast_row_fn fn,
                        const void *user);

/* As het_bcast_for_each, with the rows (or pieces of rows: fn may see a
 * row in several calls, each with n >= 1) split across pool (NULL: on the
 * calling thread).  fn runs concurrently, so it must only write the output
 * elements it is given, and must compute each element from that element's
 * operands alone. */
void het_bcast_for_each_pool(const struct het_parallel *pool, const het_bcast *b,
                             void *out, size_t out_elem_size,
                             const het_bcast_operand *in, het_bcast_row_fn fn,
                             const void *user);

/* Convenience: plans and runs fn over out and the inputs in[0..n_in).
 * Same errors as het_bcast_init. */
het_status het_bcast_run(void *out, size_t out_elem_size,
                         const int64_t *out_dims, int out_rank, int n_in,
                         const het_bcast_operand *in, het_bcast_row_fn fn,
                         const void *user);

/* As het_bcast_run, walking on pool (het_bcast_for_each_pool). */
het_status het_bcast_run_pool(const struct het_parallel *pool, void *out,
                              size_t out_elem_size, const int64_t *out_dims,
                              int out_rank, int n_in,
                              const het_bcast_operand *in, het_bcast_row_fn fn,
                              const void *user);

/* As het_bcast_run_pool over tensors (out already sized). */
het_status het_bcast_run_tensors(const struct het_parallel *pool, het_tensor *out,
                                 int n_in, const het_tensor *const *in,
                                 het_bcast_row_fn fn, const void *user);

/* Numpy broadcast of two concrete shapes; ERR_SHAPE on conflict. */
het_status het_bcast_shape(const int64_t *a, int ra, const int64_t *b, int rb,
                           int64_t *out, int *out_rank);

#endif
