/* tensor_move.c — CPU kernels that rearrange data: Transpose, Concat,
 * Split, Slice, Pad, DepthToSpace, SpaceToDepth, ReverseSequence.  All are
 * strided or index-mapped copies by element size (every dtype).  Large
 * strided copies are split over their leading dims across the thread pool.
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/tensor_kernels.h"
#include "kernels/parallel.h"

/* Bytes below which a copy stays on one thread. */
#define MOVE_GRAIN_BYTES 65536

/* A strided copy split into units over its k leading dims. */
typedef struct move_job {
  char *dst;
  const char *src;
  const int64_t *dst_st, *src_st, *dims;
  int rank, k;
  size_t es;
} move_job;

static void move_units(void *arg, int64_t u0, int64_t u1) {
  const move_job *j = arg;
  for (int64_t u = u0; u < u1; u++) {
    int64_t rem = u, doff = 0, soff = 0;
    for (int d = j->k - 1; d >= 0; d--) {
      int64_t i = rem % j->dims[d];
      rem /= j->dims[d];
      doff += i * j->dst_st[d];
      soff += i * j->src_st[d];
    }
    het_kernel_copy_strided(j->dst + doff * (int64_t)j->es, j->dst_st + j->k,
                         j->src + soff * (int64_t)j->es, j->src_st + j->k,
                         j->dims + j->k, j->rank - j->k, j->es);
  }
}

/* het_kernel_copy_strided on the pool: units are the leading k dims (enough
 * of them for four units per thread, leaving at least the last dim). */
static void copy_strided_pool(const struct het_parallel *pool, char *dst,
                              const int64_t *dst_st, const char *src,
                              const int64_t *src_st, const int64_t *dims,
                              int rank, size_t es) {
  int64_t count = het_dims_count(dims, rank);
  int threads = het_parallel_threads(pool);
  if (threads <= 1 || rank < 2 || count * (int64_t)es < 2 * MOVE_GRAIN_BYTES) {
    het_kernel_copy_strided(dst, dst_st, src, src_st, dims, rank, es);
    return;
  }
  move_job j = {.dst = dst, .src = src, .dst_st = dst_st, .src_st = src_st,
                .dims = dims, .rank = rank, .k = 0, .es = es};
  int64_t units = 1;
  while (j.k < rank - 1 && units < (int64_t)threads * 4)
    units *= dims[j.k++];
  int64_t unit_bytes = count / units * (int64_t)es;
  het_parallel_for(pool, units, MOVE_GRAIN_BYTES / unit_bytes + 1,
                              move_units, &j);
}

/* The kernels below take row-major tensors only: the layout pass never
 * marks their nodes, and a marked one is refused rather than misread. */
static het_status plain_layout(const het_kernel_ctx *ctx) {
  if (ctx->nhwc_in || ctx->nhwc_out)
    return het_kernel_fail(ctx, HET_ERR_INTERNAL,
                               "no NHWC layout support for %s",
                               ctx->node->op_type);
  return HET_OK;
}

het_status het_kernel_run_transpose(het_kernel_ctx *ctx) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  int64_t ist[HET_MAX_RANK], src_st[HET_MAX_RANK], dst_st[HET_MAX_RANK];
  size_t np;
  const int64_t *perm = het_node_attr_ints(ctx->node, "perm", &np);
  het_kernel_strides(in->dims, in->rank, ist);
  het_kernel_strides(o->dims, o->rank, dst_st);
  for (int i = 0; i < in->rank; i++) {
    int64_t p = perm ? perm[i] : in->rank - 1 - i;
    if (p < 0) p += in->rank;
    src_st[i] = ist[p];
  }
  copy_strided_pool(ctx->par, o->data, dst_st, in->data, src_st, o->dims,
                    o->rank, het_dtype_size(o->dtype));
  return HET_OK;
}

/* Normalised axis attribute (validated by inference). */
static int attr_axis(const het_kernel_ctx *ctx, int64_t dflt, int rank) {
  int64_t a = het_node_attr_int(ctx->node, "axis", dflt);
  return (int)(a < 0 ? a + rank : a);
}

/* Element strides of the logical dims (N, C, H, W) of rank-4 t when its
 * bytes are NHWC, else row-major strides. */
static void layout_strides(const het_tensor *t, bool nhwc, int64_t *st) {
  if (!nhwc || t->rank != 4) {
    het_kernel_strides(t->dims, t->rank, st);
    return;
  }
  st[1] = 1;
  st[3] = t->dims[1];
  st[2] = t->dims[3] * t->dims[1];
  st[0] = t->dims[2] * st[2];
}

/* Concat when some input or the output is NHWC (layout.c): each input is
 * copied in the output's physical order (N, H, W, C for NHWC: one copy of
 * its channel chunk per pixel), whatever the axis. */
