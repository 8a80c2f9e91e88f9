/* nlp_attention.c — the CPU kernel of hetrt.Attention:
 * Y = softmax(scale * Q @ KT [+ mask], last axis) @ V per batch entry.
 * layout 0: Q [..,S,D], KT [..,D,T], V [..,T,E], Y [..,S,E] (same leading
 * dims).  layout 1 (rank 3, torch's multi-head export with its transposes
 * absorbed): Q [S,B,D], K [T,B,D] (not transposed), V [T,B,E], Y [S,B,E].
 * With qkv = {q offset, k offset, v offset, L, B, D, E} (layout 1), Q, K
 * and V are all one packed projection P [.., L] (read from input 0): row s
 * of head b of Q is P[s * L + q offset + b * D ..], likewise K and V.
 * The mask (float32) broadcasts to the [..,S,T] scores either way.  Each
 * batch entry is two strided GEMMs (oneDNN's sgemm when built: far faster
 * than OpenBLAS at these sizes) around an in-place softmax of an S x T
 * scratch; entries are spread over the provider's thread pool (each pool
 * thread then runs oneDNN on one OpenMP thread).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernels/nlp_kernels.h"
#include "kernels/parallel.h"
#include "kernels/sgemm.h"

typedef struct nlp_attn_job {
  const float *q, *k, *v, *mask;
  float *y;
  int64_t s, d, t, e;   /* Q rows, head dim, keys, V cols */
  /* Batch entry b's matrices: X + b * xb, rows xl floats apart; K is
   * stored [T, D] (transposed) when kt is 'T'. */
  int64_t qb, ql, kb, kl, vb, vl, yb, yl;
  char kt;
  int rank;             /* rank of Q (>= 2) */
  int64_t bdims[HET_MAX_RANK]; /* Q's leading dims (rank - 2) */
  int64_t mstride[HET_MAX_RANK]; /* mask strides over [.., S, T], 0 = bcast */
  float scale;
  bool pooled;          /* chunks run on several pool threads */
  float *scores;        /* batch score matrices from the run's scratch, or
                           NULL: each chunk allocates one */
  atomic_int failed;
} nlp_attn_job;

/* Offset of mask row (batch b, row i). */
static int64_t nlp_mask_offset(const nlp_attn_job *j, int64_t b, int64_t i) {
  int64_t off = i * j->mstride[j->rank - 2];
  for (int d = j->rank - 3; d >= 0; d--) {
    off += (b % j->bdims[d]) * j->mstride[d];
    b /= j->bdims[d];
  }
  return off;
}

static void nlp_attn_mask(const nlp_attn_job *j, int64_t b, float *sc) {
  int64_t ct = j->mstride[j->rank - 1];
  for (int64_t i = 0; i < j->s; i++) {
    const float *m = j->mask + nlp_mask_offset(j, b, i);
    float *row = sc + i * j->t;
    for (int64_t c = 0; c < j->t; c++)
      row[c] += m[c * ct];
  }
}

static void nlp_attn_chunk(void *p, int64_t b0, int64_t b1) {
  nlp_attn_job *j = p;
  float *sc = j->scores ? j->scores + b0 * j->s * j->t
                        : malloc(sizeof(float) * (size_t)(j->s * j->t));
  if (!sc) {
    atomic_store(&j->failed, 1);
    return;
  }
  if (j->pooled)
    het_kernel_set_omp_threads(1);
  for (int64_t b = b0; b < b1; b++) {
    het_kernel_sgemm(j->kt, j->s, j->t, j->d, j->scale, j->q + b * j->qb,
                     j->ql, j->k + b * j->kb, j->kl, sc, j->t);
    if (j->mask)
      nlp_attn_mask(j, b, sc);
    het_nlp_softmax_rows(sc, j->s, j->t);
    het_kernel_sgemm('N', j->s, j->e, j->t, 1.0f, sc, j->t, j->v + b * j->vb,
                     j->vl, j->y + b * j->yb, j->yl);
  }
  if (!j->scores)
    free(sc);
}

