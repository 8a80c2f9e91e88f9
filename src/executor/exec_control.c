/* exec_control.c — If, Loop and Scan as plan steps: the host, at a sync
 * point of the run (its inputs ready), reads the condition or trip count,
 * and runs the body programs (planned per signature, any provider) on the
 * run's streams, each body run ending with the streams drained.  If writes
 * its branch's outputs straight into the node's; Loop and Scan carry state
 * from one iteration to the next in tensors this step owns and stack the
 * scan outputs at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/status.h"
#include "executor/exec_internal.h"

typedef struct het_cf {
  het_exec_state *r;
  const het_node *node;
  int opset;
  int n_inputs, n_outputs;
  het_tensor **inputs;   /* the node's inputs (NULL: omitted) */
  het_tensor **outputs;  /* the node's outputs: placed, or shells */
  het_program *const *bodies;
} het_cf;

static void het_tensors_destroy(het_tensor **t, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(t[i]);
    t[i] = NULL;
  }
}

/* New empty tensor shells for a body's outputs (caller destroys). */
static het_status het_shells(het_tensor **t, int n, const het_node *node) {
  for (int i = 0; i < n; i++) {
    t[i] = calloc(1, sizeof **t);
    if (!t[i]) {
      het_tensors_destroy(t, i);
      return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                       node->name);
    }
  }
  return HET_OK;
}

/* Runs body with inputs[0..n_inputs) bound to its graph inputs and its
 * captured values from the enclosing frame; outputs receive its graph
 * outputs (placed tensors, or shells they fill). */
static het_status het_cf_body(het_cf *c, const het_program *body,
                              het_tensor *const *inputs, int n_inputs,
                              het_tensor **outputs) {
  const het_graph *g = body->graph;
  if (n_inputs != g->n_inputs)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s': body takes %d inputs, %d given",
                     c->node->name, g->n_inputs, n_inputs);
  het_tensor *small[32];
  het_tensor **params = body->n_params <= 32
                            ? small
                            : calloc((size_t)body->n_params, sizeof *params);
  if (!params)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     c->node->name);
  het_status st = HET_OK;
  for (int i = 0; i < n_inputs; i++)
    params[i] = inputs[i];
  for (int k = 0; st == HET_OK && k < body->n_outer; k++) {
    params[n_inputs + k] = c->r->frame->ptrs[body->outer_src[k]];
    if (!params[n_inputs + k])
      st = het_error(HET_ERR_INTERNAL, "node '%s': body reads '%s', which "
                                       "the enclosing run has not placed",
                     c->node->name,
                     c->r->prog->graph->values[body->outer_src[k]].name);
  }
  if (st == HET_OK)
    st = het_exec_body((het_program *)body, c->r->set, params, outputs,
                       c->r->rec);
  if (params != small)
    free(params);
  return st;
}

/* ---- If ---------------------------------------------------------------- */

static het_status het_cf_if(het_cf *c) {
  const het_tensor *cond = c->inputs[0];
  if (het_tensor_count(cond) != 1)
    return het_error(HET_ERR_SHAPE, "node '%s' (If): cond has %lld elements",
                     c->node->name, (long long)het_tensor_count(cond));
  const het_program *body = c->bodies[((uint8_t *)cond->data)[0] ? 0 : 1];
  if (body->graph->n_outputs != c->n_outputs)
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (If): %d outputs",
                     c->node->name, body->graph->n_outputs);
  het_tensor *spare[64] = {0}, *outs[64];
  if (c->n_outputs > 64)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (If): %d outputs",
                     c->node->name, c->n_outputs);
  het_status st = HET_OK;
  for (int o = 0; st == HET_OK && o < c->n_outputs; o++) {
    outs[o] = c->outputs[o];
    if (!outs[o]) /* an omitted output: somewhere to put it */
      st = het_shells(&spare[o], 1, c->node);
    if (!outs[o])
      outs[o] = spare[o];
  }
  if (st == HET_OK)
    st = het_cf_body(c, body, NULL, 0, outs);
  het_tensors_destroy(spare, c->n_outputs);
  return st;
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
 * when reverse): into its storage when placed (the shape must match),
 * else a new allocation.  Zero slices give shape [0]. */
