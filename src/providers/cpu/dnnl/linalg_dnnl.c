/* linalg_dnnl.c — oneDNN (C API, 2.6) primitives for float32 Conv and
 * MatMul whose weights are initializers.  Each node keeps a small cache of
 * primitives keyed by the input shape, filled in prepare() when the shape
 * is static and lazily in run() otherwise, under the state's mutex; the
 * weights are reordered once per entry.  Conv reads plain NCHW X and lets
 * oneDNN pick Y's layout (reordered back to plain per call when it is not
 * plain); depthwise Conv is left to linalg_conv_dw.c.  Entries are
 * read-only once published; scratchpads are per call (user scratchpad
 * mode), so runs on several threads at once are safe.  Anything oneDNN
 * refuses falls back.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "core/status.h"
#include "providers/cpu/dnnl/dnnl_common.h"
#include "providers/cpu/kernels/linalg_conv_dw.h"
#include "providers/cpu/kernels/linalg_dnnl_api.h"
#include "providers/cpu/kernels/linalg_kern.h"

#define DNNL_CACHE 8

typedef enum { KIND_CONV, KIND_MATMUL } dnnl_kind;

typedef struct dnnl_entry {
  int key_rank;
  int64_t key[HET_MAX_RANK];
  bool ok;                   /* false: oneDNN refused, fall back */
  het_dnnl_prim p;           /* w owned by the entry */
  /* Conv with src/dst layouts chosen by oneDNN: reorders from the plain
   * user X and into the plain user Y (NULL when the layout is plain). */
  dnnl_memory_desc_t src_user, dst_user;
  dnnl_primitive_t src_r, dst_r;
} dnnl_entry;

typedef struct het_dnnl_state {
  dnnl_kind kind;
  pthread_mutex_t mu;
  int n;
  dnnl_entry entries[DNNL_CACHE];
} het_dnnl_state;

static dnnl_format_tag_t plain_tag(int ndims) {
  static const dnnl_format_tag_t tags[] = {dnnl_a, dnnl_ab, dnnl_abc,
                                           dnnl_abcd, dnnl_abcde,
                                           dnnl_abcdef};
  return tags[ndims - 1];
}

static bool plain_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                     bool any) {
  dnnl_dims_t d;
  for (int i = 0; i < nd; i++)
    d[i] = dims[i];
  return dnnl_memory_desc_init_by_tag(md, nd, d, dnnl_f32,
                                      any ? dnnl_format_tag_any
                                          : plain_tag(nd)) == dnnl_success;
}

/* Builds the entry's primitive from pd (destroyed) and reorders the
 * weights from their user layout into the primitive's. */
static bool entry_finish(dnnl_entry *e, dnnl_primitive_desc_t pd,
                         const dnnl_memory_desc_t *w_user, const void *w) {
  if (!het_dnnl_prim_init(&e->p, pd))
    return false;
  e->p.w = het_dnnl_alloc(&e->p.w_md);
  return e->p.w && het_dnnl_reorder(w_user, w, &e->p.w_md, e->p.w);
}

/* Layouts oneDNN picks itself for Conv: dst always (the stem conv then
 * runs a direct kernel on plain src); src too when this is 1. */
#define DNNL_CONV_SRC_ANY 0

/* *r = reorder from -> to, or NULL when the layouts already agree. */
static bool boundary_reorder(const dnnl_memory_desc_t *from,
                             const dnnl_memory_desc_t *to,
                             dnnl_primitive_t *r) {
  dnnl_primitive_desc_t rpd = NULL;
  *r = NULL;
  if (dnnl_memory_desc_equal(from, to))
    return true;
  dnnl_engine_t eng = het_dnnl_engine();
  bool ok = dnnl_reorder_primitive_desc_create(&rpd, from, eng, to, eng,
                                               NULL) ==
                dnnl_success &&
            dnnl_primitive_create(r, rpd) == dnnl_success;
  dnnl_primitive_desc_destroy(rpd);
  return ok;
}

