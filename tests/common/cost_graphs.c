/* cost_graphs.c — the builders declared in cost_graphs.h. */
#include "common/cost_graphs.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

double cg_evaluate(const het_cost_table *t, const int *assign) {
  double c;
  ck_assert_int_eq(het_cost_evaluate(t, assign, &c), HET_OK);
  return c;
}

/* ---- graph building ---- */

int cg_add_value(het_graph *g, const char *name, unsigned flags,
                 const int64_t *dims, int rank) {
  int id;
  ck_assert_int_eq(het_graph_intern_value(g, name, &id), HET_OK);
  g->values[id].flags |= flags;
  g->values[id].dtype = HET_DTYPE_FLOAT32;
  g->values[id].shape.rank = rank;
  for (int i = 0; i < rank; i++)
    g->values[id].shape.dims[i].value = dims[i];
  return id;
}

int cg_add_node(het_graph *g, const char *op, const int *ins, int n_in,
                int out) {
  int *io = het_arena_calloc(&g->arena, (size_t)n_in + 1, sizeof(int));
  memcpy(io, ins, (size_t)n_in * sizeof(int));
  io[n_in] = out;
  char name[32];
  snprintf(name, sizeof name, "n%d", g->n_nodes);
  het_node node = {.name = het_arena_strdup(&g->arena, name),
                   .op_type = op, .domain = "", .opset = 13,
                   .n_inputs = n_in, .inputs = io, .n_outputs = 1,
                   .outputs = io + n_in};
  int id;
  ck_assert_int_eq(het_graph_add_node(g, &node, &id), HET_OK);
  return id;
}

void cg_finish(het_graph *g, const int *outs, int n_out) {
  int *o = het_arena_calloc(&g->arena, (size_t)n_out + 1, sizeof(int));
  memcpy(o, outs, (size_t)n_out * sizeof(int));
  for (int k = 0; k < n_out; k++)
    g->values[outs[k]].flags |= HET_VALUE_GRAPH_OUTPUT;
  g->outputs = o;
  g->n_outputs = n_out;
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
}

/* A cg_chain x → n0 → ... → n{k-1} → y; value i+1 is n_i's output. */
het_graph *cg_chain(int k, const int *weights_per_node) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int prev = cg_add_value(g, "x", HET_VALUE_GRAPH_INPUT, NULL, 0);
  for (int i = 0; i < k; i++) {
    char name[16];
    snprintf(name, sizeof name, "v%d", i);
    int out = cg_add_value(g, name, 0, NULL, 0);
    int ins[2] = {prev, -1};
    int n_in = 1;
    if (weights_per_node && weights_per_node[i]) {
      snprintf(name, sizeof name, "w%d", i);
      ins[n_in++] = cg_add_value(g, name, HET_VALUE_INITIALIZER, NULL, 0);
    }
    cg_add_node(g, "Op", ins, n_in, out);
    prev = out;
  }
  cg_finish(g, &prev, 1);
  return g;
}

/* ---- scripted tables ---- */

/* Device 0 is a host CPU (launch 0); devices 1.. are accelerators with a
 * 1 GB/s link, 0.1 ms latency and a 10 us launch.  Every value 1 MB. */
void cg_script_init(cg_script *s, const het_graph *g, int D) {
  het_arena_init(&s->arena);
  het_cost_table *t = &s->t;
  memset(t, 0, sizeof *t);
  t->graph = g;
  t->n_nodes = g->n_nodes;
  t->n_devices = D;
  t->order = g->order;
  t->node_time = het_arena_calloc(&s->arena, (size_t)g->n_nodes * D + 1,
                                  sizeof(double));
  t->value_bytes = het_arena_calloc(&s->arena, (size_t)g->n_values + 1,
                                    sizeof(double));
  t->value_const = het_arena_calloc(&s->arena, (size_t)g->n_values + 1,
                                    sizeof(bool));
  for (int v = 0; v < g->n_values; v++) {
    t->value_bytes[v] = 1e6;
    t->value_const[v] = (g->values[v].flags & HET_VALUE_INITIALIZER) != 0;
  }
  for (int d = 0; d < D; d++) {
    t->host_memory[d] = d == 0;
    t->link_bandwidth[d] = d ? 1e9 : 0;
    t->link_latency[d] = d ? 1e-4 : 0;
    t->launch[d] = d ? 1e-5 : 0;
  }
}

void cg_script_deinit(cg_script *s, het_graph *g) {
  het_arena_deinit(&s->arena);
  het_graph_destroy(g);
}

/* ---- random DAGs: cost vs priority vs exact ---- */

