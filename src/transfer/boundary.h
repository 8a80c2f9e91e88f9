/* boundary.h — boundary insertion: after assignment, a Copy node (domain
 * "hetrt") is added wherever a value is read in a memory space other than
 * the one it lives in, with Cast and Layout nodes (domain "hetrt", run on
 * the host) where the device keeps tensors in another type or layout.
 * Invariants after het_boundary_insert: every node reads only values in its
 * own memory space; a value is copied at most once per destination; graph
 * outputs live in host memory; copies of initializers are marked
 * HET_STEP_*_STATIC (run once at session creation); g->order runs each
 * copy after the run of nodes that produces its source.
 */
#ifndef HET_TRANSFER_BOUNDARY_H
#define HET_TRANSFER_BOUNDARY_H

#include "core/ir.h"
#include "partitioner/partition.h"

#define HET_COPY_DOMAIN "hetrt"
#define HET_COPY_OP "Copy"

/* host_memory[d]: provider d computes in host memory (its nodes read and
 * write plain host tensors); info[d] gives a device's at-rest formats:
 * float32_as (a Cast on the host before the copy in, and back to float32
 * after the copy out, for values whose load-time dtype is float32) and
 * preferred_layout NHWC (a Layout node around the copies of values whose
 * load-time rank is 4).  Extends p to the new nodes and regroups it into
 * steps. */
het_status het_boundary_insert(het_graph *g, const het_device *devices,
                               const het_device_info *info,
                               const bool *host_memory, het_arena *arena,
                               het_partition *p);

/* Runs one boundary node (Copy, Cast or Layout, see het_step_kind) of
 * base kind `kind`: dst (an empty shell) receives src moved to `to`
 * (copies; NULL = host memory) or converted on the host. */
het_status het_boundary_run(het_step_kind kind, const het_node *node,
                            const het_tensor *src, const het_device *to,
                            het_tensor *dst);

#endif
