/* cost_graphs.h — graph and scripted cost-table builders shared by the
 * cost-model tests (test_cost.c, test_cost_gap.c).
 */
#ifndef HET_TESTS_COST_GRAPHS_H
#define HET_TESTS_COST_GRAPHS_H

#include "core/ir.h"
#include "partitioner/cost.h"

/* het_cost_evaluate's objective for assign (the call must succeed). */
double cg_evaluate(const het_cost_table *t, const int *assign);

/* A float32 value with flags and an optional static shape. */
int cg_add_value(het_graph *g, const char *name, unsigned flags,
                 const int64_t *dims, int rank);
/* A node "n<id>" of type op reading ins and writing out. */
int cg_add_node(het_graph *g, const char *op, const int *ins, int n_in,
                int out);
/* Marks outs as graph outputs and validates g. */
void cg_finish(het_graph *g, const int *outs, int n_out);
/* A chain x -> n0 -> ... -> n{k-1}; weights_per_node[i] != 0 gives node i
 * an initializer input. */
het_graph *cg_chain(int k, const int *weights_per_node);

/* A scripted cost table over g. */
typedef struct cg_script {
  het_arena arena;
  het_cost_table t;
} cg_script;

/* Device 0 is a host CPU (launch 0); devices 1.. are accelerators with a
 * 1 GB/s link, 0.1 ms latency and a 10 us launch.  Every value 1 MB. */
void cg_script_init(cg_script *s, const het_graph *g, int D);
/* Frees the script and destroys g. */
void cg_script_deinit(cg_script *s, het_graph *g);

#endif
