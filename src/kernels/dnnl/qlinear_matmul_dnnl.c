/* qlinear_matmul_dnnl.c — oneDNN (C API, 2.6) int8 matmul for QLinearMatMul
 * nodes whose B is a 2-D int8 initializer with all-zero zero points and a
 * per-tensor or per-column scale, A uint8 or int8 with a constant scalar
 * scale and zero point, Y uint8 or int8 (constant scalar scale and zero
 * point).  A's leading dims fold into M (A and Y stay row-major, nothing
 * is staged); a_scale * b_scale[n] / y_scale is a oneDNN output scale,
 * a's zero point a oneDNN source zero point and y's is added after an
 * eltwise_round post-op, so results are bit-exact against the reference
 * (linalg_qlinear.c) while |acc| < 2^24 (qlinear_dnnl.c says why).
 * Primitives are cached per M under the state's mutex and read-only once
 * published; B is reordered once per entry.  Anything else (per-row A
 * scales, batched B, a ninth M) runs the reference.
 * MatMulInteger (what DynamicQuantizeLinear feeds in dynamically quantized
 * models) uses the same entries with an s32 result and no attributes: A's
 * zero point, known only at run time, comes off afterwards as
 * a_zp * (column sum of B), exact in int32 like the reference's sum of
 * (a - a_zp) * b.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "core/dtype.h"
#include "core/status.h"
#include "kernels/dnnl/dnnl_common.h"
#include "kernels/dnnl/qlinear_common.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_kern.h"

#define QMM_CACHE 8

/* QLinearMatMul's inputs. */
enum { IN_A, IN_AS, IN_AZ, IN_B, IN_BS, IN_BZ, IN_YS, IN_YZ };

typedef struct qmm_entry {
  int64_t m;       /* key: rows of A with its leading dims folded */
  bool ok;         /* false: oneDNN refused, run the reference */
  het_dnnl_prim p; /* p.w: B in the primitive's layout, owned or a
                      plan's (w_borrowed) */
} qmm_entry;

/* Invariant: scales holds n_scales (1 or n) finite values, fixed after
 * prepare; B is k x n. */
typedef struct qmm_state {
  bool integer;     /* MatMulInteger: Y int32, no requantization */
  int32_t *colsum;  /* MatMulInteger: column sums of B (n) */
  het_dtype at, yt; /* UINT8 or INT8 (INT32 for MatMulInteger) */
  int32_t azp, yzp;
  int64_t k, n;
  int n_scales;
  float *scales; /* a_scale * b_scale[j] / y_scale */
  pthread_mutex_t mu;
  int n_entries;
  qmm_entry entries[QMM_CACHE];
} qmm_state;

static bool scalar_f32(const het_tensor *t) {
  return t && t->dtype == HET_DTYPE_FLOAT32 && het_tensor_count(t) == 1;
}

/* Fills s from node's constant inputs; false (nothing allocated) when
 * oneDNN does not run the node. */