static het_status concat_layout(het_kernel_ctx *ctx, het_tensor *o,
                                int ax) {
  static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 1, 2, 3};
  bool onhwc = ctx->nhwc_out & 1;
  const int *perm = onhwc ? to_nhwc : to_nchw;
  int64_t ost[4], ist[4], dims[4], src_st[4], dst_st[4], off = 0;
  size_t es = het_dtype_size(o->dtype);
  if (o->rank != 4)
    return het_kernel_fail(ctx, HET_ERR_INTERNAL,
                               "NHWC layout on a rank-%d Concat", o->rank);
  layout_strides(o, onhwc, ost);
  for (int k = 0; k < ctx->n_inputs; k++) {
    const het_tensor *in = ctx->inputs[k];
    if (!in)
      continue;
    if (in->rank != 4)
      return het_kernel_fail(ctx, HET_ERR_SHAPE, "input %d is rank %d",
                                 k, in->rank);
    layout_strides(in, k < 32 && ((ctx->nhwc_in >> k) & 1), ist);
    for (int d = 0; d < 4; d++) {
      dims[d] = in->dims[perm[d]];
      src_st[d] = ist[perm[d]];
      dst_st[d] = ost[perm[d]];
    }
    copy_strided_pool(ctx->par, (char *)o->data + off * ost[ax] * (int64_t)es,
                      dst_st, in->data, src_st, dims, 4, es);
    off += in->dims[ax];
  }
  return HET_OK;
}

het_status het_kernel_run_concat(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  int ax = attr_axis(ctx, 1, o->rank);
  if (ctx->nhwc_in || ctx->nhwc_out)
    return concat_layout(ctx, o, ax);
  int64_t ost[HET_MAX_RANK], ist[HET_MAX_RANK], off = 0;
  size_t es = het_dtype_size(o->dtype);
  het_kernel_strides(o->dims, o->rank, ost);
  for (int k = 0; k < ctx->n_inputs; k++) {
    const het_tensor *in = ctx->inputs[k];
    if (!in) continue;
    het_kernel_strides(in->dims, in->rank, ist);
    copy_strided_pool(ctx->par, (char *)o->data + off * ost[ax] * (int64_t)es,
                      ost, in->data, ist, in->dims, in->rank, es);
    off += in->dims[ax];
  }
  return HET_OK;
}

het_status het_kernel_run_split(het_kernel_ctx *ctx) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0];
  int ax = attr_axis(ctx, 0, in->rank);
  int64_t ist[HET_MAX_RANK], ost[HET_MAX_RANK], off = 0;
  size_t es = het_dtype_size(in->dtype);
  het_kernel_strides(in->dims, in->rank, ist);
  for (int k = 0; k < ctx->n_outputs; k++) {
    het_tensor *o = ctx->outputs[k];
    if (!o) continue; /* omitted outputs still consume their part */
    het_kernel_strides(o->dims, o->rank, ost);
    copy_strided_pool(ctx->par, o->data, ost,
                      (const char *)in->data + off * ist[ax] * (int64_t)es,
                      ist, o->dims, o->rank, es);
    off += o->dims[ax];
  }
  return HET_OK;
}

het_status het_kernel_run_slice(het_kernel_ctx *ctx) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  het_kernel_tensor_view v;
  het_slice_plan p;
  bool known;
  int64_t ist[HET_MAX_RANK], src_st[HET_MAX_RANK], dst_st[HET_MAX_RANK];
  int64_t base = 0;
  HET_TRY(het_kernel_tensor_view_init(ctx, &v));
  HET_TRY(het_slice_plan_make(&v.ic, &p, &known));
  het_kernel_strides(in->dims, in->rank, ist);
  het_kernel_strides(o->dims, o->rank, dst_st);
  for (int d = 0; d < in->rank; d++) {
    if (p.count[d] != o->dims[d])
      return het_error(HET_ERR_INTERNAL, "node '%s' (Slice): plan mismatch",
                       ctx->node->name);
    if (p.count[d] > 0)
      base += p.start[d] * ist[d];
    src_st[d] = p.step[d] * ist[d];
  }
  size_t es = het_dtype_size(o->dtype);
  copy_strided_pool(ctx->par, o->data, dst_st,
                    (const char *)in->data + base * (int64_t)es, src_st,
                    o->dims, o->rank, es);
  return HET_OK;
}

static int64_t pad_source(int64_t j, int64_t n, het_pad_mode mode) {
  if (j >= 0 && j < n)
    return j;
  if (mode == HET_PAD_CONSTANT || n == 0)
    return -1;
  if (mode == HET_PAD_EDGE || n == 1)
    return j < 0 ? 0 : n - 1;
  int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0) j += period;
  return j >= n ? period - j : j;
}

/* Fills o with the constant pad value (input 2, or the opset<11 attr). */
static void pad_fill(const het_kernel_ctx *ctx, het_tensor *o) {
  size_t es = het_dtype_size(o->dtype);
  char one[16] = {0};
  if (ctx->opset < 11)
    het_dtype_store_f64(o->dtype, one, 0,
                        het_node_attr_float(ctx->node, "value", 0.f));
  else if (ctx->n_inputs > 2 && ctx->inputs[2] &&
           het_tensor_count(ctx->inputs[2]) > 0 &&
           ctx->inputs[2]->dtype == o->dtype)
    memcpy(one, ctx->inputs[2]->data, es);
  int64_t n = het_tensor_count(o);
  for (int64_t i = 0; i < n; i++)
    memcpy((char *)o->data + i * (int64_t)es, one, es);
}

