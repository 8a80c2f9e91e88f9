/* linalg_conv.c — shape/type inference for the convolution and pooling
 * ops: Conv, ConvInteger, QLinearConv, ConvTranspose, MaxPool,
 * AveragePool, LpPool, the Global*Pool ops and MaxUnpool.  Channel counts
 * are checked whenever both sides are known.
 */
#include <string.h>

#include "core/ops/linalg_geom.h"

#define DIMV(info, j) ((info)->shape.dims[(j)].value)

static het_status need_rank(het_infer_ctx *ctx, int i, const char *what) {
  int r = ctx->inputs[i].shape.rank;
  if (r >= 0 && r < 3)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "%s must have rank >= 3 (N, C, spatial...), got %d",
                          what, r);
  return HET_OK;
}

static het_status read_group(het_infer_ctx *ctx, int64_t *group) {
  *group = het_node_attr_int(ctx->node, "group", 1);
  if (*group < 1)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "attribute group must be >= 1, got %lld",
                          (long long)*group);
  return HET_OK;
}

/* Channel checks for Conv-like (transposed == false) and ConvTranspose. */
static het_status check_channels(het_infer_ctx *ctx, int xi, int wi,
                                 bool transposed, int64_t group,
                                 het_dim *out_c) {
  const het_value_info *x = &ctx->inputs[xi], *w = &ctx->inputs[wi];
  int64_t c = DIMV(x, 1);
  *out_c = het_dim_unknown();
  if (w->shape.rank < 0)
    return HET_OK;
  int64_t w0 = DIMV(w, 0), w1 = DIMV(w, 1);
  if (!transposed) {
    if (c >= 0 && w1 >= 0 && c != w1 * group)
      return het_infer_fail(
          ctx, HET_ERR_SHAPE,
          "input has %lld channels but W expects %lld (W dim 1 = %lld, "
          "group = %lld)",
          (long long)c, (long long)(w1 * group), (long long)w1,
          (long long)group);
    if (w0 >= 0 && w0 % group != 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "W has %lld output channels, not divisible by "
                            "group %lld",
                            (long long)w0, (long long)group);
    *out_c = w->shape.dims[0];
    return HET_OK;
  }
  if (c >= 0 && w0 >= 0 && c != w0)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input has %lld channels but W dim 0 is %lld",
                          (long long)c, (long long)w0);
  if (c >= 0 && c % group != 0)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "input channels %lld not divisible by group %lld",
                          (long long)c, (long long)group);
  if (w1 >= 0)
    *out_c = het_dim_known(w1 * group);
  return HET_OK;
}

static het_status check_bias(het_infer_ctx *ctx, int bi, const het_dim *m) {
  if (bi < 0 || bi >= ctx->n_inputs || !ctx->inputs[bi].present)
    return HET_OK;
  const het_value_info *b = &ctx->inputs[bi];
  if (b->shape.rank < 0)
    return HET_OK;
  if (b->shape.rank != 1 ||
      (m->value >= 0 && DIMV(b, 0) >= 0 && DIMV(b, 0) != m->value))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "bias B must have shape [%lld], got rank %d",
                          (long long)m->value, b->shape.rank);
  return HET_OK;
}

/* Output shape of a (transposed) convolution of input xi by weights wi. */
static het_status conv_shape(het_infer_ctx *ctx, int xi, int wi, int bi,
                             het_geom_kind kind, het_dtype out_dtype) {
  const het_value_info *x = &ctx->inputs[xi], *w = &ctx->inputs[wi];
  het_value_info *y = &ctx->outputs[0];
  HET_TRY(need_rank(ctx, xi, "input X"));
  int rank = x->shape.rank;
  if (w->shape.rank >= 0 && w->shape.rank != rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "W has rank %d but input X has rank %d",
                          w->shape.rank, rank);
  int64_t group, in[HET_GEOM_MAX_SP], k[HET_GEOM_MAX_SP];
  HET_TRY(read_group(ctx, &group));
  int nsp = rank - 2;
  for (int i = 0; i < nsp && i < HET_GEOM_MAX_SP; i++) {
    in[i] = DIMV(x, 2 + i);
    k[i] = w->shape.rank >= 0 ? DIMV(w, 2 + i) : -1;
  }
  het_conv_geom g;
  HET_TRY(het_conv_geom_init(ctx->node, kind, nsp, in, k, &g));
  for (int i = 0; i < nsp; i++)
    if (k[i] >= 0 && g.kernel[i] != k[i])
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "kernel_shape[%d] = %lld but W has %lld", i,
                            (long long)g.kernel[i], (long long)k[i]);
  het_dim m;
  HET_TRY(check_channels(ctx, xi, wi, kind == HET_GEOM_CONVT, group, &m));
  HET_TRY(check_bias(ctx, bi, &m));
  y->dtype = out_dtype;
  y->shape.rank = rank;
  y->shape.dims[0] = x->shape.dims[0];
  y->shape.dims[1] = m;
  for (int i = 0; i < nsp; i++)
    y->shape.dims[2 + i] =
        g.out[i] >= 0 ? het_dim_known(g.out[i]) : het_dim_unknown();
  return HET_OK;
}