static bool qmm_read(const het_graph *g, const het_node *node, qmm_state *s) {
  int a = het_node_input(node, IN_A);
  const het_tensor *b = het_dnnl_q8_init(g, node, IN_B);
  const het_tensor *as = het_dnnl_q8_init(g, node, IN_AS);
  const het_tensor *bs = het_dnnl_q8_init(g, node, IN_BS);
  const het_tensor *ys = het_dnnl_q8_init(g, node, IN_YS);
  if (a < 0 || node->n_outputs < 1 || node->outputs[0] < 0 || !b ||
      b->dtype != HET_DTYPE_INT8 || b->rank != 2)
    return false;
  s->at = g->values[a].dtype;
  s->yt = g->values[node->outputs[0]].dtype;
  s->k = b->dims[0];
  s->n = b->dims[1];
  int64_t nbs = bs ? het_tensor_count(bs) : 0;
  if (!het_dnnl_q8_type(s->at) || !het_dnnl_q8_type(s->yt) || s->k < 1 ||
      s->n < 1 || !het_dnnl_q8_zp(g, node, IN_AZ, s->at, &s->azp) ||
      !het_dnnl_q8_zp(g, node, IN_YZ, s->yt, &s->yzp) || !scalar_f32(as) ||
      !scalar_f32(ys) || !bs || bs->dtype != HET_DTYPE_FLOAT32 ||
      (nbs != 1 && nbs != s->n) || !het_dnnl_q8_zp_zero(g, node, IN_BZ, s->n))
    return false;
  s->n_scales = (int)nbs;
  s->scales = het_dnnl_malloc(sizeof(float) * (size_t)nbs);
  bool ok = s->scales != NULL;
  /* the reference's multiplier, operation for operation */
  float fa = ((const float *)as->data)[0], fy = ((const float *)ys->data)[0];
  for (int j = 0; ok && j < s->n_scales; j++) {
    s->scales[j] = fa * ((const float *)bs->data)[j] / fy;
    ok = isfinite(s->scales[j]);
  }
  if (!ok) {
    free(s->scales);
    s->scales = NULL;
  }
  return ok;
}

static bool md2(dnnl_memory_desc_t *md, int64_t d0, int64_t d1,
                dnnl_data_type_t dt, dnnl_format_tag_t tag) {
  dnnl_dims_t d = {d0, d1};
  return dnnl_memory_desc_init_by_tag(md, 2, d, dt, tag) == dnnl_success;
}

/* Builds e (rows e->m) and reorders B into its layout. */
static bool entry_create(const qmm_state *s, const het_tensor *b,
                         qmm_entry *e) {
  dnnl_memory_desc_t src, w, dst, wuser;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr =
      s->integer ? het_dnnl_scratch_attr()
                 : het_dnnl_q8_attr(s->n_scales, s->scales, s->azp, s->yzp);
  dnnl_data_type_t ydt = s->integer ? dnnl_s32 : het_dnnl_q8_dt(s->yt);
  bool ok = attr && md2(&src, e->m, s->k, het_dnnl_q8_dt(s->at), dnnl_ab) &&
            md2(&w, s->k, s->n, dnnl_s8, dnnl_format_tag_any) &&
            md2(&wuser, s->k, s->n, dnnl_s8, dnnl_ab) &&
            md2(&dst, e->m, s->n, ydt, dnnl_ab) &&
            dnnl_matmul_desc_init(&md, &src, &w, NULL, &dst) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &md, attr, het_dnnl_engine(),
                                       NULL) == dnnl_success;
  dnnl_primitive_attr_destroy(attr);
  if (!ok || !het_dnnl_q8_impl(pd)) {
    dnnl_primitive_desc_destroy(pd);
    return false;
  }
  if (!het_dnnl_prim_init(&e->p, pd))
    return false;
  return het_dnnl_weights_prepare(&e->p, &wuser, b->data);
}

static void entry_clear(qmm_entry *e) {
  dnnl_primitive_destroy(e->p.prim);
  het_dnnl_weights_free(&e->p);
  memset(e, 0, sizeof *e);
}

/* Finds or builds the entry for m rows: *out, NULL when the cache is
 * full; OUT_OF_MEMORY (nothing cached) when the build ran out of memory. */
static het_status entry_get(qmm_state *s, const het_node *node, int64_t m,
                            const het_tensor *b, const qmm_entry **out) {
  const qmm_entry *found = NULL;
  het_status st = HET_OK;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->n_entries && !found; i++)
    if (s->entries[i].m == m)
      found = &s->entries[i];
  if (!found && s->n_entries < QMM_CACHE) {
    qmm_entry *e = &s->entries[s->n_entries];
    memset(e, 0, sizeof *e);
    e->m = m;
    het_dnnl_oom_take();
    e->ok = entry_create(s, b, e);
    bool oom = het_dnnl_oom_take();
    if (!e->ok || oom)
      entry_clear(e);
    e->m = m;
    if (oom)
      st = het_node_error(node, HET_ERR_OUT_OF_MEMORY,
                          "oneDNN int8: out of memory building the primitive");
    else
      found = &s->entries[s->n_entries++];
  }
  pthread_mutex_unlock(&s->mu);
  *out = found;
  return st;
}

