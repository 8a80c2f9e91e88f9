/* ops.c — what the CUDA provider runs and how: claims (float32 with known
 * ranks: broadcast Add/Sub/Mul/Div, Relu/Sigmoid/Tanh/Exp/Neg/Abs/Sqrt/Erf,
 * last-axis Softmax on own kernels; MatMul on cuBLASLt), costs (the core's
 * roofline on the device's facts plus a launch), compile (each node's
 * kind) and run_async, which only enqueues on the stream over values the
 * plan placed in device memory; the run's scratch is cuBLASLt's workspace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/roofline.h"
#include "core/tensor.h"
#include "providers/cuda/cuda_internal.h"

#define HET_CUDA_WORKSPACE ((size_t)32 << 20) /* cuBLASLt, Hopper */

typedef enum het_cuda_kind {
  HET_CUDA_K_BINARY,
  HET_CUDA_K_UNARY,
  HET_CUDA_K_SOFTMAX,
  HET_CUDA_K_MATMUL,
} het_cuda_kind;

typedef struct het_cuda_op {
  const char *op_type;
  het_cuda_kind kind;
  int code;
} het_cuda_op;

static const het_cuda_op het_cuda_ops[] = {
    {"Add", HET_CUDA_K_BINARY, HET_CUDA_ADD},
    {"Sub", HET_CUDA_K_BINARY, HET_CUDA_SUB},
    {"Mul", HET_CUDA_K_BINARY, HET_CUDA_MUL},
    {"Div", HET_CUDA_K_BINARY, HET_CUDA_DIV},
    {"Relu", HET_CUDA_K_UNARY, HET_CUDA_RELU},
    {"Sigmoid", HET_CUDA_K_UNARY, HET_CUDA_SIGMOID},
    {"Tanh", HET_CUDA_K_UNARY, HET_CUDA_TANH},
    {"Exp", HET_CUDA_K_UNARY, HET_CUDA_EXP},
    {"Neg", HET_CUDA_K_UNARY, HET_CUDA_NEG},
    {"Abs", HET_CUDA_K_UNARY, HET_CUDA_ABS},
    {"Sqrt", HET_CUDA_K_UNARY, HET_CUDA_SQRT},
    {"Erf", HET_CUDA_K_UNARY, HET_CUDA_ERF},
    {"Softmax", HET_CUDA_K_SOFTMAX, 0},
    {"MatMul", HET_CUDA_K_MATMUL, 0},
};

static const het_cuda_op *het_cuda_op_of(const het_node *n) {
  if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
    return NULL;
  for (size_t i = 0; i < sizeof het_cuda_ops / sizeof *het_cuda_ops; i++)
    if (strcmp(n->op_type, het_cuda_ops[i].op_type) == 0)
      return &het_cuda_ops[i];
  return NULL;
}

/* ---- claims ------------------------------------------------------------------ */

/* Whether two load-time dims are the same: equal known values, or the
 * same symbol. */
static bool het_cuda_dim_same(const het_dim *a, const het_dim *b) {
  if (a->value >= 0 || b->value >= 0)
    return a->value == b->value;
  return a->symbol && b->symbol && strcmp(a->symbol, b->symbol) == 0;
}