het_status het_infer_conv(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_FLOAT));
  return conv_shape(ctx, 0, 1, 2, HET_GEOM_CONV, ctx->inputs[0].dtype);
}

/* hetrt.FusedConv (optimizer level all): Conv's X, W, B (B may be
 * omitted) and the residual Z added to the output before the fused
 * activation; Z must have the output's dtype and shape. */
het_status het_infer_fused_conv(het_infer_ctx *ctx) {
  HET_TRY(het_infer_conv(ctx));
  if (ctx->n_inputs < 4 || !ctx->inputs[3].present)
    return HET_OK;
  const het_value_info *z = &ctx->inputs[3], *y = &ctx->outputs[0];
  bool same = (z->dtype == y->dtype || !z->dtype || !y->dtype) &&
              z->shape.rank == y->shape.rank;
  for (int i = 0; same && i < y->shape.rank; i++)
    same = z->shape.dims[i].value < 0 || y->shape.dims[i].value < 0 ||
           z->shape.dims[i].value == y->shape.dims[i].value;
  if (!same && z->shape.rank >= 0 && y->shape.rank >= 0)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "residual input 3 must have the output's type "
                          "and shape");
  return HET_OK;
}

bool het_conv_dw_attrs(const het_node *n, int64_t strides[2],
                       int64_t pads[4]) {
  size_t ns = 0, np = 0;
  const int64_t *s = het_node_attr_ints(n, "hetrt_dw_strides", &ns);
  const int64_t *p = het_node_attr_ints(n, "hetrt_dw_pads", &np);
  if (ns != 2 || np != 4)
    return false;
  for (int i = 0; i < 4; i++) {
    if ((i < 2 && s[i] < 1) || p[i] < 0)
      return false;
    if (i < 2)
      strides[i] = s[i];
    pads[i] = p[i];
  }
  return true;
}

/* hetrt.FusedConvDw (optimizer level all, opt_conv_dw.c): a 1x1 Conv
 * (X, W, B; its attributes and fused clamp are the node's) whose output
 * only a 2-D depthwise Conv reads (input 3: Wd [M, 1, KH, KW], input 4:
 * Bd, may be omitted; strides hetrt_dw_strides, pads hetrt_dw_pads as
 * begin, begin, end, end, activation hetrt_dw_act_min / hetrt_dw_act_max
 * or hetrt_dw_act with hetrt_dw_act_alpha / hetrt_dw_act_beta).
 * Y is the depthwise Conv's output. */
het_status het_infer_fused_conv_dw(het_infer_ctx *ctx) {
  HET_TRY(het_infer_conv(ctx));
  het_value_info *y = &ctx->outputs[0];
  const het_value_info *wd = &ctx->inputs[3];
  int64_t st[2], pads[4];
  if (!ctx->inputs[3].present || !het_conv_dw_attrs(ctx->node, st, pads))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "needs depthwise weights (input 3) and the "
                          "attributes hetrt_dw_strides (2 values >= 1) and "
                          "hetrt_dw_pads (4 values)");
  if (y->shape.rank < 0)
    return HET_OK;
  int64_t m = DIMV(y, 1);
  if (y->shape.rank != 4 || wd->shape.rank != 4 || DIMV(wd, 1) != 1 ||
      DIMV(wd, 2) < 1 || DIMV(wd, 3) < 1 ||
      (m >= 0 && DIMV(wd, 0) >= 0 && DIMV(wd, 0) != m))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "depthwise weights must be [M, 1, KH, KW] for "
                          "the 1x1 Conv's M channels of a 2-D image");
  if (ctx->n_inputs > 4 && ctx->inputs[4].present &&
      ctx->inputs[4].shape.rank >= 0 &&
      (ctx->inputs[4].shape.rank != 1 ||
       (m >= 0 && DIMV(&ctx->inputs[4], 0) >= 0 &&
        DIMV(&ctx->inputs[4], 0) != m)))
    return het_infer_fail(ctx, HET_ERR_SHAPE, "depthwise bias must be [M]");
  for (int i = 0; i < 2; i++) {
    int64_t d = DIMV(y, 2 + i), k = DIMV(wd, 2 + i);
    int64_t span = d + pads[i] + pads[2 + i] - k;
    if (d >= 0 && span < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "depthwise kernel larger than its padded input");
    y->shape.dims[2 + i] =
        d >= 0 ? het_dim_known(span / st[i] + 1) : het_dim_unknown();
  }
  return HET_OK;
}

