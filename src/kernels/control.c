/* control.c — CPU kernels for If, Loop and Scan.  Each body graph is
 * compiled once at prepare time; a run binds the body's inputs, lets it
 * read enclosing values through het_run_lookup_outer, and moves the body's
 * outputs into the node's outputs (whose shapes are known only now).
 */
#include <stdlib.h>
#include <string.h>

#include "executor/run.h"
#include "providers/cpu/cpu.h"
#include "kernels/kernel.h"

typedef struct het_body {
  const het_graph *graph;
  void *compiled;
  int *uses;
  int *outer;     /* values the body reads from enclosing scopes */
  bool *required; /* per outer entry: some node or output reads it */
  int n_outer;
} het_body;

typedef struct het_control_state {
  int n_bodies;
  het_body bodies[2];
} het_control_state;

static void het_body_deinit(het_body *b) {
  het_cpu_graph_destroy(b->compiled);
  free(b->uses);
  free(b->outer);
  free(b->required);
}

/* True when some node of g or a graph output reads value v. */
static bool het_value_is_read(const het_graph *g, int v) {
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v)
        return true;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v)
      return true;
  return false;
}

/* Lists the values a body takes from enclosing scopes: no producer, not a
 * body input, not an initializer.  Done once, not per iteration. */
static het_status het_body_find_outer(const het_node *node, het_body *b) {
  const het_graph *g = b->graph;
  b->outer = calloc((size_t)g->n_values + 1, sizeof *b->outer);
  b->required = calloc((size_t)g->n_values + 1, sizeof *b->required);
  if (!b->outer || !b->required)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  for (int v = 0; v < g->n_values; v++) {
    const het_value *val = &g->values[v];
    if (val->producer >= 0 || val->initializer ||
        (val->flags & HET_VALUE_GRAPH_INPUT))
      continue;
    b->required[b->n_outer] = het_value_is_read(g, v);
    b->outer[b->n_outer++] = v;
  }
  return HET_OK;
}

static het_status het_body_init(const het_node *node, const char *attr,
                                het_body *b) {
  const het_attr *a = het_node_find_attr(node, attr);
  if (!a || a->type != HET_ATTR_GRAPH || !a->g)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): graph attribute '%s' is missing",
                     node->name, node->op_type, attr);
  het_graph *g = a->g;
  b->graph = g;
  HET_TRY(het_graph_infer_shapes(g));
  b->uses = calloc((size_t)g->n_values + 1, sizeof *b->uses);
  if (!b->uses)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0)
        b->uses[g->nodes[n].inputs[i]]++;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].flags & (HET_VALUE_GRAPH_OUTPUT | HET_VALUE_GRAPH_INPUT |
                              HET_VALUE_INITIALIZER) ||
        g->values[v].producer < 0)
      b->uses[v] = -1; /* outer-scope values are borrowed, never freed */
  het_run_mark_outer_uses(g, b->uses);
  HET_TRY(het_body_find_outer(node, b));
  het_status st = het_cpu_graph_compile(g, &b->compiled);
  if (st != HET_OK)
    het_error_wrap(st, "node '%s' (%s) body '%s'", node->name, node->op_type,
                   attr);
  return st;
}

static void het_control_destroy(void *state) {
  het_control_state *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->n_bodies; i++)
    het_body_deinit(&s->bodies[i]);
  free(s);
}

static het_status het_control_prepare_bodies(const het_node *node,
                                             const char *const *attrs, int n,
                                             void **state) {
  het_control_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  for (int i = 0; i < n; i++) {
    s->n_bodies = i + 1;
    het_status st = het_body_init(node, attrs[i], &s->bodies[i]);
    if (st != HET_OK) {
      het_control_destroy(s);
      return st;
    }
  }
  *state = s;
  return HET_OK;
}

/* Runs body with inputs[0..n_inputs) bound to its graph inputs; outputs
 * (body->graph->n_outputs entries) receive new tensors the caller owns. */
