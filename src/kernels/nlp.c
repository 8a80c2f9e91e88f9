/* nlp.c — the CPU kernel table of the hetrt-domain transformer ops the
 * optimizer's fusions create (src/optimizer/opt_nlp*.c), and the Gelu and
 * LayerNorm kernels.  Attention: nlp_attention.c; FusedMatMul:
 * nlp_matmul.c; the vectorised row loops: nlp_vec.c.
 */
#include "kernels/kernel.h"
#include "kernels/nlp_kernels.h"
#include "kernels/parallel.h"

static het_status nlp_require_f32(const het_kernel_ctx *ctx) {
  for (int i = 0; i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && ctx->inputs[i]->dtype != HET_DTYPE_FLOAT32)
      return het_kernel_fail(ctx, HET_ERR_TYPE,
                                 "input %d is not float32", i);
  return HET_OK;
}

typedef struct nlp_gelu_job {
  const float *x;
  float *y;
} nlp_gelu_job;

#define NLP_GELU_BLOCK 4096

static void nlp_gelu_chunk(void *p, int64_t b, int64_t e) {
  const nlp_gelu_job *j = p;
  het_nlp_gelu(j->x + b, j->y + b, e - b);
}

static het_status nlp_gelu_run(het_kernel_ctx *ctx) {
  HET_TRY(nlp_require_f32(ctx));
  const het_tensor *x = ctx->inputs[0];
  nlp_gelu_job j = {x->data, ctx->outputs[0]->data};
  het_parallel_for(ctx->par, het_tensor_count(x), NLP_GELU_BLOCK,
                              nlp_gelu_chunk, &j);
  return HET_OK;
}

typedef struct nlp_ln_job {
  const float *x, *gamma, *beta;
  float *y;
  int64_t n;
  float eps;
} nlp_ln_job;

static void nlp_ln_chunk(void *p, int64_t b, int64_t e) {
  const nlp_ln_job *j = p;
  het_nlp_layernorm_rows(j->x + b * j->n, j->y + b * j->n, j->gamma, j->beta,
                         e - b, j->n, j->eps);
}

/* gamma / beta input i: NULL when omitted; must hold n values. */
static het_status nlp_ln_param(const het_kernel_ctx *ctx, int i,
                               int64_t n, const float **out) {
  const het_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  *out = NULL;
  if (!t)
    return HET_OK;
  if (het_tensor_count(t) != n)
    return het_kernel_fail(ctx, HET_ERR_SHAPE,
                               "input %d has %lld values, last axis is %lld",
                               i, (long long)het_tensor_count(t),
                               (long long)n);
  *out = t->data;
  return HET_OK;
}

static het_status nlp_layernorm_run(het_kernel_ctx *ctx) {
  HET_TRY(nlp_require_f32(ctx));
  const het_tensor *x = ctx->inputs[0];
  if (x->rank < 1)
    return het_kernel_fail(ctx, HET_ERR_SHAPE, "X must have rank >= 1");
  nlp_ln_job j = {.x = x->data, .y = ctx->outputs[0]->data,
                  .n = x->dims[x->rank - 1],
                  .eps = het_node_attr_float(ctx->node, "epsilon", 1e-5f)};
  HET_TRY(nlp_ln_param(ctx, 1, j.n, &j.gamma));
  HET_TRY(nlp_ln_param(ctx, 2, j.n, &j.beta));
  if (j.n == 0)
    return HET_OK;
  int64_t rows = het_tensor_count(x) / j.n;
  het_parallel_for(ctx->par, rows, 16, nlp_ln_chunk, &j);
  return HET_OK;
}

const het_kernel het_kernels_nlp[] = {
    {.op_type = "Gelu", .domain = "hetrt", .run = nlp_gelu_run},
    {.op_type = "LayerNorm", .domain = "hetrt", .run = nlp_layernorm_run},
    {.op_type = "Attention",
     .domain = "hetrt",
     .run = het_nlp_attention_run,
     .scratch = het_nlp_attention_scratch},
    {.op_type = "FusedMatMul", .domain = "hetrt",
     .prepare = het_nlp_fused_matmul_prepare,
     .prepare_with = het_nlp_fused_matmul_prepare_with,
     .run = het_nlp_fused_matmul_run,
     .destroy_state = het_nlp_fused_matmul_destroy,
     .state_weights = het_nlp_fused_matmul_weights},
    {0},
};