static bool het_cuda_node_ok(const het_graph *g, const het_node *n, char *why,
                             size_t cap) {
  const het_cuda_op *op = het_cuda_op_of(n);
  if (!op) {
    snprintf(why, cap, "cuda: no kernel for %s%s%s in this build",
             n->domain[0] ? n->domain : "", n->domain[0] ? "." : "",
             n->op_type);
    return false;
  }
  int expect_in = op->kind == HET_CUDA_K_BINARY || op->kind == HET_CUDA_K_MATMUL
                      ? 2
                      : 1;
  if (n->n_inputs != expect_in || n->n_outputs != 1) {
    snprintf(why, cap, "cuda: %s with %d inputs / %d outputs", n->op_type,
             n->n_inputs, n->n_outputs);
    return false;
  }
  for (int k = 0; k <= n->n_inputs; k++) {
    int v = k < n->n_inputs ? n->inputs[k] : n->outputs[0];
    const het_value *val = v >= 0 ? &g->values[v] : NULL;
    if (!val || val->dtype != HET_DTYPE_FLOAT32) {
      snprintf(why, cap, "cuda: %s of %s: float32 only in this build",
               n->op_type, val ? het_dtype_str(val->dtype) : "(omitted)");
      return false;
    }
    if (val->shape.rank < 0 || val->shape.rank > HET_CUDA_MAX_RANK) {
      snprintf(why, cap, "cuda: %s: rank unknown or above %d", n->op_type,
               HET_CUDA_MAX_RANK);
      return false;
    }
  }
  const het_shape *s0 = &g->values[n->inputs[0]].shape;
  if (op->kind == HET_CUDA_K_SOFTMAX) {
    int64_t axis = het_node_attr_int(n, "axis", n->opset >= 13 ? -1 : 1);
    if (axis < 0)
      axis += s0->rank;
    if (axis != s0->rank - 1) {
      snprintf(why, cap, "cuda: Softmax over axis %lld of rank %d: last "
               "axis only", (long long)axis, s0->rank);
      return false;
    }
  }
  if (op->kind == HET_CUDA_K_MATMUL) {
    const het_shape *s1 = &g->values[n->inputs[1]].shape;
    bool same_batch = s0->rank == s1->rank;
    for (int d = 0; same_batch && d < s0->rank - 2; d++)
      same_batch = het_cuda_dim_same(&s0->dims[d], &s1->dims[d]);
    if (s0->rank < 2 || s1->rank < 2 ||
        !(same_batch || s0->rank == 2 || s1->rank == 2)) {
      snprintf(why, cap, "cuda: MatMul of ranks %d and %d: batch dims must "
               "match or one side be 2-D", s0->rank, s1->rank);
      return false;
    }
    snprintf(why, cap, "cuda: float32 MatMul via cuBLASLt");
    return true;
  }
  snprintf(why, cap, "cuda: float32 %s (own kernel)", n->op_type);
  return true;
}

het_status het_cuda_get_capability(void *state, const het_graph *g,
                                   het_claim *claims) {
  (void)state;
  for (int i = 0; i < g->n_nodes; i++)
    claims[i].claimed = het_cuda_node_ok(g, &g->nodes[i], claims[i].reason,
                                         sizeof claims[i].reason);
  return HET_OK;
}

het_status het_cuda_estimate_cost(void *state, const het_graph *g, int node,
                                  double *seconds) {
  const het_device_info *info = &((het_cuda_state *)state)->dev->info;
  *seconds = het_roofline_node(g, node, info) + info->launch_overhead;
  return HET_OK;
}

/* ---- compile ------------------------------------------------------------------ */

typedef struct het_cuda_compiled {
  const het_graph *graph;
  int n;
  int *nodes;
  const het_cuda_op **ops;
  bool has_matmul;
} het_cuda_compiled;

void het_cuda_destroy_compiled(void *state, void *compiled) {
  (void)state;
  het_cuda_compiled *c = compiled;
  if (!c)
    return;
  free(c->nodes);
  free(c->ops);
  free(c);
}

het_status het_cuda_compile(void *state, const het_graph *g,
                            const int *nodes, int n, void **out) {
  het_cuda_compiled *c = calloc(1, sizeof *c);
  size_t cap = (size_t)(n > 0 ? n : 0) + 1;
  if (c) {
    c->graph = g;
    c->nodes = calloc(cap, sizeof *c->nodes);
    c->ops = calloc(cap, sizeof *c->ops);
  }
  if (!c || !c->nodes || !c->ops) {
    het_cuda_destroy_compiled(state, c);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  }
  for (int i = 0; i < n; i++) {
    const het_node *node = &g->nodes[nodes[i]];
    char why[HET_CLAIM_REASON_CAP];
    if (!het_cuda_node_ok(g, node, why, sizeof why)) {
      het_cuda_destroy_compiled(state, c);
      return het_error(HET_ERR_UNSUPPORTED, "node '%s': %s", node->name, why);
    }
    c->nodes[i] = nodes[i];
    c->ops[i] = het_cuda_op_of(node);
    c->has_matmul |= c->ops[i]->kind == HET_CUDA_K_MATMUL;
    c->n = i + 1;
  }
  *out = c;
  return HET_OK;
}

