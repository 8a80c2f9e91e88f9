/* assign_min_run.c — the min_subgraph_nodes constraint: a run of fewer
 * than N nodes on a device that does not compute in host memory (a
 * subgraph of its own, in t->order) is moved to the host-memory provider
 * estimated fastest for each of its nodes, so tiny fragments do not pay
 * launches and copies.  A run holding a node no host provider may run (a
 * pin, a refusal) stays where it is.
 */
#include <math.h>

#include "partitioner/cost.h"

/* The host-memory device with the least finite estimate for node n, or
 * -1. */
static int het_best_host(const het_cost_table *t, int n) {
  int best = -1;
  for (int d = 0; d < t->n_devices; d++) {
    double v = t->node_time[n * t->n_devices + d];
    if (t->host_memory[d] && isfinite(v) &&
        (best < 0 || v < t->node_time[n * t->n_devices + best]))
      best = d;
  }
  return best;
}

int het_assign_min_run(const het_cost_table *t, int min_nodes, int *assign,
                       bool *moved) {
  int runs = 0;
  for (int n = 0; n < t->n_nodes; n++)
    moved[n] = false;
  for (int k = 0; k < t->n_nodes;) {
    int d = assign[t->order[k]];
    int end = k;
    while (end < t->n_nodes && assign[t->order[end]] == d)
      end++;
    bool movable = !t->host_memory[d] && end - k < min_nodes;
    for (int i = k; i < end && movable; i++)
      movable = het_best_host(t, t->order[i]) >= 0;
    if (movable) {
      for (int i = k; i < end; i++) {
        int n = t->order[i];
        assign[n] = het_best_host(t, n);
        moved[n] = true;
      }
      runs++;
    }
    k = end;
  }
  return runs;
}