static het_status het_body_run(const het_body *body, het_kernel_ctx *kc,
                               het_tensor *const *inputs, int n_inputs,
                               het_tensor **outputs) {
  const het_graph *g = body->graph;
  het_run_ctx ctx;
  if (n_inputs != g->n_inputs)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s': body takes %d inputs, %d given",
                     kc->node->name, g->n_inputs, n_inputs);
  HET_TRY(het_run_ctx_init(&ctx, g, body->uses, kc->run));
  het_status st = HET_OK;
  for (int i = 0; i < n_inputs; i++)
    ctx.values[g->inputs[i]] = inputs[i];
  for (int k = 0; k < body->n_outer && st == HET_OK; k++) {
    int v = body->outer[k];
    const het_value *val = &g->values[v];
    ctx.values[v] = het_run_lookup_outer(kc->run, val->name);
    if (!ctx.values[v] && body->required[k])
      st = het_error(HET_ERR_INVALID_MODEL,
                     "node '%s': body reads '%s', which is not defined",
                     kc->node->name, val->name);
  }
  if (st == HET_OK)
    st = het_cpu_graph_run(body->compiled, kc->threads, &ctx);
  if (st == HET_OK)
    st = het_run_take_outputs(&ctx, g->outputs, (size_t)g->n_outputs,
                              outputs);
  het_run_ctx_deinit(&ctx);
  return st;
}

static void het_tensors_destroy(het_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(t[i]);
    t[i] = NULL;
  }
}

/* ---- If ---------------------------------------------------------------- */

static het_status het_if_prepare(const het_graph *graph, const het_node *node,
                                 void **state) {
  (void)graph;
  static const char *const attrs[] = {"then_branch", "else_branch"};
  return het_control_prepare_bodies(node, attrs, 2, state);
}

static het_status het_if_run(het_kernel_ctx *kc) {
  het_control_state *s = kc->state;
  const het_tensor *cond = kc->inputs[0];
  if (het_tensor_count(cond) != 1)
    return het_error(HET_ERR_SHAPE, "node '%s' (If): cond has %lld elements",
                     kc->node->name, (long long)het_tensor_count(cond));
  const het_body *body = &s->bodies[((uint8_t *)cond->data)[0] ? 0 : 1];
  het_tensor *outs[64] = {0};
  if (body->graph->n_outputs > 64 || body->graph->n_outputs != kc->n_outputs)
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (If): %d outputs",
                     kc->node->name, body->graph->n_outputs);
  HET_TRY(het_body_run(body, kc, NULL, 0, outs));
  for (int o = 0; o < kc->n_outputs; o++) {
    if (kc->outputs[o])
      het_tensor_move_into(kc->outputs[o], outs[o]);
    else
      het_tensor_destroy(outs[o]);
  }
  return HET_OK;
}

/* ---- slicing and stacking along an axis --------------------------------- */

/* New tensor: element `index` of t along axis (rank drops by one). */
static het_status het_slice_axis(const het_tensor *t, int axis, int64_t index,
                                 het_tensor **out) {
  int64_t dims[HET_MAX_RANK] = {0}, outer = 1, inner = 1;
  int r = 0;
  for (int i = 0; i < t->rank; i++) {
    if (i < axis)
      outer *= t->dims[i];
    if (i > axis)
      inner *= t->dims[i];
    if (i != axis)
      dims[r++] = t->dims[i];
  }
  HET_TRY(het_tensor_create_empty(t->dtype, dims, r, out));
  size_t es = het_dtype_size(t->dtype), block = (size_t)inner * es;
  for (int64_t o = 0; o < outer; o++)
    memcpy((char *)(*out)->data + (size_t)o * block,
           (const char *)t->data +
               ((size_t)o * (size_t)t->dims[axis] + (size_t)index) * block,
           block);
  return HET_OK;
}

/* Stacks n same-shaped slices along a new axis into dst (reversed order
 * when reverse).  Zero slices give shape [0]. */
