/* tensor_index.c — CPU kernels for the indexing ops: Gather,
 * GatherElements, GatherND, ScatterND, Scatter/ScatterElements, OneHot,
 * NonZero, Compress.  Indices are checked; an out-of-range index is an
 * error naming the node, never an out-of-bounds access.
 */
#include <string.h>

#include "core/dtype.h"
#include "kernels/tensor_kernels.h"

static int norm_axis(const het_kernel_ctx *ctx, int64_t dflt, int rank) {
  int64_t a = het_node_attr_int(ctx->node, "axis", dflt);
  return (int)(a < 0 ? a + rank : a);
}

het_status het_kernel_run_gather(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0], *ix = ctx->inputs[1];
  het_tensor *o = ctx->outputs[0];
  int ax = norm_axis(ctx, 0, in->rank);
  size_t es = het_dtype_size(in->dtype);
  int64_t outer = het_dims_count(in->dims, ax), axd = in->dims[ax];
  int64_t inner = het_dims_count(in->dims + ax + 1, in->rank - ax - 1);
  int64_t n = het_tensor_count(ix);
  size_t row = (size_t)inner * es;
  for (int64_t j = 0; j < n; j++) {
    int64_t k;
    HET_TRY(het_kernel_index(ctx, het_tensor_get_i64(ix, j), axd, &k));
    for (int64_t b = 0; b < outer; b++)
      memcpy((char *)o->data + (b * n + j) * (int64_t)row,
             (const char *)in->data + (b * axd + k) * (int64_t)row, row);
  }
  return HET_OK;
}

/* Shared walk of GatherElements / ScatterElements: for each element e of
 * indices (shape of ix), the data offset with the axis coordinate replaced
 * by the index.  scatter selects the direction. */
static het_status elements_walk(het_kernel_ctx *ctx, het_tensor *data,
                                const het_tensor *ix, const het_tensor *upd,
                                het_tensor *gathered, const char *reduction);

het_status het_kernel_run_gather_elements(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  return elements_walk(ctx, ctx->inputs[0], ctx->inputs[1], NULL,
                       ctx->outputs[0], NULL);
}

/* dst[i] op= src[j] for reductions add, mul, max, min; "none" copies. */
static void reduce_elem(het_dtype t, void *dst, int64_t i, const void *src,
                        int64_t j, const char *red) {
  size_t es = het_dtype_size(t);
  if (!red || strcmp(red, "none") == 0) {
    memcpy((char *)dst + i * (int64_t)es, (const char *)src + j * (int64_t)es, es);
    return;
  }
  if (het_dtype_is_float(t)) {
    double a = het_dtype_load_f64(t, dst, i), b = het_dtype_load_f64(t, src, j);
    double r = red[0] == 'a' ? a + b : red[1] == 'u' ? a * b
               : strcmp(red, "max") == 0 ? (a > b ? a : b) : (a < b ? a : b);
    het_dtype_store_f64(t, dst, i, r);
  } else {
    int64_t a = het_dtype_load_i64(t, dst, i), b = het_dtype_load_i64(t, src, j);
    int64_t r = red[0] == 'a' ? (int64_t)((uint64_t)a + (uint64_t)b)
                : red[1] == 'u' ? (int64_t)((uint64_t)a * (uint64_t)b)
                : strcmp(red, "max") == 0 ? (a > b ? a : b) : (a < b ? a : b);
    het_dtype_store_i64(t, dst, i, r);
  }
}

static het_status elements_walk(het_kernel_ctx *ctx, het_tensor *data,
                                const het_tensor *ix, const het_tensor *upd,
                                het_tensor *gathered, const char *red) {
  int r = data->rank, ax = norm_axis(ctx, 0, r);
  int64_t dst[HET_MAX_RANK], idx[HET_MAX_RANK] = {0};
  int64_t n = het_tensor_count(ix);
  size_t es = het_dtype_size(data->dtype);
  het_kernel_strides(data->dims, r, dst);
  for (int d = 0; d < r; d++)
    if (d != ax && ix->dims[d] > data->dims[d])
      return het_error(HET_ERR_SHAPE,
                       "node '%s' (%s): indices dim %d exceeds data dim",
                       ctx->node->name, ctx->node->op_type, d);
  for (int64_t e = 0; e < n; e++) {
    int64_t k, off = 0;
    HET_TRY(het_kernel_index(ctx, het_tensor_get_i64(ix, e), data->dims[ax], &k));
    for (int d = 0; d < r; d++)
      off += (d == ax ? k : idx[d]) * dst[d];
    if (upd)
      reduce_elem(data->dtype, ctx->outputs[0]->data, off, upd->data, e, red);
    else
      memcpy((char *)gathered->data + e * (int64_t)es,
             (const char *)data->data + off * (int64_t)es, es);
    for (int d = r - 1; d >= 0 && ++idx[d] == ix->dims[d]; d--)
      idx[d] = 0;
  }
  return HET_OK;
}

