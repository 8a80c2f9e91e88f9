/* reduce.c — CPU kernels for the Reduce* family and ArgMax/ArgMin, and the
 * group table het_kernels_reduce.  A reduction is brought to the view
 * [outer, reduced, inner] (merging adjacent dims; non-adjacent reduced axes
 * are first transposed behind the kept ones) and accumulated in double, or
 * in int64 for integer sums/products/extrema so large values stay exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/reduce_common.h"

typedef enum het_red_kind {
  HET_RED_SUM, HET_RED_MEAN, HET_RED_MAX, HET_RED_MIN, HET_RED_PROD,
  HET_RED_L1, HET_RED_L2, HET_RED_LOGSUM, HET_RED_LOGSUMEXP, HET_RED_SUMSQ,
} het_red_kind;

static het_red_kind het_red_kind_of(const char *op) {
  static const char *const names[] = {
      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
      "ReduceSumSquare"};
  for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
    if (strcmp(op, names[k]) == 0)
      return (het_red_kind)k;
  return HET_RED_SUM;
}

/* The reduction's layout: x viewed as [O, R, I] after an optional
 * transpose perm (perm[0] < 0 when none is needed). */
typedef struct het_red_plan {
  bool noop;
  int64_t O, R, I;
  int perm[HET_MAX_RANK];
} het_red_plan;

static het_status het_red_mask(const het_kernel_ctx *ctx, int rank,
                               bool *mask, bool *noop) {
  const het_node *n = ctx->node;
  size_t count = 0;
  const het_tensor *at = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const int64_t *attr = NULL;
  if (at)
    count = (size_t)het_tensor_count(at);
  else
    attr = het_node_attr_ints(n, "axes", &count);
  memset(mask, 0, HET_MAX_RANK * sizeof *mask);
  *noop = false;
  for (size_t i = 0; i < count; i++) {
    int a;
    HET_TRY(het_red_axis(ctx, at ? het_tensor_get_i64(at, (int64_t)i)
                                 : attr[i], rank, &a));
    mask[a] = true;
  }
  if (count == 0) {
    *noop = het_node_attr_int(n, "noop_with_empty_axes", 0) != 0;
    for (int d = 0; d < rank; d++)
      mask[d] = true;
  }
  return HET_OK;
}

/* Pass 1: group non-unit dims into runs of kept/reduced axes.  Pass 2: a
 * single reduced run needs no transpose; otherwise move kept axes first. */
static het_status het_red_plan_make(const het_kernel_ctx *ctx,
                                    const het_tensor *x, het_red_plan *p) {
  bool mask[HET_MAX_RANK];
  HET_TRY(het_red_mask(ctx, x->rank, mask, &p->noop));
  int runs = 0, red_runs = 0, last = -1;
  for (int d = 0; d < x->rank; d++) {
    if (x->dims[d] == 1)
      continue;
    if ((int)mask[d] != last) {
      runs++;
      red_runs += mask[d];
      last = mask[d];
    }
  }
  p->O = p->R = p->I = 1;
  p->perm[0] = -1;
  if (red_runs <= 1) {
    bool seen_red = false;
    for (int d = 0; d < x->rank; d++) {
      if (mask[d]) {
        p->R *= x->dims[d];
        seen_red |= x->dims[d] != 1;
      } else if (seen_red) {
        p->I *= x->dims[d];
      } else {
        p->O *= x->dims[d];
      }
    }
    return HET_OK;
  }
  int k = 0;
  for (int d = 0; d < x->rank; d++)
    if (!mask[d]) {
      p->perm[k++] = d;
      p->O *= x->dims[d];
    }
  for (int d = 0; d < x->rank; d++)
    if (mask[d]) {
      p->perm[k++] = d;
      p->R *= x->dims[d];
    }
  return HET_OK;
}

