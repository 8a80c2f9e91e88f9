/* tensor_move.c — inference for the data-movement ops whose output is a
 * rearrangement of the input: Transpose, Concat, Split, Slice, Pad,
 * DepthToSpace, SpaceToDepth, ReverseSequence.  Also the Slice and Pad
 * parameter helpers the CPU kernels reuse.
 */
#include <string.h>

#include "core/ops/tensor_ops.h"

het_status het_infer_transpose(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t perm[HET_MAX_RANK];
  int n;
  bool seen[HET_MAX_RANK] = {false};
  HET_TRY(het_tensor_op_attr_ints(ctx, "perm", perm, HET_MAX_RANK, &n));
  if (n < 0) {
    n = s->rank;
    for (int i = 0; i < n; i++)
      perm[i] = n - 1 - i;
  }
  if (n != s->rank)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "perm has %d entries for rank %d", n, s->rank);
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = n;
  for (int i = 0; i < n; i++) {
    int64_t p = perm[i] < 0 ? perm[i] + n : perm[i];
    if (p < 0 || p >= n || seen[p])
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                            "perm is not a permutation of 0..%d", n - 1);
    seen[p] = true;
    o->shape.dims[i] = s->dims[p];
  }
  return HET_OK;
}

het_status het_infer_concat(het_infer_ctx *ctx) {
  const het_shape *s0 = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int ax;
  const het_attr *a = het_node_find_attr(ctx->node, "axis");
  if (!a && ctx->opset >= 4)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "axis is required");
  HET_TRY(het_infer_axis(ctx, a ? a->i : 1, s0->rank, "axis", &ax));
  o->dtype = ctx->inputs[0].dtype;
  o->shape = *s0;
  int64_t total = 0;
  for (int k = 0; k < ctx->n_inputs; k++) {
    const het_value_info *in = &ctx->inputs[k];
    if (!in->present) continue;
    if (in->shape.rank < 0) {
      o->shape.rank = -1;
      return HET_OK;
    }
    if (in->shape.rank != s0->rank || in->dtype != o->dtype)
      return het_infer_fail(ctx, in->dtype != o->dtype ? HET_ERR_TYPE
                                                       : HET_ERR_SHAPE,
                            "input %d differs in %s from input 0", k,
                            in->dtype != o->dtype ? "type" : "rank");
    for (int i = 0; i < s0->rank; i++) {
      int64_t v = in->shape.dims[i].value, w = o->shape.dims[i].value;
      if (i == ax) continue;
      if (v >= 0 && w >= 0 && v != w)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "input %d has dim %d = %lld, input 0 has %lld",
                              k, i, (long long)v, (long long)w);
      if (w < 0 && v >= 0)
        o->shape.dims[i] = in->shape.dims[i];
    }
    int64_t d = in->shape.dims[ax].value;
    total = (total < 0 || d < 0) ? -1 : total + d;
  }
  o->shape.dims[ax] = total >= 0 ? het_dim_known(total) : het_dim_unknown();
  return HET_OK;
}

het_status het_infer_split(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  int ax, n, nout = ctx->n_outputs;
  int64_t sp[64];
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "axis", 0),
                         s->rank, "axis", &ax));
  if (ctx->opset < 13)
    HET_TRY(het_tensor_op_attr_ints(ctx, "split", sp, 64, &n));
  else if (ctx->n_inputs > 1 && ctx->inputs[1].present &&
           !ctx->inputs[1].data)
    n = -2; /* given but not known yet */
  else
    HET_TRY(het_tensor_op_ints(ctx, 1, sp, 64, &n));
  int64_t d = s->dims[ax].value;
  if (n >= 0) {
    int64_t sum = 0;
    if (n != nout)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                            "split has %d entries for %d outputs", n, nout);
    for (int i = 0; i < n; i++) {
      if (sp[i] < 0)
        return het_infer_fail(ctx, HET_ERR_SHAPE, "negative split %lld",
                              (long long)sp[i]);
      sum += sp[i];
    }
    if (d >= 0 && sum != d)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "splits sum to %lld, axis has %lld",
                            (long long)sum, (long long)d);
  }
  for (int i = 0; i < nout; i++) {
    het_value_info *o = &ctx->outputs[i];
    o->dtype = ctx->inputs[0].dtype;
    o->shape = *s;
    het_dim dd = het_dim_unknown();
    if (n >= 0) {
      dd = het_dim_known(sp[i]);
    } else if (n == -1 && d >= 0) {
      int64_t chunk = (d + nout - 1) / nout;
      int64_t left = d - chunk * i;
      dd = het_dim_known(left < 0 ? 0 : left < chunk ? left : chunk);
    }
    o->shape.dims[ax] = dd;
  }
  return HET_OK;
}

