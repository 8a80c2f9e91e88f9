/* gemm_dnnl.c — oneDNN (C API, 2.6) matmul primitives for float32 Gemm
 * whose B is an initializer.  transA/transB become strides, alpha is folded
 * into B when it is reordered (once per cache entry, into the layout the
 * primitive prefers), a constant 1-D C row becomes beta * C as the bias,
 * any other C is broadcast into Y and added by a sum post-op scaled by
 * beta.  Under cpu.precision=bf16 (het_kernel_prep.bf16) A and B are
 * bfloat16 (B converted once, A per call by a reorder into the thread's
 * staging), the sums and Y float32.  Entries are keyed by A's shape,
 * built under the state's mutex and read-only once published;
 * scratchpads are per call, streams per thread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "core/status.h"
#include "kernels/dnnl/dnnl_common.h"
#include "kernels/dnnl/gemm_dnnl.h"
#include "kernels/linalg_kern.h"

#define GEMM_CACHE 8

typedef enum { C_NONE, C_BIAS, C_SUM } c_mode;

typedef struct gemm_entry {
  int64_t a0, a1; /* key: A's dims */
  bool ok;        /* false: oneDNN refused, fall back */
  het_dnnl_prim p; /* p.w: alpha * B in the primitive's layout */
  dnnl_memory_desc_t src_user; /* A as given (bf16: float32, maybe strided) */
  dnnl_primitive_t src_r;      /* bf16: A into p.src_md; else NULL */
  bool w_borrowed; /* p.w belongs to an earlier entry with the same layout */
} gemm_entry;

typedef struct gemm_state {
  pthread_mutex_t mu;
  bool ta, tb;
  bool bf16; /* cpu.precision=bf16 */
  float alpha, beta;
  int64_t k, n;
  c_mode cmode;
  float *bias; /* beta * C, n floats (C_BIAS) */
  int n_entries;
  gemm_entry entries[GEMM_CACHE];
} gemm_state;

/* A [d0, d1] descriptor of type t: the transpose of a row-major [d1, d0]
 * when trans, else row-major or (any) the primitive's choice. */
static bool md2t(dnnl_memory_desc_t *md, int64_t d0, int64_t d1, bool trans,
                 bool any, dnnl_data_type_t t) {
  dnnl_dims_t d = {d0, d1}, st = {1, d0};
  if (trans)
    return dnnl_memory_desc_init_by_strides(md, 2, d, t, st) == dnnl_success;
  return dnnl_memory_desc_init_by_tag(md, 2, d, t,
                                      any ? dnnl_format_tag_any : dnnl_ab) ==
         dnnl_success;
}

static bool md2(dnnl_memory_desc_t *md, int64_t d0, int64_t d1, bool trans,
                bool any) {
  return md2t(md, d0, d1, trans, any, dnnl_f32);
}

/* Reorders user B (alpha applied) into e->p.w_md; reuses an earlier
 * entry's weights when their layouts are equal. */
static bool reorder_weights(gemm_state *s, gemm_entry *e, const float *b) {
  dnnl_memory_desc_t user;
  if (het_dnnl_weights_prepare_preset(&e->p)) { /* a plan's, alpha applied */
    e->w_borrowed = true;
    return true;
  }
  for (int i = 0; i < s->n_entries; i++)
    if (s->entries[i].ok && !s->entries[i].w_borrowed &&
        dnnl_memory_desc_equal(&s->entries[i].p.w_md, &e->p.w_md)) {
      e->p.w = s->entries[i].p.w;
      e->w_borrowed = true;
      return true;
    }
  size_t cnt = (size_t)(s->k * s->n);
  float *scaled = NULL;
  if (s->alpha != 1.0f) {
    scaled = het_dnnl_malloc(cnt * sizeof *scaled);
    if (!scaled)
      return false;
    for (size_t i = 0; i < cnt; i++)
      scaled[i] = s->alpha * b[i];
    b = scaled;
  }
  e->p.w = het_dnnl_alloc(&e->p.w_md);
  bool ok = e->p.w && md2(&user, s->k, s->n, s->tb, false) &&
            het_dnnl_reorder(&user, b, &e->p.w_md, e->p.w);
  free(scaled);
  return ok;
}

static dnnl_primitive_attr_t entry_attr(const gemm_state *s) {
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  dnnl_post_ops_t po = NULL;
  if (!attr)
    return NULL;
  bool ok = true;
  if (s->cmode == C_SUM)
    ok = dnnl_post_ops_create(&po) == dnnl_success &&
         dnnl_post_ops_append_sum(po, s->beta) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  return het_dnnl_attr_finish(attr, po, ok);
}