/* Broadcast strides of mask m over the [.., S, T] scores. */
static het_status nlp_attn_mask_strides(const het_kernel_ctx *ctx,
                                        const het_tensor *m,
                                        const int64_t *sdims, int r,
                                        int64_t *stride) {
  if (m->rank > r)
    return het_kernel_fail(ctx, HET_ERR_SHAPE, "mask rank exceeds Q's");
  int64_t st = 1;
  for (int d = r - 1; d >= 0; d--) {
    int md = d - (r - m->rank);
    int64_t n = md >= 0 ? m->dims[md] : 1;
    if (n != 1 && n != sdims[d])
      return het_kernel_fail(ctx, HET_ERR_SHAPE,
                                 "mask dim %d (%lld) does not broadcast to %lld",
                                 md, (long long)n, (long long)sdims[d]);
    stride[d] = n == 1 ? 0 : st;
    st *= n;
  }
  return HET_OK;
}

/* layout 0: fills j's sizes and strides from Q, KT, V; fails unless they
 * line up exactly. */
static het_status nlp_attn_shapes(const het_kernel_ctx *ctx,
                                  nlp_attn_job *j, int64_t *batch) {
  const het_tensor *q = ctx->inputs[0], *k = ctx->inputs[1],
                   *v = ctx->inputs[2];
  int r = q->rank;
  if (r < 2 || k->rank != r || v->rank != r)
    return het_kernel_fail(ctx, HET_ERR_SHAPE,
                               "Q, KT and V need one rank >= 2");
  *batch = 1;
  for (int d = 0; d < r - 2; d++) {
    if (k->dims[d] != q->dims[d] || v->dims[d] != q->dims[d])
      return het_kernel_fail(ctx, HET_ERR_SHAPE,
                                 "batch dim %d differs in Q, KT, V", d);
    j->bdims[d] = q->dims[d];
    *batch *= q->dims[d];
  }
  j->rank = r;
  j->s = q->dims[r - 2];
  j->d = q->dims[r - 1];
  j->t = k->dims[r - 1];
  j->e = v->dims[r - 1];
  if (k->dims[r - 2] != j->d || v->dims[r - 2] != j->t)
    return het_kernel_fail(ctx, HET_ERR_SHAPE,
                               "Q, KT, V inner dims do not match");
  j->kt = 'N';
  j->qb = j->s * j->d, j->ql = j->d;
  j->kb = j->d * j->t, j->kl = j->t;
  j->vb = j->t * j->e, j->vl = j->e;
  j->yb = j->s * j->e, j->yl = j->e;
  return HET_OK;
}

/* layout 1: Q [S,B,D], K [T,B,D], V [T,B,E] -> Y [S,B,E]. */
static het_status nlp_attn_shapes_sbd(const het_kernel_ctx *ctx,
                                      nlp_attn_job *j, int64_t *batch) {
  const het_tensor *q = ctx->inputs[0], *k = ctx->inputs[1],
                   *v = ctx->inputs[2];
  if (q->rank != 3 || k->rank != 3 || v->rank != 3 ||
      k->dims[1] != q->dims[1] || v->dims[1] != q->dims[1] ||
      k->dims[2] != q->dims[2] || v->dims[0] != k->dims[0])
    return het_kernel_fail(ctx, HET_ERR_SHAPE,
                               "layout 1 needs Q [S,B,D], K [T,B,D], "
                               "V [T,B,E]");
  int64_t b = q->dims[1];
  *batch = b;
  j->rank = 3;
  j->bdims[0] = b;
  j->s = q->dims[0], j->d = q->dims[2], j->t = k->dims[0], j->e = v->dims[2];
  j->kt = 'T';
  j->qb = j->d, j->ql = b * j->d;
  j->kb = j->d, j->kl = b * j->d;
  j->vb = j->e, j->vl = b * j->e;
  j->yb = j->e, j->yl = b * j->e;
  return HET_OK;
}

/* layout 1, qkv = {q offset, k offset, v offset, L, B, D, E}: Q, K, V
 * cut out of the rows of one packed P [.., L]. */
static het_status nlp_attn_shapes_packed(const het_kernel_ctx *ctx,
                                         const int64_t *qkv, size_t n,
                                         nlp_attn_job *j, int64_t *batch) {
  const het_tensor *p = ctx->inputs[0];
  if (n != 7 || p->rank < 1 || qkv[3] < 1 || p->dims[p->rank - 1] != qkv[3] ||
      het_tensor_count(ctx->inputs[1]) != het_tensor_count(p) ||
      het_tensor_count(ctx->inputs[2]) != het_tensor_count(p))
    return het_kernel_fail(ctx, HET_ERR_SHAPE,
                               "qkv does not fit the packed input");
  int64_t L = qkv[3], b = qkv[4], d = qkv[5], e = qkv[6];
  for (int i = 0; i < 3; i++)
    if (qkv[i] < 0 || qkv[i] + b * (i == 2 ? e : d) > L)
      return het_kernel_fail(ctx, HET_ERR_SHAPE,
                                 "qkv slice %d exceeds the packed rows", i);
  *batch = b;
  j->rank = 3;
  j->bdims[0] = b;
  j->s = j->t = het_tensor_count(p) / L;
  j->d = d, j->e = e;
  j->kt = 'T';
  j->qb = d, j->ql = L;
  j->kb = d, j->kl = L;
  j->vb = e, j->vl = L;
  j->yb = e, j->yl = b * e;
  return HET_OK;
}

