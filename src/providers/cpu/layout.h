/* layout.h — the CPU provider's layout pass (layout.c): per compiled node,
 * which inputs and outputs are stored NHWC (the bits of
 * het_kernel_ctx.nhwc_in / nhwc_out).
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

/* How far the pass backs off for a node whose NHWC prepare failed. */
enum {
  HET_CPU_LAYOUT_ANY = 0,      /* no limit */
  HET_CPU_LAYOUT_NO_STATE = 1, /* depthwise Conv without its oneDNN state:
                                  the direct kernel's NHWC path, prepare
                                  skipped */
  HET_CPU_LAYOUT_NCHW = 2,     /* NCHW only */
};

/* Fills out[i] for the subgraph's nodes[i] (n_nodes of them, of g) under
 * the limits limit[i] (HET_CPU_LAYOUT_*). */
het_status het_cpu_layout_plan(const het_graph *g, const int *nodes,
                               int n_nodes, const uint8_t *limit,
                               het_cpu_layout *out);

/* The limit to plan node n with after its NHWC prepare failed under
 * limit `was`. */
uint8_t het_cpu_layout_back_off(const het_graph *g, const het_node *n,
                                uint8_t was);

#endif
