/* reduce_misc.c — CPU kernels for TopK (largest/smallest, ties keep the
 * smaller index first), CumSum (exclusive, reverse; int64 accumulation for
 * integer types) and Det (LU with partial pivoting in double).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/reduce_common.h"

typedef struct het_topk_item {
  double v;
  int64_t i;
} het_topk_item;

static int het_topk_cmp_large(const void *a, const void *b) {
  const het_topk_item *x = a, *y = b;
  if (x->v != y->v) {
    if (x->v != x->v) /* NaN sorts first, as the largest */
      return -1;
    if (y->v != y->v)
      return 1;
    return x->v > y->v ? -1 : 1;
  }
  return x->i < y->i ? -1 : x->i > y->i;
}

static int het_topk_cmp_small(const void *a, const void *b) {
  const het_topk_item *x = a, *y = b;
  if (x->v != y->v) {
    if (x->v != x->v)
      return 1;
    if (y->v != y->v)
      return -1;
    return x->v < y->v ? -1 : 1;
  }
  return x->i < y->i ? -1 : x->i > y->i;
}

het_status het_kernel_topk_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *vt = ctx->outputs[0], *it = ctx->outputs[1];
  int axis;
  HET_TRY(het_red_axis(ctx, het_node_attr_int(ctx->node, "axis", -1), x->rank,
                       &axis));
  int64_t O, N, I;
  het_red_split(x, axis, &O, &N, &I);
  int64_t k = vt->dims[axis];
  if (k > N)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): k = %lld > %lld",
                     ctx->node->name, ctx->node->op_type, (long long)k,
                     (long long)N);
  bool largest = het_node_attr_int(ctx->node, "largest", 1) != 0;
  het_red_buf in, out;
  HET_TRY(het_red_load(ctx, x, &in));
  het_status st = het_red_out(ctx, vt, &out);
  het_topk_item *items = malloc((size_t)(N + 1) * sizeof *items);
  if (st || !items) {
    het_red_release(&in), het_red_release(&out), free(items);
    return st ? st : het_error(HET_ERR_OUT_OF_MEMORY,
                               "node '%s' (%s): out of memory",
                               ctx->node->name, ctx->node->op_type);
  }
  int64_t *idx = it ? it->data : NULL;
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      for (int64_t n = 0; n < N; n++)
        items[n] = (het_topk_item){in.data[(o * N + n) * I + i], n};
      qsort(items, (size_t)N, sizeof *items,
            largest ? het_topk_cmp_large : het_topk_cmp_small);
      for (int64_t n = 0; n < k; n++) {
        out.data[(o * k + n) * I + i] = items[n].v;
        if (idx)
          idx[(o * k + n) * I + i] = items[n].i;
      }
    }
  free(items);
  het_red_release(&in);
  if (het_dtype_is_int(vt->dtype) && idx) { /* exact wide integers */
    het_red_release(&out);
    for (int64_t o = 0; o < O; o++)
      for (int64_t n = 0; n < k; n++)
        for (int64_t i = 0; i < I; i++)
          het_dtype_store_i64(vt->dtype, vt->data, (o * k + n) * I + i,
                              het_dtype_load_i64(x->dtype, x->data,
                                                 (o * N + idx[(o * k + n) * I + i]) * I + i));
    return HET_OK;
  }
  het_red_finish(vt, &out);
  return HET_OK;
}

het_status het_kernel_cumsum_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  if (het_tensor_count(ctx->inputs[1]) != 1)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): axis must be a scalar",
                     ctx->node->name, ctx->node->op_type);
  int axis;
  HET_TRY(het_red_axis(ctx, het_tensor_get_i64(ctx->inputs[1], 0), x->rank,
                       &axis));
  bool excl = het_node_attr_int(ctx->node, "exclusive", 0) != 0;
  bool rev = het_node_attr_int(ctx->node, "reverse", 0) != 0;
  int64_t O, N, I;
  het_red_split(x, axis, &O, &N, &I);
  bool ints = het_dtype_is_int(x->dtype);
  het_red_buf in = {0}, out = {0};
  if (!ints) {
    HET_TRY(het_red_load(ctx, x, &in));
    het_status st = het_red_out(ctx, y, &out);
    if (st) {
      het_red_release(&in);
      return st;
    }
  }
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < N; s++) {
        int64_t n = rev ? N - 1 - s : s, e = (o * N + n) * I + i;
        if (ints) {
          int64_t v = het_dtype_load_i64(x->dtype, x->data, e);
          iacc += excl ? 0 : v;
          het_dtype_store_i64(y->dtype, y->data, e, iacc);
          iacc += excl ? v : 0;
        } else {
          double v = in.data[e];
          acc += excl ? 0 : v;
          out.data[e] = acc;
          acc += excl ? v : 0;
        }
      }
    }
  if (!ints) {
    het_red_release(&in);
    het_red_finish(y, &out);
  }
  return HET_OK;
}

/* Determinant of the n x n matrix a (overwritten). */
static double het_det_lu(double *a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; c++) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; r++)
      if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
        p = r;
    if (a[p * n + c] == 0)
      return 0;
    if (p != c) {
      for (int64_t j = 0; j < n; j++) {
        double t = a[c * n + j];
        a[c * n + j] = a[p * n + j];
        a[p * n + j] = t;
      }
      det = -det;
    }
    double piv = a[c * n + c];
    det *= piv;
    for (int64_t r = c + 1; r < n; r++) {
      double f = a[r * n + c] / piv;
      for (int64_t j = c; j < n; j++)
        a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

het_status het_kernel_det_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): input must be [..., M, M]",
                     ctx->node->name, ctx->node->op_type);
  int64_t n = x->dims[x->rank - 1], batch = het_tensor_count(ctx->outputs[0]);
  het_red_buf in, out;
  double *work;
  HET_TRY(het_red_load(ctx, x, &in));
  het_status st = het_red_out(ctx, ctx->outputs[0], &out);
  if (st || (st = het_red_scratch(ctx, n * n, &work))) {
    het_red_release(&in), het_red_release(&out);
    return st;
  }
  for (int64_t b = 0; b < batch; b++) {
    memcpy(work, in.data + b * n * n, (size_t)(n * n) * sizeof *work);
    out.data[b] = het_det_lu(work, n);
  }
  free(work);
  het_red_release(&in);
  het_red_finish(ctx->outputs[0], &out);
  return HET_OK;
}
