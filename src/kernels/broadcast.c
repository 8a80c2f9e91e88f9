/* broadcast.c — plans numpy broadcasts as rows and walks them.
 * Pass 1 right-aligns every input against the output and gives each dim a
 * stride (0 where the input has size 1); pass 2 drops size-1 output dims;
 * pass 3 merges neighbouring dims that every operand walks contiguously.
 * Walks split the rows (or, when there are few, pieces of rows) across the
 * CPU thread pool; each element is computed by the same row function either
 * way, so results do not depend on the thread count.
 */
#include "kernels/broadcast.h"

#include <string.h>

#include "core/status.h"
#include "kernels/parallel.h"

/* Elements below which a walk stays on one thread; row pieces are
 * multiples of HET_BCAST_ALIGN elements. */
#define HET_BCAST_GRAIN 16384
#define HET_BCAST_ALIGN 64

static het_status het_bcast_strides(het_bcast *b, const int64_t *out_dims,
                                    int out_rank, int k, int rank,
                                    const int64_t *dims) {
  if (rank > out_rank)
    return het_error(HET_ERR_SHAPE, "input %d has rank %d > output rank %d",
                     k - 1, rank, out_rank);
  int64_t stride = 1;
  for (int d = out_rank - 1; d >= 0; d--) {
    int id = d - (out_rank - rank);
    int64_t n = id >= 0 ? dims[id] : 1;
    if (n == out_dims[d]) {
      b->strides[k][d] = n == 1 ? 0 : stride;
    } else if (n == 1) {
      b->strides[k][d] = 0;
    } else {
      return het_error(HET_ERR_SHAPE,
                       "input %d dim %d is %lld, cannot broadcast to %lld",
                       k - 1, id, (long long)n, (long long)out_dims[d]);
    }
    stride *= n;
  }
  return HET_OK;
}

/* Passes 2 and 3 over b's full-rank dims. */
static void het_bcast_coalesce(het_bcast *b) {
  int r = 0;
  for (int d = 0; d < b->rank; d++) {
    if (b->dims[d] == 1)
      continue;
    if (r > 0) {
      bool merge = true;
      for (int k = 0; k < b->n_ops; k++)
        if (b->strides[k][r - 1] != b->strides[k][d] * b->dims[d])
          merge = false;
      if (merge) {
        b->dims[r - 1] *= b->dims[d];
        for (int k = 0; k < b->n_ops; k++)
          b->strides[k][r - 1] = b->strides[k][d];
        continue;
      }
    }
    b->dims[r] = b->dims[d];
    for (int k = 0; k < b->n_ops; k++)
      b->strides[k][r] = b->strides[k][d];
    r++;
  }
  if (r == 0) {
    b->dims[0] = 1;
    for (int k = 0; k < b->n_ops; k++)
      b->strides[k][0] = 1;
    r = 1;
  }
  b->rank = r;
}

het_status het_bcast_init(het_bcast *b, const int64_t *out_dims, int out_rank,
                          int n_in, const int *in_ranks,
                          const int64_t *const *in_dims) {
  if (n_in < 1 || n_in > HET_BCAST_MAX_INPUTS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "broadcast of %d inputs (1..%d supported)", n_in,
                     HET_BCAST_MAX_INPUTS);
  if (out_rank < 0 || out_rank > HET_MAX_RANK)
    return het_error(HET_ERR_SHAPE, "output rank %d", out_rank);
  memset(b, 0, sizeof *b);
  b->n_ops = n_in + 1;
  b->rank = out_rank;
  b->count = het_dims_count(out_dims, out_rank);
  for (int d = 0; d < out_rank; d++)
    b->dims[d] = out_dims[d];
  HET_TRY(het_bcast_strides(b, out_dims, out_rank, 0, out_rank, out_dims));
  for (int k = 1; k <= n_in; k++)
    HET_TRY(het_bcast_strides(b, out_dims, out_rank, k, in_ranks[k - 1],
                              in_dims[k - 1]));
  if (b->count > 0)
    het_bcast_coalesce(b);
  return HET_OK;
}

/* A walk: unit u is piece u % parts (piece elements) of row u / parts. */
typedef struct het_bcast_walk {
  const het_bcast *b;
  char *base[HET_BCAST_MAX_OPS];
  size_t es[HET_BCAST_MAX_OPS];
  int64_t steps[HET_BCAST_MAX_OPS];
  int64_t inner, piece, parts;
  het_bcast_row_fn fn;
  const void *user;
} het_bcast_walk;

/* Runs units [u0, u1) of the walk at arg. */
static void het_bcast_walk_units(void *arg, int64_t u0, int64_t u1) {
  const het_bcast_walk *w = arg;
  const het_bcast *b = w->b;
  int r = b->rank, n_ops = b->n_ops;
  int64_t idx[HET_MAX_RANK] = {0};
  int64_t off[HET_BCAST_MAX_OPS] = {0};
  void *ptrs[HET_BCAST_MAX_OPS];
  int64_t part = u0 % w->parts, rem = u0 / w->parts;
  for (int d = r - 2; d >= 0; d--) {
    idx[d] = rem % b->dims[d];
    rem /= b->dims[d];
    for (int k = 0; k < n_ops; k++)
      off[k] += idx[d] * b->strides[k][d];
  }
  for (int64_t u = u0; u < u1; u++) {
    int64_t start = part * w->piece;
    int64_t len = w->inner - start < w->piece ? w->inner - start : w->piece;
    for (int k = 0; k < n_ops; k++)
      ptrs[k] = w->base[k] + (size_t)(off[k] + start * w->steps[k]) * w->es[k];
    w->fn(ptrs, w->steps, len, w->user);
    if (++part < w->parts)
      continue;
    part = 0;
    /* Odometer over the outer dims, keeping offsets incrementally. */
    for (int d = r - 2; d >= 0; d--) {
      if (++idx[d] < b->dims[d]) {
        for (int k = 0; k < n_ops; k++)
          off[k] += b->strides[k][d];
        break;
      }
      for (int k = 0; k < n_ops; k++)
        off[k] -= b->strides[k][d] * (b->dims[d] - 1);
      idx[d] = 0;
    }
  }
}

