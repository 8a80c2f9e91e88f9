/* boundary.c — inserts Copy nodes at memory-space boundaries, with Cast
 * and Layout nodes on the host side where a device keeps float32 tensors
 * in another type or rank-4 tensors in NHWC.
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
  const het_ep *devices;
  const het_device_info *info; /* per device: at-rest formats */
  const bool *direct; /* [from * (n_spaces - 1) + to]: a device-to-device
                         copy needs no trip through the host; may be NULL */
  het_boundary_reads *extra; /* reads besides inputs (may be NULL) */
  het_arena *arena;
  bool *is_static;   /* per value: an initializer or prepared from one */
  int *space;      /* per value: memory space it lives in (-1 host) */
  unsigned *readers; /* per original value: bit s+1 if space s reads it */
  int *pending;    /* (node << 8 | output) produced by the current run */
  int *pending_home; /* per pending output: the graph output it stands in
                        for (renamed on its device), or -1 */
  int n_pending;
  int run_space;   /* memory space of the current run of nodes */
  int *copy_of;    /* per (value * n_spaces + space+1): copy value id or -1 */
  int n_spaces;    /* number of devices + 1 (host) */
  size_t cap_nodes, cap_values; /* sizes of the per-node/value arrays */
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

/* Whether a value of the model crosses into space's at-rest formats. */
static bool het_needs_cast(const het_bctx *b, int space, int logical) {
  return space >= 0 && b->info[space].float32_as != HET_DTYPE_UNDEFINED &&
         b->g->values[logical].dtype == HET_DTYPE_FLOAT32;
}

static bool het_needs_layout(const het_bctx *b, int space, int logical) {
  return space >= 0 && b->info[space].preferred_layout == HET_LAYOUT_NHWC &&
         b->g->values[logical].shape.rank == 4;
}

/* A boundary step: kind (base), reading src, writing out_value (or a new
 * value), placed in memory space `space`; conv is the target dtype (cast)
 * or 1 for NHWC / 0 for NCHW (layout). */
typedef struct het_step_spec {
  het_step_kind kind;
  int src, space, out_value, conv;
} het_step_spec;

static const char *het_step_target(const het_bctx *b, const het_step_spec *sp,
                                   char *buf, size_t cap) {
  if (sp->kind == HET_STEP_CAST)
    snprintf(buf, cap, "%s", het_dtype_str((het_dtype)sp->conv));
  else if (sp->kind == HET_STEP_LAYOUT)
    snprintf(buf, cap, "%s", sp->conv ? "NHWC" : "NCHW");
  else
    snprintf(buf, cap, "%s", het_space_name(b, sp->space));
  return buf;
}