/* dst = transpose(src, perm) for 8-byte elements. */
static void het_red_permute(const uint64_t *src, uint64_t *dst,
                            const int64_t *dims, int rank, const int *perm) {
  int64_t stride[HET_MAX_RANK], pd[HET_MAX_RANK], ps[HET_MAX_RANK];
  int64_t idx[HET_MAX_RANK] = {0}, total = het_dims_count(dims, rank), s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= dims[d];
  }
  for (int d = 0; d < rank; d++) {
    pd[d] = dims[perm[d]];
    ps[d] = stride[perm[d]];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < total; i++) {
    dst[i] = src[off];
    for (int d = rank - 1; d >= 0; d--) {
      off += ps[d];
      if (++idx[d] < pd[d])
        break;
      off -= ps[d] * pd[d];
      idx[d] = 0;
    }
  }
}

#define HET_RED_ORI(T, INIT, COMBINE)                                   \
  for (int64_t o = 0; o < O; o++) {                                     \
    const T *restrict xo = x + o * R * I;                               \
    T *restrict yo = y + o * I;                                         \
    for (int64_t i = 0; i < I; i++)                                     \
      yo[i] = (INIT);                                                   \
    for (int64_t r = 0; r < R; r++) {                                   \
      const T *restrict xr = xo + r * I;                                \
      for (int64_t i = 0; i < I; i++) {                                 \
        T a = yo[i], v = xr[i];                                         \
        yo[i] = (COMBINE);                                              \
      }                                                                 \
    }                                                                   \
  }

static void het_red_logsumexp(const double *x, double *y, int64_t O,
                              int64_t R, int64_t I, double *sum) {
  HET_RED_ORI(double, -INFINITY, (v > a || v != v) ? v : a);
  for (int64_t o = 0; o < O; o++) {
    const double *xo = x + o * R * I;
    double *yo = y + o * I;
    for (int64_t i = 0; i < I; i++)
      sum[i] = 0;
    for (int64_t r = 0; r < R; r++)
      for (int64_t i = 0; i < I; i++)
        sum[i] += exp(xo[r * I + i] - yo[i]);
    for (int64_t i = 0; i < I; i++)
      if (isfinite(yo[i]))
        yo[i] += log(sum[i]);
  }
}

static void het_red_f64(het_red_kind k, const double *x, double *y, int64_t O,
                        int64_t R, int64_t I) {
  switch (k) {
  case HET_RED_SUM: case HET_RED_MEAN: case HET_RED_LOGSUM:
    HET_RED_ORI(double, 0.0, a + v);
    break;
  case HET_RED_MAX:
    HET_RED_ORI(double, -INFINITY, (v > a || v != v) ? v : a);
    break;
  case HET_RED_MIN:
    HET_RED_ORI(double, INFINITY, (v < a || v != v) ? v : a);
    break;
  case HET_RED_PROD:
    HET_RED_ORI(double, 1.0, a * v);
    break;
  case HET_RED_L1:
    HET_RED_ORI(double, 0.0, a + fabs(v));
    break;
  case HET_RED_L2: case HET_RED_SUMSQ:
    HET_RED_ORI(double, 0.0, a + v * v);
    break;
  case HET_RED_LOGSUMEXP:
    break;
  }
  int64_t n = O * I;
  for (int64_t i = 0; i < n; i++) {
    if (k == HET_RED_MEAN)
      y[i] = y[i] / (double)R;
    else if (k == HET_RED_L2)
      y[i] = sqrt(y[i]);
    else if (k == HET_RED_LOGSUM)
      y[i] = log(y[i]);
  }
}

