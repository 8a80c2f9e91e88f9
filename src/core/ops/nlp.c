/* nlp.c — shape inference for the hetrt-domain ops the optimizer's
 * transformer fusions create (src/optimizer/opt_nlp*.c): Gelu (erf form),
 * LayerNorm over the last axis, Attention (softmax(scale*Q@KT [+mask])@V)
 * and FusedMatMul (MatMul with constant 2-D B, + bias, optional Gelu).
 * All of them are float32 only.
 */
#include "core/infer.h"

#define NLP_F32 (1u << HET_DTYPE_FLOAT32)

/* Gelu(X) -> Y, same shape. */
static het_status nlp_gelu_infer(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, NLP_F32));
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

/* A known dim of s that must equal n when both are known. */
static bool nlp_dim_conflicts(const het_shape *s, int d, int64_t n) {
  return s->rank > d && s->dims[d].value >= 0 && n >= 0 &&
         s->dims[d].value != n;
}

/* LayerNorm(X, gamma?, beta?; epsilon) over X's last axis; gamma and beta
 * hold one value per element of that axis. */
static het_status nlp_layernorm_infer(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, NLP_F32));
  const het_shape *x = &ctx->inputs[0].shape;
  int64_t d = x->rank > 0 ? x->dims[x->rank - 1].value : -1;
  if (x->rank == 0)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "X must have rank >= 1");
  for (int i = 1; i < ctx->n_inputs && i < 3; i++) {
    if (!ctx->inputs[i].present)
      continue;
    HET_TRY(het_infer_require_type(ctx, i, NLP_F32));
    const het_shape *p = &ctx->inputs[i].shape;
    int64_t n = het_shape_count(p);
    if (p->rank >= 0 && n >= 0 && d >= 0 && n != d)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "input %d has %lld values, last axis is %lld", i,
                            (long long)n, (long long)d);
  }
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}

/* Checks that a and b have rank r and the same leading (batch) dims. */
static het_status nlp_same_batch(const het_infer_ctx *ctx, int a, int b) {
  const het_shape *sa = &ctx->inputs[a].shape, *sb = &ctx->inputs[b].shape;
  if (sa->rank != sb->rank || sa->rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "inputs %d and %d need the same rank >= 2", a, b);
  for (int d = 0; d < sa->rank - 2; d++)
    if (nlp_dim_conflicts(sb, d, sa->dims[d].value))
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "inputs %d and %d differ in batch dim %d", a, b, d);
  return HET_OK;
}

/* layout 1 with qkv = {q offset, k offset, v offset, L, B, D, E}: Q, K
 * and V are all one packed P [.., L] -> [size(P) / L, B, E]. */
static het_status nlp_attention_packed_infer(het_infer_ctx *ctx,
                                             const int64_t *qkv, size_t n) {
  const het_shape *p = &ctx->inputs[0].shape;
  if (n != 7 || p->rank < 1 || qkv[3] < 1 || qkv[4] < 1 || qkv[5] < 1 ||
      qkv[6] < 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "qkv needs 7 values (offsets, L, B, D, E > 0)");
  int64_t size = het_shape_count(p), L = p->dims[p->rank - 1].value;
  if (L >= 0 && L != qkv[3])
    return het_infer_fail(ctx, HET_ERR_SHAPE, "packed input's last dim is "
                          "%lld, qkv says %lld", (long long)L,
                          (long long)qkv[3]);
  int64_t d[3] = {size >= 0 ? size / qkv[3] : -1, qkv[4], qkv[6]};
  het_value_info *y = &ctx->outputs[0];
  y->dtype = HET_DTYPE_FLOAT32;
  het_shape_set(&y->shape, 3, d);
  if (d[0] < 0)
    y->shape.dims[0] = het_dim_unknown();
  return HET_OK;
}