/* Rows of A (dims ad, rank ar) with its leading dims folded; -1 when A's
 * last dim is not k. */
static int64_t folded_rows(const int64_t *ad, int ar, int64_t k) {
  if (ar < 1 || ad[ar - 1] != k)
    return -1;
  return het_dims_count(ad, ar - 1);
}

void het_dnnl_qmatmul_destroy(void *state) {
  qmm_state *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->n_entries; i++)
    entry_clear(&s->entries[i]);
  free(s->scales);
  free(s->colsum);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

static het_status qmm_start(const het_graph *graph, const het_node *node,
                            int b_in, qmm_state *s, void **state);

het_status het_dnnl_qmatmul_prepare(const het_graph *graph,
                                    const het_node *node, void **state) {
  *state = NULL;
  if (!het_dnnl_q8_usable())
    return HET_OK;
  qmm_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "node '%s': oneDNN state: out of memory", node->name);
  het_dnnl_oom_take();
  if (!qmm_read(graph, node, s)) {
    free(s);
    return het_dnnl_oom_take()
               ? het_node_error(node, HET_ERR_OUT_OF_MEMORY,
                                "oneDNN state: out of memory")
               : HET_OK; /* the reference runs it */
  }
  return qmm_start(graph, node, IN_B, s, state);
}

/* Publishes s as *state and builds the entry for A's declared shape (B:
 * input b_in); on an error s is destroyed and *state NULL. */
static het_status qmm_start(const het_graph *graph, const het_node *node,
                            int b_in, qmm_state *s, void **state) {
  pthread_mutex_init(&s->mu, NULL);
  const het_shape *as = &graph->values[het_node_input(node, IN_A)].shape;
  if (as->rank > 0 && het_shape_is_concrete(as)) {
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < as->rank; i++)
      dims[i] = as->dims[i].value;
    int64_t m = folded_rows(dims, as->rank, s->k);
    const qmm_entry *e;
    het_status st = m > 0 ? entry_get(s, node, m,
                                      het_dnnl_q8_init(graph, node, b_in), &e)
                          : HET_OK;
    if (st != HET_OK) {
      het_dnnl_qmatmul_destroy(s);
      return st;
    }
  }
  *state = s;
  return HET_OK;
}

void het_dnnl_qmatmul_state_weights(const void *state,
                                    het_kernel_weight_fn fn, void *ctx) {
  qmm_state *s = (qmm_state *)state;
  if (!s)
    return;
  pthread_mutex_lock(&s->mu); /* runs may add entries meanwhile */
  for (int i = 0; i < s->n; i++)
    if (s->entries[i].ok)
      het_dnnl_prim_weights(&s->entries[i].p, fn, ctx);
  pthread_mutex_unlock(&s->mu);
}

const char *het_dnnl_qmatmul_impl(const void *state) {
  const qmm_state *s = state;
  const_dnnl_primitive_desc_t pd = NULL;
  if (!s || s->n_entries == 0 || !s->entries[0].ok ||
      dnnl_primitive_get_primitive_desc(s->entries[0].p.prim, &pd) !=
          dnnl_success)
    return NULL;
  return het_dnnl_q8_impl(pd);
}

/* Runs s's primitive for A's rows on a, b, y; *m = those rows, *done =
 * false (HET_OK) when the tensors are not what s was prepared for, the
 * cache is full or oneDNN refused: the reference runs them. */