static het_status het_stack_axis(const het_node *node, het_tensor *const *sl,
                                 int64_t n, int axis, bool reverse,
                                 het_dtype dtype, het_tensor *dst) {
  int64_t dims[HET_MAX_RANK], zero = 0;
  if (n == 0)
    return het_tensor_alloc(dst, dtype, &zero, 1);
  const het_tensor *s0 = sl[0];
  if (s0->rank + 1 > HET_MAX_RANK || axis < 0 || axis > s0->rank)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s': cannot stack on axis %d",
                     node->name, axis);
  for (int64_t k = 1; k < n; k++)
    if (sl[k]->rank != s0->rank || sl[k]->nbytes != s0->nbytes ||
        memcmp(sl[k]->dims, s0->dims, (size_t)s0->rank * sizeof(int64_t)))
      return het_error(HET_ERR_SHAPE,
                       "node '%s': scan output slices differ in shape",
                       node->name);
  int64_t outer = 1, inner = 1;
  for (int i = 0, r = 0; i <= s0->rank; i++) {
    if (i == axis) {
      dims[r++] = n;
      continue;
    }
    dims[r++] = s0->dims[i < axis ? i : i - 1];
  }
  for (int i = 0; i < s0->rank; i++)
    if (i < axis)
      outer *= s0->dims[i];
    else
      inner *= s0->dims[i];
  HET_TRY(het_tensor_alloc(dst, dtype, dims, s0->rank + 1));
  size_t block = (size_t)inner * het_dtype_size(dtype);
  for (int64_t k = 0; k < n; k++) {
    const het_tensor *src = sl[reverse ? n - 1 - k : k];
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)dst->data + ((size_t)o * (size_t)n + (size_t)k) * block,
             (const char *)src->data + (size_t)o * block, block);
  }
  return HET_OK;
}

/* A growable list of tensors the kernel owns. */
typedef struct het_tensor_list {
  het_tensor **items;
  int64_t n, cap;
} het_tensor_list;

static het_status het_list_push(het_tensor_list *l, het_tensor *t) {
  if (l->n == l->cap) {
    int64_t cap = l->cap ? l->cap * 2 : 16;
    het_tensor **items = realloc(l->items, (size_t)cap * sizeof *items);
    if (!items)
      return het_error(HET_ERR_OUT_OF_MEMORY, "scan outputs: out of memory");
    l->items = items;
    l->cap = cap;
  }
  l->items[l->n++] = t;
  return HET_OK;
}

static void het_lists_free(het_tensor_list *l, int n) {
  for (int i = 0; i < n; i++) {
    het_tensors_destroy(l[i].items, (int)l[i].n);
    free(l[i].items);
  }
  free(l);
}

/* Replaces the loop-carried state cur[i] (owned flags in own[i]). */
static void het_state_replace(het_tensor **cur, bool *own, int i,
                              het_tensor *next) {
  if (own[i])
    het_tensor_destroy(cur[i]);
  cur[i] = next;
  own[i] = true;
}

/* Final state i into the node output: moved when owned, else copied. */
static het_status het_state_output(het_tensor *dst, het_tensor *cur,
                                   bool own) {
  if (!dst)
    return HET_OK;
  if (own) {
    het_tensor *copy = cur;
    het_tensor_move_into(dst, copy);
    return HET_OK;
  }
  HET_TRY(het_tensor_alloc(dst, cur->dtype, cur->dims, cur->rank));
  memcpy(dst->data, cur->data, cur->nbytes);
  return HET_OK;
}

/* ---- Loop ----------------------------------------------------------------- */

typedef struct het_loop_state {
  int carried, scans;
  het_tensor **cur;
  bool *own;
  het_tensor_list *lists;
  het_tensor **outs; /* body outputs of one iteration */
} het_loop_state;

static het_status het_loop_prepare(const het_graph *graph,
                                   const het_node *node, void **state) {
  (void)graph;
  static const char *const attrs[] = {"body"};
  return het_control_prepare_bodies(node, attrs, 1, state);
}

static het_status het_loop_iterate(het_kernel_ctx *kc, het_loop_state *lr,
                                   int64_t it, bool *cond, bool use_cond) {
  const het_body *body = &((het_control_state *)kc->state)->bodies[0];
  het_tensor iter_t = {.dtype = HET_DTYPE_INT64, .rank = 0, .data = &it,
                       .nbytes = 8};
  uint8_t c = *cond;
  het_tensor cond_t = {.dtype = HET_DTYPE_BOOL, .rank = 0, .data = &c,
                       .nbytes = 1};
  het_tensor *in[66];
  in[0] = &iter_t;
  in[1] = &cond_t;
  for (int i = 0; i < lr->carried; i++)
    in[2 + i] = lr->cur[i];
  HET_TRY(het_body_run(body, kc, in, 2 + lr->carried, lr->outs));
  het_tensor *c_out = lr->outs[0];
  if (use_cond)
    *cond = het_tensor_count(c_out) > 0 && ((uint8_t *)c_out->data)[0] != 0;
  het_tensor_destroy(c_out);
  lr->outs[0] = NULL;
  for (int i = 0; i < lr->carried; i++) {
    het_state_replace(lr->cur, lr->own, i, lr->outs[1 + i]);
    lr->outs[1 + i] = NULL;
  }
  for (int k = 0; k < lr->scans; k++) {
    het_status st = het_list_push(&lr->lists[k], lr->outs[1 + lr->carried + k]);
    if (st != HET_OK)
      return st;
    lr->outs[1 + lr->carried + k] = NULL;
  }
  return HET_OK;
}