static void het_red_i64(het_red_kind k, const int64_t *x, int64_t *y,
                        int64_t O, int64_t R, int64_t I) {
  switch (k) {
  case HET_RED_MAX:
    HET_RED_ORI(int64_t, INT64_MIN, v > a ? v : a);
    break;
  case HET_RED_MIN:
    HET_RED_ORI(int64_t, INT64_MAX, v < a ? v : a);
    break;
  case HET_RED_PROD:
    HET_RED_ORI(int64_t, 1, (int64_t)((uint64_t)a * (uint64_t)v));
    break;
  case HET_RED_L1:
    HET_RED_ORI(int64_t, 0, a + (v < 0 ? -v : v));
    break;
  case HET_RED_SUMSQ:
    HET_RED_ORI(int64_t, 0, (int64_t)((uint64_t)a + (uint64_t)v * (uint64_t)v));
    break;
  default:
    HET_RED_ORI(int64_t, 0, (int64_t)((uint64_t)a + (uint64_t)v));
    break;
  }
  if (k == HET_RED_MEAN && R > 0)
    for (int64_t i = 0; i < O * I; i++)
      y[i] /= R;
}

static bool het_red_int_path(het_red_kind k, het_dtype dt) {
  return het_dtype_is_int(dt) && k != HET_RED_L2 && k != HET_RED_LOGSUM &&
         k != HET_RED_LOGSUMEXP;
}

/* Integer inputs: load as int64, reduce, store. */
static het_status het_red_run_int(het_kernel_ctx *ctx, het_red_kind k,
                                  const het_red_plan *p) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *yt = ctx->outputs[0];
  int64_t n = het_tensor_count(x), m = p->O * p->I;
  int64_t *a = malloc((size_t)(n + 1) * sizeof *a);
  int64_t *b = malloc((size_t)(n + 1) * sizeof *b);
  int64_t *y = malloc((size_t)(m + 1) * sizeof *y);
  if (!a || !b || !y) {
    free(a), free(b), free(y);
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (%s): out of memory",
                     ctx->node->name, ctx->node->op_type);
  }
  for (int64_t i = 0; i < n; i++)
    a[i] = het_dtype_load_i64(x->dtype, x->data, i);
  const int64_t *src = a;
  if (p->perm[0] >= 0) {
    het_red_permute((const uint64_t *)a, (uint64_t *)b, x->dims, x->rank,
                    p->perm);
    src = b;
  }
  het_red_i64(k, src, y, p->O, p->R, p->I);
  for (int64_t i = 0; i < m; i++)
    het_dtype_store_i64(yt->dtype, yt->data, i, y[i]);
  free(a), free(b), free(y);
  return HET_OK;
}

static het_status het_red_run_float(het_kernel_ctx *ctx, het_red_kind k,
                                    const het_red_plan *p) {
  const het_tensor *x = ctx->inputs[0];
  het_red_buf in = {0}, out = {0};
  double *tmp = NULL, *sum = NULL;
  het_status st;
  if ((st = het_red_load(ctx, x, &in)) || (st = het_red_out(ctx, ctx->outputs[0], &out)))
    goto fail;
  const double *src = in.data;
  if (p->perm[0] >= 0) {
    if ((st = het_red_scratch(ctx, het_tensor_count(x), &tmp)))
      goto fail;
    het_red_permute((const uint64_t *)in.data, (uint64_t *)tmp, x->dims,
                    x->rank, p->perm);
    src = tmp;
  }
  if (k == HET_RED_LOGSUMEXP) {
    if ((st = het_red_scratch(ctx, p->I, &sum)))
      goto fail;
    het_red_logsumexp(src, out.data, p->O, p->R, p->I, sum);
  } else {
    het_red_f64(k, src, out.data, p->O, p->R, p->I);
  }
  het_red_finish(ctx->outputs[0], &out);
  het_red_release(&in);
  free(tmp), free(sum);
  return HET_OK;
fail:
  het_red_release(&in), het_red_release(&out);
  free(tmp), free(sum);
  return st;
}