/* layout 1: Q [S,B,D], K [T,B,D], V [T,B,E] -> [S,B,E]. */
static het_status nlp_attention_sbd_infer(het_infer_ctx *ctx) {
  size_t n;
  const int64_t *qkv = het_node_attr_ints(ctx->node, "qkv", &n);
  if (qkv)
    return nlp_attention_packed_infer(ctx, qkv, n);
  const het_shape *q = &ctx->inputs[0].shape, *k = &ctx->inputs[1].shape,
                  *v = &ctx->inputs[2].shape;
  if (q->rank != 3 || k->rank != 3 || v->rank != 3)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "layout 1 needs rank 3 inputs");
  if (nlp_dim_conflicts(k, 1, q->dims[1].value) ||
      nlp_dim_conflicts(v, 1, q->dims[1].value) ||
      nlp_dim_conflicts(k, 2, q->dims[2].value) ||
      nlp_dim_conflicts(v, 0, k->dims[0].value))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "layout 1 needs Q [S,B,D], K [T,B,D], V [T,B,E]");
  het_value_info *y = &ctx->outputs[0];
  y->dtype = HET_DTYPE_FLOAT32;
  y->shape = *q;
  y->shape.dims[2] = v->dims[2];
  return HET_OK;
}

/* Attention(Q [..,S,D], KT [..,D,T], V [..,T,E], mask?; scale, layout) ->
 * [..,S,E]; mask broadcasts to [..,S,T]. */
static het_status nlp_attention_infer(het_infer_ctx *ctx) {
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i].present)
      HET_TRY(het_infer_require_type(ctx, i, NLP_F32));
  int64_t layout = het_node_attr_int(ctx->node, "layout", 0);
  if (layout == 1)
    return nlp_attention_sbd_infer(ctx);
  if (layout != 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "layout %lld unknown",
                          (long long)layout);
  HET_TRY(nlp_same_batch(ctx, 0, 1));
  HET_TRY(nlp_same_batch(ctx, 0, 2));
  const het_shape *q = &ctx->inputs[0].shape, *k = &ctx->inputs[1].shape,
                  *v = &ctx->inputs[2].shape;
  int r = q->rank;
  if (nlp_dim_conflicts(k, r - 2, q->dims[r - 1].value) ||
      nlp_dim_conflicts(v, r - 2, k->dims[r - 1].value))
    return het_infer_fail(ctx, HET_ERR_SHAPE, "Q, KT, V inner dims differ");
  if (ctx->n_inputs > 3 && ctx->inputs[3].present &&
      ctx->inputs[3].shape.rank > r)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "mask rank exceeds Q's");
  het_value_info *y = &ctx->outputs[0];
  y->dtype = HET_DTYPE_FLOAT32;
  y->shape = *q;
  y->shape.dims[r - 1] = v->dims[r - 1];
  return HET_OK;
}

/* FusedMatMul(A [..,K], B [K,N], bias [N]; gelu) -> [..,N]. */
static het_status nlp_fused_matmul_infer(het_infer_ctx *ctx) {
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i].present)
      HET_TRY(het_infer_require_type(ctx, i, NLP_F32));
  const het_shape *a = &ctx->inputs[0].shape, *b = &ctx->inputs[1].shape;
  if (a->rank < 2 || b->rank != 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "A needs rank >= 2 and B rank 2");
  if (nlp_dim_conflicts(b, 0, a->dims[a->rank - 1].value))
    return het_infer_fail(ctx, HET_ERR_SHAPE, "A's last dim is not B's rows");
  int64_t n = b->dims[1].value;
  if (ctx->n_inputs > 2 && ctx->inputs[2].present) {
    int64_t c = het_shape_count(&ctx->inputs[2].shape);
    if (c >= 0 && n >= 0 && c != n)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "bias has %lld values, not %lld",
                            (long long)c, (long long)n);
  }
  het_value_info *y = &ctx->outputs[0];
  y->dtype = HET_DTYPE_FLOAT32;
  y->shape = *a;
  y->shape.dims[a->rank - 1] = b->dims[1];
  return HET_OK;
}

const het_op_def het_ops_nlp[] = {
    {"Gelu", "hetrt", 1, 1, 1, 1, nlp_gelu_infer},
    {"LayerNorm", "hetrt", 1, 3, 1, 1, nlp_layernorm_infer},
    {"Attention", "hetrt", 3, 4, 1, 1, nlp_attention_infer},
    {"FusedMatMul", "hetrt", 2, 3, 1, 1, nlp_fused_matmul_infer},
    {0},
};