static het_status het_add_step(het_bctx *b, const het_step_spec *sp,
                               int *out_value) {
  static const char *const ops[] = {"", "copy", "", "cast", "", "layout"};
  static const char *const op_types[] = {"", HET_COPY_OP, "", "Cast", "",
                                         "Layout"};
  het_graph *g = b->g;
  char target[64], name[600], why[256];
  if ((size_t)g->n_nodes + 1 > b->cap_nodes ||
      (size_t)g->n_values + 1 > b->cap_values)
    return het_error(HET_ERR_INTERNAL, "boundary: step tables full");
  het_step_target(b, sp, target, sizeof target);
  snprintf(name, sizeof name, "%s:%s->%s", ops[sp->kind], g->values[sp->src].name,
           target);
  int *io = het_arena_calloc(&g->arena, 2, sizeof(int));
  if (!io)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  io[0] = sp->src;
  int out = sp->out_value;
  if (out < 0) {
    char vname[600];
    snprintf(vname, sizeof vname, "%s@%s", g->values[sp->src].name, target);
    HET_TRY(het_graph_intern_value(g, vname, &out));
    g->values[out].dtype = sp->kind == HET_STEP_CAST ? (het_dtype)sp->conv
                                                     : g->values[sp->src].dtype;
    g->values[out].shape = g->values[sp->src].shape;
  }
  io[1] = out;
  het_node node = {.name = het_arena_strdup(&g->arena, name),
                   .op_type = op_types[sp->kind], .domain = HET_COPY_DOMAIN,
                   .opset = 1, .n_inputs = 1, .inputs = &io[0],
                   .n_outputs = 1, .outputs = &io[1]};
  node.attrs = het_arena_calloc(&g->arena, 1, sizeof *node.attrs);
  if (!node.name || !node.attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  node.n_attrs = sp->kind == HET_STEP_COPY ? 0 : 1;
  node.attrs[0] = (het_attr){.name = "to", .type = HET_ATTR_INT, .i = sp->conv};
  int id;
  g->values[out].producer = -1;
  HET_TRY(het_graph_add_node(g, &node, &id));
  bool is_static = b->is_static[sp->src];
  b->is_static[out] = is_static;
  b->space[out] = sp->space;
  b->prov[id] = sp->space;
  b->kind[id] = (unsigned char)(sp->kind + (is_static ? 1 : 0));
  snprintf(why, sizeof why, "boundary: %s %s -> %s%s", ops[sp->kind],
           sp->kind == HET_STEP_COPY ? het_space_name(b, b->space[sp->src])
                                     : "",
           target, is_static ? " (initializer, prepared once)" : "");
  b->reason[id] = het_arena_strdup(b->arena, why);
  b->order[b->n_order++] = id;
  *out_value = out;
  return HET_OK;
}

/* The host version of v (logical value `logical`), leaving v's device
 * through copy, layout and cast as its formats need; the last step writes
 * final_out when >= 0. */
static het_status het_exit_chain(het_bctx *b, int v, int logical,
                                 int final_out, int *host) {
  int from = b->space[v];
  bool layout = het_needs_layout(b, from, logical);
  bool cast = het_needs_cast(b, from, logical);
  het_step_spec sp = {HET_STEP_COPY, v, -1,
                      layout || cast ? -1 : final_out, 0};
  int cur;
  HET_TRY(het_add_step(b, &sp, &cur));
  if (layout) {
    het_step_spec l = {HET_STEP_LAYOUT, cur, -1, cast ? -1 : final_out, 0};
    HET_TRY(het_add_step(b, &l, &cur));
  }
  if (cast) {
    het_step_spec c = {HET_STEP_CAST, cur, -1, final_out, HET_DTYPE_FLOAT32};
    HET_TRY(het_add_step(b, &c, &cur));
  }
  *host = cur;
  return HET_OK;
}

/* Whether a value of `logical` on device `from` may go straight to device
 * `to` (a direct path and no format change on either side). */
static bool het_direct(const het_bctx *b, int from, int to, int logical) {
  return b->direct && from >= 0 && to >= 0 && from != to &&
         b->direct[from * (b->n_spaces - 1) + to] &&
         !het_needs_cast(b, from, logical) && !het_needs_cast(b, to, logical) &&
         !het_needs_layout(b, from, logical) &&
         !het_needs_layout(b, to, logical);
}

/* v's copy in memory space `to` (for the original value `logical`). */
static het_status het_transfer_chain(het_bctx *b, int logical, int to,
                                     int *out) {
  int home = b->space[logical];
  if (het_direct(b, home, to, logical)) {
    int dev_val = b->copy_of[logical * b->n_spaces + home + 1];
    het_step_spec sp = {HET_STEP_COPY, dev_val >= 0 ? dev_val : logical, to,
                        -1, 0};
    return het_add_step(b, &sp, out);
  }
  int *host_slot = &b->copy_of[logical * b->n_spaces];
  int cur = b->space[logical] < 0 ? logical : *host_slot;
  if (cur < 0) {
    int dev_val = b->copy_of[logical * b->n_spaces + b->space[logical] + 1];
    HET_TRY(het_exit_chain(b, dev_val >= 0 ? dev_val : logical, logical, -1,
                           &cur));
    *host_slot = cur;
  }
  if (to >= 0) {
    if (het_needs_cast(b, to, logical)) {
      het_step_spec c = {HET_STEP_CAST, cur, -1, -1,
                         (int)b->info[to].float32_as};
      HET_TRY(het_add_step(b, &c, &cur));
    }
    if (het_needs_layout(b, to, logical)) {
      het_step_spec l = {HET_STEP_LAYOUT, cur, -1, -1, 1};
      HET_TRY(het_add_step(b, &l, &cur));
    }
    het_step_spec sp = {HET_STEP_COPY, cur, to, -1, 0};
    HET_TRY(het_add_step(b, &sp, &cur));
  }
  *out = cur;
  return HET_OK;
}

/* A node's graph output v produced on a device: the node writes a new
 * device value instead, at once, so that the nodes of its run that read v
 * read that; v itself will be its copy home (het_output_home, when the
 * run ends).  *home = v. */
static het_status het_output_rename(het_bctx *b, int n, int o, int space,
                                    int *home) {
  het_graph *g = b->g;
  int v = g->nodes[n].outputs[o];
  char vname[600];
  snprintf(vname, sizeof vname, "%s@%s", g->values[v].name,
           het_space_name(b, space));
  int nv;
  HET_TRY(het_graph_intern_value(g, vname, &nv));
  g->values[nv].dtype = g->values[v].dtype;
  g->values[nv].shape = g->values[v].shape;
  g->values[nv].producer = n;
  g->nodes[n].outputs[o] = nv;
  b->space[nv] = space;
  b->space[v] = -1; /* made by the exit chain */
  b->copy_of[v * b->n_spaces + space + 1] = nv;
  *home = v;
  return HET_OK;
}

/* The exit chain bringing device value nv back home as graph output v. */
static het_status het_output_home(het_bctx *b, int nv, int v) {
  int host;
  HET_TRY(het_exit_chain(b, nv, v, v, &host));
  b->copy_of[v * b->n_spaces] = v;
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
    if (*slot < 0)
      HET_TRY(het_transfer_chain(b, v, sp, slot));
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
    int v = g->nodes[n].outputs[o], home = b->pending_home[k];
    if (home >= 0) {
      HET_TRY(het_output_home(b, v, home));
      v = home; /* its readers elsewhere copy from home */
    }
    HET_TRY(het_copy_eagerly(b, v));
  }
  b->n_pending = 0;
  return HET_OK;
}

