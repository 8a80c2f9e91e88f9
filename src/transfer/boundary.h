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

/* Values a node reads besides its inputs (a control-flow node's captured
 * values): n[node] of them at ids[node][0..n), rewritten in place to the
 * versions in the node's memory space. */
typedef struct het_boundary_reads {
  int *n;
  int **ids;
} het_boundary_reads;

/* host_memory[d]: provider d computes in host memory (its nodes read and
 * write plain host tensors); info[d] gives a device's at-rest formats:
 * float32_as (a Cast on the host before the copy in, and back to float32
 * after the copy out, for values whose load-time dtype is float32) and
 * preferred_layout NHWC (a Layout node around the copies of values whose
 * load-time rank is 4).  direct (may be NULL), [from * n_devices + to]:
 * device `from` and device `to` have a copy path that does not go through
 * the host (can_copy), so a value with no format change moves in one Copy.
 * extra (may be NULL): reads besides node inputs.  Extends p to the new
 * nodes and regroups it into steps. */
het_status het_boundary_insert(het_graph *g, const het_ep *devices,
                               const het_device_info *info,
                               const bool *host_memory, const bool *direct,
                               het_boundary_reads *extra, het_arena *arena,
                               het_partition *p);

#endif