static het_status het_stack_axis(const het_node *node, het_tensor *const *sl,
                                 int64_t n, int axis, bool reverse,
                                 het_dtype dtype, het_tensor *dst) {
  int64_t dims[HET_MAX_RANK], zero = 0;
  int rank = 1;
  if (n == 0) {
    dims[0] = zero;
  } else {
    const het_tensor *s0 = sl[0];
    if (s0->rank + 1 > HET_MAX_RANK || axis < 0 || axis > s0->rank)
      return het_error(HET_ERR_UNSUPPORTED,
                       "node '%s': cannot stack on axis %d", node->name, axis);
    for (int64_t k = 1; k < n; k++)
      if (sl[k]->rank != s0->rank || sl[k]->nbytes != s0->nbytes ||
          memcmp(sl[k]->dims, s0->dims, (size_t)s0->rank * sizeof(int64_t)))
        return het_error(HET_ERR_SHAPE,
                         "node '%s': scan output slices differ in shape",
                         node->name);
    rank = s0->rank + 1;
    for (int i = 0, r = 0; i <= s0->rank; i++)
      dims[r++] = i == axis ? n : s0->dims[i < axis ? i : i - 1];
  }
  if (dst->data) {
    if (dst->dtype != dtype || dst->rank != rank ||
        memcmp(dst->dims, dims, (size_t)rank * sizeof *dims))
      return het_error(HET_ERR_SHAPE,
                       "node '%s': stacked scan output does not fit the "
                       "planned one",
                       node->name);
  } else {
    HET_TRY(het_tensor_alloc(dst, dtype, dims, rank));
  }
  if (n == 0)
    return HET_OK;
  const het_tensor *s0 = sl[0];
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < s0->rank; i++)
    if (i < axis)
      outer *= s0->dims[i];
    else
      inner *= s0->dims[i];
  size_t block = (size_t)inner * het_dtype_size(dtype);
  for (int64_t k = 0; k < n; k++) {
    const het_tensor *src = sl[reverse ? n - 1 - k : k];
    for (int64_t o = 0; o < outer; o++)
      memcpy((char *)dst->data + ((size_t)o * (size_t)n + (size_t)k) * block,
             (const char *)src->data + (size_t)o * block, block);
  }
  return HET_OK;
}

/* A growable list of tensors this step owns. */
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
  for (int i = 0; l && i < n; i++) {
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

/* ---- Loop ----------------------------------------------------------------- */

typedef struct het_loop_state {
  int carried, scans;
  size_t scan_bytes;  /* of the scan outputs so far (max_memory) */
  het_tensor **cur;
  bool *own;
  het_tensor_list *lists;
  het_tensor **outs; /* body outputs of one iteration (shells) */
} het_loop_state;

static het_status het_loop_iterate(het_cf *c, het_loop_state *lr, int64_t it,
                                   bool *cond, bool use_cond) {
  const het_program *body = c->bodies[0];
  het_tensor iter_t = {.dtype = HET_DTYPE_INT64, .rank = 0, .data = &it,
                       .nbytes = 8};
  uint8_t cv = *cond;
  het_tensor cond_t = {.dtype = HET_DTYPE_BOOL, .rank = 0, .data = &cv,
                       .nbytes = 1};
  het_tensor *in[66];
  in[0] = &iter_t;
  in[1] = &cond_t;
  for (int i = 0; i < lr->carried; i++)
    in[2 + i] = lr->cur[i];
  int n_out = 1 + lr->carried + lr->scans;
  HET_TRY(het_shells(lr->outs, n_out, c->node));
  het_status st = het_cf_body(c, body, in, 2 + lr->carried, lr->outs);
  if (st != HET_OK) {
    het_tensors_destroy(lr->outs, n_out);
    return st;
  }
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
    het_tensor *t = lr->outs[1 + lr->carried + k];
    st = het_list_push(&lr->lists[k], t);
    if (st != HET_OK) {
      het_tensors_destroy(lr->outs + 1 + lr->carried + k, lr->scans - k);
      return st;
    }
    lr->outs[1 + lr->carried + k] = NULL;
    lr->scan_bytes += t ? t->nbytes : 0;
  }
  /* the scan outputs grow with every iteration: the session's max_memory
   * bounds them (the stacked outputs take as much again at the end) */
  size_t cap = body->max_host_bytes;
  if (cap && lr->scan_bytes > cap / 2)
    return het_error(HET_ERR_CAPACITY,
                     "node '%s' (Loop): its scan outputs reach %zu bytes after "
                     "%lld iterations, and stacking them needs as much again: "
                     "past the session's max_memory of %zu bytes",
                     c->node->name, lr->scan_bytes, (long long)it + 1, cap);
  return HET_OK;
}