/* Splits rows into pieces when there are fewer rows than the pool has
 * chunks to hand out and the rows are long enough to share. */
static void het_bcast_walk_split(het_bcast_walk *w, int64_t rows,
                                 int threads) {
  w->piece = w->inner;
  w->parts = 1;
  int64_t target = (int64_t)threads * 4;
  if (threads <= 1 || rows >= target || w->inner < 2 * HET_BCAST_GRAIN)
    return;
  int64_t parts = (target + rows - 1) / rows;
  int64_t most = w->inner / HET_BCAST_GRAIN;
  parts = parts < most ? parts : most;
  int64_t piece = (w->inner + parts - 1) / parts;
  piece = (piece + HET_BCAST_ALIGN - 1) / HET_BCAST_ALIGN * HET_BCAST_ALIGN;
  w->piece = piece;
  w->parts = (w->inner + piece - 1) / piece;
}

void het_bcast_for_each_pool(const struct het_parallel *pool, const het_bcast *b,
                             void *out, size_t out_elem_size,
                             const het_bcast_operand *in, het_bcast_row_fn fn,
                             const void *user) {
  if (b->count <= 0)
    return;
  int r = b->rank;
  het_bcast_walk w = {.b = b, .fn = fn, .user = user,
                      .inner = b->dims[r - 1]};
  w.base[0] = out;
  w.es[0] = out_elem_size;
  for (int k = 1; k < b->n_ops; k++) {
    w.base[k] = (char *)in[k - 1].data;
    w.es[k] = in[k - 1].elem_size;
  }
  for (int k = 0; k < b->n_ops; k++)
    w.steps[k] = b->strides[k][r - 1] != 0;
  int64_t rows = b->count / w.inner;
  het_bcast_walk_split(&w, rows, het_parallel_threads(pool));
  int64_t grain = (HET_BCAST_GRAIN + w.piece - 1) / w.piece;
  het_parallel_for(pool, rows * w.parts, grain,
                              het_bcast_walk_units, &w);
}

void het_bcast_for_each(const het_bcast *b, void *out, size_t out_elem_size,
                        const het_bcast_operand *in, het_bcast_row_fn fn,
                        const void *user) {
  het_bcast_for_each_pool(NULL, b, out, out_elem_size, in, fn, user);
}

het_status het_bcast_run_pool(const struct het_parallel *pool, void *out,
                              size_t out_elem_size, const int64_t *out_dims,
                              int out_rank, int n_in,
                              const het_bcast_operand *in, het_bcast_row_fn fn,
                              const void *user) {
  if (n_in < 1 || n_in > HET_BCAST_MAX_INPUTS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "broadcast of %d inputs (1..%d supported)", n_in,
                     HET_BCAST_MAX_INPUTS);
  int ranks[HET_BCAST_MAX_INPUTS];
  const int64_t *dims[HET_BCAST_MAX_INPUTS];
  for (int k = 0; k < n_in; k++) {
    ranks[k] = in[k].rank;
    dims[k] = in[k].dims;
  }
  het_bcast b;
  HET_TRY(het_bcast_init(&b, out_dims, out_rank, n_in, ranks, dims));
  het_bcast_for_each_pool(pool, &b, out, out_elem_size, in, fn, user);
  return HET_OK;
}

het_status het_bcast_run(void *out, size_t out_elem_size,
                         const int64_t *out_dims, int out_rank, int n_in,
                         const het_bcast_operand *in, het_bcast_row_fn fn,
                         const void *user) {
  return het_bcast_run_pool(NULL, out, out_elem_size, out_dims, out_rank, n_in,
                            in, fn, user);
}

het_status het_bcast_run_tensors(const struct het_parallel *pool, het_tensor *out,
                                 int n_in, const het_tensor *const *in,
                                 het_bcast_row_fn fn, const void *user) {
  if (n_in < 1 || n_in > HET_BCAST_MAX_INPUTS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "broadcast of %d inputs (1..%d supported)", n_in,
                     HET_BCAST_MAX_INPUTS);
  het_bcast_operand ops[HET_BCAST_MAX_INPUTS];
  for (int k = 0; k < n_in; k++) {
    ops[k].data = in[k]->data;
    ops[k].elem_size = het_dtype_size(in[k]->dtype);
    ops[k].rank = in[k]->rank;
    ops[k].dims = in[k]->dims;
  }
  return het_bcast_run_pool(pool, out->data, het_dtype_size(out->dtype),
                            out->dims, out->rank, n_in, ops, fn, user);
}

het_status het_bcast_shape(const int64_t *a, int ra, const int64_t *b, int rb,
                           int64_t *out, int *out_rank) {
  int r = ra > rb ? ra : rb;
  if (r > HET_MAX_RANK)
    return het_error(HET_ERR_SHAPE, "rank %d exceeds %d", r, HET_MAX_RANK);
  int64_t tmp[HET_MAX_RANK];
  for (int i = 0; i < r; i++) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      return het_error(HET_ERR_SHAPE, "cannot broadcast dim %d: %lld vs %lld",
                       i, (long long)da, (long long)db);
    tmp[i] = da == 1 ? db : da;
  }
  memcpy(out, tmp, sizeof(int64_t) * (size_t)r);
  *out_rank = r;
  return HET_OK;
}