/* Sizes and strides of the node's layout. */
static het_status nlp_attn_sizes(const het_kernel_ctx *ctx, nlp_attn_job *j,
                                 int64_t *batch) {
  int64_t layout = het_node_attr_int(ctx->node, "layout", 0);
  size_t n;
  const int64_t *qkv = het_node_attr_ints(ctx->node, "qkv", &n);
  if (layout == 1 && qkv)
    return nlp_attn_shapes_packed(ctx, qkv, n, j, batch);
  if (layout == 1)
    return nlp_attn_shapes_sbd(ctx, j, batch);
  return nlp_attn_shapes(ctx, j, batch);
}

/* ... and the operand pointers. */
static het_status nlp_attn_layout(const het_kernel_ctx *ctx,
                                  nlp_attn_job *j, int64_t *batch) {
  HET_TRY(nlp_attn_sizes(ctx, j, batch));
  size_t n;
  const int64_t *qkv = het_node_attr_ints(ctx->node, "qkv", &n);
  if (het_node_attr_int(ctx->node, "layout", 0) == 1 && qkv) {
    const float *p = ctx->inputs[0]->data;
    j->q = p + qkv[0];
    j->k = p + qkv[1];
    j->v = p + qkv[2];
  } else {
    j->q = ctx->inputs[0]->data;
    j->k = ctx->inputs[1]->data;
    j->v = ctx->inputs[2]->data;
  }
  return HET_OK;
}

/* One score matrix [S, T] per batch entry (chunk [b0, b1) uses b0's). */
size_t het_nlp_attention_scratch(const het_kernel_ctx *ctx) {
  nlp_attn_job j = {0};
  int64_t batch = 0;
  if (nlp_attn_sizes(ctx, &j, &batch) != HET_OK) {
    het_error_clear();
    return 0;
  }
  return sizeof(float) * (size_t)(batch * j.s * j.t);
}

het_status het_nlp_attention_run(het_kernel_ctx *ctx) {
  nlp_attn_job j = {.scale = het_node_attr_float(ctx->node, "scale", 1.0f)};
  int64_t batch = 0;
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && ctx->inputs[i]->dtype != HET_DTYPE_FLOAT32)
      return het_kernel_fail(ctx, HET_ERR_TYPE, "input %d is not float32",
                                 i);
  HET_TRY(nlp_attn_layout(ctx, &j, &batch));
  const het_tensor *m = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  if (m) {
    int64_t sd[HET_MAX_RANK];
    for (int d = 0; d < j.rank - 2; d++)
      sd[d] = j.bdims[d];
    sd[j.rank - 2] = j.s;
    sd[j.rank - 1] = j.t;
    HET_TRY(nlp_attn_mask_strides(ctx, m, sd, j.rank, j.mstride));
    j.mask = m->data;
  }
  j.y = ctx->outputs[0]->data;
  if (batch == 0 || j.s == 0 || j.e == 0)
    return HET_OK;
  if (j.t == 0) /* softmax over no keys: undefined; follow 0/0 */
    return het_kernel_fail(ctx, HET_ERR_SHAPE, "no keys (KT has 0 cols)");
  atomic_init(&j.failed, 0);
  size_t need = sizeof(float) * (size_t)(batch * j.s * j.t);
  if (ctx->scratch && need <= ctx->scratch_size - ctx->scratch_used)
    j.scores = (float *)((char *)ctx->scratch + ctx->scratch_used);
  int threads = het_parallel_threads(ctx->par);
  j.pooled = threads > 1 && batch > 1;
  het_parallel_for(ctx->par, batch, 1, nlp_attn_chunk, &j);
  if (j.pooled) /* the caller ran chunks too: give it its count back */
    het_kernel_set_omp_threads(threads);
  if (atomic_load(&j.failed))
    return het_kernel_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                               "out of memory for the scores");
  return HET_OK;
}