bool het_pool_half_init(const het_node *fused, het_pool_half *p) {
  static const char *const names[4][2] = {
      {"hetrt_pool_kernel_shape", "kernel_shape"},
      {"hetrt_pool_strides", "strides"},
      {"hetrt_pool_pads", "pads"},
      {"hetrt_pool_ceil_mode", "ceil_mode"}};
  static const size_t counts[3] = {2, 2, 4};
  memset(p, 0, sizeof *p);
  for (int i = 0; i < 4; i++) {
    const het_attr *a = het_node_find_attr(fused, names[i][0]);
    if (!a || a->type != (i < 3 ? HET_ATTR_INTS : HET_ATTR_INT) ||
        (i < 3 && a->n != counts[i]))
      return false;
    p->attrs[i] = *a;
    p->attrs[i].name = names[i][1];
  }
  p->node = (het_node){.name = fused->name, .op_type = "MaxPool",
                       .domain = "", .opset = 12, .inputs = fused->inputs,
                       .n_inputs = 1, .outputs = fused->outputs,
                       .n_outputs = 1, .attrs = p->attrs, .n_attrs = 4};
  return true;
}

/* hetrt.FusedConvPool (optimizer level all, opt_conv_pool.c): a Conv (X,
 * W, B; its attributes and fused activation are the node's) whose output
 * only a 2-D MaxPool reads (attributes hetrt_pool_kernel_shape,
 * hetrt_pool_strides, hetrt_pool_pads as begin, begin, end, end, and
 * hetrt_pool_ceil_mode; no dilations, no Indices output).  Y is the
 * MaxPool's output. */
het_status het_infer_fused_conv_pool(het_infer_ctx *ctx) {
  HET_TRY(het_infer_conv(ctx));
  het_pool_half ph;
  if (!het_pool_half_init(ctx->node, &ph))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "needs hetrt_pool_kernel_shape and "
                          "hetrt_pool_strides (2 values each), "
                          "hetrt_pool_pads (4) and hetrt_pool_ceil_mode");
  het_value_info *y = &ctx->outputs[0];
  if (y->shape.rank < 0)
    return HET_OK;
  if (y->shape.rank != 4)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "the MaxPool half needs a 2-D image");
  int64_t in[2] = {DIMV(y, 2), DIMV(y, 3)};
  het_conv_geom g;
  HET_TRY(het_conv_geom_init(&ph.node, HET_GEOM_POOL, 2, in, NULL, &g));
  for (int i = 0; i < 2; i++)
    y->shape.dims[2 + i] =
        g.out[i] >= 0 ? het_dim_known(g.out[i]) : het_dim_unknown();
  return HET_OK;
}

het_status het_infer_conv_transpose(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, HET_TYPES_FLOAT));
  return conv_shape(ctx, 0, 1, 2, HET_GEOM_CONVT, ctx->inputs[0].dtype);
}

#define Q8_TYPES ((1u << HET_DTYPE_INT8) | (1u << HET_DTYPE_UINT8))

het_status het_infer_conv_integer(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 1, Q8_TYPES));
  return conv_shape(ctx, 0, 1, -1, HET_GEOM_CONV, HET_DTYPE_INT32);
}

het_status het_infer_qlinear_conv(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 3, Q8_TYPES));
  HET_TRY(het_infer_require_type(ctx, 7, Q8_TYPES));
  if (ctx->n_inputs > 8 && ctx->inputs[8].present)
    HET_TRY(het_infer_require_type(ctx, 8, 1u << HET_DTYPE_INT32));
  return conv_shape(ctx, 0, 3, 8, HET_GEOM_CONV, ctx->inputs[7].dtype);
}