/* Builds the primitive for A of dims [a0, a1] and reorders B into it. */
static bool entry_create(gemm_state *s, gemm_entry *e, const float *b) {
  int64_t m = s->ta ? e->a1 : e->a0, k = s->ta ? e->a0 : e->a1;
  if (m <= 0 || k != s->k)
    return false;
  dnnl_data_type_t in = s->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t src, dst, wany, bmd;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = entry_attr(s);
  /* bf16: A reordered into a dense bfloat16 copy, so no strides */
  bool ok = attr && md2(&e->src_user, m, k, s->ta, false) &&
            md2t(&src, m, k, s->ta && !s->bf16, false, in) &&
            md2(&dst, m, s->n, false, false) &&
            md2t(&wany, s->k, s->n, false, true, in) &&
            md2(&bmd, 1, s->n, false, false) &&
            dnnl_matmul_desc_init(&md, &src, &wany,
                                  s->cmode == C_BIAS ? &bmd : NULL,
                                  &dst) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &md, attr, het_dnnl_engine(), NULL) ==
                dnnl_success;
  dnnl_primitive_attr_destroy(attr);
  if (!ok)
    return false;
  return het_dnnl_prim_init(&e->p, pd) && reorder_weights(s, e, b) &&
         (!s->bf16 ||
          het_dnnl_reorder_create(&e->src_user, &e->p.src_md, &e->src_r));
}

static void entry_clear(gemm_entry *e) {
  dnnl_primitive_destroy(e->p.prim);
  dnnl_primitive_destroy(e->src_r);
  e->src_r = NULL;
  if (!e->w_borrowed)
    free(e->p.w);
  e->p.prim = NULL;
  e->p.w = NULL;
  e->w_borrowed = false;
  e->p.w_borrowed = false;
  e->ok = false;
}

/* Finds or builds the entry for A's dims: *out, NULL when the cache is
 * full; OUT_OF_MEMORY (nothing cached, a later call tries again) when a
 * build ran out of memory. */
static het_status entry_get(gemm_state *s, int64_t a0, int64_t a1,
                            const float *b, const gemm_entry **out) {
  const gemm_entry *found = NULL;
  het_status st = HET_OK;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->n_entries && !found; i++)
    if (s->entries[i].a0 == a0 && s->entries[i].a1 == a1)
      found = &s->entries[i];
  if (!found && s->n_entries < GEMM_CACHE) {
    gemm_entry *e = &s->entries[s->n_entries];
    memset(e, 0, sizeof *e);
    e->a0 = a0;
    e->a1 = a1;
    het_dnnl_oom_take();
    e->ok = entry_create(s, e, b);
    if (!e->ok)
      entry_clear(e);
    if (!e->ok && het_dnnl_oom_take())
      st = het_error(HET_ERR_OUT_OF_MEMORY,
                     "oneDNN Gemm: out of memory building the primitive");
    else
      found = &s->entries[s->n_entries++];
  }
  pthread_mutex_unlock(&s->mu);
  *out = found;
  return st;
}

static const het_value *node_value(const het_graph *g, const het_node *n,
                                   int i) {
  int id = het_node_input(n, i);
  return id >= 0 ? &g->values[id] : NULL;
}

/* C_BIAS when C is a constant float32 [N] or [1, N] row (N > 1 or N == 1
 * alike), C_SUM for any other C, C_NONE without C or with beta == 0. */
static het_status c_mode_init(gemm_state *s, const het_value *c) {
  if (!c || s->beta == 0.0f)
    return HET_OK;
  const het_tensor *t = c->initializer;
  bool row = t && t->dtype == HET_DTYPE_FLOAT32 &&
             ((t->rank == 1 && t->dims[0] == s->n) ||
              (t->rank == 2 && t->dims[0] == 1 && t->dims[1] == s->n));
  s->cmode = row ? C_BIAS : C_SUM;
  if (!row)
    return HET_OK;
  s->bias = malloc((size_t)s->n * sizeof *s->bias);
  if (!s->bias)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN Gemm: out of memory");
  for (int64_t j = 0; j < s->n; j++)
    s->bias[j] = s->beta * ((const float *)t->data)[j];
  return HET_OK;
}

het_status het_gemm_dnnl_prepare(const het_graph *graph, const het_node *node,
                                 void **state) {
  return het_gemm_dnnl_prepare_with(graph, node, NULL, state);
}