het_status het_kernel_reduce_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  het_red_plan p;
  HET_TRY(het_red_plan_make(ctx, x, &p));
  if (p.noop) {
    if (y->nbytes != x->nbytes)
      return het_error(HET_ERR_INTERNAL, "node '%s' (%s): noop size mismatch",
                       ctx->node->name, ctx->node->op_type);
    memcpy(y->data, x->data, x->nbytes);
    return HET_OK;
  }
  if (het_tensor_count(y) != p.O * p.I)
    return het_error(HET_ERR_INTERNAL,
                     "node '%s' (%s): output holds %lld elements, expected %lld",
                     ctx->node->name, ctx->node->op_type,
                     (long long)het_tensor_count(y), (long long)(p.O * p.I));
  het_red_kind k = het_red_kind_of(ctx->node->op_type);
  if (x->dtype == HET_DTYPE_FLOAT32 && y->dtype == HET_DTYPE_FLOAT32 &&
      p.perm[0] < 0 && k != HET_RED_LOGSUMEXP)
    return het_red_f32_run(ctx, (int)k, x->data, y->data, p.O, p.R, p.I);
  if (het_red_int_path(k, x->dtype))
    return het_red_run_int(ctx, k, &p);
  return het_red_run_float(ctx, k, &p);
}

het_status het_kernel_argreduce_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  int64_t *y = ctx->outputs[0]->data;
  int axis;
  HET_TRY(het_red_axis(ctx, het_node_attr_int(ctx->node, "axis", 0), x->rank,
                       &axis));
  bool is_max = strcmp(ctx->node->op_type, "ArgMax") == 0;
  bool last = het_node_attr_int(ctx->node, "select_last_index", 0) != 0;
  int64_t O, N, I;
  het_red_split(x, axis, &O, &N, &I);
  if (N == 0 && O * I > 0)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): axis %d is empty",
                     ctx->node->name, ctx->node->op_type, axis);
  het_red_buf in;
  HET_TRY(het_red_load(ctx, x, &in));
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      const double *v = in.data + o * N * I + i;
      int64_t best = 0;
      for (int64_t n = 1; n < N; n++) {
        double a = v[n * I], b = v[best * I];
        bool better = is_max ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
        if (better)
          best = n;
      }
      y[o * I + i] = best;
    }
  het_red_release(&in);
  return HET_OK;
}

const het_kernel het_kernels_reduce[] = {
    {.op_type = "ReduceSum", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceMean", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceMax", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceMin", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceProd", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceL1", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceL2", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceLogSum", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceLogSumExp", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ReduceSumSquare", .domain = "", .run = het_kernel_reduce_run},
    {.op_type = "ArgMax", .domain = "", .run = het_kernel_argreduce_run},
    {.op_type = "ArgMin", .domain = "", .run = het_kernel_argreduce_run},
    {.op_type = "Softmax", .domain = "", .run = het_kernel_softmax_run},
    {.op_type = "LogSoftmax", .domain = "", .run = het_kernel_softmax_run},
    {.op_type = "Hardmax", .domain = "", .run = het_kernel_hardmax_run},
    {.op_type = "LayerNormalization", .domain = "", .run = het_kernel_layernorm_run},
    {.op_type = "InstanceNormalization", .domain = "",
     .run = het_kernel_instancenorm_run},
    {.op_type = "MeanVarianceNormalization", .domain = "",
     .run = het_kernel_mvn_run},
    {.op_type = "LRN", .domain = "", .run = het_kernel_lrn_run},
    {.op_type = "TopK", .domain = "", .run = het_kernel_topk_run},
    {.op_type = "CumSum", .domain = "", .run = het_kernel_cumsum_run},
    {.op_type = "Det", .domain = "", .run = het_kernel_det_run},
    {.op_type = "NegativeLogLikelihoodLoss", .domain = "",
     .run = het_kernel_nllloss_run},
    {.op_type = "SoftmaxCrossEntropyLoss", .domain = "",
     .run = het_kernel_sceloss_run},
    {.op_type = "Einsum", .domain = "", .run = het_kernel_einsum_run},
    {0},
};