static het_status qmm_execute(het_kernel_ctx *ctx, qmm_state *s,
                              const het_tensor *a, const het_tensor *b,
                              het_tensor *y, int64_t *m, bool *done) {
  *done = false;
  if (!a || !b || !y || a->dtype != s->at || y->dtype != s->yt ||
      b->dtype != HET_DTYPE_INT8 || b->rank != 2 || b->dims[0] != s->k ||
      b->dims[1] != s->n)
    return HET_OK;
  *m = folded_rows(a->dims, a->rank, s->k);
  if (*m <= 0 ||
      (size_t)(*m * s->n) * het_dtype_size(s->yt) != y->nbytes)
    return HET_OK;
  const qmm_entry *e;
  HET_TRY(entry_get(s, ctx->node, *m, b, &e));
  if (!e || !e->ok)
    return HET_OK;
  if (!het_dnnl_prim_execute(&e->p, a->data, NULL, y->data))
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
  *done = true;
  return HET_OK;
}

het_status het_dnnl_qmatmul_run(het_kernel_ctx *ctx, bool *done) {
  qmm_state *s = ctx->state;
  int64_t m;
  *done = false;
  if (!s || s->integer)
    return HET_OK;
  return qmm_execute(ctx, s, ctx->inputs[IN_A], ctx->inputs[IN_B],
                     ctx->outputs[0], &m, done);
}

/* MatMulInteger's inputs. */
enum { MI_A, MI_B, MI_AZ, MI_BZ };

het_status het_dnnl_mmint_prepare(const het_graph *graph, const het_node *node,
                                  void **state) {
  *state = NULL;
  int a = het_node_input(node, MI_A);
  const het_tensor *b = het_dnnl_q8_init(graph, node, MI_B);
  if (!het_dnnl_q8_usable() || a < 0 || !b || b->dtype != HET_DTYPE_INT8 ||
      b->rank != 2 || b->dims[0] < 1 || b->dims[1] < 1 ||
      !het_dnnl_q8_type(graph->values[a].dtype) ||
      !het_dnnl_q8_zp_zero(graph, node, MI_BZ, b->dims[1]))
    return HET_OK; /* the reference runs it */
  qmm_state *s = calloc(1, sizeof *s);
  int32_t *colsum = calloc((size_t)b->dims[1], sizeof *colsum);
  if (!s || !colsum) {
    free(s);
    free(colsum);
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "node '%s': oneDNN state: out of memory", node->name);
  }
  s->integer = true;
  s->colsum = colsum;
  s->at = graph->values[a].dtype;
  s->yt = HET_DTYPE_INT32;
  s->k = b->dims[0];
  s->n = b->dims[1];
  const int8_t *bd = b->data;
  for (int64_t r = 0; r < s->k; r++)
    for (int64_t j = 0; j < s->n; j++)
      colsum[j] += bd[r * s->n + j];
  return qmm_start(graph, node, MI_B, s, state);
}

het_status het_dnnl_mmint_run(het_kernel_ctx *ctx, bool *done) {
  qmm_state *s = ctx->state;
  const het_tensor *az = ctx->n_inputs > MI_AZ ? ctx->inputs[MI_AZ] : NULL;
  het_tensor *y = ctx->outputs[0];
  int64_t m;
  *done = false;
  if (!s || !s->integer ||
      (az && (het_tensor_count(az) != 1 || az->dtype != s->at)))
    return HET_OK; /* a per-row zero point: the reference */
  HET_TRY(qmm_execute(ctx, s, ctx->inputs[MI_A], ctx->inputs[MI_B], y, &m,
                      done));
  if (!*done)
    return HET_OK;
  int32_t azp = az ? (int32_t)het_dtype_load_i64(az->dtype, az->data, 0) : 0;
  if (azp != 0) {
    int32_t *yd = y->data;
    for (int64_t r = 0; r < m; r++)
      for (int64_t j = 0; j < s->n; j++)
        yd[r * s->n + j] = (int32_t)((uint32_t)yd[r * s->n + j] -
                                     (uint32_t)azp * (uint32_t)s->colsum[j]);
  }
  return HET_OK;
}