static het_status het_loop_finish(het_cf *c, het_loop_state *lr) {
  const het_graph *bg = c->bodies[0]->graph;
  for (int i = 0; i < lr->carried; i++)
    if (c->outputs[i])
      HET_TRY(het_exec_fill(c->outputs[i], lr->cur[i], lr->own[i],
                            c->node->name));
  for (int k = 0; k < lr->scans; k++) {
    het_tensor *dst = c->outputs[lr->carried + k];
    if (!dst)
      continue;
    het_dtype t = bg->values[bg->outputs[1 + lr->carried + k]].dtype;
    if (lr->lists[k].n)
      t = lr->lists[k].items[0]->dtype;
    HET_TRY(het_stack_axis(c->node, lr->lists[k].items, lr->lists[k].n, 0,
                           false, t, dst));
  }
  return HET_OK;
}

static het_status het_cf_loop(het_cf *c) {
  const het_tensor *m_t = c->inputs[0];
  const het_tensor *c_t = c->n_inputs > 1 ? c->inputs[1] : NULL;
  if (!m_t && !c_t)
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (Loop): neither a trip count nor a condition "
                     "is given, so the loop would never end",
                     c->node->name);
  /* The spec's types, checked before either is read: a trip count of
   * another type (a uint32 0xffffffff) must not become a loop of billions. */
  if (m_t && (m_t->dtype != HET_DTYPE_INT64 || het_tensor_count(m_t) != 1))
    return het_error(HET_ERR_TYPE,
                     "node '%s' (Loop): trip count M is %s with %lld "
                     "elements, expected one int64",
                     c->node->name, het_dtype_str(m_t->dtype),
                     (long long)het_tensor_count(m_t));
  if (c_t && (c_t->dtype != HET_DTYPE_BOOL || het_tensor_count(c_t) != 1))
    return het_error(HET_ERR_TYPE,
                     "node '%s' (Loop): condition is %s with %lld elements, "
                     "expected one bool",
                     c->node->name, het_dtype_str(c_t->dtype),
                     (long long)het_tensor_count(c_t));
  int64_t max_trips = m_t ? het_tensor_get_i64(m_t, 0) : INT64_MAX;
  bool cond = c_t ? ((uint8_t *)c_t->data)[0] != 0 : true;
  het_loop_state lr = {.carried = c->n_inputs - 2};
  lr.scans = c->n_outputs - lr.carried;
  if (lr.carried > 64 || lr.carried < 0 || lr.scans < 0)
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (Loop): %d loop-carried values",
                     c->node->name, lr.carried);
  lr.cur = calloc((size_t)lr.carried + 1, sizeof *lr.cur);
  lr.own = calloc((size_t)lr.carried + 1, sizeof *lr.own);
  lr.lists = calloc((size_t)lr.scans + 1, sizeof *lr.lists);
  lr.outs = calloc((size_t)c->n_outputs + 2, sizeof *lr.outs);
  het_status st = HET_OK;
  if (!lr.cur || !lr.own || !lr.lists || !lr.outs)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                   c->node->name);
  for (int i = 0; st == HET_OK && i < lr.carried; i++)
    lr.cur[i] = c->inputs[2 + i];
  /* A loop that would run past the session's max_loop_iterations fails
   * when it gets there: a trip count of 2^62 (or a condition that never
   * turns false) must not hold the run forever. */
  int64_t cap = c->bodies[0]->max_loop_iterations;
  for (int64_t it = 0; st == HET_OK && it < max_trips && cond; it++) {
    if (cap && it == cap) {
      st = het_error(HET_ERR_CAPACITY,
                     "node '%s' (Loop): stopped after %lld iterations, the "
                     "session's max_loop_iterations (trip count %lld%s)",
                     c->node->name, (long long)cap, (long long)max_trips,
                     c_t ? ", condition still true" : "");
      break;
    }
    st = het_loop_iterate(c, &lr, it, &cond, c_t != NULL);
  }
  if (st == HET_OK)
    st = het_loop_finish(c, &lr);
  for (int i = 0; lr.cur && i < lr.carried; i++)
    if (lr.own[i])
      het_tensor_destroy(lr.cur[i]);
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

