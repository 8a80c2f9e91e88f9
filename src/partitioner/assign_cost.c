/* assign_cost.c — the `cost` assignment: minimises het_cost_evaluate by
 * local search from several starting points.  Subgraphs are runs of the
 * fixed topological order t->order, so every assignment is convex.
 * Passes: 1. starting points (priority, each feasible all-on-one-device,
 * per-node argmin, a Viterbi DP over t->order), capacity-repaired; 2. local
 * search from each (single nodes; windows of 1-3 adjacent runs to every
 * device; strict improvements until none); 2b. perturbation of the best
 * (force one node elsewhere, descend with it frozen, keep if better);
 * 3. the best, never worse than the priority assignment.  Deterministic:
 * fixed orders, strict ties, count-based budgets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/cost_internal.h"

#define HET_SEARCH_MAX_SWEEPS 10000
#define HET_DP_MAX_WORK 1e8 /* nodes^2 * devices: path copies of the DP */
#define HET_KICK_BUDGET 300000LL /* move evaluations for perturbation */

static double het_time(const het_cost_table *t, int n, int d) {
  return t->node_time[(size_t)n * t->n_devices + d];
}

/* ---- pass 1: starting points ---- */

static bool het_start_all_on(const het_cost_table *t, int d, int *a) {
  for (int n = 0; n < t->n_nodes; n++) {
    if (!isfinite(het_time(t, n, d)))
      return false;
    a[n] = d;
  }
  return true;
}

static void het_start_argmin(const het_cost_table *t, int *a) {
  for (int n = 0; n < t->n_nodes; n++) {
    a[n] = 0;
    for (int d = 1; d < t->n_devices; d++)
      if (het_time(t, n, d) < het_time(t, n, a[n]))
        a[n] = d;
  }
}

/* Viterbi over t->order, the state being the previous node's device; the
 * transfers of non-adjacent edges use the best path into each state, so
 * it is exact for chains and a heuristic elsewhere.  *used = false when
 * skipped (too large, or no finite path); OUT_OF_MEMORY is an error, not a
 * skip, so that memory pressure never changes the plan quietly. */
static het_status het_start_dp(const het_cost_index *ix, int *out,
                               bool *used) {
  int N = ix->n_nodes, D = ix->n_devices;
  *used = false;
  if (N == 0 || D > HET_COST_MAX_DEVICES ||
      (double)N * N * D > HET_DP_MAX_WORK)
    return HET_OK;
  int *paths = calloc((size_t)2 * D * N, sizeof(int));
  if (!paths)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  int *cur = paths, *next = paths + (size_t)D * N;
  double cost[HET_COST_MAX_DEVICES] = {0}, ncost[HET_COST_MAX_DEVICES] = {0};
  int from[HET_COST_MAX_DEVICES] = {0};
  for (int d = 0; d < D; d++)
    cost[d] = d == 0 ? 0 : INFINITY;
  for (int p = 0; p < N; p++) {
    int n = ix->order[p];
    for (int d = 0; d < D; d++) {
      ncost[d] = INFINITY;
      from[d] = -1;
      for (int e = 0; e < D; e++) {
        if (!isfinite(cost[e]))
          continue;
        double c = cost[e] + het_cost_step(ix, cur + (size_t)e * N, p, d, NULL);
        if (c < ncost[d]) {
          ncost[d] = c;
          from[d] = e;
        }
      }
    }
    for (int d = 0; d < D; d++) {
      if (from[d] >= 0)
        memcpy(next + (size_t)d * N, cur + (size_t)from[d] * N,
               (size_t)N * sizeof(int));
      next[(size_t)d * N + n] = d;
      cost[d] = ncost[d];
    }
    int *swap = cur;
    cur = next;
    next = swap;
  }
  int best = 0;
  for (int d = 1; d < D; d++)
    if (cost[d] < cost[best])
      best = d;
  *used = isfinite(cost[best]);
  if (*used)
    memcpy(out, cur + (size_t)best * N, (size_t)N * sizeof(int));
  free(paths);
  return HET_OK;
}

