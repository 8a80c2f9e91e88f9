/* cost.h — the cost model and the assignment algorithms that use it.
 * A cost table holds, per node and provider, the estimated seconds (or
 * INFINITY where the provider may not run the node), per value the bytes
 * that would cross a boundary, and per provider the link and launch facts.
 * The objective (het_cost_evaluate) is the estimated end-to-end latency of
 * a sequential run: node times + transfers + one launch per subgraph; an
 * assignment whose resident weights exceed a device's capacity or budget
 * costs INFINITY (activations included on devices without host memory).
 * Invariant: algorithms see only the table (and the
 * graph's edges through t->graph), so tests can script it.
 *
 * The objective in detail (het_cost_evaluate):
 *   1. node times: sum of node_time[n][assign[n]];
 *   2. launches: launch[d] per subgraph, a subgraph being a maximal run of
 *      one device in t->order (contiguous runs of a topological order, so
 *      the subgraphs can never depend on each other cyclically);
 *   3. transfers, per non-initializer value: host-memory devices share one
 *      memory ("host"); graph inputs start in host memory.  A value produced
 *      on a non-host device pays one device->host copy when any consumer is
 *      on another device or it is a graph output; each distinct non-host
 *      consuming device other than the producer's pays one host->device
 *      copy (device->device goes through the host, sharing the D2H leg).
 *      A copy costs bytes / link_bandwidth + link_latency of the non-host
 *      end (bandwidth 0 = unknown: the bytes term is 0);
 *   4. capacity: initializers are placed once at session creation on every
 *      device that consumes them (no per-run cost); on a device without
 *      host memory, activations count too, as their peak over t->order (a
 *      value produced there lives from its producer to its last consumer
 *      there; one copied in, from its first to its last consumer there);
 *      weights + that peak on device d must be <= capacity[d] (0 =
 *      unlimited) else INFINITY.  Host-memory devices count weights only
 *      (max_memory governs host memory).
 */
#ifndef HET_PARTITIONER_COST_H
#define HET_PARTITIONER_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/arena.h"
#include "core/ir.h"
#include "core/roofline.h"
#include "hetrt/provider.h"

#define HET_COST_MAX_DEVICES 8

/* Device index meaning "plain host memory" in het_cost_transfer (graph
 * inputs and outputs live there). */
#define HET_COST_HOST (-1)

/* Per-node placement constraints (filled from the C API today, from YAML
 * policies later).  Masks are bit i for provider i. */
typedef struct het_node_constraint {
  unsigned pinned;    /* non-zero: only these providers */
  unsigned forbidden; /* never these providers */
  double bias[HET_COST_MAX_DEVICES]; /* cost multiplier, 0 = none (1.0) */
} het_node_constraint;

typedef struct het_constraints {
  het_node_constraint *nodes;              /* per node id, may be NULL */
  size_t budget[HET_COST_MAX_DEVICES];     /* bytes, 0 = capacity only */
} het_constraints;

typedef struct het_cost_table {
  const het_graph *graph;
  int n_nodes, n_devices;
  const int *order;          /* topological order used to form subgraphs */
  double *node_time;         /* [node * n_devices + d]; INFINITY = refused */
  double *estimate;          /* with measured times: [node * n_devices + d]
                                the provider's estimate, constrained like
                                node_time, where a measured time may have
                                replaced it there; NULL without them */
  double *value_bytes;       /* per value id: bytes of the tensor */
  bool *value_const;         /* per value id: initializer (placed once) */
  bool host_memory[HET_COST_MAX_DEVICES];
  double link_bandwidth[HET_COST_MAX_DEVICES]; /* bytes/s device<->host */
  double link_latency[HET_COST_MAX_DEVICES];
  double launch[HET_COST_MAX_DEVICES];         /* seconds per subgraph */
  size_t capacity[HET_COST_MAX_DEVICES];       /* bytes, 0 = unlimited;
                                 het_cost_table_build folds budgets in */
} het_cost_table;

/* Seconds to move bytes from device a to device b; a or b may be
 * HET_COST_HOST.  0 when a == b or both are host memory; through the host
 * (D2H + H2D) when neither is. */
double het_cost_transfer(const het_cost_table *t, int a, int b, double bytes);

/* Builds the table for g on devices (at most HET_COST_MAX_DEVICES).
 * Per node and device: INFINITY unless claims[d][node].claimed; else the
 * provider's estimate_cost, or when that slot is NULL or fails, the
 * core roofline (het_roofline_node) on the provider's device facts
 * (devices[d].device->info), which also give host_memory, link, launch
 * and capacity.
 * measured (profile-guided mode), when non-NULL together with
 * measured_dev, is per node id the seconds measured in an earlier run on
 * device measured_dev[node] (< 0 or a non-finite/negative time: none); it
 * replaces that entry's estimate (only where the device claims the node),
 * and t->estimate keeps every entry's estimate for reports.
 * constraints (may be NULL): pinned → INFINITY on every other device,
 * forbidden → INFINITY there, bias[d] > 0 multiplies the entry;
 * budget[d] > 0 lowers capacity[d] to min(capacity, budget).
 * A node left with no finite entry fails with ERR_UNSUPPORTED naming it.
 * claims: [device][node id] from get_capability.  Arrays come from arena;
 * t->graph and t->order borrow g. */
het_status het_cost_table_build(const het_graph *g, const het_ep *devices,
                                int n_devices, het_claim *const *claims,
                                const het_constraints *constraints,
                                const double *measured,
                                const int *measured_dev, het_arena *arena,
                                het_cost_table *out);

/* *out = the objective for assignment (assign[node] = device index), in
 * seconds; INFINITY when a node is refused or a capacity is exceeded.
 * O(nodes + edges), allocation-free apart from a scratch index
 * (OUT_OF_MEMORY when that allocation fails). */
het_status het_cost_evaluate(const het_cost_table *t, const int *assign,
                             double *out);

/* `cost`: minimises het_cost_evaluate; never worse than the priority
 * assignment it starts from (prio, may be NULL); absorbs islands whose
 * copies cost more than they save.  assign: n_nodes entries, written.
 * Passes: 1. starting points (prio, each feasible all-on-one-device, per
 * node argmin, a Viterbi DP over t->order), capacity-repaired; 2. local
 * search from each: single-node moves, moves of whole runs and of windows
 * of 2-3 adjacent runs to every device, strict improvements until none;
 * 2b. perturbation of the best: each node forced onto each other device,
 * a descent with it frozen, kept when strictly better (bounded by a count
 * of move evaluations); 3. the best result, or prio when nothing is
 * better.  Deterministic.  Thread-safe (no shared state).
 * Fails with ERR_CAPACITY when no feasible assignment was found. */
het_status het_assign_cost(const het_cost_table *t, const int *prio,
                           int *assign);

/* min_subgraph_nodes: every maximal run (in t->order) of fewer than
 * min_nodes nodes on a device without host memory moves to the fastest
 * host-memory device of each node, unless one of its nodes has no finite
 * host entry.  moved[node] (n_nodes entries, written) says which moved;
 * returns the number of runs moved.  Moving can merge runs; one pass. */
int het_assign_min_run(const het_cost_table *t, int min_nodes, int *assign,
                       bool *moved);

/* Exact optimum by branch and bound over t->order (lower bound: partial
 * cost + per-node minimum times of the rest; first bound from
 * het_assign_cost), for tests and small graphs; fails with ERR_UNSUPPORTED
 * above max_nodes nodes and ERR_CAPACITY when nothing is feasible. */
het_status het_assign_exact(const het_cost_table *t, int max_nodes,
                            int *assign, double *best);

#endif