/* The version of v in space for node n (v itself when it lives there). */
static het_status het_local(het_bctx *b, int n, int space, int *v) {
  if (*v < 0 || b->space[*v] == space)
    return HET_OK;
  int slot = b->copy_of[*v * b->n_spaces + space + 1];
  if (slot < 0)
    return het_error(HET_ERR_INTERNAL, "boundary: no copy of '%s' for '%s'",
                     b->g->values[*v].name, b->g->nodes[n].name);
  *v = slot;
  return HET_OK;
}

static het_status het_boundary_node(het_bctx *b, const bool *host_memory,
                                    int n) {
  het_graph *g = b->g;
  int space = het_node_space(b, host_memory, n);
  if (b->n_order > 0 && space != b->run_space)
    HET_TRY(het_flush_pending(b));
  b->run_space = space;
  for (int i = 0; i < g->nodes[n].n_inputs; i++)
    HET_TRY(het_local(b, n, space, &g->nodes[n].inputs[i]));
  for (int k = 0; b->extra && k < b->extra->n[n]; k++)
    HET_TRY(het_local(b, n, space, &b->extra->ids[n][k]));
  b->order[b->n_order++] = n;
  for (int o = 0; o < g->nodes[n].n_outputs && o < 256; o++) {
    int v = g->nodes[n].outputs[o];
    if (v < 0)
      continue;
    b->space[v] = space;
    int home = -1;
    if (space >= 0 && (g->values[v].flags & HET_VALUE_GRAPH_OUTPUT))
      HET_TRY(het_output_rename(b, n, o, space, &home));
    b->pending_home[b->n_pending] = home;
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
    for (int k = 0; b->extra && k < b->extra->n[n]; k++)
      if (b->extra->ids[n][k] >= 0)
        b->readers[b->extra->ids[n][k]] |= 1u << (space + 1);
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

het_status het_boundary_insert(het_graph *g, const het_ep *devices,
                               const het_device_info *info,
                               const bool *host_memory, const bool *direct,
                               het_boundary_reads *extra, het_arena *arena,
                               het_partition *p) {
  int n_devices = 0;
  for (int n = 0; n < g->n_nodes; n++)
    if (p->provider[n] + 1 > n_devices)
      n_devices = p->provider[n] + 1;
  size_t reads = (size_t)g->n_outputs;
  for (int n = 0; n < g->n_nodes; n++)
    reads += (size_t)g->nodes[n].n_inputs + (extra ? (size_t)extra->n[n] : 0);
  /* A transfer is at most 3 steps out of a device and 3 into one. */
  size_t max_nodes = (size_t)g->n_nodes + 6 * reads + 1;
  size_t max_values = (size_t)g->n_values + 7 * reads + 1;
  het_bctx b = {.g = g, .devices = devices, .info = info, .arena = arena,
                .direct = direct, .extra = extra,
                .cap_nodes = max_nodes, .cap_values = max_values,
                .n_spaces = n_devices + 1, .n_orig_values = g->n_values};
  b.space = het_arena_calloc(arena, max_values, sizeof(int));
  b.is_static = het_arena_calloc(arena, max_values, sizeof(bool));
  b.copy_of = het_arena_calloc(arena, (size_t)g->n_values * (size_t)b.n_spaces,
                               sizeof(int));
  b.order = malloc(max_nodes * sizeof(int));
  b.prov = het_arena_calloc(arena, max_nodes, sizeof(int));
  b.reason = het_arena_calloc(arena, max_nodes, sizeof(char *));
  b.kind = het_arena_calloc(arena, max_nodes, 1);
  if (!b.space || !b.is_static || !b.copy_of || !b.order || !b.prov || !b.reason || !b.kind) {
    free(b.order);
    return het_error(HET_ERR_OUT_OF_MEMORY, "boundary: out of memory");
  }
  for (size_t i = 0; i < max_values; i++)
    b.space[i] = -1;
  for (int v = 0; v < g->n_values; v++)
    b.is_static[v] = g->values[v].initializer &&
                     !(g->values[v].flags & HET_VALUE_GRAPH_INPUT);
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
  b.pending_home = het_arena_calloc(arena, reads + (size_t)g->n_nodes + 1,
                                    sizeof(int));
  if (!b.pending || !b.pending_home)
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