/* Scatter updates must be of data's type: the copies are element-sized
 * by data's, so narrower updates would be read past their end. */
static het_status updates_type(const het_kernel_ctx *ctx, const het_tensor *data,
                               const het_tensor *up) {
  if (up->dtype == data->dtype && ctx->outputs[0]->dtype == data->dtype)
    return HET_OK;
  return het_error(HET_ERR_TYPE, "node '%s' (%s): updates are %s, data %s "
                   "(they must match)", ctx->node->name, ctx->node->op_type,
                   het_dtype_str(up->dtype), het_dtype_str(data->dtype));
}

het_status het_kernel_run_scatter_elements(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  if (o->data != ctx->inputs[0]->data)
    memcpy(o->data, ctx->inputs[0]->data, o->nbytes);
  if (het_tensor_count(ctx->inputs[1]) != het_tensor_count(ctx->inputs[2]))
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): updates and indices differ",
                     ctx->node->name, ctx->node->op_type);
  HET_TRY(updates_type(ctx, ctx->inputs[0], ctx->inputs[2]));
  return elements_walk(ctx, ctx->inputs[0], ctx->inputs[1], ctx->inputs[2],
                       NULL, het_node_attr_string(ctx->node, "reduction"));
}

/* Offset (in elements, within one batch) of index tuple t of GatherND /
 * ScatterND; dims/strides are the data's from the first indexed dim. */
static het_status nd_offset(het_kernel_ctx *ctx, const het_tensor *ix,
                            int64_t t, int64_t k, const int64_t *dims,
                            const int64_t *st, int64_t *off) {
  *off = 0;
  for (int64_t j = 0; j < k; j++) {
    int64_t v;
    HET_TRY(het_kernel_index(ctx, het_tensor_get_i64(ix, t * k + j), dims[j], &v));
    *off += v * st[j];
  }
  return HET_OK;
}

het_status het_kernel_run_gather_nd(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0], *ix = ctx->inputs[1];
  het_tensor *o = ctx->outputs[0];
  int b = (int)het_node_attr_int(ctx->node, "batch_dims", 0), q = ix->rank;
  int64_t k = ix->dims[q - 1], st[HET_MAX_RANK];
  size_t es = het_dtype_size(in->dtype);
  int64_t nb = het_dims_count(in->dims, b);
  int64_t per = het_dims_count(ix->dims + b, q - 1 - b);
  int64_t slice = het_dims_count(in->dims + b + k, in->rank - b - (int)k);
  int64_t bsz = het_dims_count(in->dims + b, in->rank - b);
  het_kernel_strides(in->dims + b, in->rank - b, st);
  for (int64_t bi = 0; bi < nb; bi++)
    for (int64_t t = 0; t < per; t++) {
      int64_t off;
      HET_TRY(nd_offset(ctx, ix, bi * per + t, k, in->dims + b, st, &off));
      memcpy((char *)o->data + (bi * per + t) * slice * (int64_t)es,
             (const char *)in->data + (bi * bsz + off) * (int64_t)es,
             (size_t)slice * es);
    }
  return HET_OK;
}

het_status het_kernel_run_scatter_nd(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0], *ix = ctx->inputs[1],
                   *up = ctx->inputs[2];
  het_tensor *o = ctx->outputs[0];
  const char *red = het_node_attr_string(ctx->node, "reduction");
  HET_TRY(updates_type(ctx, in, up));
  int64_t k = ix->dims[ix->rank - 1], st[HET_MAX_RANK];
  if (k > in->rank)
    return het_error(HET_ERR_SHAPE, "node '%s' (ScatterND): index depth %lld "
                     "exceeds data rank %d", ctx->node->name, (long long)k,
                     in->rank);
  int64_t n = het_dims_count(ix->dims, ix->rank - 1);
  int64_t slice = het_dims_count(in->dims + k, in->rank - (int)k);
  if (het_tensor_count(up) != n * slice)
    return het_error(HET_ERR_SHAPE, "node '%s' (ScatterND): updates has %lld "
                     "elements, expected %lld", ctx->node->name,
                     (long long)het_tensor_count(up), (long long)(n * slice));
  if (o->data != in->data)
    memcpy(o->data, in->data, o->nbytes);
  het_kernel_strides(in->dims, in->rank, st);
  for (int64_t t = 0; t < n; t++) {
    int64_t off;
    HET_TRY(nd_offset(ctx, ix, t, k, in->dims, st, &off));
    for (int64_t e = 0; e < slice; e++)
      reduce_elem(o->dtype, o->data, off + e, up->data, t * slice + e, red);
  }
  return HET_OK;
}

