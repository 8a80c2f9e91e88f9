/* boundary.h — boundary insertion: after assignment, a Copy node (domain
 * "hetrt") is added wherever a value is read in a memory space other than
 * the one it lives in.
 * Invariants after het_boundary_insert: every node reads only values in its
 * own memory space; a value is copied at most once per destination; graph
 * outputs live in host memory; copies of initializers are marked
 * HET_STEP_COPY_STATIC (run once at session creation); g->order runs each
 * copy after the run of nodes that produces its source.
 */
#ifndef HET_TRANSFER_BOUNDARY_H
#define HET_TRANSFER_BOUNDARY_H

#include "core/ir.h"
#include "partitioner/partition.h"

#define HET_COPY_DOMAIN "hetrt"
#define HET_COPY_OP "Copy"

/* host_memory[d]: provider d computes in host memory (its nodes read and
 * write plain host tensors).  Extends p to the new nodes and regroups it
 * into steps. */
het_status het_boundary_insert(het_graph *g, const het_device *devices,
                               const bool *host_memory, het_arena *arena,
                               het_partition *p);

#endif
