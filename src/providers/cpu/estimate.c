/* estimate.c — the CPU provider's estimate_cost (estimate.h): the core's
 * roofline work of a node (FLOPs, bytes; core/roofline.h) on this device's
 * measured rates, with one rate factor, one bandwidth factor and one
 * per-node overhead per op class, measured against the CPU kernels on one
 * thread (the derivation and the command that repeats it:
 * docs/estimates.md).  The table below is the only place they live.
 */
#include "providers/cpu/estimate.h"

#include <math.h>

#include "core/roofline.h"

typedef struct het_cpu_class_cost {
  double rate;      /* × the compute rate (FLOP/s) */
  double bandwidth; /* × the memory bandwidth (bytes/s) */
  double overhead;  /* seconds per node */
} het_cpu_class_cost;

static const het_cpu_class_cost het_cpu_class_costs[HET_ROOFLINE_CLASSES] = {
    [HET_ROOFLINE_GEMM] = {.rate = 1.0, .bandwidth = 1.0, .overhead = 0},
    [HET_ROOFLINE_DEPTHWISE] = {.rate = 1.0, .bandwidth = 1.0, .overhead = 0},
    [HET_ROOFLINE_ELEMENTWISE] = {.rate = 1.0, .bandwidth = 1.0,
                                  .overhead = 0},
    [HET_ROOFLINE_MOVEMENT] = {.rate = 1.0, .bandwidth = 1.0, .overhead = 0},
};

/* The share of the device's peak that threads reach: thread_flops per
 * thread, at most the whole device's. */
static double het_cpu_thread_share(const het_cpu_estimator *e) {
  double peak = e->info.peak_flops_f32;
  if (!(e->thread_flops > 0) || !(peak > 0))
    return 1;
  double share = e->thread_flops * (double)e->threads / peak;
  return share < 1 ? share : 1;
}

het_status het_cpu_estimate(const het_cpu_estimator *e, const het_graph *g,
                            int node, double *seconds) {
  if (e->roofline) {
    *seconds = het_roofline_node(g, node, &e->info);
    return HET_OK;
  }
  const het_cpu_class_cost *c =
      &het_cpu_class_costs[het_roofline_op_class(g, node)];
  double flops, bytes;
  het_roofline_work(g, node, &flops, &bytes);
  het_device_info info = e->info;
  double share = het_cpu_thread_share(e);
  info.peak_flops_f32 *= share * c->rate;
  info.peak_flops_f16 *= share * c->rate;
  info.peak_flops_i8 *= share * c->rate;
  info.memory_bandwidth *= c->bandwidth;
  double t = het_roofline_time(&info, het_roofline_dtype(g, &g->nodes[node]),
                               flops, bytes);
  *seconds = isfinite(t) && t > 0 ? t + c->overhead : c->overhead;
  return HET_OK;
}
