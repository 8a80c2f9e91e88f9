/* cpu.h — the CPU provider's vtable, for the provider registry. */
#ifndef HET_CPU_CPU_H
#define HET_CPU_CPU_H

#include "hetrt/provider.h"

extern const het_provider_vtable het_cpu_provider;

struct het_run_ctx;

/* Compiles every node of g (in g->order) for the CPU, for control-flow
 * bodies.  Caller owns *out (het_cpu_graph_destroy).  Fails when a node
 * has no CPU kernel, naming it. */
het_status het_cpu_graph_compile(const het_graph *g, void **out);
het_status het_cpu_graph_run(void *compiled, int threads,
                             struct het_run_ctx *ctx);
void het_cpu_graph_destroy(void *compiled);

#endif