/* ---- capacity repair ---- */

static int het_over_capacity(const het_cost_search *s) {
  for (int d = 0; d < s->t->n_devices; d++)
    if (s->t->capacity[d] && s->used[d] > (double)s->t->capacity[d])
      return d;
  return -1;
}

static bool het_has_const_input(const het_cost_index *ix, int n) {
  for (int k = ix->in_off[n]; k < ix->in_off[n + 1]; k++)
    if (ix->t->value_const[ix->ins[k]])
      return true;
  return false;
}

/* The move off device `over` that frees resident bytes (weights, or
 * activations when they count) at the least added (capacity-relaxed) cost
 * per byte — the least valuable bytes go first; false when there is
 * none. */
static bool het_repair_step(het_cost_search *s, int over) {
  const het_cost_table *t = s->t;
  double best = INFINITY;
  int bn = -1, be = -1;
  for (int p = 0; p < t->n_nodes; p++) {
    int n = s->ix->order[p];
    if (s->assign[n] != over || (!s->ix->act && !het_has_const_input(s->ix, n)))
      continue;
    for (int e = 0; e < t->n_devices; e++) {
      if (e == over || !isfinite(het_time(t, n, e)))
        continue;
      double delta = het_search_try(s, &n, 1, e);
      double freed = s->used[over] - s->used_next[over];
      bool fits = !t->capacity[e] || s->used_next[e] <= (double)t->capacity[e];
      het_search_undo(s, &n, 1);
      if (freed > 0 && fits && isfinite(delta) && delta / freed < best) {
        best = delta / freed;
        bn = n;
        be = e;
      }
    }
  }
  if (bn < 0)
    return false;
  het_search_commit(s, het_search_try(s, &bn, 1, be));
  return true;
}

/* Makes s->assign fit the capacities; false when it cannot. */
static bool het_repair(het_cost_search *s) {
  for (int iter = 0; iter <= s->t->n_nodes * s->t->n_devices; iter++) {
    int over = het_over_capacity(s);
    if (over < 0) {
      s->relaxed = false;
      s->cur = het_cost_eval_ix(s->ix, s->assign, s->used, true);
      return isfinite(s->cur);
    }
    if (!het_repair_step(s, over))
      return false;
  }
  return false;
}

/* ---- pass 2: local search ---- */

static bool het_improve_nodes(het_cost_search *s) {
  bool improved = false;
  for (int p = 0; p < s->t->n_nodes; p++) {
    int n = s->ix->order[p], bd = -1;
    double bdelta = 0;
    if (n == s->tabu)
      continue;
    for (int d = 0; d < s->t->n_devices; d++) {
      if (d == s->assign[n])
        continue;
      double delta = het_search_try(s, &n, 1, d);
      het_search_undo(s, &n, 1);
      if (het_cost_better(delta, s->cur) && delta < bdelta) {
        bdelta = delta;
        bd = d;
      }
    }
    if (bd >= 0) {
      het_search_commit(s, het_search_try(s, &n, 1, bd));
      improved = true;
    }
  }
  return improved;
}

/* start[r] = first position of run r; start[count] = n_nodes. */
static int het_runs(const het_cost_search *s, int *start) {
  int count = 0;
  for (int p = 0; p < s->t->n_nodes; p++)
    if (p == 0 || s->assign[s->ix->order[p]] != s->assign[s->ix->order[p - 1]])
      start[count++] = p;
  start[count] = s->t->n_nodes;
  return count;
}

