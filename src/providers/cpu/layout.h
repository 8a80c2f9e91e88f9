/* layout.h — the CPU provider's layout pass (layout.c): per compiled node,
 * which inputs and outputs are stored NHWC (the bits of
 * het_cpu_kernel_ctx.nhwc_in / nhwc_out).
 */
#ifndef HET_CPU_LAYOUT_H
#define HET_CPU_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/ir.h"
#include "core/status.h"

typedef struct het_cpu_layout {
  uint32_t nhwc_in, nhwc_out;
} het_cpu_layout;

/* Fills out[i] for the subgraph's nodes[i] (n_nodes of them, of g).
 * plain_only[i]: node i must see NCHW only (its NHWC prepare failed). */
het_status het_cpu_layout_plan(const het_graph *g, const int *nodes,
                               int n_nodes, const bool *plain_only,
                               het_cpu_layout *out);

#endif
