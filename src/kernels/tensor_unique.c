/* tensor_unique.c — CPU kernel for Unique (flattened or along an axis,
 * sorted or in first-occurrence order).  Slices are ordered by a stable
 * merge sort on their element values, so each run's first member is the
 * first occurrence.  All four outputs are sized here.
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/tensor_kernels.h"

typedef struct unique_view {
  const het_tensor *t;
  int64_t outer, n, inner; /* slice i = t[o, i, j] for all o, j */
} unique_view;

static int cmp_slices(const unique_view *v, int64_t a, int64_t b) {
  bool fl = het_dtype_is_float(v->t->dtype);
  for (int64_t o = 0; o < v->outer; o++)
    for (int64_t j = 0; j < v->inner; j++) {
      int64_t ia = (o * v->n + a) * v->inner + j, ib = (o * v->n + b) * v->inner + j;
      if (fl) {
        double x = het_dtype_load_f64(v->t->dtype, v->t->data, ia);
        double y = het_dtype_load_f64(v->t->dtype, v->t->data, ib);
        if (x != y) return x < y ? -1 : 1;
      } else {
        int64_t x = het_dtype_load_i64(v->t->dtype, v->t->data, ia);
        int64_t y = het_dtype_load_i64(v->t->dtype, v->t->data, ib);
        if (x != y) return x < y ? -1 : 1;
      }
    }
  return 0;
}

/* Stable merge sort of idx[0..n) by slice value (key NULL) or by key[]. */
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n,
                       const unique_view *v, const int64_t *key) {
  if (n < 2)
    return;
  int64_t h = n / 2, i = 0, j = h, k = 0;
  merge_sort(idx, tmp, h, v, key);
  merge_sort(idx + h, tmp, n - h, v, key);
  while (i < h && j < n) {
    int c = key ? (key[idx[j]] < key[idx[i]] ? 1 : 0)
                : cmp_slices(v, idx[j], idx[i]) < 0;
    tmp[k++] = c ? idx[j++] : idx[i++];
  }
  while (i < h) tmp[k++] = idx[i++];
  while (j < n) tmp[k++] = idx[j++];
  memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

static het_status out_alloc(het_tensor *t, int64_t len) {
  if (!t || (t->data && t->rank == 1 && t->dims[0] == len))
    return HET_OK;
  return het_tensor_alloc(t, HET_DTYPE_INT64, &len, 1);
}

/* Writes Y, indices, inverse_indices and counts from the groups. */
static het_status unique_write(het_kernel_ctx *ctx, const unique_view *v,
                               int ax, const int64_t *first, const int64_t *cnt,
                               const int64_t *grp, int64_t ng) {
  const het_tensor *in = v->t;
  het_tensor *y = ctx->outputs[0];
  int64_t dims[HET_MAX_RANK];
  int rank = ax >= 0 ? in->rank : 1;
  memcpy(dims, in->dims, sizeof dims);
  dims[ax >= 0 ? ax : 0] = ng;
  HET_TRY(het_tensor_alloc(y, in->dtype, dims, rank));
  size_t es = het_dtype_size(in->dtype), row = (size_t)v->inner * es;
  for (int64_t o = 0; o < v->outer; o++)
    for (int64_t g = 0; g < ng; g++)
      memcpy((char *)y->data + (o * ng + g) * (int64_t)row,
             (const char *)in->data + (o * v->n + first[g]) * (int64_t)row, row);
  het_tensor *outs[3] = {ctx->n_outputs > 1 ? ctx->outputs[1] : NULL,
                         ctx->n_outputs > 2 ? ctx->outputs[2] : NULL,
                         ctx->n_outputs > 3 ? ctx->outputs[3] : NULL};
  const int64_t *src[3] = {first, grp, cnt};
  int64_t len[3] = {ng, v->n, ng};
  for (int i = 0; i < 3; i++) {
    HET_TRY(out_alloc(outs[i], len[i]));
    if (outs[i] && len[i])
      memcpy(outs[i]->data, src[i], (size_t)len[i] * sizeof(int64_t));
  }
  return HET_OK;
}

het_status het_kernel_run_unique(het_kernel_ctx *ctx) {
  const het_tensor *in = ctx->inputs[0];
  const het_attr *a = het_node_find_attr(ctx->node, "axis");
  bool sorted = het_node_attr_int(ctx->node, "sorted", 1) != 0;
  int ax = a ? (int)(a->i < 0 ? a->i + in->rank : a->i) : -1;
  unique_view v = {in, 1, het_tensor_count(in), 1};
  if (ax >= 0) {
    v.outer = het_dims_count(in->dims, ax);
    v.n = in->dims[ax];
    v.inner = het_dims_count(in->dims + ax + 1, in->rank - ax - 1);
  }
  size_t n = (size_t)(v.n ? v.n : 1);
  int64_t *buf = malloc(6 * n * sizeof *buf);
  if (!buf)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (Unique): out of memory",
                     ctx->node->name);
  int64_t *order = buf, *tmp = buf + n, *first = buf + 2 * n, *cnt = buf + 3 * n,
          *grp = buf + 4 * n, *rank_of = buf + 5 * n, ng = 0;
  for (int64_t i = 0; i < v.n; i++)
    order[i] = i;
  merge_sort(order, tmp, v.n, &v, NULL);
  for (int64_t i = 0; i < v.n; i++) {
    if (i == 0 || cmp_slices(&v, order[i - 1], order[i]) != 0) {
      first[ng] = order[i];
      cnt[ng++] = 0;
    }
    cnt[ng - 1]++;
    grp[order[i]] = ng - 1;
  }
  if (!sorted) { /* reorder groups by first occurrence */
    for (int64_t g = 0; g < ng; g++)
      order[g] = g;
    merge_sort(order, tmp, ng, &v, first);
    for (int64_t g = 0; g < ng; g++)
      rank_of[order[g]] = g;
    for (int64_t g = 0; g < ng; g++)
      tmp[g] = first[order[g]];
    memcpy(first, tmp, (size_t)ng * sizeof *tmp);
    for (int64_t g = 0; g < ng; g++)
      tmp[rank_of[g]] = cnt[g];
    memcpy(cnt, tmp, (size_t)ng * sizeof *tmp);
    for (int64_t i = 0; i < v.n; i++)
      grp[i] = rank_of[grp[i]];
  }
  het_status st = unique_write(ctx, &v, ax, first, cnt, grp, ng);
  free(buf);
  return st;
}