static het_status het_loop_finish(het_kernel_ctx *kc, het_loop_state *lr) {
  const het_body *body = &((het_control_state *)kc->state)->bodies[0];
  for (int i = 0; i < lr->carried; i++) {
    HET_TRY(het_state_output(kc->outputs[i], lr->cur[i], lr->own[i]));
    if (lr->own[i] && kc->outputs[i]) {
      lr->cur[i] = NULL;
      lr->own[i] = false;
    }
  }
  for (int k = 0; k < lr->scans; k++) {
    het_tensor *dst = kc->outputs[lr->carried + k];
    if (!dst)
      continue;
    het_dtype t = body->graph->values[body->graph->outputs[1 + lr->carried + k]]
                      .dtype;
    if (lr->lists[k].n)
      t = lr->lists[k].items[0]->dtype;
    HET_TRY(het_stack_axis(kc->node, lr->lists[k].items, lr->lists[k].n, 0,
                           false, t, dst));
  }
  return HET_OK;
}

static het_status het_loop_run(het_kernel_ctx *kc) {
  const het_tensor *m_t = kc->inputs[0];
  const het_tensor *c_t = kc->n_inputs > 1 ? kc->inputs[1] : NULL;
  if (!m_t && !c_t)
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (Loop): neither a trip count nor a condition "
                     "is given, so the loop would never end",
                     kc->node->name);
  int64_t max_trips = m_t ? het_tensor_get_i64(m_t, 0) : INT64_MAX;
  bool cond = c_t ? ((uint8_t *)c_t->data)[0] != 0 : true;
  het_loop_state lr = {.carried = kc->n_inputs - 2};
  lr.scans = kc->n_outputs - lr.carried;
  if (lr.carried > 64 || lr.scans < 0)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Loop): %d loop-carried "
                     "values", kc->node->name, lr.carried);
  lr.cur = calloc((size_t)lr.carried + 1, sizeof *lr.cur);
  lr.own = calloc((size_t)lr.carried + 1, sizeof *lr.own);
  lr.lists = calloc((size_t)lr.scans + 1, sizeof *lr.lists);
  lr.outs = calloc((size_t)kc->n_outputs + 2, sizeof *lr.outs);
  het_status st = HET_OK;
  if (!lr.cur || !lr.own || !lr.lists || !lr.outs)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                   kc->node->name);
  for (int i = 0; st == HET_OK && i < lr.carried; i++)
    lr.cur[i] = kc->inputs[2 + i];
  for (int64_t it = 0; st == HET_OK && it < max_trips && cond; it++)
    st = het_loop_iterate(kc, &lr, it, &cond, c_t != NULL);
  if (st == HET_OK)
    st = het_loop_finish(kc, &lr);
  for (int i = 0; lr.cur && i < lr.carried; i++)
    if (lr.own[i])
      het_tensor_destroy(lr.cur[i]);
  if (lr.outs)
    het_tensors_destroy(lr.outs, kc->n_outputs + 1);
  if (lr.lists)
    het_lists_free(lr.lists, lr.scans);
  free(lr.cur);
  free(lr.own);
  free(lr.outs);
  return st;
}

/* ---- Scan ------------------------------------------------------------------ */

typedef struct het_scan_spec {
  int states, scans, outs; /* outs = states + scan outputs */
  int in_axis[32], out_axis[32];
  bool in_rev[32], out_rev[32];
} het_scan_spec;

