/* tensor.c — the CPU tensor kernel table and the copy helpers the tensor
 * kernels share (strided and index-mapped N-d copies by element size).
 * The kernels live in tensor_shape.c, tensor_move.c, tensor_index.c,
 * tensor_unique.c and tensor_resize.c.
 */
#include "kernels/tensor_kernels.h"

#include <string.h>

#define K(op, fn) {.op_type = op, .domain = "", .run = het_kernel_run_##fn}

const het_kernel het_kernels_tensor[] = {
    K("Constant", constant),
    K("ConstantOfShape", constant_of_shape),
    K("Identity", copy),
    K("Reshape", copy),
    K("Flatten", copy),
    K("Squeeze", copy),
    K("Unsqueeze", copy),
    K("Shape", shape),
    K("Size", size),
    K("Transpose", transpose),
    K("Concat", concat),
    K("Split", split),
    K("Slice", slice),
    K("Gather", gather),
    K("GatherElements", gather_elements),
    K("GatherND", gather_nd),
    K("ScatterND", scatter_nd),
    K("Scatter", scatter_elements),
    K("ScatterElements", scatter_elements),
    K("Expand", expand),
    K("Tile", tile),
    K("Pad", pad),
    K("Range", range),
    K("OneHot", one_hot),
    K("NonZero", non_zero),
    K("Compress", compress),
    K("EyeLike", eye_like),
    K("Trilu", trilu),
    K("DepthToSpace", depth_to_space),
    K("SpaceToDepth", space_to_depth),
    K("ReverseSequence", reverse_sequence),
    K("Unique", unique),
    K("Resize", resize),
    K("Upsample", resize),
    {0},
};

het_status het_kernel_tensor_view_init(const het_kernel_ctx *ctx,
                                    het_kernel_tensor_view *v) {
  if (ctx->n_inputs > HET_CPU_TENSOR_MAX_IO ||
      ctx->n_outputs > HET_CPU_TENSOR_MAX_IO)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (%s): too many inputs",
                     ctx->node->name, ctx->node->op_type);
  memset(v, 0, sizeof *v);
  for (int i = 0; i < ctx->n_inputs; i++) {
    if (ctx->inputs[i])
      het_value_info_from_tensor(&v->in[i], ctx->inputs[i]);
    else
      v->in[i].shape.rank = -1;
  }
  for (int i = 0; i < ctx->n_outputs; i++) {
    v->out[i].present = ctx->outputs[i] != NULL;
    v->out[i].shape.rank = -1;
  }
  v->ic.node = ctx->node;
  v->ic.opset = ctx->opset;
  v->ic.n_inputs = ctx->n_inputs;
  v->ic.inputs = v->in;
  v->ic.n_outputs = ctx->n_outputs;
  v->ic.outputs = v->out;
  return HET_OK;
}

het_status het_kernel_tensor_ensure_outputs(const het_kernel_ctx *ctx) {
  bool need = false;
  for (int i = 0; i < ctx->n_outputs; i++)
    need |= ctx->outputs[i] && !ctx->outputs[i]->data;
  if (!need)
    return HET_OK;
  const het_op_def *def = het_op_find(ctx->node->domain, ctx->node->op_type);
  het_kernel_tensor_view v;
  if (!def)
    return het_error(HET_ERR_INTERNAL, "node '%s': no op definition for %s",
                     ctx->node->name, ctx->node->op_type);
  HET_TRY(het_kernel_tensor_view_init(ctx, &v));
  HET_TRY(def->infer(&v.ic));
  for (int i = 0; i < ctx->n_outputs; i++) {
    het_tensor *t = ctx->outputs[i];
    if (!t || t->data)
      continue;
    int64_t dims[HET_MAX_RANK];
    const het_shape *s = &v.out[i].shape;
    if (!het_shape_is_concrete(s))
      return het_error(HET_ERR_INTERNAL,
                       "node '%s' (%s): output %d shape is not known",
                       ctx->node->name, ctx->node->op_type, i);
    for (int d = 0; d < s->rank; d++)
      dims[d] = s->dims[d].value;
    HET_TRY(het_tensor_alloc(t, v.out[i].dtype, dims, s->rank));
  }
  return HET_OK;
}

void het_kernel_strides(const int64_t *dims, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

static inline void copy_elem(char *d, const char *s, size_t es) {
  switch (es) {
  case 1: *d = *s; break;
  case 2: memcpy(d, s, 2); break;
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  default: memcpy(d, s, es); break;
  }
}

void het_kernel_copy_strided(char *dst, const int64_t *dst_st, const char *src,
                          const int64_t *src_st, const int64_t *dims, int rank,
                          size_t es) {
  int64_t idx[HET_MAX_RANK] = {0};
  if (het_dims_count(dims, rank) <= 0)
    return;
  if (rank == 0) {
    copy_elem(dst, src, es);
    return;
  }
  int last = rank - 1;
  int64_t n = dims[last], ds = dst_st[last], ss = src_st[last];
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int d = 0; d < last; d++) {
      doff += idx[d] * dst_st[d];
      soff += idx[d] * src_st[d];
    }
    char *dp = dst + doff * (int64_t)es;
    const char *sp = src + soff * (int64_t)es;
    if (ds == 1 && ss == 1)
      memcpy(dp, sp, (size_t)n * es);
    else
      for (int64_t i = 0; i < n; i++)
        copy_elem(dp + i * ds * (int64_t)es, sp + i * ss * (int64_t)es, es);
    int d = last - 1;
    while (d >= 0 && ++idx[d] == dims[d])
      idx[d--] = 0;
    if (d < 0)
      return;
  }
}

void het_kernel_copy_mapped(char *dst, const char *src, const int64_t *src_st,
                         int64_t *const *maps, const int64_t *dims, int rank,
                         size_t es) {
  int64_t idx[HET_MAX_RANK] = {0};
  if (het_dims_count(dims, rank) <= 0)
    return;
  if (rank == 0) {
    copy_elem(dst, src, es);
    return;
  }
  int last = rank - 1;
  int64_t n = dims[last];
  const int64_t *lm = maps[last];
  for (;;) {
    int64_t soff = 0;
    bool skip = false;
    for (int d = 0; d < last; d++) {
      int64_t m = maps[d][idx[d]];
      skip |= m < 0;
      soff += m * src_st[d];
    }
    if (!skip)
      for (int64_t i = 0; i < n; i++)
        if (lm[i] >= 0)
          copy_elem(dst + i * (int64_t)es,
                    src + (soff + lm[i] * src_st[last]) * (int64_t)es, es);
    dst += n * (int64_t)es;
    int d = last - 1;
    while (d >= 0 && ++idx[d] == dims[d])
      idx[d--] = 0;
    if (d < 0)
      return;
  }
}

het_status het_kernel_index(const het_kernel_ctx *ctx, int64_t i, int64_t dim,
                         int64_t *out) {
  if (i < -dim || i >= dim)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "node '%s' (%s): index %lld out of range [-%lld, %lld)",
                     ctx->node->name, ctx->node->op_type, (long long)i,
                     (long long)dim, (long long)dim);
  *out = i < 0 ? i + dim : i;
  return HET_OK;
}