static het_status het_scan_spec_init(const het_cf *c, int first,
                                     het_scan_spec *sp) {
  const het_node *n = c->node;
  sp->scans = (int)het_node_attr_int(n, "num_scan_inputs", 0);
  sp->states = c->n_inputs - first - sp->scans;
  sp->outs = c->n_outputs;
  int k_out = sp->outs - sp->states;
  if (sp->scans < 1 || sp->scans > 32 || sp->states < 0 || k_out < 0 ||
      k_out > 32)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (Scan): %d scan inputs, %d states", n->name,
                     sp->scans, sp->states);
  size_t na, nd, noa, nod;
  const int64_t *ia = het_node_attr_ints(n, "scan_input_axes", &na);
  const int64_t *id = het_node_attr_ints(
      n, c->opset < 9 ? "directions" : "scan_input_directions", &nd);
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

/* The common length of the scan inputs along their axes. */
static het_status het_scan_steps(const het_cf *c, const het_scan_spec *sp,
                                 het_tensor *const *scans, int64_t *steps) {
  *steps = -1;
  for (int j = 0; j < sp->scans; j++) {
    int ax = sp->in_axis[j] < 0 ? sp->in_axis[j] + scans[j]->rank
                                : sp->in_axis[j];
    if (ax < 0 || ax >= scans[j]->rank ||
        (*steps >= 0 && scans[j]->dims[ax] != *steps))
      return het_error(HET_ERR_SHAPE,
                       "node '%s' (Scan): scan input %d has no axis %d of "
                       "the common length",
                       c->node->name, j, sp->in_axis[j]);
    *steps = scans[j]->dims[ax];
  }
  return HET_OK;
}

/* One scan over states/scans (borrowed) into results[0..outs) (placed
 * tensors or shells). */
static het_status het_scan_core(het_cf *c, const het_scan_spec *sp,
                                het_tensor *const *states,
                                het_tensor *const *scans,
                                het_tensor **results) {
  const het_program *body = c->bodies[0];
  int k_out = sp->outs - sp->states;
  int64_t steps;
  HET_TRY(het_scan_steps(c, sp, scans, &steps));
  het_loop_state lr = {.carried = sp->states, .scans = k_out};
  lr.cur = calloc((size_t)sp->states + 1, sizeof *lr.cur);
  lr.own = calloc((size_t)sp->states + 1, sizeof *lr.own);
  lr.lists = calloc((size_t)k_out + 1, sizeof *lr.lists);
  het_tensor **in = calloc((size_t)(sp->states + sp->scans) + 1, sizeof *in);
  het_tensor **outs = calloc((size_t)sp->outs + 1, sizeof *outs);
  het_status st = HET_OK;
  if (!lr.cur || !lr.own || !lr.lists || !in || !outs)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                   c->node->name);
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
      st = het_shells(outs, sp->outs, c->node);
    if (st == HET_OK) {
      st = het_cf_body(c, body, in, sp->states + sp->scans, outs);
      if (st != HET_OK)
        het_tensors_destroy(outs, sp->outs);
    }
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
    if (outs && st != HET_OK)
      het_tensors_destroy(outs, sp->outs);
  }
  for (int i = 0; st == HET_OK && i < sp->outs; i++) {
    if (!results[i])
      continue;
    if (i < sp->states) {
      st = het_exec_fill(results[i], lr.cur[i], lr.own[i], c->node->name);
      continue;
    }
    int k = i - sp->states;
    het_dtype dt = lr.lists[k].n
                       ? lr.lists[k].items[0]->dtype
                       : body->graph->values[body->graph->outputs[i]].dtype;
    int ax = sp->out_axis[k];
    if (ax < 0 && lr.lists[k].n)
      ax += lr.lists[k].items[0]->rank + 1;
    st = het_stack_axis(c->node, lr.lists[k].items, lr.lists[k].n, ax,
                        sp->out_rev[k], dt, results[i]);
  }
  for (int i = 0; lr.cur && i < sp->states; i++)
    if (lr.own[i])
      het_tensor_destroy(lr.cur[i]);
  het_lists_free(lr.lists, k_out);
  free(lr.cur);
  free(lr.own);
  free(in);
  free(outs);
  return st;
}

