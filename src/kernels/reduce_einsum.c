/* reduce_einsum.c — CPU kernel for Einsum: a generic loop nest over every
 * label (output labels and summed labels), each input addressed through
 * per-label strides (a repeated label adds its strides: diagonal/trace;
 * a size-1 dim under a larger label gets stride 0: broadcast).
 */
#include <stdlib.h>
#include <string.h>

#include "core/ops/reduce_ops.h"
#include "kernels/reduce_common.h"

typedef struct het_einsum_loop {
  int n;                                   /* loop labels */
  int64_t size[HET_EINSUM_LABELS];
  int64_t in_stride[HET_EINSUM_MAX_INPUTS][HET_EINSUM_LABELS];
  int64_t out_stride[HET_EINSUM_LABELS];
} het_einsum_loop;

static het_status het_einsum_plan(het_kernel_ctx *ctx,
                                  const het_einsum_spec *s,
                                  het_einsum_loop *L) {
  int64_t dim[HET_EINSUM_LABELS];
  bool used[HET_EINSUM_LABELS] = {0};
  for (int l = 0; l < HET_EINSUM_LABELS; l++)
    dim[l] = 1;
  for (int i = 0; i < s->n_inputs; i++)
    for (int d = 0; d < s->in_rank[i]; d++) {
      int l = s->in_labels[i][d];
      int64_t v = ctx->inputs[i]->dims[d];
      used[l] = true;
      if (v != 1 && dim[l] != 1 && v != dim[l])
        return het_error(HET_ERR_SHAPE,
                         "node '%s' (Einsum): label sizes %lld and %lld "
                         "disagree", ctx->node->name, (long long)dim[l],
                         (long long)v);
      if (v != 1)
        dim[l] = v;
    }
  int order[HET_EINSUM_LABELS], n = 0;
  bool in_out[HET_EINSUM_LABELS] = {0};
  for (int d = 0; d < s->out_rank; d++) {
    order[n++] = s->out_labels[d];
    in_out[s->out_labels[d]] = true;
  }
  for (int l = 0; l < HET_EINSUM_LABELS; l++)
    if (used[l] && !in_out[l])
      order[n++] = l;
  memset(L, 0, sizeof *L);
  L->n = n;
  int64_t st = 1;
  for (int d = s->out_rank - 1; d >= 0; d--) {
    L->out_stride[d] = st;
    st *= dim[s->out_labels[d]];
  }
  for (int k = 0; k < n; k++)
    L->size[k] = dim[order[k]];
  for (int i = 0; i < s->n_inputs; i++) {
    const het_tensor *t = ctx->inputs[i];
    int64_t ts = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
      for (int k = 0; k < n; k++)
        if (order[k] == s->in_labels[i][d] && t->dims[d] != 1)
          L->in_stride[i][k] += ts;
      ts *= t->dims[d];
    }
  }
  return HET_OK;
}

static void het_einsum_loop_run(const het_einsum_loop *L, int n_in,
                                const double *const *x, double *y,
                                int64_t n_out) {
  int64_t idx[HET_EINSUM_LABELS] = {0}, off[HET_EINSUM_MAX_INPUTS] = {0};
  int64_t yo = 0, total = 1;
  for (int64_t i = 0; i < n_out; i++)
    y[i] = 0;
  for (int k = 0; k < L->n; k++)
    total *= L->size[k];
  for (int64_t it = 0; it < total; it++) {
    double p = 1;
    for (int i = 0; i < n_in; i++)
      p *= x[i][off[i]];
    y[yo] += p;
    for (int k = L->n - 1; k >= 0; k--) {
      for (int i = 0; i < n_in; i++)
        off[i] += L->in_stride[i][k];
      yo += L->out_stride[k];
      if (++idx[k] < L->size[k])
        break;
      for (int i = 0; i < n_in; i++)
        off[i] -= L->in_stride[i][k] * L->size[k];
      yo -= L->out_stride[k] * L->size[k];
      idx[k] = 0;
    }
  }
}

het_status het_kernel_einsum_run(het_kernel_ctx *ctx) {
  const char *eq = het_node_attr_string(ctx->node, "equation");
  int ranks[HET_EINSUM_MAX_INPUTS];
  if (!eq || ctx->n_inputs > HET_EINSUM_MAX_INPUTS)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (Einsum): missing equation or too many inputs",
                     ctx->node->name);
  for (int i = 0; i < ctx->n_inputs; i++)
    ranks[i] = ctx->inputs[i]->rank;
  het_einsum_spec s;
  char err[128];
  if (!het_einsum_parse(eq, ctx->n_inputs, ranks, &s, err, sizeof err))
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (Einsum): '%s': %s",
                     ctx->node->name, eq, err);
  het_einsum_loop L;
  HET_TRY(het_einsum_plan(ctx, &s, &L));
  het_red_buf in[HET_EINSUM_MAX_INPUTS] = {{0}}, out = {0};
  const double *xs[HET_EINSUM_MAX_INPUTS];
  het_status st = HET_OK;
  for (int i = 0; i < ctx->n_inputs && !st; i++) {
    st = het_red_load(ctx, ctx->inputs[i], &in[i]);
    xs[i] = in[i].data;
  }
  if (!st)
    st = het_red_out(ctx, ctx->outputs[0], &out);
  if (!st) {
    bool empty = false;
    for (int i = 0; i < ctx->n_inputs; i++)
      empty |= het_tensor_count(ctx->inputs[i]) == 0;
    int64_t n_out = het_tensor_count(ctx->outputs[0]);
    if (empty) /* sums over an empty label are zero */
      memset(out.data, 0, (size_t)n_out * sizeof *out.data);
    else
      het_einsum_loop_run(&L, ctx->n_inputs, xs, out.data, n_out);
    het_red_finish(ctx->outputs[0], &out);
  }
  for (int i = 0; i < ctx->n_inputs; i++)
    het_red_release(&in[i]);
  het_red_release(&out);
  return st;
}
