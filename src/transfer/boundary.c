/* boundary.c — inserts Copy nodes at memory-space boundaries.
 * Pass 1 finds which memory spaces (-1 = host) read each value; pass 2
 * emits copies of initializers and graph inputs first, then walks the old
 * order, emitting each node followed by copies of its outputs into every
 * other space that reads them (graph outputs made on a device come back
 * to the host under their own name); pass 3 regroups the partition.
 * Copies of a run's outputs follow the run, so compute runs stay whole.
 */
#include "transfer/boundary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

typedef struct het_bctx {
  het_graph *g;
  const het_device *devices;
  het_arena *arena;
  int *space;      /* per value: memory space it lives in (-1 host) */
  unsigned *readers; /* per original value: bit s+1 if space s reads it */
  int *pending;    /* (node << 8 | output) produced by the current run */
  int n_pending;
  int run_space;   /* memory space of the current run of nodes */
  int *copy_of;    /* per (value * n_spaces + space+1): copy value id or -1 */
  int n_spaces;    /* number of devices + 1 (host) */
  int n_orig_values;
  int *order;      /* new order being built */
  int n_order;
  int *prov;       /* grows: provider per node */
  const char **reason;
  unsigned char *kind;
} het_bctx;

static const char *het_space_name(const het_bctx *b, int space) {
  return space < 0 ? "host" : b->devices[space].vt->name;
}

/* Adds node "copy:<value>-><space>" reading src and writing a new value. */
static het_status het_add_copy(het_bctx *b, int src, int to_space,
                               int out_value, int *out_id) {
  het_graph *g = b->g;
  char name[512];
  snprintf(name, sizeof name, "copy:%s->%s", g->values[src].name,
           het_space_name(b, to_space));
  int *io = het_arena_calloc(&g->arena, 2, sizeof(int));
  if (!io)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  io[0] = src;
  if (out_value < 0) {
    char vname[512];
    snprintf(vname, sizeof vname, "%s@%s", g->values[src].name,
             het_space_name(b, to_space));
    HET_TRY(het_graph_intern_value(g, vname, &out_value));
    g->values[out_value].dtype = g->values[src].dtype;
    g->values[out_value].shape = g->values[src].shape;
  }
  io[1] = out_value;
  het_node node = {
      .name = het_arena_strdup(&g->arena, name),
      .op_type = HET_COPY_OP,
      .domain = HET_COPY_DOMAIN,
      .opset = 1,
      .n_inputs = 1,
      .inputs = &io[0],
      .n_outputs = 1,
      .outputs = &io[1],
  };
  if (!node.name)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  int id;
  g->values[out_value].producer = -1;
  HET_TRY(het_graph_add_node(g, &node, &id));
  bool from_const = g->values[src].initializer &&
                    !(g->values[src].flags & HET_VALUE_GRAPH_INPUT);
  b->prov[id] = to_space;
  b->kind[id] = from_const ? HET_STEP_COPY_STATIC : HET_STEP_COPY;
  char why[256];
  snprintf(why, sizeof why, "boundary: %s -> %s%s",
           het_space_name(b, b->space[src]), het_space_name(b, to_space),
           from_const ? " (initializer, placed once)" : "");
  b->reason[id] = het_arena_strdup(b->arena, why);
  b->order[b->n_order++] = id;
  *out_id = id;
  return HET_OK;
}

/* A node's graph output produced on a device: the node writes a new
 * device value instead, and a copy brings it back under the old name. */
static het_status het_output_home(het_bctx *b, int n, int o, int space) {
  het_graph *g = b->g;
  int v = g->nodes[n].outputs[o];
  char vname[512];
  snprintf(vname, sizeof vname, "%s@%s", g->values[v].name,
           het_space_name(b, space));
  int nv, id;
  HET_TRY(het_graph_intern_value(g, vname, &nv));
  g->values[nv].dtype = g->values[v].dtype;
  g->values[nv].shape = g->values[v].shape;
  g->values[nv].producer = n;
  g->nodes[n].outputs[o] = nv;
  b->space[nv] = space;
  b->copy_of[v * b->n_spaces + space + 1] = nv;
  HET_TRY(het_add_copy(b, nv, -1, v, &id));
  b->space[v] = -1;
  return HET_OK;
}

static int het_node_space(const het_bctx *b, const bool *host_memory, int n) {
  int d = b->prov[n];
  return d >= 0 && !host_memory[d] ? d : -1;
}

/* Copies v into every memory space that reads it (readers[v], bit s+1)
 * other than the one it lives in, right after v becomes available. */
static het_status het_copy_eagerly(het_bctx *b, int v) {
  for (int sp = -1; sp < b->n_spaces - 1; sp++) {
    if (!((b->readers[v] >> (sp + 1)) & 1u) || sp == b->space[v])
      continue;
    int *slot = &b->copy_of[v * b->n_spaces + sp + 1];
    if (*slot >= 0)
      continue;
    int id;
    HET_TRY(het_add_copy(b, v, sp, -1, &id));
    *slot = b->g->nodes[id].outputs[0];
    b->space[*slot] = sp;
  }
  return HET_OK;
}

/* Emits the copies of values produced by the current run of nodes: graph
 * outputs made on a device go home, then every other reading space gets
 * its copy.  Runs of one space stay contiguous this way. */