het_status het_kernel_run_pad(het_kernel_ctx *ctx) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  het_kernel_tensor_view v;
  int64_t pads[2 * HET_MAX_RANK], ist[HET_MAX_RANK], *maps[HET_MAX_RANK];
  het_pad_mode mode;
  bool known;
  HET_TRY(het_kernel_tensor_view_init(ctx, &v));
  HET_TRY(het_pad_params(&v.ic, pads, &mode, &known));
  if (het_tensor_count(o) == 0)
    return HET_OK; /* nothing to map; an empty dim's neighbours may be huge */
  int64_t total = 0, pos = 0;
  for (int d = 0; d < o->rank; d++)
    total += o->dims[d];
  int64_t *buf = malloc((size_t)(total ? total : 1) * sizeof *buf);
  if (!buf)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (Pad): out of memory",
                     ctx->node->name);
  for (int d = 0; d < o->rank; d++) {
    maps[d] = buf + pos;
    for (int64_t i = 0; i < o->dims[d]; i++)
      maps[d][i] = pad_source(i - pads[d], in->dims[d], mode);
    pos += o->dims[d];
  }
  if (mode == HET_PAD_CONSTANT)
    pad_fill(ctx, o);
  het_kernel_strides(in->dims, in->rank, ist);
  het_kernel_copy_mapped(o->data, in->data, ist, maps, o->dims, o->rank,
                      het_dtype_size(o->dtype));
  free(buf);
  return HET_OK;
}

/* DepthToSpace / SpaceToDepth as one 6-D strided copy. */
static het_status space_depth_run(het_kernel_ctx *ctx, bool to_space) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0];
  int64_t b = het_node_attr_int(ctx->node, "blocksize", 1);
  int64_t n = in->dims[0], c = in->dims[1], h = in->dims[2], w = in->dims[3];
  int64_t v[6], s[6], dims[6], src_st[6], dst_st[6];
  const int *perm;
  static const int dcr[6] = {0, 3, 4, 1, 5, 2}, crd[6] = {0, 1, 4, 2, 5, 3},
                   s2d[6] = {0, 3, 5, 1, 2, 4};
  const char *mode = het_node_attr_string(ctx->node, "mode");
  if (to_space && mode && strcmp(mode, "CRD") == 0) {
    int64_t t[6] = {n, c / (b * b), b, b, h, w};
    memcpy(v, t, sizeof v);
    perm = crd;
  } else if (to_space) {
    int64_t t[6] = {n, b, b, c / (b * b), h, w};
    memcpy(v, t, sizeof v);
    perm = dcr;
  } else {
    int64_t t[6] = {n, c, h / b, b, w / b, b};
    memcpy(v, t, sizeof v);
    perm = s2d;
  }
  het_kernel_strides(v, 6, s);
  for (int i = 0; i < 6; i++) {
    dims[i] = v[perm[i]];
    src_st[i] = s[perm[i]];
  }
  het_kernel_strides(dims, 6, dst_st);
  het_kernel_copy_strided(o->data, dst_st, in->data, src_st, dims, 6,
                       het_dtype_size(o->dtype));
  return HET_OK;
}

het_status het_kernel_run_depth_to_space(het_kernel_ctx *ctx) {
  return space_depth_run(ctx, true);
}

het_status het_kernel_run_space_to_depth(het_kernel_ctx *ctx) {
  return space_depth_run(ctx, false);
}

het_status het_kernel_run_reverse_sequence(het_kernel_ctx *ctx) {
  HET_TRY(plain_layout(ctx));
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  het_tensor *o = ctx->outputs[0];
  const het_tensor *in = ctx->inputs[0], *lens = ctx->inputs[1];
  int bax = het_node_attr_int(ctx->node, "batch_axis", 1) == 0 ? 0 : 1;
  int tax = 1 - bax;
  int64_t d1 = in->dims[1], nb = in->dims[bax], nt = in->dims[tax];
  int64_t inner = in->rank > 2 ? het_dims_count(in->dims + 2, in->rank - 2) : 1;
  size_t es = het_dtype_size(o->dtype), row = (size_t)inner * es;
  if (het_tensor_count(lens) != nb)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (ReverseSequence): sequence_lens has %lld "
                     "entries for batch %lld", ctx->node->name,
                     (long long)het_tensor_count(lens), (long long)nb);
  for (int64_t b = 0; b < nb; b++) {
    int64_t len = het_tensor_get_i64(lens, b);
    if (len < 0 || len > nt)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "node '%s' (ReverseSequence): length %lld outside 0..%lld",
                       ctx->node->name, (long long)len, (long long)nt);
    for (int64_t t = 0; t < nt; t++) {
      int64_t st = t < len ? len - 1 - t : t;
      int64_t di = bax == 0 ? b * d1 + t : t * d1 + b;
      int64_t si = bax == 0 ? b * d1 + st : st * d1 + b;
      memcpy((char *)o->data + di * (int64_t)row,
             (const char *)in->data + si * (int64_t)row, row);
    }
  }
  return HET_OK;
}