het_status het_cuda_compiled_scratch(void *state, void *compiled,
                                     const het_kernel_io *io, size_t *bytes) {
  (void)state;
  (void)io;
  *bytes = ((het_cuda_compiled *)compiled)->has_matmul ? HET_CUDA_WORKSPACE
                                                       : 0;
  return HET_OK;
}

/* ---- run ------------------------------------------------------------------------ */

/* Value k of node (input k, or the output at n_inputs) placed on this
 * device, or an error naming the node and the value. */
static het_status het_cuda_value(const het_cuda_state *s, const het_graph *g,
                                 const het_node *node, int k,
                                 const het_kernel_io *io, het_tensor **out) {
  bool is_out = k == node->n_inputs;
  int v = is_out ? node->outputs[0] : node->inputs[k];
  het_tensor *t = v >= 0 && v < io->n_values ? io->values[v] : NULL;
  if (!t || !t->data || t->device != s->self)
    return het_error(HET_ERR_INTERNAL,
                     "cuda: node '%s' (%s): %s '%s' is not in the memory of "
                     "%s%s",
                     node->name, node->op_type, is_out ? "output" : "input",
                     v >= 0 ? g->values[v].name : "?", s->self->name,
                     is_out ? "" : " (missing copy)");
  *out = t;
  return HET_OK;
}

/* Strides of t's dims over an output of rank r, aligned to the right, 0
 * where t broadcasts. */
static void het_cuda_strides(const het_tensor *t, const het_tensor *y,
                             long long *strides) {
  long long st = 1;
  for (int d = y->rank - 1; d >= 0; d--) {
    int td = d - (y->rank - t->rank);
    long long dim = td >= 0 ? t->dims[td] : 1;
    strides[d] = dim == 1 ? 0 : st;
    st *= dim;
  }
}

static het_status het_cuda_binary(het_cuda_state *s, const het_cuda_op *op,
                                  het_tensor *a, het_tensor *b, het_tensor *y,
                                  cudaStream_t st) {
  long long n = het_tensor_count(y);
  bool same = a->rank == y->rank && b->rank == y->rank &&
              het_tensor_count(a) == n && het_tensor_count(b) == n;
  het_cuda_bcast bc = {.rank = y->rank};
  for (int d = 0; d < y->rank; d++)
    bc.out_dims[d] = y->dims[d];
  het_cuda_strides(a, y, bc.a_strides);
  het_cuda_strides(b, y, bc.b_strides);
  HET_CUDA_TRY(het_cuda_binary_f32(op->code, a->data, b->data, y->data, n,
                                   same ? NULL : &bc, st),
               s->dev->index, op->op_type);
  return HET_OK;
}

static long long het_cuda_batch(const het_tensor *t) {
  long long b = 1;
  for (int d = 0; d < t->rank - 2; d++)
    b *= t->dims[d];
  return b;
}