/* Scan-8: a leading batch axis on every state and scan input; each batch
 * entry is scanned on its own and the results are stacked again. */
static het_status het_scan8(het_cf *c, het_scan_spec *sp) {
  const het_tensor *lens = c->inputs[0];
  het_tensor *const *ins = c->inputs + 1;
  int n_in = sp->states + sp->scans;
  if (n_in > 64 || sp->outs > 64 || !ins[0] || ins[0]->rank < 1)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Scan-8): bad inputs",
                     c->node->name);
  int64_t batch = ins[0]->dims[0];
  for (int j = 0; j < sp->scans; j++)
    sp->in_axis[j] = 0; /* axis 1 of the batched input */
  het_tensor_list *per_out = calloc((size_t)sp->outs + 1, sizeof *per_out);
  if (!per_out)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     c->node->name);
  het_status st = HET_OK;
  for (int64_t b = 0; st == HET_OK && b < batch; b++) {
    het_tensor *slices[64] = {0}, *results[64] = {0};
    if (lens && het_tensor_get_i64(lens, b) != ins[sp->states]->dims[1])
      st = het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (Scan-8): sequence_lens shorter than the "
                     "input is not supported",
                     c->node->name);
    for (int j = 0; st == HET_OK && j < n_in; j++)
      st = het_slice_axis(ins[j], 0, b, &slices[j]);
    if (st == HET_OK)
      st = het_shells(results, sp->outs, c->node);
    if (st == HET_OK)
      st = het_scan_core(c, sp, slices, slices + sp->states, results);
    het_tensors_destroy(slices, n_in);
    for (int i = 0; st == HET_OK && i < sp->outs; i++) {
      st = het_list_push(&per_out[i], results[i]);
      if (st == HET_OK)
        results[i] = NULL;
    }
    het_tensors_destroy(results, sp->outs);
  }
  for (int i = 0; st == HET_OK && i < sp->outs; i++)
    if (c->outputs[i])
      st = het_stack_axis(c->node, per_out[i].items, per_out[i].n, 0, false,
                          per_out[i].n ? per_out[i].items[0]->dtype
                                       : c->outputs[i]->dtype,
                          c->outputs[i]);
  het_lists_free(per_out, sp->outs);
  return st;
}

static het_status het_cf_scan(het_cf *c) {
  het_scan_spec sp;
  int first = c->opset < 9 ? 1 : 0;
  HET_TRY(het_scan_spec_init(c, first, &sp));
  if (first)
    return het_scan8(c, &sp);
  return het_scan_core(c, &sp, c->inputs, c->inputs + sp.states, c->outputs);
}

/* ---- the step -------------------------------------------------------------- */

het_status het_exec_control(het_exec_state *r, const het_pstep *T) {
  const het_program *p = r->prog;
  const het_node *node = &p->graph->nodes[T->node];
  het_tensor *small[64];
  int need = node->n_inputs + node->n_outputs;
  het_tensor **io = need <= 64 ? small : calloc((size_t)need, sizeof *io);
  if (!io)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  het_cf c = {.r = r, .node = node, .opset = node->opset,
              .n_inputs = node->n_inputs, .n_outputs = node->n_outputs,
              .inputs = io, .outputs = io + node->n_inputs,
              .bodies = p->bodies[T->node]};
  for (int i = 0; i < node->n_inputs; i++)
    io[i] = node->inputs[i] >= 0 ? r->frame->ptrs[node->inputs[i]] : NULL;
  for (int o = 0; o < node->n_outputs; o++)
    io[node->n_inputs + o] =
        node->outputs[o] >= 0 ? r->frame->ptrs[node->outputs[o]] : NULL;
  double t0 = r->rec ? het_clock_seconds() : 0;
  het_status st;
  if (strcmp(node->op_type, "If") == 0)
    st = het_cf_if(&c);
  else if (strcmp(node->op_type, "Loop") == 0)
    st = het_cf_loop(&c);
  else
    st = het_cf_scan(&c);
  if (st == HET_OK && r->rec)
    r->rec->record(r->rec->ctx, p->node_base + T->node, t0,
                   het_clock_seconds());
  if (io != small)
    free(io);
  return st;
}