static het_status het_scan_spec_init(const het_kernel_ctx *kc, int first,
                                     het_scan_spec *sp) {
  const het_node *n = kc->node;
  sp->scans = (int)het_node_attr_int(n, "num_scan_inputs", 0);
  sp->states = kc->n_inputs - first - sp->scans;
  sp->outs = kc->n_outputs;
  int k_out = sp->outs - sp->states;
  if (sp->scans < 1 || sp->scans > 32 || sp->states < 0 || k_out < 0 ||
      k_out > 32)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (Scan): %d scan inputs, %d states", n->name,
                     sp->scans, sp->states);
  size_t na, nd, noa, nod;
  const int64_t *ia = het_node_attr_ints(n, "scan_input_axes", &na);
  const int64_t *id = het_node_attr_ints(
      n, kc->opset < 9 ? "directions" : "scan_input_directions", &nd);
  const int64_t *oa = het_node_attr_ints(n, "scan_output_axes", &noa);
  const int64_t *od = het_node_attr_ints(n, "scan_output_directions", &nod);
  for (int j = 0; j < sp->scans; j++) {
    sp->in_axis[j] = (size_t)j < na ? (int)ia[j] : 0;
    sp->in_rev[j] = (size_t)j < nd && id[j] != 0;
  }
  for (int k = 0; k < k_out; k++) {
    sp->out_axis[k] = (size_t)k < noa ? (int)oa[k] : 0;
    sp->out_rev[k] = (size_t)k < nod && od[k] != 0;
  }
  return HET_OK;
}

/* One scan over states/scans (borrowed); results[0..outs) are new tensors
 * the caller owns. */
static het_status het_scan_core(het_kernel_ctx *kc, const het_scan_spec *sp,
                                het_tensor *const *states,
                                het_tensor *const *scans,
                                het_tensor **results) {
  const het_body *body = &((het_control_state *)kc->state)->bodies[0];
  int k_out = sp->outs - sp->states;
  int64_t steps = -1;
  for (int j = 0; j < sp->scans; j++) {
    int ax = sp->in_axis[j] < 0 ? sp->in_axis[j] + scans[j]->rank
                                : sp->in_axis[j];
    if (ax < 0 || ax >= scans[j]->rank ||
        (steps >= 0 && scans[j]->dims[ax] != steps))
      return het_error(HET_ERR_SHAPE,
                       "node '%s' (Scan): scan input %d has no axis %d of "
                       "the common length",
                       kc->node->name, j, sp->in_axis[j]);
    steps = scans[j]->dims[ax];
  }
  het_loop_state lr = {.carried = sp->states, .scans = k_out};
  lr.cur = calloc((size_t)sp->states + 1, sizeof *lr.cur);
  lr.own = calloc((size_t)sp->states + 1, sizeof *lr.own);
  lr.lists = calloc((size_t)k_out + 1, sizeof *lr.lists);
  het_tensor **in = calloc((size_t)(sp->states + sp->scans) + 1, sizeof *in);
  het_tensor **outs = calloc((size_t)sp->outs + 1, sizeof *outs);
  het_status st = HET_OK;
  if (!lr.cur || !lr.own || !lr.lists || !in || !outs)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                   kc->node->name);
  for (int i = 0; st == HET_OK && i < sp->states; i++)
    lr.cur[i] = states[i];
  for (int64_t t = 0; st == HET_OK && t < steps; t++) {
    memset(in, 0, (size_t)(sp->states + sp->scans) * sizeof *in);
    for (int i = 0; i < sp->states; i++)
      in[i] = lr.cur[i];
    for (int j = 0; st == HET_OK && j < sp->scans; j++) {
      int ax = sp->in_axis[j] < 0 ? sp->in_axis[j] + scans[j]->rank
                                  : sp->in_axis[j];
      st = het_slice_axis(scans[j], ax, sp->in_rev[j] ? steps - 1 - t : t,
                          &in[sp->states + j]);
    }
    if (st == HET_OK)
      st = het_body_run(body, kc, in, sp->states + sp->scans, outs);
    het_tensors_destroy(in + sp->states, sp->scans);
    for (int i = 0; st == HET_OK && i < sp->states; i++) {
      het_state_replace(lr.cur, lr.own, i, outs[i]);
      outs[i] = NULL;
    }
    for (int k = 0; st == HET_OK && k < k_out; k++) {
      st = het_list_push(&lr.lists[k], outs[sp->states + k]);
      if (st == HET_OK)
        outs[sp->states + k] = NULL;
    }
  }
  for (int i = 0; st == HET_OK && i < sp->outs; i++) {
    results[i] = calloc(1, sizeof **results);
    if (!results[i]) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     kc->node->name);
      break;
    }
    if (i < sp->states) {
      st = het_state_output(results[i], lr.cur[i], lr.own[i]);
      if (lr.own[i]) {
        lr.cur[i] = NULL;
        lr.own[i] = false;
      }
      continue;
    }
    int k = i - sp->states;
    het_dtype dt = lr.lists[k].n ? lr.lists[k].items[0]->dtype
                                 : body->graph->values[body->graph->outputs[i]].dtype;
    int ax = sp->out_axis[k];
    if (ax < 0 && lr.lists[k].n)
      ax += lr.lists[k].items[0]->rank + 1;
    st = het_stack_axis(kc->node, lr.lists[k].items, lr.lists[k].n, ax,
                        sp->out_rev[k], dt, results[i]);
  }
  if (st != HET_OK)
    het_tensors_destroy(results, sp->outs);
  for (int i = 0; lr.cur && i < sp->states; i++)
    if (lr.own[i])
      het_tensor_destroy(lr.cur[i]);
  if (outs)
    het_tensors_destroy(outs, sp->outs);
  if (lr.lists)
    het_lists_free(lr.lists, k_out);
  free(lr.cur);
  free(lr.own);
  free(in);
  free(outs);
  return st;
}