static het_status het_flush_pending(het_bctx *b) {
  het_graph *g = b->g;
  for (int k = 0; k < b->n_pending; k++) {
    int n = b->pending[k] >> 8, o = b->pending[k] & 0xff;
    int v = g->nodes[n].outputs[o];
    int space = b->space[v];
    if (space >= 0 && (g->values[v].flags & HET_VALUE_GRAPH_OUTPUT))
      HET_TRY(het_output_home(b, n, o, space));
    HET_TRY(het_copy_eagerly(b, v));
  }
  b->n_pending = 0;
  return HET_OK;
}

static het_status het_boundary_node(het_bctx *b, const bool *host_memory,
                                    int n) {
  het_graph *g = b->g;
  int space = het_node_space(b, host_memory, n);
  if (b->n_order > 0 && space != b->run_space)
    HET_TRY(het_flush_pending(b));
  b->run_space = space;
  for (int i = 0; i < g->nodes[n].n_inputs; i++) {
    int v = g->nodes[n].inputs[i];
    if (v < 0 || b->space[v] == space)
      continue;
    int slot = b->copy_of[v * b->n_spaces + space + 1];
    if (slot < 0)
      return het_error(HET_ERR_INTERNAL, "boundary: no copy of '%s' for '%s'",
                       g->values[v].name, g->nodes[n].name);
    g->nodes[n].inputs[i] = slot;
  }
  b->order[b->n_order++] = n;
  for (int o = 0; o < g->nodes[n].n_outputs && o < 256; o++) {
    int v = g->nodes[n].outputs[o];
    if (v < 0)
      continue;
    b->space[v] = space;
    b->pending[b->n_pending++] = n << 8 | o;
  }
  return HET_OK;
}

/* Pass 1: which memory spaces read each value. */
static het_status het_find_readers(het_bctx *b, const bool *host_memory) {
  het_graph *g = b->g;
  b->readers = het_arena_calloc(b->arena, (size_t)g->n_values + 1,
                                sizeof *b->readers);
  if (!b->readers)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    int space = het_node_space(b, host_memory, n);
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0)
        b->readers[g->nodes[n].inputs[i]] |= 1u << (space + 1);
  }
  return HET_OK;
}

/* Pass 2a: initializers first (placed once), then graph inputs. */
static het_status het_copy_sources(het_bctx *b) {
  het_graph *g = b->g;
  for (int pass = 0; pass < 2; pass++)
    for (int v = 0; v < b->n_orig_values; v++) {
      const het_value *val = &g->values[v];
      bool is_const = val->initializer && !(val->flags & HET_VALUE_GRAPH_INPUT);
      if (val->producer >= 0 || is_const != (pass == 0))
        continue;
      HET_TRY(het_copy_eagerly(b, v));
    }
  return HET_OK;
}

het_status het_boundary_insert(het_graph *g, const het_device *devices,
                               const bool *host_memory, het_arena *arena,
                               het_partition *p) {
  int n_devices = 0;
  for (int n = 0; n < g->n_nodes; n++)
    if (p->provider[n] + 1 > n_devices)
      n_devices = p->provider[n] + 1;
  size_t reads = (size_t)g->n_outputs;
  for (int n = 0; n < g->n_nodes; n++)
    reads += (size_t)g->nodes[n].n_inputs;
  size_t max_nodes = (size_t)g->n_nodes + reads + 1;
  size_t max_values = (size_t)g->n_values + 2 * reads + 1;
  het_bctx b = {.g = g, .devices = devices, .arena = arena,
                .n_spaces = n_devices + 1, .n_orig_values = g->n_values};
  b.space = het_arena_calloc(arena, max_values, sizeof(int));
  b.copy_of = het_arena_calloc(arena, (size_t)g->n_values * (size_t)b.n_spaces,
                               sizeof(int));
  b.order = malloc(max_nodes * sizeof(int));
  b.prov = het_arena_calloc(arena, max_nodes, sizeof(int));
  b.reason = het_arena_calloc(arena, max_nodes, sizeof(char *));
  b.kind = het_arena_calloc(arena, max_nodes, 1);
  if (!b.space || !b.copy_of || !b.order || !b.prov || !b.reason || !b.kind) {
    free(b.order);
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  }
  for (size_t i = 0; i < max_values; i++)
    b.space[i] = -1;
  for (size_t i = 0; i < (size_t)g->n_values * (size_t)b.n_spaces; i++)
    b.copy_of[i] = -1;
  memcpy(b.prov, p->provider, (size_t)g->n_nodes * sizeof(int));
  memcpy(b.reason, p->reason, (size_t)g->n_nodes * sizeof(char *));
  memcpy(b.kind, p->kind, (size_t)g->n_nodes);
  int n_old = g->n_nodes;
  int *old_order = g->order;
  het_status st = het_find_readers(&b, host_memory);
  if (st == HET_OK)
    st = het_copy_sources(&b);
  b.pending = het_arena_calloc(arena, reads + (size_t)g->n_nodes + 1,
                               sizeof(int));
  if (!b.pending)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  for (int k = 0; k < n_old && st == HET_OK; k++)
    st = het_boundary_node(&b, host_memory, old_order[k]);
  if (st == HET_OK)
    st = het_flush_pending(&b);
  if (st != HET_OK) {
    free(b.order);
    return st;
  }
  free(old_order);
  g->order = b.order;
  p->n_nodes = g->n_nodes;
  p->provider = b.prov;
  p->reason = b.reason;
  p->kind = b.kind;
  return het_partition_group(g, arena, p);
}
