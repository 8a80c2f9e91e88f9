/* nlp_matmul.c — the CPU kernel of hetrt.FusedMatMul(A, B, bias; gelu):
 * Y = A @ B (+ bias over the last axis), then Gelu when the int attribute
 * gelu is 1.  The product is the ai.onnx MatMul kernel's (oneDNN with B
 * packed once, when built; its state is kept inside ours, for a copy of
 * the node that reads as MatMul(A, B)); bias and Gelu are one vectorised
 * pass over Y's rows while they are still in cache.  With oneDNN and a
 * static A shape the whole node is one oneDNN matmul with bias and a
 * gelu_erf post-op instead (dnnl/matmul_fused_dnnl.c).
 */
#include <stdlib.h>

#include "core/status.h"
#include "kernels/nlp_kernels.h"
#include "kernels/parallel.h"

typedef struct nlp_fmm_state {
  het_node mm;       /* the node as MatMul(A, B): read-only after prepare */
  void *inner;       /* the MatMul kernel's state (or NULL) */
  void *fused;       /* oneDNN primitive for the static shape (or NULL) */
} nlp_fmm_state;

static const het_kernel *nlp_matmul_kernel(void) {
  return het_kernel_find("", "MatMul");
}

static void nlp_as_matmul(const het_node *node, het_node *mm) {
  *mm = *node;
  mm->op_type = "MatMul";
  mm->domain = "";
  mm->opset = 13;
  mm->n_inputs = 2;
  mm->n_attrs = 0;
  mm->attrs = NULL;
}

het_status het_nlp_fused_matmul_prepare_with(const het_graph *graph,
                                             const het_node *node,
                                             const het_kernel_prep *prep,
                                             void **state) {
  het_kernel_prep mm = {.bf16 = prep && prep->bf16};
  const het_kernel *k = nlp_matmul_kernel();
  if (!k || node->n_inputs < 2)
    return het_error(HET_ERR_INTERNAL, "node '%s': no MatMul kernel",
                     node->name);
  nlp_fmm_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  nlp_as_matmul(node, &s->mm);
#ifdef HETRT_HAVE_DNNL
  het_status fst = het_fmm_dnnl_create(graph, node, mm.bf16, &s->fused);
  if (fst != HET_OK) {
    free(s);
    return fst;
  }
#endif
  if (!s->fused && (k->prepare_with || k->prepare)) {
    het_status st = k->prepare_with
                        ? k->prepare_with(graph, &s->mm, &mm, &s->inner)
                        : k->prepare(graph, &s->mm, &s->inner);
    if (st != HET_OK) {
      free(s);
      return st;
    }
  }
  *state = s;
  return HET_OK;
}

het_status het_nlp_fused_matmul_prepare(const het_graph *graph,
                                        const het_node *node, void **state) {
  return het_nlp_fused_matmul_prepare_with(graph, node, NULL, state);
}

void het_nlp_fused_matmul_destroy(void *state) {
  nlp_fmm_state *s = state;
  const het_kernel *k = nlp_matmul_kernel();
  if (!s)
    return;
  if (s->inner && k && k->destroy_state)
    k->destroy_state(s->inner);
#ifdef HETRT_HAVE_DNNL
  het_fmm_dnnl_destroy(s->fused);
#endif
  free(s);
}

void het_nlp_fused_matmul_weights(const void *state, het_kernel_weight_fn fn,
                                  void *ctx) {
  const nlp_fmm_state *s = state;
  const het_kernel *k = nlp_matmul_kernel();
  if (!s)
    return;
#ifdef HETRT_HAVE_DNNL
  het_fmm_dnnl_weights(s->fused, fn, ctx);
#endif
  if (s->inner && k && k->state_weights)
    k->state_weights(s->inner, fn, ctx);
}

typedef struct nlp_fmm_job {
  float *y;
  const float *bias;
  int64_t n;
  bool gelu;
} nlp_fmm_job;

static void nlp_fmm_chunk(void *p, int64_t b, int64_t e) {
  const nlp_fmm_job *j = p;
  if (j->bias)
    het_nlp_bias_act(j->y + b * j->n, j->bias, e - b, j->n, j->gelu);
  else
    het_nlp_gelu(j->y + b * j->n, j->y + b * j->n, (e - b) * j->n);
}

het_status het_nlp_fused_matmul_run(het_kernel_ctx *ctx) {
  const het_kernel *k = nlp_matmul_kernel();
  nlp_fmm_state *s = ctx->state;
  het_node local;
  if (!k)
    return het_kernel_fail(ctx, HET_ERR_INTERNAL, "no MatMul kernel");
#ifdef HETRT_HAVE_DNNL
  if (s && s->fused && ctx->n_inputs > 2) {
    bool done;
    het_status st = het_fmm_dnnl_run(s->fused, ctx->inputs[0],
                                     ctx->inputs[2], ctx->outputs[0], &done);
    if (st != HET_OK)
      return het_kernel_fail(ctx, st, "%s", het_last_error());
    if (done)
      return HET_OK;
  }
#endif
  if (!s)
    nlp_as_matmul(ctx->node, &local);
  het_kernel_ctx sub = *ctx;
  sub.node = s ? &s->mm : &local;
  sub.opset = 13;
  sub.n_inputs = 2;
  sub.state = s ? s->inner : NULL;
  HET_TRY(k->run(&sub));
  het_tensor *y = ctx->outputs[0];
  const het_tensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  nlp_fmm_job j = {.y = y->data, .n = y->rank ? y->dims[y->rank - 1] : 1,
                   .gelu = het_node_attr_int(ctx->node, "gelu", 0) != 0};
  if (bias) {
    if (bias->dtype != HET_DTYPE_FLOAT32 || het_tensor_count(bias) != j.n)
      return het_kernel_fail(ctx, HET_ERR_SHAPE,
                                 "bias must be %lld float32 values",
                                 (long long)j.n);
    j.bias = bias->data;
  }
  if (j.n == 0 || (!j.bias && !j.gelu))
    return HET_OK;
  het_parallel_for(ctx->par, het_tensor_count(y) / j.n, 8,
                              nlp_fmm_chunk, &j);
  return HET_OK;
}