het_status het_kernel_run_one_hot(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *ix = ctx->inputs[0], *vals = ctx->inputs[2];
  het_tensor *o = ctx->outputs[0];
  int ax = norm_axis(ctx, -1, o->rank);
  int64_t depth = o->dims[ax];
  int64_t outer = het_dims_count(o->dims, ax);
  int64_t inner = het_dims_count(o->dims + ax + 1, o->rank - ax - 1);
  size_t es = het_dtype_size(o->dtype);
  if (het_tensor_count(vals) != 2)
    return het_error(HET_ERR_SHAPE, "node '%s' (OneHot): values must have 2 "
                     "elements", ctx->node->name);
  const char *off = vals->data, *on = off + es;
  if (het_tensor_count(o) == 0) /* a depth of 2^40 over nothing: no work */
    return HET_OK;
  for (int64_t a = 0; a < outer; a++)
    for (int64_t d = 0; d < depth; d++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t v = het_dtype_load_i64(ix->dtype, ix->data, a * inner + i);
        if (v < 0) v += depth;
        memcpy((char *)o->data + ((a * depth + d) * inner + i) * (int64_t)es,
               v == d ? on : off, es);
      }
  return HET_OK;
}

static bool elem_nonzero(const het_tensor *t, int64_t i) {
  if (het_dtype_is_float(t->dtype))
    return het_dtype_load_f64(t->dtype, t->data, i) != 0.0;
  return het_dtype_load_i64(t->dtype, t->data, i) != 0;
}

het_status het_kernel_run_non_zero(het_kernel_ctx *ctx) {
  const het_tensor *in = ctx->inputs[0];
  het_tensor *o = ctx->outputs[0];
  int64_t n = het_tensor_count(in), c = 0, idx[HET_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++)
    c += elem_nonzero(in, i);
  int64_t dims[2] = {in->rank, c};
  HET_TRY(het_tensor_alloc(o, HET_DTYPE_INT64, dims, 2));
  int64_t *out = o->data, k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (elem_nonzero(in, i)) {
      for (int d = 0; d < in->rank; d++)
        out[d * c + k] = idx[d];
      k++;
    }
    for (int d = in->rank - 1; d >= 0 && ++idx[d] == in->dims[d]; d--)
      idx[d] = 0;
  }
  return HET_OK;
}

het_status het_kernel_run_compress(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0], *cond = ctx->inputs[1];
  het_tensor *o = ctx->outputs[0];
  const het_attr *a = het_node_find_attr(ctx->node, "axis");
  size_t es = het_dtype_size(in->dtype);
  int ax = a ? (int)(a->i < 0 ? a->i + in->rank : a->i) : -1;
  int64_t outer = ax >= 0 ? het_dims_count(in->dims, ax) : 1;
  int64_t axd = ax >= 0 ? in->dims[ax] : het_tensor_count(in);
  int64_t inner = ax >= 0 ? het_dims_count(in->dims + ax + 1, in->rank - ax - 1) : 1;
  int64_t nc = het_tensor_count(cond), kept = 0;
  const uint8_t *cv = cond->data;
  for (int64_t i = 0; i < nc && i < axd; i++)
    kept += cv[i] != 0;
  if (kept * outer * inner != het_tensor_count(o))
    return het_error(HET_ERR_INTERNAL, "node '%s' (Compress): output size",
                     ctx->node->name);
  size_t row = (size_t)inner * es;
  char *dp = o->data;
  for (int64_t b = 0; b < outer; b++)
    for (int64_t i = 0; i < nc && i < axd; i++)
      if (cv[i]) {
        memcpy(dp, (const char *)in->data + (b * axd + i) * (int64_t)row, row);
        dp += row;
      }
  return HET_OK;
}
