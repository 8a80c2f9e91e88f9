/* assign_exact.c — the exact optimum of het_cost_evaluate by branch and
 * bound over t->order, for tests and small graphs.  Each level places one
 * node (het_cost_step gives the exact added cost); a branch is cut when
 * its cost plus the sum of per-node minimum times of the remaining nodes
 * cannot beat the best so far, which starts at het_assign_cost's answer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/cost_internal.h"

typedef struct het_bnb {
  const het_cost_index *ix;
  const het_cost_table *t;
  int *a;             /* current partial assignment */
  int *best;          /* best complete assignment */
  double best_cost;
  double *suffix_min; /* [p]: sum over positions >= p of min node time */
  double *used;       /* [(p) * D]: resident bytes before position p */
} het_bnb;

/* Devices in increasing order of their added cost inc[]. */
static void het_bnb_sort(const double *inc, int D, int *idx) {
  for (int d = 0; d < D; d++) {
    int k = d;
    while (k > 0 && inc[idx[k - 1]] > inc[d]) {
      idx[k] = idx[k - 1];
      k--;
    }
    idx[k] = d;
  }
}

/* True when cost x beats the best so far (strictly, by a relative 1e-12). */
static bool het_bnb_beats(double x, double best) {
  return isfinite(x) && (!isfinite(best) || het_cost_better(x - best, best));
}

static void het_bnb_visit(het_bnb *b, int p, double partial) {
  const het_cost_index *ix = b->ix;
  int D = ix->n_devices;
  if (p == ix->n_nodes) {
    /* het_cost_step counts weights only: activations at the leaf. */
    if (ix->act && !isfinite(het_cost_eval_ix(ix, b->a, NULL, true)))
      return;
    if (het_bnb_beats(partial, b->best_cost)) {
      b->best_cost = partial;
      memcpy(b->best, b->a, (size_t)ix->n_nodes * sizeof(int));
    }
    return;
  }
  double inc[HET_COST_MAX_DEVICES];
  double used[HET_COST_MAX_DEVICES][HET_COST_MAX_DEVICES];
  int idx[HET_COST_MAX_DEVICES];
  for (int d = 0; d < D; d++) {
    memcpy(used[d], b->used + (size_t)p * D, (size_t)D * sizeof(double));
    inc[d] = het_cost_step(ix, b->a, p, d, used[d]);
  }
  het_bnb_sort(inc, D, idx);
  int n = ix->order[p];
  for (int k = 0; k < D; k++) {
    int d = idx[k];
    double lb = partial + inc[d] + b->suffix_min[p + 1];
    if (!het_bnb_beats(lb, b->best_cost))
      break;
    b->a[n] = d;
    memcpy(b->used + (size_t)(p + 1) * D, used[d], (size_t)D * sizeof(double));
    het_bnb_visit(b, p + 1, partial + inc[d]);
  }
}

het_status het_assign_exact(const het_cost_table *t, int max_nodes,
                            int *assign, double *best) {
  if (t->n_nodes > max_nodes)
    return het_error(HET_ERR_UNSUPPORTED,
                     "exact assignment: %d nodes (at most %d supported)",
                     t->n_nodes, max_nodes);
  if (t->n_devices < 1 || t->n_devices > HET_COST_MAX_DEVICES)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "exact assignment: %d devices (1 to %d supported)",
                     t->n_devices, HET_COST_MAX_DEVICES);
  het_cost_index ix;
  HET_TRY(het_cost_index_init(&ix, t));
  size_t nn = (size_t)t->n_nodes + 1;
  het_bnb b = {.ix = &ix, .t = t, .best_cost = INFINITY};
  b.a = calloc(nn, sizeof(int));
  b.best = calloc(nn, sizeof(int));
  b.suffix_min = calloc(nn, sizeof(double));
  b.used = calloc(nn * (size_t)t->n_devices, sizeof(double));
  het_status st = HET_OK;
  if (!b.a || !b.best || !b.suffix_min || !b.used) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "exact assignment: out of memory");
    goto fail;
  }
  for (int p = t->n_nodes - 1; p >= 0; p--) {
    int n = ix.order[p];
    double m = INFINITY;
    for (int d = 0; d < t->n_devices; d++)
      m = fmin(m, t->node_time[(size_t)n * t->n_devices + d]);
    b.suffix_min[p] = b.suffix_min[p + 1] + m;
  }
  if (het_assign_cost(t, NULL, b.best) == HET_OK)
    b.best_cost = het_cost_eval_ix(&ix, b.best, NULL, true);
  het_error_clear();
  het_bnb_visit(&b, 0, 0);
  if (!isfinite(b.best_cost)) {
    st = het_error(HET_ERR_CAPACITY,
                   "exact assignment: no assignment keeps every device's "
                   "initializers and activations within its memory "
                   "capacity or budget");
    goto fail;
  }
  memcpy(assign, b.best, (size_t)t->n_nodes * sizeof(int));
  *best = het_cost_eval_ix(&ix, b.best, NULL, true);
fail:
  free(b.a);
  free(b.best);
  free(b.suffix_min);
  free(b.used);
  het_cost_index_deinit(&ix);
  return st;
}
