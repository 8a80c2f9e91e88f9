/* cost_internal.h — shared machinery of the cost model's algorithms: an
 * index of the graph's edges in the table's order, per-value transfer
 * costs, and the per-position step cost whose sum over t->order equals
 * het_cost_evaluate (used by the DP start and branch and bound).
 * Invariant: an index borrows its table; it is read-only once built
 * apart from its scratch row (the activation sweep), so one index serves
 * one thread.
 */
#ifndef HET_PARTITIONER_COST_INTERNAL_H
#define HET_PARTITIONER_COST_INTERNAL_H

#include <stdbool.h>

#include "partitioner/cost.h"

/* Device class of the "host memory" in bit masks of devices. */
#define HET_COST_HOST_BIT (1u << HET_COST_MAX_DEVICES)

typedef struct het_cost_index {
  const het_cost_table *t;
  int n_nodes, n_values, n_devices;
  int *order;             /* position -> node */
  int *pos;               /* node -> position */
  int *producer;          /* value -> producing node, -1 if none */
  bool *output;           /* value -> is a graph output */
  int *cons_off, *cons;   /* CSR: distinct consumer nodes of each value */
  int *in_off, *ins;      /* CSR: distinct inputs (>= 0) of each node */
  int *out_off, *outs;    /* CSR: outputs (>= 0) of each node */
  bool act;               /* some non-host device has a capacity: its
                             activations count against it */
  double *sweep;          /* scratch: n_nodes + 1 entries */
} het_cost_index;

/* Builds the index of t (caller owns: het_cost_index_deinit). */
het_status het_cost_index_init(het_cost_index *ix, const het_cost_table *t);
void het_cost_index_deinit(het_cost_index *ix);

/* One copy leg between host memory and non-host device d. */
double het_cost_leg(const het_cost_table *t, int d, double bytes);

/* Device bit of d: HET_COST_HOST_BIT for host-memory devices. */
unsigned het_cost_class(const het_cost_table *t, int d);

/* Transfer seconds of non-initializer value v under assign (0 for
 * initializers). */
double het_cost_value(const het_cost_index *ix, const int *assign, int v);

/* Mask (bit d) of the devices consuming v under assign. */
unsigned het_cost_value_devices(const het_cost_index *ix, const int *assign,
                                int v);

/* Launch seconds charged at position p (a new run starts there). */
double het_cost_launch_at(const het_cost_index *ix, const int *assign, int p);

/* Peak bytes of activations (non-initializer values) resident on non-host
 * device d under assign, over t->order: a value produced on d lives from
 * its producer to its last consumer on d; one copied in, from its first to
 * its last consumer on d.  The memory planner's arena for d is at least
 * this. */
double het_cost_act_peak(const het_cost_index *ix, const int *assign, int d);

/* Full objective; also fills used[d] with resident initializer bytes
 * (plus, when ix->act, the activation peak on each non-host device with a
 * capacity) when used is non-NULL.  check_capacity false: the "relaxed" objective
 * that ignores capacities. */
double het_cost_eval_ix(const het_cost_index *ix, const int *assign,
                        double *used, bool check_capacity);

/* Cost added by placing the node at position p on device d, given assign
 * for every position < p (assign[node at p] is ignored): its time, a
 * launch when a run starts, transfers of its inputs not yet delivered to
 * d's memory, the D2H of graph outputs it produces on a non-host device.
 * used (may be NULL: capacity ignored) holds resident initializer bytes per
 * device and is updated; INFINITY when a capacity is exceeded. */
double het_cost_step(const het_cost_index *ix, const int *assign, int p,
                     int d, double *used);

/* Local-search state: an assignment, its objective and resident bytes,
 * and scratch for evaluating a move (a set of nodes sent to one device)
 * by the change of the terms it touches only. */
typedef struct het_cost_search {
  const het_cost_index *ix;
  const het_cost_table *t;
  int *assign;  /* n_nodes */
  double cur;   /* objective of assign (relaxed: ignoring capacity) */
  double used[HET_COST_MAX_DEVICES];      /* resident bytes: initializers
                                             + activation peak (ix->act) */
  double used_next[HET_COST_MAX_DEVICES]; /* after the last try */
  double act[HET_COST_MAX_DEVICES];       /* activation peak in used */
  double act_next[HET_COST_MAX_DEVICES];
  bool relaxed; /* capacities ignored (capacity repair) */
  int stamp;
  int *vmark, *vlist, *pmark, *plist, *saved;
  unsigned *vmask;
  int nv, np;
  long long tries; /* het_search_try calls so far (search budgets) */
  int tabu;        /* node the local search must not move, or -1 */
} het_cost_search;

het_status het_search_init(het_cost_search *s, const het_cost_index *ix);
void het_search_deinit(het_cost_search *s);
/* Loads assign (copied) and computes its objective. */
void het_search_set(het_cost_search *s, const int *assign, bool relaxed);
/* Sends nodes[0..m) to dev and returns the change of the objective
 * (INFINITY when infeasible); the move stays applied until
 * het_search_commit or het_search_undo. */
double het_search_try(het_cost_search *s, const int *nodes, int m, int dev);
void het_search_commit(het_cost_search *s, double delta);
void het_search_undo(het_cost_search *s, const int *nodes, int m);

/* A strict improvement of cur by delta (relative tolerance 1e-12). */
static inline bool het_cost_better(double delta, double cur) {
  return delta < 0 && delta < -1e-12 * cur;
}

#endif