static bool conv_entry_create(const het_node *node, const int64_t *xd, int xr,
                              const het_tensor *w, bool bias, dnnl_entry *e) {
  het_conv_geom g;
  if (xr < 3 || w->rank != xr ||
      het_conv_geom_init(node, HET_GEOM_CONV, xr - 2, xd + 2, w->dims + 2,
                         &g) != HET_OK) {
    het_error_clear();
    return false;
  }
  int64_t group = het_node_attr_int(node, "group", 1), m = w->dims[0];
  int64_t ydims[HET_MAX_RANK], wdims[HET_MAX_RANK + 1];
  dnnl_dims_t st, dil, pl, pr;
  ydims[0] = xd[0];
  ydims[1] = m;
  for (int i = 0; i < g.nsp; i++) {
    ydims[2 + i] = g.out[i];
    st[i] = g.stride[i];
    dil[i] = g.dil[i] - 1;
    pl[i] = g.pad_b[i];
    pr[i] = g.pad_e[i];
  }
  int wr = group > 1 ? xr + 1 : xr, off = group > 1 ? 1 : 0;
  wdims[0] = group;
  for (int i = 0; i < xr; i++)
    wdims[off + i] = w->dims[i];
  wdims[off] = m / group;
  dnnl_memory_desc_t src, dst, wany, wuser, b;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  bool ok = attr && xd[1] == w->dims[1] * group && m % group == 0 &&
            plain_md(&src, xr, xd, DNNL_CONV_SRC_ANY) &&
            plain_md(&dst, xr, ydims, true) &&
            plain_md(&e->src_user, xr, xd, false) &&
            plain_md(&e->dst_user, xr, ydims, false) &&
            plain_md(&wany, wr, wdims, true) &&
            plain_md(&wuser, wr, wdims, false) && plain_md(&b, 1, &m, false) &&
            dnnl_dilated_convolution_forward_desc_init(
                &cd, dnnl_forward_inference, dnnl_convolution_direct, &src,
                &wany, bias ? &b : NULL, &dst, st, dil, pl, pr) ==
                dnnl_success &&
            dnnl_primitive_desc_create(&pd, &cd, attr, het_dnnl_engine(), NULL) ==
                dnnl_success;
  dnnl_primitive_attr_destroy(attr);
  return ok && entry_finish(e, pd, &wuser, w->data) &&
         boundary_reorder(&e->src_user, &e->p.src_md, &e->src_r) &&
         boundary_reorder(&e->p.dst_md, &e->dst_user, &e->dst_r);
}

/* MatMul with 2-D constant B: A's leading dims fold into M. */
static bool matmul_entry_create(const int64_t *xd, int xr,
                                const het_tensor *w, dnnl_entry *e) {
  if (xr < 2 || w->rank != 2 || xd[xr - 1] != w->dims[0])
    return false;
  int64_t m = het_dims_count(xd, xr - 1);
  int64_t a[2] = {m, xd[xr - 1]}, y[2] = {m, w->dims[1]};
  dnnl_memory_desc_t src, dst, wany, wuser;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  bool ok = attr && m > 0 && plain_md(&src, 2, a, false) &&
            plain_md(&dst, 2, y, false) && plain_md(&wany, 2, w->dims, true) &&
            plain_md(&wuser, 2, w->dims, false) &&
            dnnl_matmul_desc_init(&md, &src, &wany, NULL, &dst) ==
                dnnl_success &&
            dnnl_primitive_desc_create(&pd, &md, attr, het_dnnl_engine(), NULL) ==
                dnnl_success;
  dnnl_primitive_attr_destroy(attr);
  return ok && entry_finish(e, pd, &wuser, w->data);
}

static void entry_clear(dnnl_entry *e) {
  dnnl_primitive_destroy(e->p.prim);
  dnnl_primitive_destroy(e->src_r);
  dnnl_primitive_destroy(e->dst_r);
  free(e->p.w);
  memset(e, 0, sizeof *e);
}

/* Finds or builds the entry for x's shape; NULL when the cache is full. */
static const dnnl_entry *entry_get(het_dnnl_state *s, const het_node *node,
                                   const int64_t *xd, int xr,
                                   const het_tensor *w, bool bias) {
  const dnnl_entry *found = NULL;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->n && !found; i++)
    if (s->entries[i].key_rank == xr &&
        memcmp(s->entries[i].key, xd, sizeof(int64_t) * (size_t)xr) == 0)
      found = &s->entries[i];
  if (!found && s->n < DNNL_CACHE) {
    dnnl_entry *e = &s->entries[s->n];
    memset(e, 0, sizeof *e);
    e->key_rank = xr;
    memcpy(e->key, xd, sizeof(int64_t) * (size_t)xr);
    e->ok = s->kind == KIND_CONV ? conv_entry_create(node, xd, xr, w, bias, e)
                                 : matmul_entry_create(xd, xr, w, e);
    if (!e->ok) {
      entry_clear(e);
      e->key_rank = xr;
      memcpy(e->key, xd, sizeof(int64_t) * (size_t)xr);
    }
    found = &s->entries[s->n++];
  }
  pthread_mutex_unlock(&s->mu);
  return found;
}