het_status het_gemm_dnnl_prepare_with(const het_graph *graph,
                                      const het_node *node,
                                      const het_kernel_prep *prep,
                                      void **state) {
  *state = NULL;
  const het_value *a = node_value(graph, node, 0);
  const het_value *b = node_value(graph, node, 1);
  const het_value *c = node->n_inputs > 2 ? node_value(graph, node, 2) : NULL;
  const het_tensor *w = b ? b->initializer : NULL;
  if (!het_dnnl_engine() || !a || a->dtype != HET_DTYPE_FLOAT32 || !w ||
      w->dtype != HET_DTYPE_FLOAT32 || w->rank != 2 ||
      het_tensor_count(w) == 0 || (c && c->dtype != HET_DTYPE_FLOAT32))
    return HET_OK;
  gemm_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN Gemm: out of memory");
  s->bf16 = prep && prep->bf16;
  s->ta = het_node_attr_int(node, "transA", 0) != 0;
  s->tb = het_node_attr_int(node, "transB", 0) != 0;
  s->alpha = het_node_attr_float(node, "alpha", 1.0f);
  s->beta = het_node_attr_float(node, "beta", 1.0f);
  s->k = w->dims[s->tb ? 1 : 0];
  s->n = w->dims[s->tb ? 0 : 1];
  pthread_mutex_init(&s->mu, NULL);
  het_status st = c_mode_init(s, c);
  if (st != HET_OK) {
    het_gemm_dnnl_destroy(s);
    return st;
  }
  const gemm_entry *e;
  if (a->shape.rank == 2 && het_shape_is_concrete(&a->shape) &&
      (st = entry_get(s, a->shape.dims[0].value, a->shape.dims[1].value,
                      w->data, &e)) != HET_OK) {
    het_gemm_dnnl_destroy(s);
    return het_node_error(node, st, "%s", het_last_error());
  }
  *state = s;
  return HET_OK;
}

void het_gemm_dnnl_weights(const void *state, het_kernel_weight_fn fn,
                           void *ctx) {
  gemm_state *s = (gemm_state *)state;
  if (!s)
    return;
  pthread_mutex_lock(&s->mu); /* runs may add entries meanwhile */
  for (int i = 0; i < s->n_entries; i++)
    if (s->entries[i].ok && !(s->entries[i].w_borrowed &&
                              !s->entries[i].p.w_borrowed))
      het_dnnl_prim_weights(&s->entries[i].p, fn, ctx);
  pthread_mutex_unlock(&s->mu);
}

void het_gemm_dnnl_destroy(void *state) {
  gemm_state *s = state;
  if (!s)
    return;
  for (int i = s->n_entries - 1; i >= 0; i--) /* borrowers first */
    entry_clear(&s->entries[i]);
  pthread_mutex_destroy(&s->mu);
  free(s->bias);
  free(s);
}

/* Broadcasts float32 C (rank <= 2, unidirectional to [m, n]) into y;
 * false when C's shape does not broadcast. */
static bool fill_c(const het_tensor *c, float *y, int64_t m, int64_t n) {
  if (c->rank > 2)
    return false;
  int64_t cm = c->rank == 2 ? c->dims[0] : 1;
  int64_t cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
  if ((cm != 1 && cm != m) || (cn != 1 && cn != n))
    return false;
  const float *cd = c->data;
  for (int64_t i = 0; i < m; i++) {
    const float *row = cd + (cm == 1 ? 0 : i) * cn;
    float *yr = y + i * n;
    if (cn == 1)
      for (int64_t j = 0; j < n; j++)
        yr[j] = row[0];
    else
      memcpy(yr, row, (size_t)n * sizeof *yr);
  }
  return true;
}

het_status het_gemm_dnnl_run(het_kernel_ctx *ctx, bool *done) {
  gemm_state *s = ctx->state;
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const het_tensor *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  *done = false;
  if (a->dtype != HET_DTYPE_FLOAT32 || b->dtype != HET_DTYPE_FLOAT32 ||
      y->dtype != HET_DTYPE_FLOAT32 || a->rank != 2 || y->rank != 2 ||
      het_tensor_count(y) == 0 ||
      (s->cmode == C_SUM && (!c || het_tensor_count(c) == 0 ||
                             c->dtype != HET_DTYPE_FLOAT32)))
    return HET_OK;
  const gemm_entry *e;
  het_status st = entry_get(s, a->dims[0], a->dims[1], b->data, &e);
  if (st != HET_OK)
    return het_lk_fail(ctx, st, "%s", het_last_error());
  if (!e || !e->ok || dnnl_memory_desc_get_size(&e->p.dst_md) != y->nbytes)
    return HET_OK;
  if (s->cmode == C_SUM && !fill_c(c, y->data, y->dims[0], y->dims[1]))
    return HET_OK;
  void *as;
  st = het_dnnl_stage_src(e->src_r, &e->src_user, a->data, &e->p.src_md,
                          &as);
  if (st != HET_OK)
    return het_lk_fail(ctx, st, "%s", het_last_error());
  if (!het_dnnl_prim_execute(&e->p, as, s->cmode == C_BIAS ? s->bias : NULL,
                             y->data))
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN matmul failed");
  *done = true;
  return HET_OK;
}
