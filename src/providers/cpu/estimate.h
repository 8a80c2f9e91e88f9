/* estimate.h — the CPU provider's estimate_cost: the core's roofline work
 * of a node on this device's rates, calibrated per op class for the CPU
 * kernels (docs/estimates.md).
 */
#ifndef HET_CPU_ESTIMATE_H
#define HET_CPU_ESTIMATE_H

#include "core/ir.h"
#include "hetrt/provider.h"

/* What an instance's estimates depend on.  Invariant: set once at create,
 * read-only after (estimates may run from any thread). */
typedef struct het_cpu_estimator {
  het_device_info info; /* the device's facts (profile or measurement) */
  double thread_flops;  /* one thread's FLOP/s (het_cpu_thread_flops), or
                           0: use info's peaks as given (a YAML profile) */
  int threads;          /* the instance's threads (>= 1) */
  bool roofline;        /* cpu.estimate=roofline: the plain core roofline */
} het_cpu_estimator;

/* *seconds = the estimated time of node on one instance of e (never
 * negative).  Calibrated (default): the roofline of het_roofline_work with
 * the compute rate min(device peak, thread_flops * threads) times the
 * class's rate factor, the bandwidth times the class's bandwidth factor,
 * plus the class's per-node overhead.  Roofline: het_roofline_node on
 * e->info.  Thread-safe; never fails. */
het_status het_cpu_estimate(const het_cpu_estimator *e, const het_graph *g,
                            int node, double *seconds);

#endif