/* Row-major Y[b] = A[b] B[b] as column-major Y^T = B^T A^T. */
static het_status het_cuda_matmul(het_cuda_state *s, const het_node *node,
                                  het_tensor *a, het_tensor *b, het_tensor *y,
                                  const het_kernel_io *io, cudaStream_t st) {
  long long M = a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  long long N = b->dims[b->rank - 1];
  long long ba = het_cuda_batch(a), bb = het_cuda_batch(b);
  long long batch = het_cuda_batch(y);
  int32_t count = (int32_t)batch;
  long long sa = ba > 1 ? M * K : 0, sb = bb > 1 ? K * N : 0, sy = M * N;
  cublasLtMatmulDesc_t op = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ly = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  size_t ws = io->scratch ? io->scratch_bytes : 0;
  cublasStatus_t r = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F,
                                              CUDA_R_32F);
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, (uint64_t)N, (uint64_t)K,
                                   N);
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, (uint64_t)K, (uint64_t)M,
                                   K);
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatrixLayoutCreate(&ly, CUDA_R_32F, (uint64_t)N, (uint64_t)M,
                                   N);
  struct { cublasLtMatrixLayout_t l; long long stride; } lay[3] = {
      {la, sb}, {lb, sa}, {ly, sy}};
  for (int i = 0; r == CUBLAS_STATUS_SUCCESS && i < 3 && batch > 1; i++) {
    int64_t stride = lay[i].stride;
    r = cublasLtMatrixLayoutSetAttribute(lay[i].l,
                                         CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                         &count, sizeof count);
    if (r == CUBLAS_STATUS_SUCCESS)
      r = cublasLtMatrixLayoutSetAttribute(
          lay[i].l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
          sizeof stride);
  }
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatmulPreferenceCreate(&pref);
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t best;
  int found = 0;
  if (r == CUBLAS_STATUS_SUCCESS)
    r = cublasLtMatmulAlgoGetHeuristic(s->lt, op, la, lb, ly, ly, pref, 1,
                                       &best, &found);
  float one = 1.f, zero = 0.f;
  if (r == CUBLAS_STATUS_SUCCESS && found > 0)
    r = cublasLtMatmul(s->lt, op, &one, b->data, la, a->data, lb, &zero,
                       y->data, ly, y->data, ly, &best.algo, io->scratch, ws,
                       st);
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  if (ly)
    cublasLtMatrixLayoutDestroy(ly);
  if (lb)
    cublasLtMatrixLayoutDestroy(lb);
  if (la)
    cublasLtMatrixLayoutDestroy(la);
  if (op)
    cublasLtMatmulDescDestroy(op);
  if (r != CUBLAS_STATUS_SUCCESS || found == 0)
    return het_error(HET_ERR_KERNEL,
                     "cuda:%d: MatMul '%s' [%lld,%lld]x[%lld,%lld] (batch "
                     "%lld): cuBLASLt %s (status %d)",
                     s->dev->index, node->name, M, K, K, N, batch,
                     found == 0 && r == CUBLAS_STATUS_SUCCESS
                         ? "found no algorithm"
                         : "failed",
                     (int)r);
  return HET_OK;
}

static het_status het_cuda_run_node(het_cuda_state *s,
                                    const het_cuda_compiled *c, int i,
                                    const het_kernel_io *io,
                                    cudaStream_t st) {
  const het_graph *g = c->graph;
  int id = c->nodes[i];
  const het_node *node = &g->nodes[id];
  const het_cuda_op *op = c->ops[i];
  if (io->dynamic && io->dynamic[id])
    return het_error(HET_ERR_UNSUPPORTED,
                     "cuda: node '%s' (%s): its output shape is known only "
                     "at run time, which this build's CUDA provider does "
                     "not take",
                     node->name, node->op_type);
  het_tensor *in[2] = {NULL, NULL}, *y = NULL;
  for (int k = 0; k < node->n_inputs; k++)
    HET_TRY(het_cuda_value(s, g, node, k, io, &in[k]));
  HET_TRY(het_cuda_value(s, g, node, node->n_inputs, io, &y));
  switch (op->kind) {
  case HET_CUDA_K_BINARY:
    return het_cuda_binary(s, op, in[0], in[1], y, st);
  case HET_CUDA_K_UNARY:
    HET_CUDA_TRY(het_cuda_unary_f32(op->code, in[0]->data, y->data,
                                    het_tensor_count(y), st),
                 s->dev->index, op->op_type);
    return HET_OK;
  case HET_CUDA_K_SOFTMAX: {
    long long cols = y->rank ? y->dims[y->rank - 1] : 1;
    long long n = het_tensor_count(y);
    HET_CUDA_TRY(het_cuda_softmax_f32(in[0]->data, y->data,
                                      cols ? n / cols : 0, cols, st),
                 s->dev->index, "Softmax");
    return HET_OK;
  }
  case HET_CUDA_K_MATMUL:
    return het_cuda_matmul(s, node, in[0], in[1], y, io, st);
  }
  return het_error(HET_ERR_INTERNAL, "cuda: bad op kind");
}

het_status het_cuda_run_async(void *state, void *compiled, void *stream,
                              const het_kernel_io *io) {
  het_cuda_state *s = state;
  const het_cuda_compiled *c = compiled;
  if (s->dev->absent)
    return het_cuda_absent(s->dev, "a run");
  HET_CUDA_TRY(cudaSetDevice(s->dev->index), s->dev->index,
               "selecting the device");
  /* io->record (node times) is not reported yet: that needs timed events
   * around each node. */
  for (int i = 0; i < c->n; i++)
    HET_TRY(het_cuda_run_node(s, c, i, io, stream));
  return HET_OK;
}