/* Reads starts, ends, axes and steps for either Slice version. */
static het_status slice_inputs(const het_infer_ctx *ctx, int64_t v[4][HET_MAX_RANK],
                               int n[4]) {
  static const char *const names[4] = {"starts", "ends", "axes", "steps"};
  for (int k = 0; k < 4; k++) {
    if (ctx->opset < 10) {
      n[k] = -1;
      if (k < 3)
        HET_TRY(het_tensor_op_attr_ints(ctx, names[k], v[k], HET_MAX_RANK, &n[k]));
    } else {
      HET_TRY(het_tensor_op_ints(ctx, k + 1, v[k], HET_MAX_RANK, &n[k]));
      if (n[k] < 0 && ctx->n_inputs > k + 1 && ctx->inputs[k + 1].present)
        n[k] = -2; /* given, not known */
    }
  }
  return HET_OK;
}

static void slice_axis(int64_t s, int64_t e, int64_t st, int64_t d,
                       het_slice_plan *p, int ax) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  int64_t c;
  if (st > 0) {
    s = s < 0 ? 0 : s > d ? d : s;
    e = e < 0 ? 0 : e > d ? d : e;
    c = e > s ? (e - s - 1) / st + 1 : 0;
  } else {
    int64_t nst = st == INT64_MIN ? INT64_MAX : -st;
    s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
    e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
    c = s > e ? (s - e - 1) / nst + 1 : 0;
  }
  p->start[ax] = s;
  p->step[ax] = st;
  p->count[ax] = c;
}

het_status het_slice_plan_make(const het_infer_ctx *ctx, het_slice_plan *p,
                               bool *known) {
  const het_shape *sh = &ctx->inputs[0].shape;
  int64_t v[4][HET_MAX_RANK];
  int n[4];
  bool used[HET_MAX_RANK] = {false};
  HET_TRY(slice_inputs(ctx, v, n));
  *known = n[0] >= 0 && n[1] >= 0 && n[2] != -2 && n[3] != -2;
  for (int i = 0; i < sh->rank; i++) {
    p->start[i] = 0;
    p->step[i] = 1;
    p->count[i] = sh->dims[i].value;
    p->whole[i] = true;
  }
  if (!*known)
    return HET_OK;
  if (n[0] != n[1] || (n[2] >= 0 && n[2] != n[0]) || (n[3] >= 0 && n[3] != n[0]))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "starts, ends, axes and steps differ in length");
  for (int k = 0; k < n[0]; k++) {
    int ax = k;
    if (n[2] >= 0)
      HET_TRY(het_infer_axis(ctx, v[2][k], sh->rank, "axes", &ax));
    else if (k >= sh->rank)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "too many starts");
    if (used[ax])
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "axis %d repeated", ax);
    used[ax] = true;
    int64_t st = n[3] >= 0 ? v[3][k] : 1;
    if (st == 0)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "step is 0");
    int64_t d = sh->dims[ax].value;
    p->whole[ax] = st == 1 && v[0][k] == 0 && v[1][k] >= INT64_MAX / 2;
    if (d < 0) {
      p->count[ax] = -1;
      p->step[ax] = st;
      continue;
    }
    slice_axis(v[0][k], v[1][k], st, d, p, ax);
    p->whole[ax] = p->count[ax] == d && st == 1;
  }
  return HET_OK;
}

het_status het_infer_slice(het_infer_ctx *ctx) {
  het_slice_plan p;
  bool known;
  het_value_info *o = &ctx->outputs[0];
  HET_TRY(het_slice_plan_make(ctx, &p, &known));
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = ctx->inputs[0].shape.rank;
  for (int i = 0; i < o->shape.rank; i++) {
    if (!known)
      o->shape.dims[i] = het_dim_unknown();
    else if (p.whole[i])
      o->shape.dims[i] = ctx->inputs[0].shape.dims[i];
    else
      o->shape.dims[i] = p.count[i] >= 0 ? het_dim_known(p.count[i])
                                         : het_dim_unknown();
  }
  return HET_OK;
}

static het_status pad_mode(const het_infer_ctx *ctx, het_pad_mode *mode) {
  const char *m = het_node_attr_string(ctx->node, "mode");
  if (!m || strcmp(m, "constant") == 0) *mode = HET_PAD_CONSTANT;
  else if (strcmp(m, "reflect") == 0) *mode = HET_PAD_REFLECT;
  else if (strcmp(m, "edge") == 0) *mode = HET_PAD_EDGE;
  else
    return het_infer_fail(ctx, HET_ERR_UNSUPPORTED, "pad mode '%s'", m);
  return HET_OK;
}