static const het_tensor *node_init(const het_graph *g, const het_node *n,
                                   int i) {
  int id = het_node_input(n, i);
  return id >= 0 ? g->values[id].initializer : NULL;
}

static het_status state_create(dnnl_kind kind, void **out) {
  het_dnnl_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN state: out of memory");
  s->kind = kind;
  pthread_mutex_init(&s->mu, NULL);
  *out = s;
  return HET_OK;
}

/* Shared prepare: oneDNN only for float32 X with float32 constant W (and
 * B when present); primitives built now when X's shape is static. */
static het_status dnnl_prepare(const het_graph *graph, const het_node *node,
                               dnnl_kind kind, void **state) {
  *state = NULL;
  int xid = het_node_input(node, 0);
  const het_tensor *w = node_init(graph, node, 1);
  bool has_b = kind == KIND_CONV && het_node_input(node, 2) >= 0;
  const het_tensor *b = has_b ? node_init(graph, node, 2) : NULL;
  if (!het_dnnl_engine() || xid < 0 || graph->values[xid].dtype != HET_DTYPE_FLOAT32 ||
      !w || w->dtype != HET_DTYPE_FLOAT32 || (has_b && !b) ||
      (b && b->dtype != HET_DTYPE_FLOAT32))
    return HET_OK;
  if (kind == KIND_CONV &&
      het_lk_conv_is_dw(het_node_attr_int(node, "group", 1), w->rank,
                        w->dims))
    return HET_OK; /* the direct depthwise kernel is faster */
  HET_TRY(state_create(kind, state));
  const het_shape *xs = &graph->values[xid].shape;
  if (xs->rank > 0 && het_shape_is_concrete(xs)) {
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
      dims[i] = xs->dims[i].value;
    entry_get(*state, node, dims, xs->rank, w, has_b);
  }
  return HET_OK;
}

het_status het_dnnl_conv_prepare(const het_graph *graph, const het_node *node,
                                 void **state) {
  return dnnl_prepare(graph, node, KIND_CONV, state);
}

het_status het_dnnl_matmul_prepare(const het_graph *graph,
                                   const het_node *node, void **state) {
  return dnnl_prepare(graph, node, KIND_MATMUL, state);
}

void het_dnnl_state_destroy(void *state) {
  het_dnnl_state *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->n; i++)
    entry_clear(&s->entries[i]);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* Executes e on plain user x/b/y, through per-call buffers in the
 * primitive's src/dst layouts where those are not plain. */
static bool entry_execute(const dnnl_entry *e, void *x, void *b, void *y) {
  void *xs = e->src_r ? het_dnnl_alloc(&e->p.src_md) : x;
  void *ys = e->dst_r ? het_dnnl_alloc(&e->p.dst_md) : y;
  bool ok = xs && ys &&
            (!e->src_r || het_dnnl_reorder_run(e->src_r, &e->src_user, x,
                                               &e->p.src_md, xs)) &&
            het_dnnl_prim_execute(&e->p, xs, b, ys) &&
            (!e->dst_r || het_dnnl_reorder_run(e->dst_r, &e->p.dst_md, ys,
                                               &e->dst_user, y));
  if (xs != x)
    free(xs);
  if (ys != y)
    free(ys);
  return ok;
}

static het_status dnnl_run(het_cpu_kernel_ctx *ctx, bool *done) {
  het_dnnl_state *s = ctx->state;
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b =
      s->kind == KIND_CONV && ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  *done = false;
  if (x->dtype != HET_DTYPE_FLOAT32 || w->dtype != HET_DTYPE_FLOAT32 ||
      het_tensor_count(y) == 0)
    return HET_OK;
  const dnnl_entry *e = entry_get(s, ctx->node, x->dims, x->rank, w, b != NULL);
  if (!e || !e->ok ||
      dnnl_memory_desc_get_size(e->dst_user.ndims ? &e->dst_user
                                                  : &e->p.dst_md) != y->nbytes)
    return HET_OK;
  if (!entry_execute(e, x->data, b ? b->data : NULL, y->data))
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
  *done = true;
  return HET_OK;
}

het_status het_dnnl_conv_run(het_cpu_kernel_ctx *ctx, bool *done) {
  return dnnl_run(ctx, done);
}

het_status het_dnnl_matmul_run(het_cpu_kernel_ctx *ctx, bool *done) {
  return dnnl_run(ctx, done);
}
