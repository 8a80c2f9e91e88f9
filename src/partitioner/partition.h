/* partition.h — node→provider assignment and grouping into steps.
 * Invariants: every node of a partition has exactly one provider and a
 * reason; subgraphs list nodes in topological order and are contiguous
 * runs of g->order, so they cannot form cyclic dependencies.
 */
#ifndef HET_PARTITIONER_PARTITION_H
#define HET_PARTITIONER_PARTITION_H

#include "core/arena.h"
#include "core/ir.h"
#include "hetrt/provider.h"

/* What a node of the partitioned graph is. */
typedef enum het_step_kind {
  HET_STEP_COMPUTE = 0,       /* a model node run by its provider */
  HET_STEP_COPY = 1,          /* a boundary copy, run every run */
  HET_STEP_COPY_STATIC = 2,   /* ... of an initializer: once, at creation */
  HET_STEP_CAST = 3,          /* a boundary cast (host side) */
  HET_STEP_CAST_STATIC = 4,
  HET_STEP_LAYOUT = 5,        /* a boundary NCHW<->NHWC change (host side) */
  HET_STEP_LAYOUT_STATIC = 6,
  HET_STEP_CONTROL = 7,       /* If/Loop/Scan, run by the host; its bodies
                                 are partitioned as graphs of their own */
} het_step_kind;

/* Static steps prepare initializers once; the base kind drops that. */
static inline bool het_step_is_static(het_step_kind k) {
  return k == HET_STEP_COPY_STATIC || k == HET_STEP_CAST_STATIC ||
         k == HET_STEP_LAYOUT_STATIC;
}
static inline het_step_kind het_step_base(het_step_kind k) {
  return het_step_is_static(k) ? (het_step_kind)(k - 1) : k;
}

typedef struct het_subgraph {
  int provider; /* index into the provider list; -1 = host memory (copies) */
  het_step_kind kind;
  int n_nodes;
  int *nodes;   /* node ids in execution order */
} het_subgraph;

typedef struct het_partition {
  int n_nodes;         /* nodes covered (grows with boundary insertion) */
  int *provider;       /* per node id: provider index (-1 = host memory) */
  const char **reason; /* per node id: why it went there */
  unsigned char *kind; /* per node id: het_step_kind */
  int n_subgraphs;
  het_subgraph *subgraphs;
  bool node_steps;     /* one compute node per step (executor=streams) */
} het_partition;

/* `priority` assignment: each node goes to the first provider (in list
 * order) that claims it.  A node no provider claims is ERR_UNSUPPORTED
 * naming the node and every provider's reason.  Memory comes from arena. */
/* Assigns provider[node] = first claiming provider (priority order);
 * fails naming any node nobody claims.  claims: [provider][node]. */
het_status het_partition_first_claim(const het_graph *g,
                                     const het_ep *providers,
                                     int n_providers,
                                     het_claim *const *claims,
                                     het_arena *arena, het_partition *out);

/* Groups g->order into steps: maximal runs of compute nodes on one
 * provider (single nodes when p->node_steps), one step per boundary
 * node. */
het_status het_partition_group(const het_graph *g, het_arena *arena,
                               het_partition *p);

het_status het_partition_priority(const het_graph *g,
                                  const het_ep *providers,
                                  int n_providers, het_arena *arena,
                                  het_partition *out);

#endif