het_status het_infer_pool(het_infer_ctx *ctx) {
  const het_value_info *x = &ctx->inputs[0];
  uint32_t types = HET_TYPES_FLOAT;
  bool is_max = ctx->node->op_type[0] == 'M';
  if (is_max)
    types |= Q8_TYPES;
  HET_TRY(het_infer_require_type(ctx, 0, types));
  HET_TRY(need_rank(ctx, 0, "input X"));
  int nsp = x->shape.rank - 2;
  int64_t in[HET_GEOM_MAX_SP];
  for (int i = 0; i < nsp && i < HET_GEOM_MAX_SP; i++)
    in[i] = DIMV(x, 2 + i);
  het_conv_geom g;
  HET_TRY(het_conv_geom_init(ctx->node, HET_GEOM_POOL, nsp, in, NULL, &g));
  if (is_max && het_node_attr_int(ctx->node, "storage_order", 0) != 0 &&
      nsp != 2 && ctx->n_outputs > 1 && ctx->outputs[1].present)
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED,
                          "storage_order=1 needs 2 spatial dims, got %d", nsp);
  for (int o = 0; o < ctx->n_outputs; o++) {
    het_value_info *y = &ctx->outputs[o];
    y->dtype = o == 0 ? x->dtype : HET_DTYPE_INT64;
    y->shape.rank = x->shape.rank;
    y->shape.dims[0] = x->shape.dims[0];
    y->shape.dims[1] = x->shape.dims[1];
    for (int i = 0; i < nsp; i++)
      y->shape.dims[2 + i] =
          g.out[i] >= 0 ? het_dim_known(g.out[i]) : het_dim_unknown();
  }
  return HET_OK;
}

het_status het_infer_global_pool(het_infer_ctx *ctx) {
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(need_rank(ctx, 0, "input X"));
  het_infer_copy(ctx, 0, 0);
  for (int i = 2; i < ctx->outputs[0].shape.rank; i++)
    ctx->outputs[0].shape.dims[i] = het_dim_known(1);
  return HET_OK;
}

static het_status unpool_from_input(het_infer_ctx *ctx, int rank) {
  const het_tensor *t = ctx->inputs[2].data;
  het_value_info *y = &ctx->outputs[0];
  y->shape.rank = rank;
  if (!t) {
    for (int i = 0; i < rank; i++)
      y->shape.dims[i] = het_dim_unknown();
    return HET_OK;
  }
  if (het_tensor_count(t) != rank)
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "output_shape has %lld values for rank %d",
                          (long long)het_tensor_count(t), rank);
  for (int i = 0; i < rank; i++) {
    int64_t v = het_tensor_get_i64(t, i);
    if (v < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "output_shape value %lld is negative",
                            (long long)v);
    y->shape.dims[i] = het_dim_known(v);
  }
  return HET_OK;
}

het_status het_infer_max_unpool(het_infer_ctx *ctx) {
  const het_value_info *x = &ctx->inputs[0];
  HET_TRY(het_infer_require_type(ctx, 0, HET_TYPES_FLOAT));
  HET_TRY(het_infer_require_type(ctx, 1, 1u << HET_DTYPE_INT64));
  HET_TRY(need_rank(ctx, 0, "input X"));
  int nsp = x->shape.rank - 2;
  int64_t unknown[HET_GEOM_MAX_SP];
  for (int i = 0; i < HET_GEOM_MAX_SP; i++)
    unknown[i] = -1;
  het_conv_geom g;
  HET_TRY(
      het_conv_geom_init(ctx->node, HET_GEOM_POOL, nsp, unknown, NULL, &g));
  ctx->outputs[0].dtype = x->dtype;
  if (ctx->n_inputs > 2 && ctx->inputs[2].present)
    return unpool_from_input(ctx, x->shape.rank);
  het_value_info *y = &ctx->outputs[0];
  y->shape.rank = x->shape.rank;
  y->shape.dims[0] = x->shape.dims[0];
  y->shape.dims[1] = x->shape.dims[1];
  for (int i = 0; i < nsp; i++) {
    int64_t in = DIMV(x, 2 + i);
    y->shape.dims[2 + i] =
        in < 0 ? het_dim_unknown()
               : het_dim_known((in - 1) * g.stride[i] + g.kernel[i] -
                               g.pad_b[i] - g.pad_e[i]);
  }
  return HET_OK;
}
