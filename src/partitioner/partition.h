/* partition.h — provider registry and node→provider assignment.
 * Invariants: every node of a partition has exactly one provider and a
 * reason; subgraphs list nodes in topological order and are contiguous
 * runs of g->order, so they cannot form cyclic dependencies.
 */
#ifndef HET_PARTITIONER_PARTITION_H
#define HET_PARTITIONER_PARTITION_H

#include "core/arena.h"
#include "core/ir.h"
#include "hetrt/provider.h"

/* The vtable of a provider compiled into this build.  Unknown names give
 * ERR_NOT_FOUND, known providers missing from the build ERR_NOT_BUILT;
 * both with a message naming the provider. */
het_status het_registry_find(const char *name,
                             const het_provider_vtable **out);

/* Comma-separated names of the built providers (static string). */
const char *het_registry_built_names(void);

typedef struct het_subgraph {
  int provider; /* index into the provider list */
  int n_nodes;
  int *nodes;   /* node ids in topological order */
} het_subgraph;

typedef struct het_partition {
  int *provider;       /* per node id: index into the provider list */
  const char **reason; /* per node id: why it went there */
  int n_subgraphs;
  het_subgraph *subgraphs;
} het_partition;

/* `priority` assignment: each node goes to the first provider (in list
 * order) that claims it.  A node no provider claims is ERR_UNSUPPORTED
 * naming the node and every provider's reason.  Memory comes from arena. */
het_status het_partition_priority(const het_graph *g,
                                  const het_device *providers,
                                  int n_providers, het_arena *arena,
                                  het_partition *out);

#endif
