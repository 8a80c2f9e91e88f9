/* ref_run.h — a reference interpreter for tests: runs a graph node by node
 * in g->order on the kernel library (each node's outputs inferred from its
 * inputs' values and allocated, its kernel prepared plain and run inline),
 * with no session, partition, layout pass or memory plan. */
#ifndef HET_TESTS_REF_RUN_H
#define HET_TESTS_REF_RUN_H

#include "core/ir.h"

/* Runs g with in[i] bound to the value named names[i]; out receives
 * g->n_outputs new tensors (caller owns).  Control flow: If only. */
het_status ref_run_graph(het_graph *g, het_tensor *const *in,
                         char *const *names, int n_in, het_tensor **out);

#endif
