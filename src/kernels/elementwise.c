/* elementwise.c — the elementwise CPU kernel table and the runners shared
 * by its kernels: half precision computed through float32 copies, same-shape
 * maps, and binary broadcasts (numpy rules, or the opset < 7 `broadcast` /
 * `axis` attributes).  The kernels themselves live in elementwise_*.c.
 */
#include "kernels/elementwise_internal.h"
#include "kernels/half.h"

#include <stdlib.h>
#include <string.h>

static size_t het_ew_half_scratch(const het_kernel_ctx *ctx);

const het_kernel het_kernels_elementwise[] = {
#define HET_EW_ROW_(op, dom) {.op_type = #op, .domain = dom, \
                              .run = het_kernel_ew_run_##op, \
                              .scratch = het_ew_half_scratch},
    HET_EW_KERNELS(HET_EW_ROW_)
#undef HET_EW_ROW_
    {0},
};

static bool het_ew_is_half(const het_tensor *t) {
  return t && (t->dtype == HET_DTYPE_FLOAT16 || t->dtype == HET_DTYPE_BFLOAT16);
}

static void het_ew_half_to_f32(const het_tensor *src, het_tensor *dst) {
  const uint16_t *s = src->data;
  float *d = dst->data;
  int64_t n = het_tensor_count(src);
  if (src->dtype == HET_DTYPE_FLOAT16)
    het_half_to_float(s, d, n);
  else
    for (int64_t i = 0; i < n; i++)
      d[i] = het_bf16_to_f32(s[i]);
}

static void het_ew_f32_to_half(const het_tensor *src, het_tensor *dst) {
  const float *s = src->data;
  uint16_t *d = dst->data;
  int64_t n = het_tensor_count(dst);
  if (dst->dtype == HET_DTYPE_FLOAT16)
    het_float_to_half(s, d, n);
  else
    for (int64_t i = 0; i < n; i++)
      d[i] = het_f32_to_bf16(s[i]);
}

/* Temporaries of one half-precision call: tmp[k] backs operand k. */
typedef struct het_ew_half_call {
  int n;
  het_tensor *tmp;
  het_tensor **ins, **outs;
} het_ew_half_call;

/* Bytes of one float32 copy of t, as het_kernel_take rounds them. */
static size_t het_ew_f32_bytes(const het_tensor *t) {
  return ((size_t)het_tensor_count(t) * sizeof(float) + 63) & ~(size_t)63;
}

/* The float32 copies a half-precision call stages in the run's scratch
 * (so a planned run allocates nothing); 0 for other dtypes. */
static size_t het_ew_half_scratch(const het_kernel_ctx *ctx) {
  size_t b = 0;
  for (int k = 0; k < ctx->n_inputs + ctx->n_outputs; k++) {
    const het_tensor *t = k < ctx->n_inputs ? ctx->inputs[k]
                                            : ctx->outputs[k - ctx->n_inputs];
    if (het_ew_is_half(t))
      b += het_ew_f32_bytes(t);
  }
  return b;
}

static void het_ew_half_free(het_kernel_ctx *ctx, het_ew_half_call *c) {
  if (c->tmp)
    for (int k = 0; k < c->n; k++)
      if (c->tmp[k].data)
        het_kernel_give(ctx, c->tmp[k].data);
  free(c->tmp);
  free(c->ins);
}

static het_status het_ew_half_setup(het_kernel_ctx *ctx,
                                    het_ew_half_call *c) {
  c->n = ctx->n_inputs + ctx->n_outputs;
  c->tmp = calloc((size_t)c->n, sizeof *c->tmp);
  c->ins = calloc((size_t)c->n, sizeof *c->ins);
  if (!c->tmp || !c->ins)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     ctx->node->name);
  c->outs = c->ins + ctx->n_inputs;
  for (int k = 0; k < c->n; k++) {
    bool is_in = k < ctx->n_inputs;
    het_tensor *t = is_in ? ctx->inputs[k] : ctx->outputs[k - ctx->n_inputs];
    c->ins[k] = t;
    if (!het_ew_is_half(t) || !t->data)
      continue;
    het_tensor *f = &c->tmp[k];
    f->dtype = HET_DTYPE_FLOAT32;
    f->rank = t->rank;
    memcpy(f->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    f->nbytes = (size_t)het_tensor_count(t) * sizeof(float);
    HET_TRY(het_kernel_take(ctx, f->nbytes, &f->data));
    if (is_in)
      het_ew_half_to_f32(t, &c->tmp[k]);
    c->ins[k] = &c->tmp[k];
  }
  return HET_OK;
}

het_status het_ew_via_f32(het_kernel_ctx *ctx, het_ew_body_fn fn,
                          const void *arg) {
  bool half = false;
  for (int k = 0; k < ctx->n_inputs; k++)
    half = half || het_ew_is_half(ctx->inputs[k]);
  for (int k = 0; k < ctx->n_outputs; k++)
    half = half || het_ew_is_half(ctx->outputs[k]);
  if (!half)
    return fn(ctx, arg);
  het_ew_half_call c = {0};
  het_status st = het_ew_half_setup(ctx, &c);
  if (st == HET_OK) {
    het_kernel_ctx sub = *ctx;
    sub.inputs = c.ins;
    sub.outputs = c.outs;
    st = fn(&sub, arg);
  }
  for (int k = 0; st == HET_OK && k < ctx->n_outputs; k++)
    if (c.outs[k] != ctx->outputs[k])
      het_ew_f32_to_half(c.outs[k], ctx->outputs[k]);
  het_ew_half_free(ctx, &c);
  return st;
}