het_status het_pad_params(const het_infer_ctx *ctx, int64_t *pads,
                          het_pad_mode *mode, bool *known) {
  int r = ctx->inputs[0].shape.rank, n, na = -1;
  int64_t raw[2 * HET_MAX_RANK], axes[HET_MAX_RANK];
  HET_TRY(pad_mode(ctx, mode));
  if (ctx->opset < 11) {
    HET_TRY(het_tensor_op_attr_ints(ctx, ctx->opset < 2 ? "paddings" : "pads",
                                    raw, 2 * HET_MAX_RANK, &n));
    if (n < 0)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "pads are required");
  } else {
    HET_TRY(het_tensor_op_ints(ctx, 1, raw, 2 * HET_MAX_RANK, &n));
    if (ctx->n_inputs > 3 && ctx->inputs[3].present) {
      HET_TRY(het_tensor_op_ints(ctx, 3, axes, HET_MAX_RANK, &na));
      if (na < 0) n = -1;
    }
  }
  *known = n >= 0;
  if (!*known)
    return HET_OK;
  int k = na >= 0 ? na : r;
  if (n != 2 * k)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "pads has %d values, expected %d", n, 2 * k);
  memset(pads, 0, 2 * (size_t)r * sizeof *pads);
  for (int i = 0; i < k; i++) {
    int ax = i;
    if (na >= 0)
      HET_TRY(het_infer_axis(ctx, axes[i], r, "axes", &ax));
    pads[ax] = raw[i];
    pads[ax + r] = raw[i + k];
  }
  return HET_OK;
}

het_status het_infer_pad(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t pads[2 * HET_MAX_RANK];
  het_pad_mode mode;
  bool known;
  HET_TRY(het_pad_params(ctx, pads, &mode, &known));
  o->dtype = ctx->inputs[0].dtype;
  o->shape.rank = s->rank;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->dims[i].value;
    o->shape.dims[i] = het_dim_unknown();
    if (!known || d < 0)
      continue;
    int64_t od = d + pads[i] + pads[i + s->rank];
    if (od < 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE, "pads make dim %d negative", i);
    if (mode != HET_PAD_CONSTANT && d == 0 && od > 0)
      return het_infer_fail(ctx, HET_ERR_SHAPE,
                            "cannot pad an empty dim in %s mode",
                            mode == HET_PAD_EDGE ? "edge" : "reflect");
    o->shape.dims[i] = het_dim_known(od);
  }
  return HET_OK;
}

static het_status space_depth(het_infer_ctx *ctx, bool to_space) {
  const het_shape *s = &ctx->inputs[0].shape;
  het_value_info *o = &ctx->outputs[0];
  int64_t b = het_node_attr_int(ctx->node, "blocksize", 0);
  if (s->rank != 4)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input must be 4-D");
  if (b <= 0)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "blocksize must be > 0");
  if (to_space) {
    const char *m = het_node_attr_string(ctx->node, "mode");
    if (m && strcmp(m, "DCR") != 0 && strcmp(m, "CRD") != 0)
      return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "mode '%s'", m);
  }
  o->dtype = ctx->inputs[0].dtype;
  o->shape = *s;
  int64_t c = s->dims[1].value, h = s->dims[2].value, w = s->dims[3].value;
  int64_t div = to_space ? b * b : b;
  if ((to_space && c >= 0 && c % div) ||
      (!to_space && ((h >= 0 && h % b) || (w >= 0 && w % b))))
    return het_infer_fail(ctx, HET_ERR_SHAPE,
                          "dims are not divisible by the blocksize %lld",
                          (long long)b);
  het_dim u = het_dim_unknown();
  if (to_space) {
    o->shape.dims[1] = c >= 0 ? het_dim_known(c / (b * b)) : u;
    o->shape.dims[2] = h >= 0 ? het_dim_known(h * b) : u;
    o->shape.dims[3] = w >= 0 ? het_dim_known(w * b) : u;
  } else {
    o->shape.dims[1] = c >= 0 ? het_dim_known(c * b * b) : u;
    o->shape.dims[2] = h >= 0 ? het_dim_known(h / b) : u;
    o->shape.dims[3] = w >= 0 ? het_dim_known(w / b) : u;
  }
  return HET_OK;
}

het_status het_infer_depth_to_space(het_infer_ctx *ctx) {
  return space_depth(ctx, true);
}

het_status het_infer_space_to_depth(het_infer_ctx *ctx) {
  return space_depth(ctx, false);
}

het_status het_infer_reverse_sequence(het_infer_ctx *ctx) {
  const het_shape *s = &ctx->inputs[0].shape;
  int b, t;
  if (s->rank < 2)
    return het_infer_fail(ctx, HET_ERR_SHAPE, "input rank must be >= 2");
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "batch_axis", 1),
                         2, "batch_axis", &b));
  HET_TRY(het_infer_axis(ctx, het_node_attr_int(ctx->node, "time_axis", 0),
                         2, "time_axis", &t));
  if (b == t)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "batch_axis and time_axis are equal");
  HET_TRY(het_infer_require_type(ctx, 1, (1u << HET_DTYPE_INT64) |
                                             (1u << HET_DTYPE_INT32)));
  het_infer_copy(ctx, 0, 0);
  return HET_OK;
}