/* Moves whole windows of 1-3 adjacent runs to one device. */
static bool het_improve_runs(het_cost_search *s, int *start, int *nodes) {
  bool improved = false;
  int nr = het_runs(s, start);
  for (int r = 0; r < nr; r++) {
    double bdelta = 0;
    int bw = 0, bd = -1;
    int tabu_pos = s->tabu >= 0 ? s->ix->pos[s->tabu] : -1;
    for (int w = 1; w <= 3 && r + w <= nr; w++) {
      int m = start[r + w] - start[r];
      if (tabu_pos >= start[r] && tabu_pos < start[r + w])
        break;
      memcpy(nodes, s->ix->order + start[r], (size_t)m * sizeof(int));
      for (int d = 0; d < s->t->n_devices; d++) {
        if (w == 1 && d == s->assign[nodes[0]])
          continue;
        double delta = het_search_try(s, nodes, m, d);
        het_search_undo(s, nodes, m);
        if (het_cost_better(delta, s->cur) && delta < bdelta) {
          bdelta = delta;
          bw = w;
          bd = d;
        }
      }
    }
    if (bd < 0)
      continue;
    int m = start[r + bw] - start[r];
    memcpy(nodes, s->ix->order + start[r], (size_t)m * sizeof(int));
    het_search_commit(s, het_search_try(s, nodes, m, bd));
    improved = true;
    nr = het_runs(s, start);
  }
  return improved;
}

static void het_improve(het_cost_search *s, int *start, int *nodes) {
  for (int sweep = 0; sweep < HET_SEARCH_MAX_SWEEPS; sweep++) {
    bool a = het_improve_nodes(s);
    bool b = het_improve_runs(s, start, nodes);
    if (!a && !b)
      break;
  }
}

/* ---- driver ---- */

typedef struct het_cost_work {
  het_cost_index ix;
  het_cost_search s;
  int *starts;   /* (n_devices + 3) starting assignments */
  int n_starts;
  int *best;
  int *run_start, *nodes, *snap;
} het_cost_work;

/* Pass 2b, perturbation: forces each node onto each other device, descends
 * from there, and keeps the result when it is strictly better.  Stops
 * after HET_KICK_BUDGET move evaluations (deterministic). */
static bool het_kick(het_cost_work *w) {
  het_cost_search *s = &w->s;
  size_t bytes = (size_t)s->t->n_nodes * sizeof(int);
  double used[HET_COST_MAX_DEVICES];
  bool improved = false;
  for (int p = 0; p < s->t->n_nodes; p++) {
    int n = s->ix->order[p];
    for (int d = 0; d < s->t->n_devices; d++) {
      if (d == s->assign[n] || s->tries > HET_KICK_BUDGET)
        continue;
      double before = s->cur;
      memcpy(w->snap, s->assign, bytes);
      memcpy(used, s->used, sizeof used);
      double delta = het_search_try(s, &n, 1, d);
      if (!isfinite(delta)) {
        het_search_undo(s, &n, 1);
        continue;
      }
      het_search_commit(s, delta);
      s->tabu = n;
      het_improve(s, w->run_start, w->nodes);
      s->tabu = -1;
      het_improve(s, w->run_start, w->nodes);
      if (het_cost_better(s->cur - before, before)) {
        improved = true;
        continue;
      }
      memcpy(s->assign, w->snap, bytes);
      memcpy(s->used, used, sizeof used);
      s->cur = before;
    }
  }
  return improved;
}

static void het_cost_work_deinit(het_cost_work *w) {
  het_search_deinit(&w->s);
  het_cost_index_deinit(&w->ix);
  free(w->starts);
  free(w->best);
  free(w->run_start);
  free(w->nodes);
  free(w->snap);
}

static het_status het_cost_work_init(het_cost_work *w,
                                     const het_cost_table *t) {
  memset(w, 0, sizeof *w);
  size_t nn = (size_t)t->n_nodes + 1;
  HET_TRY(het_cost_index_init(&w->ix, t));
  het_status st = het_search_init(&w->s, &w->ix);
  if (st != HET_OK) {
    het_cost_index_deinit(&w->ix);
    return st;
  }
  w->starts = calloc(nn * (size_t)(t->n_devices + 3), sizeof(int));
  w->best = calloc(nn, sizeof(int));
  w->run_start = calloc(nn + 1, sizeof(int));
  w->nodes = calloc(nn, sizeof(int));
  w->snap = calloc(nn, sizeof(int));
  if (!w->starts || !w->best || !w->run_start || !w->nodes || !w->snap) {
    het_cost_work_deinit(w);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  }
  return HET_OK;
}