het_status het_ew_unsupported(const het_kernel_ctx *ctx, het_dtype t) {
  return het_error(HET_ERR_UNSUPPORTED,
                   "node '%s' (%s): dtype %s is not supported by the CPU "
                   "kernel",
                   ctx->node->name, ctx->node->op_type, het_dtype_str(t));
}

static het_status het_ew_map_body(het_kernel_ctx *ctx, const void *arg) {
  const void *const *a = arg;
  const het_bcast_row_fn *fns = a[0];
  const het_tensor *in = ctx->inputs[0];
  het_tensor *out = ctx->outputs[0];
  het_bcast_row_fn fn = (unsigned)in->dtype < HET_EW_NDT ? fns[in->dtype]
                                                         : NULL;
  if (!fn)
    return het_ew_unsupported(ctx, in->dtype);
  int64_t n = het_tensor_count(in);
  if (n != het_tensor_count(out))
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): output has %lld "
                     "elements, input %lld", ctx->node->name,
                     ctx->node->op_type, (long long)het_tensor_count(out),
                     (long long)n);
  /* A rank-1 broadcast of one input: walked in pieces on the pool. */
  het_bcast_operand op = {in->data, het_dtype_size(in->dtype), 1, &n};
  return het_bcast_run_pool(ctx->par, out->data, het_dtype_size(out->dtype),
                            &n, 1, 1, &op, fn, a[1]);
}

het_status het_ew_map(het_kernel_ctx *ctx, const het_ew_fn_table fns,
                      const het_ew_params *params) {
  static const het_ew_params none;
  const void *arg[2] = {fns, params ? params : &none};
  return het_ew_via_f32(ctx, het_ew_map_body, arg);
}

/* B's dims under the opset < 7 rule: B matches A's dims from `axis`
 * (default: aligned to the end); other dims become 1. */
static het_status het_ew_legacy_dims(const het_kernel_ctx *ctx,
                                     const het_tensor *a, const het_tensor *b,
                                     int64_t axis, int64_t *dims) {
  if (axis < 0)
    axis += a->rank;
  if (axis < 0 || axis + b->rank > a->rank)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): legacy broadcast axis %lld does not "
                     "fit B of rank %d into A of rank %d",
                     ctx->node->name, ctx->node->op_type, (long long)axis,
                     b->rank, a->rank);
  for (int d = 0; d < a->rank; d++)
    dims[d] = 1;
  for (int d = 0; d < b->rank; d++)
    dims[axis + d] = b->dims[d];
  return HET_OK;
}

het_status het_ew_binary(const het_kernel_ctx *ctx, const het_tensor *a,
                         const het_tensor *b, het_tensor *out,
                         het_bcast_row_fn fn, const void *user) {
  het_bcast_operand ops[2] = {
      {a->data, het_dtype_size(a->dtype), a->rank, a->dims},
      {b->data, het_dtype_size(b->dtype), b->rank, b->dims},
  };
  int64_t legacy_dims[HET_MAX_RANK];
  int64_t axis = 0;
  bool legacy = false;
  if (ctx->opset < 7 && het_node_attr_int(ctx->node, "broadcast", 0) != 0) {
    axis = het_node_attr_int(ctx->node, "axis", a->rank - b->rank);
    legacy = true;
  }
  /* PRelu-1/6: a 1-D slope of X.dims[1] elements is per channel. */
  if (ctx->opset < 7 && strcmp(ctx->node->op_type, "PRelu") == 0 &&
      b->rank == 1 && a->rank >= 2 && b->dims[0] == a->dims[1] &&
      b->dims[0] != 1) {
    axis = 1;
    legacy = true;
  }
  if (legacy) {
    HET_TRY(het_ew_legacy_dims(ctx, a, b, axis, legacy_dims));
    ops[1].rank = a->rank;
    ops[1].dims = legacy_dims;
  }
  /* An NHWC output (the CPU layout pass, kernel.h): operands of its shape
   * are NHWC too, the others hold one value per image and channel at most
   * (layout.c, per_channel: the same bytes in both layouts), so the
   * broadcast runs on every dims reordered N, H, W, C. */
  int64_t nhwc_dims[3][4];
  const int64_t *out_dims = out->dims;
  if (!legacy && (ctx->nhwc_out & 1) && out->rank == 4) {
    for (int k = 0; k < 3; k++) {
      const int64_t *d = k < 2 ? ops[k].dims : out->dims;
      int r = k < 2 ? ops[k].rank : out->rank;
      if (r > 4)
        return het_error(HET_ERR_INTERNAL,
                         "node '%s' (%s): NHWC broadcast of a rank-%d input",
                         ctx->node->name, ctx->node->op_type, r);
      int64_t d4[4] = {1, 1, 1, 1};
      for (int i = 0; i < r; i++)
        d4[4 - r + i] = d[i];
      int64_t *p = nhwc_dims[k];
      p[0] = d4[0], p[1] = d4[2], p[2] = d4[3], p[3] = d4[1];
      if (k < 2) {
        ops[k].rank = 4;
        ops[k].dims = p;
      }
    }
    out_dims = nhwc_dims[2];
  }
  het_status st = het_bcast_run_pool(ctx->par, out->data,
                                     het_dtype_size(out->dtype), out_dims,
                                     out->rank, 2, ops, fn, user);
  if (st != HET_OK)
    return het_error_wrap(st, "node '%s' (%s)", ctx->node->name,
                          ctx->node->op_type);
  return HET_OK;
}

double het_ew_load(const het_tensor *t, int64_t i) {
  return het_dtype_load_f64(t->dtype, t->data, i);
}
