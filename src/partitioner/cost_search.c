/* cost_search.c — incremental evaluation of moves for the `cost`
 * algorithm's local search: sending a set of nodes to one device changes
 * only their times, the transfers of the values they touch, the launches at
 * their positions, the resident bytes of their initializers and, where a
 * non-host device has a capacity, the activation peaks of the devices the
 * nodes leave and join (a sweep over the order for each).
 * Invariant: after commit, s->cur and s->used match a full evaluation (up
 * to rounding) of s->assign.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/cost_internal.h"

het_status het_search_init(het_cost_search *s, const het_cost_index *ix) {
  memset(s, 0, sizeof *s);
  s->ix = ix;
  s->t = ix->t;
  s->tabu = -1;
  size_t nn = (size_t)ix->n_nodes + 1, nv = (size_t)ix->n_values + 1;
  size_t edges = (size_t)ix->in_off[ix->n_nodes] +
                 (size_t)ix->out_off[ix->n_nodes] + 1;
  s->assign = calloc(nn, sizeof(int));
  s->saved = calloc(nn, sizeof(int));
  s->vmark = calloc(nv, sizeof(int));
  s->pmark = calloc(nn, sizeof(int));
  s->plist = calloc(2 * nn, sizeof(int));
  s->vlist = calloc(edges, sizeof(int));
  s->vmask = calloc(edges, sizeof(unsigned));
  if (!s->assign || !s->saved || !s->vmark || !s->pmark || !s->plist ||
      !s->vlist || !s->vmask) {
    het_search_deinit(s);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  }
  return HET_OK;
}

void het_search_deinit(het_cost_search *s) {
  free(s->assign);
  free(s->saved);
  free(s->vmark);
  free(s->pmark);
  free(s->plist);
  free(s->vlist);
  free(s->vmask);
  memset(s, 0, sizeof *s);
}

/* Whether device d's activations count against its capacity. */
static bool het_search_counts_act(const het_cost_search *s, int d) {
  return s->ix->act && !s->t->host_memory[d] && s->t->capacity[d];
}

void het_search_set(het_cost_search *s, const int *assign, bool relaxed) {
  memcpy(s->assign, assign, (size_t)s->ix->n_nodes * sizeof(int));
  s->relaxed = relaxed;
  s->cur = het_cost_eval_ix(s->ix, s->assign, s->used, !relaxed);
  for (int d = 0; d < s->t->n_devices; d++)
    s->act[d] = het_search_counts_act(s, d)
                    ? het_cost_act_peak(s->ix, s->assign, d)
                    : 0;
}

/* used_next gains the activation change of the devices a move of m nodes
 * to dev touches (their old devices are in s->saved). */
static void het_search_act(het_cost_search *s, int m, int dev) {
  memcpy(s->act_next, s->act, sizeof s->act);
  if (!s->ix->act)
    return;
  unsigned touched = 1u << dev;
  for (int i = 0; i < m; i++)
    touched |= 1u << s->saved[i];
  for (int d = 0; d < s->t->n_devices; d++)
    if ((touched >> d & 1u) && het_search_counts_act(s, d)) {
      s->act_next[d] = het_cost_act_peak(s->ix, s->assign, d);
      s->used_next[d] += s->act_next[d] - s->act[d];
    }
}

/* Collects the values and launch positions a move of nodes touches. */
static void het_search_collect(het_cost_search *s, const int *nodes, int m) {
  const het_cost_index *ix = s->ix;
  if (s->stamp == INT_MAX) {
    memset(s->vmark, 0, (size_t)ix->n_values * sizeof(int));
    memset(s->pmark, 0, (size_t)ix->n_nodes * sizeof(int));
    s->stamp = 0;
  }
  int st = ++s->stamp;
  s->nv = s->np = 0;
  for (int i = 0; i < m; i++) {
    int n = nodes[i];
    for (int k = ix->in_off[n]; k < ix->in_off[n + 1]; k++)
      if (s->vmark[ix->ins[k]] != st) {
        s->vmark[ix->ins[k]] = st;
        s->vlist[s->nv++] = ix->ins[k];
      }
    for (int k = ix->out_off[n]; k < ix->out_off[n + 1]; k++)
      if (s->vmark[ix->outs[k]] != st) {
        s->vmark[ix->outs[k]] = st;
        s->vlist[s->nv++] = ix->outs[k];
      }
    for (int p = ix->pos[n]; p <= ix->pos[n] + 1 && p < ix->n_nodes; p++)
      if (s->pmark[p] != st) {
        s->pmark[p] = st;
        s->plist[s->np++] = p;
      }
  }
}

/* Sum of the touched terms; masks of initializers go to vmask (before) or
 * adjust used_next (after). */
static double het_search_terms(het_cost_search *s, const int *nodes, int m,
                               bool after) {
  const het_cost_table *t = s->t;
  double c = 0;
  for (int i = 0; i < m; i++)
    c += t->node_time[(size_t)nodes[i] * t->n_devices + s->assign[nodes[i]]];
  for (int k = 0; k < s->np; k++)
    c += het_cost_launch_at(s->ix, s->assign, s->plist[k]);
  for (int k = 0; k < s->nv; k++) {
    int v = s->vlist[k];
    if (!t->value_const[v]) {
      c += het_cost_value(s->ix, s->assign, v);
      continue;
    }
    unsigned mask = het_cost_value_devices(s->ix, s->assign, v);
    if (!after) {
      s->vmask[k] = mask;
      continue;
    }
    for (int d = 0; d < t->n_devices; d++) {
      double sign = (double)((mask >> d) & 1u) - (double)((s->vmask[k] >> d) & 1u);
      s->used_next[d] += sign * t->value_bytes[v];
    }
  }
  return c;
}

double het_search_try(het_cost_search *s, const int *nodes, int m, int dev) {
  const het_cost_table *t = s->t;
  s->tries++;
  het_search_collect(s, nodes, m);
  double before = het_search_terms(s, nodes, m, false);
  for (int i = 0; i < m; i++) {
    s->saved[i] = s->assign[nodes[i]];
    s->assign[nodes[i]] = dev;
  }
  memcpy(s->used_next, s->used, sizeof s->used);
  double after = het_search_terms(s, nodes, m, true);
  het_search_act(s, m, dev);
  if (!isfinite(after))
    return INFINITY;
  for (int d = 0; !s->relaxed && d < t->n_devices; d++)
    if (t->capacity[d] && s->used_next[d] > (double)t->capacity[d])
      return INFINITY;
  return after - before;
}

void het_search_commit(het_cost_search *s, double delta) {
  s->cur += delta;
  memcpy(s->used, s->used_next, sizeof s->used);
  memcpy(s->act, s->act_next, sizeof s->act);
}

void het_search_undo(het_cost_search *s, const int *nodes, int m) {
  for (int i = 0; i < m; i++)
    s->assign[nodes[i]] = s->saved[i];
}
