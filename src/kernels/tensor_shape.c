/* tensor_shape.c — CPU kernels for Constant, ConstantOfShape, the copy ops
 * (Identity, Reshape, Flatten, Squeeze, Unsqueeze), Shape, Size, Range,
 * EyeLike, Trilu, Expand and Tile.
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/tensor_kernels.h"

het_status het_kernel_run_constant(het_kernel_ctx *ctx) {
  het_tensor *o = ctx->outputs[0];
  const het_node *n = ctx->node;
  const het_attr *a;
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  if ((a = het_node_find_attr(n, "value")) && a->t) {
    if (a->t->nbytes != o->nbytes)
      return het_error(HET_ERR_INTERNAL, "node '%s': constant size changed",
                       n->name);
    memcpy(o->data, a->t->data, o->nbytes);
  } else if ((a = het_node_find_attr(n, "value_float"))) {
    *(float *)o->data = a->f;
  } else if ((a = het_node_find_attr(n, "value_int"))) {
    *(int64_t *)o->data = a->i;
  } else if ((a = het_node_find_attr(n, "value_floats"))) {
    if (a->n) memcpy(o->data, a->floats, a->n * sizeof(float));
  } else if ((a = het_node_find_attr(n, "value_ints"))) {
    if (a->n) memcpy(o->data, a->ints, a->n * sizeof(int64_t));
  } else {
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (Constant): no value",
                     n->name);
  }
  return HET_OK;
}

het_status het_kernel_run_constant_of_shape(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_attr *a = het_node_find_attr(ctx->node, "value");
  size_t es = het_dtype_size(o->dtype);
  int64_t n = het_tensor_count(o);
  if (!a || !a->t) {
    memset(o->data, 0, o->nbytes);
    return HET_OK;
  }
  for (int64_t i = 0; i < n; i++)
    memcpy((char *)o->data + i * (int64_t)es, a->t->data, es);
  return HET_OK;
}

het_status het_kernel_run_copy(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  if (o->nbytes != in->nbytes)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): output has %zu bytes, input %zu",
                     ctx->node->name, ctx->node->op_type, o->nbytes,
                     in->nbytes);
  if (o->data != in->data && in->nbytes)
    memcpy(o->data, in->data, in->nbytes);
  return HET_OK;
}

het_status het_kernel_run_shape(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  int r = ctx->inputs[0]->rank;
  int64_t start = het_node_attr_int(ctx->node, "start", 0);
  int64_t end = het_node_attr_int(ctx->node, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t *out = ctx->outputs[0]->data;
  for (int64_t i = start; i < end; i++)
    out[i - start] = ctx->inputs[0]->dims[i];
  return HET_OK;
}

het_status het_kernel_run_size(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  *(int64_t *)ctx->outputs[0]->data = het_tensor_count(ctx->inputs[0]);
  return HET_OK;
}

het_status het_kernel_run_range(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  het_dtype t = o->dtype;
  int64_t n = het_tensor_count(o);
  if (het_dtype_is_float(t)) {
    double s = het_dtype_load_f64(t, ctx->inputs[0]->data, 0);
    double d = het_dtype_load_f64(t, ctx->inputs[2]->data, 0);
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_f64(t, o->data, i, s + (double)i * d);
  } else {
    int64_t s = het_dtype_load_i64(t, ctx->inputs[0]->data, 0);
    int64_t d = het_dtype_load_i64(t, ctx->inputs[2]->data, 0);
    for (int64_t i = 0; i < n; i++)
      het_dtype_store_i64(t, o->data, i, s + i * d);
  }
  return HET_OK;
}

het_status het_kernel_run_eye_like(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  int64_t k = het_node_attr_int(ctx->node, "k", 0);
  int64_t rows = o->dims[0], cols = o->dims[1];
  memset(o->data, 0, o->nbytes);
  for (int64_t i = 0; i < rows; i++) {
    int64_t j = i + k;
    if (j >= 0 && j < cols)
      het_dtype_store_f64(o->dtype, o->data, i * cols + j, 1.0);
  }
  return HET_OK;
}

het_status het_kernel_run_trilu(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  bool upper = het_node_attr_int(ctx->node, "upper", 1) != 0;
  int64_t k = 0;
  if (ctx->n_inputs > 1 && ctx->inputs[1]) {
    if (het_tensor_count(ctx->inputs[1]) != 1)
      return het_error(HET_ERR_SHAPE, "node '%s' (Trilu): k must be a scalar",
                       ctx->node->name);
    k = het_tensor_get_i64(ctx->inputs[1], 0);
  }
  size_t es = het_dtype_size(o->dtype);
  int64_t rows = in->dims[in->rank - 2], cols = in->dims[in->rank - 1];
  int64_t mats = rows * cols != 0 ? het_tensor_count(in) / (rows * cols) : 0;
  if (o->data != in->data)
    memcpy(o->data, in->data, in->nbytes);
  char *p = o->data;
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          memset(p + ((m * rows + i) * cols + j) * (int64_t)es, 0, es);
      }
  return HET_OK;
}

het_status het_kernel_run_expand(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  int64_t ist[HET_MAX_RANK], src_st[HET_MAX_RANK], dst_st[HET_MAX_RANK];
  int off = o->rank - in->rank;
  if (off < 0)
    return het_error(HET_ERR_SHAPE, "node '%s' (Expand): output rank too small",
                     ctx->node->name);
  het_kernel_strides(in->dims, in->rank, ist);
  het_kernel_strides(o->dims, o->rank, dst_st);
  for (int d = 0; d < o->rank; d++) {
    int id = d - off;
    src_st[d] = id < 0 || in->dims[id] == 1 ? 0 : ist[id];
    if (id >= 0 && in->dims[id] != 1 && in->dims[id] != o->dims[d])
      return het_error(HET_ERR_SHAPE,
                       "node '%s' (Expand): dim %d of %lld cannot expand to %lld",
                       ctx->node->name, id, (long long)in->dims[id],
                       (long long)o->dims[d]);
  }
  het_kernel_copy_strided(o->data, dst_st, in->data, src_st, o->dims, o->rank,
                       het_dtype_size(o->dtype));
  return HET_OK;
}

het_status het_kernel_run_tile(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  int64_t st[HET_MAX_RANK], *maps[HET_MAX_RANK], total = 0;
  /* An empty output may still have a dim of 2^62 (repeats {0, 2^60}):
   * there is nothing to map, and the maps would not fit. */
  if (het_tensor_count(o) == 0)
    return HET_OK;
  for (int d = 0; d < o->rank; d++)
    total += o->dims[d];
  int64_t *buf = malloc((size_t)(total ? total : 1) * sizeof *buf);
  if (!buf)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (Tile): out of memory",
                     ctx->node->name);
  int64_t pos = 0;
  for (int d = 0; d < o->rank; d++) {
    maps[d] = buf + pos;
    for (int64_t i = 0; i < o->dims[d]; i++)
      maps[d][i] = in->dims[d] ? i % in->dims[d] : 0;
    pos += o->dims[d];
  }
  het_kernel_strides(in->dims, in->rank, st);
  het_kernel_copy_mapped(o->data, in->data, st, maps, o->dims, o->rank,
                      het_dtype_size(o->dtype));
  free(buf);
  return HET_OK;
}
