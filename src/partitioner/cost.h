/* cost.h — the cost model and the assignment algorithms that use it.
 * A cost table holds, per node and provider, the estimated seconds (or
 * INFINITY where the provider may not run the node), per value the bytes
 * that would cross a boundary, and per provider the link and launch facts.
 * The objective (het_cost_evaluate) is the estimated end-to-end latency of
 * a sequential run: node times + one transfer per value per consuming
 * device + one launch per subgraph; an assignment whose resident weights
 * exceed a device's capacity or budget costs INFINITY.
 * Invariant: algorithms see only the table, so tests can script it.
 */
#ifndef HET_PARTITIONER_COST_H
#define HET_PARTITIONER_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/arena.h"
#include "core/ir.h"
#include "hetrt/provider.h"

#define HET_COST_MAX_DEVICES 8

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
  double *value_bytes;       /* per value id: bytes of the tensor */
  bool *value_const;         /* per value id: initializer (placed once) */
  bool host_memory[HET_COST_MAX_DEVICES];
  double link_bandwidth[HET_COST_MAX_DEVICES]; /* bytes/s device<->host */
  double link_latency[HET_COST_MAX_DEVICES];
  double launch[HET_COST_MAX_DEVICES];         /* seconds per subgraph */
  size_t capacity[HET_COST_MAX_DEVICES];       /* bytes, 0 = unlimited */
} het_cost_table;

/* Work of one node from its (load-time) shapes; unknown dims count as 1.
 * flops: multiply-adds count 2; bytes: inputs + outputs. */
void het_cost_node_work(const het_graph *g, int node, double *flops,
                        double *bytes);

/* Roofline time of work on a device: max(flops/peak, bytes/bandwidth). */
double het_cost_roofline(const het_device_info *info, het_dtype dtype,
                         double flops, double bytes);

/* Seconds to move bytes from device a to device b (0 when both are host
 * memory; through the host when neither is). */
double het_cost_transfer(const het_cost_table *t, int a, int b, double bytes);

/* Builds the table for g on devices from each provider's claims,
 * estimate_cost (or the roofline of get_device_info), and constraints
 * (pinned/forbidden/bias).  measured, when non-NULL, is per node id the
 * seconds measured in an earlier run on provider measured_dev[node]
 * (profile-guided mode); it replaces that entry.  Arrays come from arena.
 * claims: [provider][node] from get_capability. */
het_status het_cost_table_build(const het_graph *g, const het_device *devices,
                                int n_devices, het_claim *const *claims,
                                const het_constraints *constraints,
                                het_arena *arena, het_cost_table *out);

/* The objective for assignment (assign[node] = device index). */
double het_cost_evaluate(const het_cost_table *t, const int *assign);

/* `cost`: minimises het_cost_evaluate; never worse than the priority
 * assignment it starts from (prio, may be NULL); absorbs islands whose
 * copies cost more than they save.  assign: n_nodes entries, written. */
het_status het_assign_cost(const het_cost_table *t, const int *prio,
                           int *assign);

/* Exact optimum by branch and bound (for tests and small graphs); fails
 * with ERR_UNSUPPORTED above max_nodes nodes. */
het_status het_assign_exact(const het_cost_table *t, int max_nodes,
                            int *assign, double *best);

#endif