/* Pass 1: the distinct starting points, priority first. */
static het_status het_cost_starts(het_cost_work *w, const int *prio) {
  const het_cost_table *t = w->ix.t;
  size_t n = (size_t)t->n_nodes;
  int *slot = w->starts;
  bool ok[HET_COST_MAX_DEVICES + 3] = {false};
  int k = 0;
  if (prio) {
    memcpy(slot, prio, n * sizeof(int));
    ok[k] = true;
  }
  k++;
  for (int d = 0; d < t->n_devices; d++, k++)
    ok[k] = het_start_all_on(t, d, w->starts + (size_t)k * (n + 1));
  het_start_argmin(t, w->starts + (size_t)k * (n + 1));
  ok[k++] = true;
  HET_TRY(het_start_dp(&w->ix, w->starts + (size_t)k * (n + 1), &ok[k]));
  k++;
  w->n_starts = 0;
  for (int i = 0; i < k; i++) {
    if (!ok[i])
      continue;
    const int *a = w->starts + (size_t)i * (n + 1);
    bool dup = false;
    for (int j = 0; j < w->n_starts && !dup; j++)
      dup = memcmp(w->starts + (size_t)j * (n + 1), a, n * sizeof(int)) == 0;
    if (!dup)
      memmove(w->starts + (size_t)w->n_starts++ * (n + 1), a,
              n * sizeof(int));
  }
  return HET_OK;
}

static bool het_assign_valid(const het_cost_table *t, const int *a) {
  for (int n = 0; n < t->n_nodes; n++)
    if (a[n] < 0 || a[n] >= t->n_devices)
      return false;
  return true;
}

het_status het_assign_cost(const het_cost_table *t, const int *prio,
                           int *assign) {
  if (t->n_devices < 1 || t->n_devices > HET_COST_MAX_DEVICES)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "cost model: %d devices (1 to %d supported)",
                     t->n_devices, HET_COST_MAX_DEVICES);
  if (prio && !het_assign_valid(t, prio))
    prio = NULL;
  het_cost_work w;
  HET_TRY(het_cost_work_init(&w, t));
  het_status started = het_cost_starts(&w, prio);
  if (started != HET_OK) {
    het_cost_work_deinit(&w);
    return started;
  }
  double best = INFINITY;
  size_t n = (size_t)t->n_nodes;
  for (int i = 0; i < w.n_starts; i++) {
    het_search_set(&w.s, w.starts + (size_t)i * (n + 1), false);
    if (!isfinite(w.s.cur)) {
      het_search_set(&w.s, w.starts + (size_t)i * (n + 1), true);
      if (!het_repair(&w.s))
        continue;
    }
    het_improve(&w.s, w.run_start, w.nodes);
    double c = het_cost_eval_ix(&w.ix, w.s.assign, NULL, true);
    if (c < best) {
      best = c;
      memcpy(w.best, w.s.assign, n * sizeof(int));
    }
  }
  if (isfinite(best)) {
    het_search_set(&w.s, w.best, false);
    w.s.tries = 0; /* the kick budget counts from here */
    while (het_kick(&w))
      ;
    double c = het_cost_eval_ix(&w.ix, w.s.assign, NULL, true);
    if (c < best) {
      best = c;
      memcpy(w.best, w.s.assign, n * sizeof(int));
    }
  }
  if (prio) {
    double pc = het_cost_eval_ix(&w.ix, prio, NULL, true);
    if (pc <= best && isfinite(pc)) {
      best = pc;
      memcpy(w.best, prio, n * sizeof(int));
    }
  }
  het_status st = HET_OK;
  if (!isfinite(best))
    st = het_error(HET_ERR_CAPACITY,
                   "cost model: no assignment keeps every device's "
                   "initializers and activations within its memory "
                   "capacity or budget");
  else
    memcpy(assign, w.best, n * sizeof(int));
  het_cost_work_deinit(&w);
  return st;
}