static het_status het_scan9_run(het_kernel_ctx *kc,
                                const het_scan_spec *sp) {
  het_tensor *results[64] = {0};
  if (sp->outs > 64)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Scan): %d outputs",
                     kc->node->name, sp->outs);
  HET_TRY(het_scan_core(kc, sp, kc->inputs, kc->inputs + sp->states, results));
  for (int i = 0; i < sp->outs; i++) {
    if (kc->outputs[i])
      het_tensor_move_into(kc->outputs[i], results[i]);
    else
      het_tensor_destroy(results[i]);
  }
  return HET_OK;
}

/* Scan-8: a leading batch axis on every state and scan input; each batch
 * entry is scanned on its own and the results are stacked again. */
static het_status het_scan8_run(het_kernel_ctx *kc, het_scan_spec *sp) {
  const het_tensor *lens = kc->inputs[0];
  het_tensor *const *ins = kc->inputs + 1;
  int n_in = sp->states + sp->scans;
  if (n_in > 64 || sp->outs > 64 || !ins[0] || ins[0]->rank < 1)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Scan-8): bad inputs",
                     kc->node->name);
  int64_t batch = ins[0]->dims[0];
  for (int j = 0; j < sp->scans; j++)
    sp->in_axis[j] = 0; /* axis 1 of the batched input */
  het_tensor_list *per_out = calloc((size_t)sp->outs + 1, sizeof *per_out);
  if (!per_out)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     kc->node->name);
  het_status st = HET_OK;
  for (int64_t b = 0; st == HET_OK && b < batch; b++) {
    het_tensor *slices[64] = {0}, *results[64] = {0};
    if (lens && het_tensor_get_i64(lens, b) != ins[sp->states]->dims[1])
      st = het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (Scan-8): sequence_lens shorter than the "
                     "input is not supported",
                     kc->node->name);
    for (int j = 0; st == HET_OK && j < n_in; j++)
      st = het_slice_axis(ins[j], 0, b, &slices[j]);
    if (st == HET_OK)
      st = het_scan_core(kc, sp, slices, slices + sp->states, results);
    het_tensors_destroy(slices, n_in);
    for (int i = 0; st == HET_OK && i < sp->outs; i++) {
      st = het_list_push(&per_out[i], results[i]);
      if (st == HET_OK)
        results[i] = NULL;
    }
    het_tensors_destroy(results, sp->outs);
  }
  for (int i = 0; st == HET_OK && i < sp->outs; i++)
    if (kc->outputs[i])
      st = het_stack_axis(kc->node, per_out[i].items, per_out[i].n, 0, false,
                          kc->outputs[i]->dtype, kc->outputs[i]);
  het_lists_free(per_out, sp->outs);
  return st;
}

static het_status het_scan_run(het_kernel_ctx *kc) {
  het_scan_spec sp;
  int first = kc->opset < 9 ? 1 : 0;
  HET_TRY(het_scan_spec_init(kc, first, &sp));
  return first ? het_scan8_run(kc, &sp) : het_scan9_run(kc, &sp);
}

const het_kernel het_kernels_control[] = {
    {.op_type = "If", .domain = "", .prepare = het_if_prepare,
     .run = het_if_run, .destroy_state = het_control_destroy},
    {.op_type = "Loop", .domain = "", .prepare = het_loop_prepare,
     .run = het_loop_run, .destroy_state = het_control_destroy},
    {.op_type = "Scan", .domain = "", .prepare = het_loop_prepare,
     .run = het_scan_run, .destroy_state = het_control_destroy},
    {0},
};
