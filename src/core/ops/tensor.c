/* tensor.c — the tensor operator group's table (data movement and shape
 * ops) and the helpers its infer functions share.  The infer functions live
 * in tensor_shape.c, tensor_move.c, tensor_index.c and tensor_resize.c.
 */
#include "core/ops/tensor_ops.h"

#include <string.h>

#define IN_ALL(op, lo, hi, olo, ohi, fn) {op, "", lo, hi, olo, ohi, het_infer_##fn}

const het_op_def het_ops_tensor[] = {
    IN_ALL("Constant", 0, 0, 1, 1, constant),
    IN_ALL("ConstantOfShape", 1, 1, 1, 1, constant_of_shape),
    IN_ALL("Identity", 1, 1, 1, 1, identity),
    IN_ALL("Shape", 1, 1, 1, 1, shape),
    IN_ALL("Size", 1, 1, 1, 1, size),
    IN_ALL("Reshape", 1, 2, 1, 1, reshape),
    IN_ALL("Flatten", 1, 1, 1, 1, flatten),
    IN_ALL("Squeeze", 1, 2, 1, 1, squeeze),
    IN_ALL("Unsqueeze", 1, 2, 1, 1, unsqueeze),
    IN_ALL("Transpose", 1, 1, 1, 1, transpose),
    IN_ALL("Concat", 1, -1, 1, 1, concat),
    IN_ALL("Split", 1, 2, 1, -1, split),
    IN_ALL("Slice", 1, 5, 1, 1, slice),
    IN_ALL("Gather", 2, 2, 1, 1, gather),
    IN_ALL("GatherElements", 2, 2, 1, 1, gather_elements),
    IN_ALL("GatherND", 2, 2, 1, 1, gather_nd),
    IN_ALL("ScatterND", 3, 3, 1, 1, scatter_nd),
    IN_ALL("Scatter", 3, 3, 1, 1, scatter_elements),
    IN_ALL("ScatterElements", 3, 3, 1, 1, scatter_elements),
    IN_ALL("Expand", 2, 2, 1, 1, expand),
    IN_ALL("Tile", 2, 3, 1, 1, tile),
    IN_ALL("Pad", 1, 4, 1, 1, pad),
    IN_ALL("Range", 3, 3, 1, 1, range),
    IN_ALL("OneHot", 3, 3, 1, 1, one_hot),
    IN_ALL("NonZero", 1, 1, 1, 1, non_zero),
    IN_ALL("Compress", 2, 2, 1, 1, compress),
    IN_ALL("EyeLike", 1, 1, 1, 1, eye_like),
    IN_ALL("Trilu", 1, 2, 1, 1, trilu),
    IN_ALL("DepthToSpace", 1, 1, 1, 1, depth_to_space),
    IN_ALL("SpaceToDepth", 1, 1, 1, 1, space_to_depth),
    IN_ALL("ReverseSequence", 2, 2, 1, 1, reverse_sequence),
    IN_ALL("Unique", 1, 1, 1, 4, unique),
    IN_ALL("Resize", 1, 4, 1, 1, resize),
    IN_ALL("Upsample", 1, 2, 1, 1, resize),
    {0},
};

bool het_tensor_op_input_known(const het_infer_ctx *ctx, int i) {
  return i < ctx->n_inputs && ctx->inputs[i].present && ctx->inputs[i].data;
}

het_status het_tensor_op_ints(const het_infer_ctx *ctx, int i, int64_t *out,
                              int cap, int *n) {
  *n = -1;
  if (!het_tensor_op_input_known(ctx, i))
    return HET_OK;
  const het_tensor *t = ctx->inputs[i].data;
  if (t->rank > 1)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input %d must be 1-D, has rank %d",
                          i, t->rank);
  if (t->dtype != HET_DTYPE_INT64 && t->dtype != HET_DTYPE_INT32)
    return het_infer_fail(ctx, HET_ERR_TYPE, "input %d must be int64, is %s",
                          i, het_dtype_str(t->dtype));
  int64_t c = het_tensor_count(t);
  if (c > cap)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "input %d has %lld values, at most %d supported", i,
                          (long long)c, cap);
  for (int64_t k = 0; k < c; k++)
    out[k] = het_tensor_get_i64(t, k);
  *n = (int)c;
  return HET_OK;
}

het_status het_tensor_op_attr_ints(const het_infer_ctx *ctx, const char *name,
                                   int64_t *out, int cap, int *n) {
  size_t c;
  const int64_t *v = het_node_attr_ints(ctx->node, name, &c);
  *n = -1;
  if (!het_node_find_attr(ctx->node, name))
    return HET_OK;
  if (c > (size_t)cap)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "attribute '%s' has %zu values, at most %d supported",
                          name, c, cap);
  if (c)
    memcpy(out, v, c * sizeof *out);
  *n = (int)c;
  return HET_OK;
}

int64_t het_tensor_op_prod(const het_shape *s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; i++) {
    if (s->dims[i].value < 0)
      return -1;
    p *= s->dims[i].value;
  }
  return p;
}
