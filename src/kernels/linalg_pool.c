/* linalg_pool.c — MaxPool (dilations, ceil_mode, Indices with
 * storage_order), AveragePool (count_include_pad), LpPool, the Global*Pool
 * ops and MaxUnpool on the CPU.  float32 2-D pools and Global*Pools go to
 * linalg_pool_f32.c (NCHW or NHWC); MaxPool with Indices has a float32
 * per-window path here; everything else is computed in float64 over a
 * working copy, which keeps int8/uint8 exact.  Work is split across the
 * CPU thread pool.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/linalg_kern.h"
#include "kernels/linalg_pool_f32.h"
#include "kernels/linalg_pool_i8.h"
#include "kernels/parallel.h"

/* Window taps (or input elements) below which pooling stays on one thread. */
#define POOL_GRAIN 16384

typedef enum { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

typedef struct pool_args {
  het_conv_geom g;
  pool_kind kind;
  bool include_pad, col_major;
  double p;
} pool_args;

/* One output position: windows starts st[], reduces plane x (isz). */
static double pool_window(const pool_args *a, const double *x,
                          const int64_t *st, int64_t *arg) {
  const het_conv_geom *g = &a->g;
  int64_t ksz = het_conv_geom_count(g->kernel, g->nsp);
  double acc = a->kind == POOL_MAX ? -INFINITY : 0.0;
  int64_t valid = 0, padded = 0;
  *arg = -1;
  for (int64_t kk = 0; kk < ksz; kk++) {
    int64_t rem = kk, off = 0, mul = 1;
    bool in_input = true, in_padded = true;
    for (int d = g->nsp - 1; d >= 0; d--) {
      int64_t k = rem % g->kernel[d];
      rem /= g->kernel[d];
      int64_t id = st[d] + k * g->dil[d];
      in_input = in_input && id >= 0 && id < g->in[d];
      in_padded = in_padded && id < g->in[d] + g->pad_e[d];
      off += id * mul;
      mul *= g->in[d];
    }
    padded += in_padded;
    if (!in_input)
      continue;
    valid++;
    double v = x[off];
    if (a->kind == POOL_MAX) {
      if (v > acc || *arg < 0) {
        acc = v;
        *arg = off;
      }
    } else if (a->kind == POOL_AVG) {
      acc += v;
    } else {
      acc += pow(fabs(v), a->p);
    }
  }
  if (a->kind == POOL_AVG)
    return acc / (double)(a->include_pad ? padded : (valid ? valid : 1));
  if (a->kind == POOL_LP)
    return pow(acc, 1.0 / a->p);
  return acc;
}

/* Row-major flat spatial offset → column-major (storage_order = 1). */
static int64_t to_col_major(const het_conv_geom *g, int64_t off) {
  int64_t res = 0, mul = 1, idx[HET_GEOM_MAX_SP];
  for (int d = g->nsp - 1; d >= 0; d--) {
    idx[d] = off % g->in[d];
    off /= g->in[d];
  }
  for (int d = 0; d < g->nsp; d++) {
    res += idx[d] * mul;
    mul *= g->in[d];
  }
  return res;
}

/* One pooling call: planes [p0, p1) (pool_planes) or output rows
 * [u0, u1) of plane-major rows (pool2d_f32) of x into y (and ind). */
typedef struct pool_job {
  const pool_args *a;
  const void *x;
  void *y;
  int64_t *ind;
} pool_job;

static void pool_planes(void *arg, int64_t p0, int64_t p1) {
  const pool_job *j = arg;
  const pool_args *a = j->a;
  const double *x = j->x;
  double *y = j->y;
  int64_t *ind = j->ind;
  const het_conv_geom *g = &a->g;
  int64_t isz = het_conv_geom_count(g->in, g->nsp);
  int64_t osz = het_conv_geom_count(g->out, g->nsp);
  for (int64_t p = p0; p < p1; p++)
    for (int64_t o = 0; o < osz; o++) {
      int64_t st[HET_GEOM_MAX_SP], rem = o, arg;
      for (int d = g->nsp - 1; d >= 0; d--) {
        st[d] = (rem % g->out[d]) * g->stride[d] - g->pad_b[d];
        rem /= g->out[d];
      }
      y[p * osz + o] = pool_window(a, x + p * isz, st, &arg);
      if (ind)
        ind[p * osz + o] =
            p * isz + (arg < 0 ? 0 : a->col_major ? to_col_major(g, arg) : arg);
    }
}

/* One output of pool2d_f32 over the valid taps only, in the same order
 * (and so with the same result) as a walk that skips the others. */
static float pool2d_f32_window(const pool_args *a, const float *xp,
                               int64_t iw, int64_t hs, int64_t ws,
                               const int64_t *kr, int64_t *arg) {
  const het_conv_geom *g = &a->g;
  int64_t dh = g->dil[0], dw = g->dil[1];
  float acc = a->kind == POOL_MAX ? -INFINITY : 0.f;
  *arg = -1;
  if (kr[0] == kr[1] || kr[2] == kr[3])
    return acc;
  if (a->kind == POOL_AVG) {
    for (int64_t kh = kr[0]; kh < kr[1]; kh++) {
      int64_t rb = (hs + kh * dh) * iw + ws; /* row base; may be < 0 */
      for (int64_t kw = kr[2]; kw < kr[3]; kw++)
        acc += xp[rb + kw * dw];
    }
    return acc;
  }
  acc = xp[(hs + kr[0] * dh) * iw + ws + kr[2] * dw];
  *arg = (hs + kr[0] * dh) * iw + ws + kr[2] * dw;
  for (int64_t kh = kr[0]; kh < kr[1]; kh++) {
    int64_t rb = (hs + kh * dh) * iw + ws;
    for (int64_t kw = kr[2]; kw < kr[3]; kw++)
      if (xp[rb + kw * dw] > acc) {
        acc = xp[rb + kw * dw];
        *arg = rb + kw * dw;
      }
  }
  return acc;
}

/* float32 2-D max/average pooling: the hot path of CNNs.  Unit u is
 * output row u % oh of plane u / oh. */
static void pool2d_f32(void *arg, int64_t u0, int64_t u1) {
  const pool_job *jb = arg;
  const pool_args *a = jb->a;
  const float *x = jb->x;
  float *y = jb->y;
  int64_t *ind = jb->ind;
  const het_conv_geom *g = &a->g;
  int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
  for (int64_t u = u0; u < u1; u++) {
    int64_t p = u / oh, i = u % oh;
    const float *xp = x + p * ih * iw;
    int64_t hs = i * g->stride[0] - g->pad_b[0];
    int64_t kr[4];
    het_pool_tap_range(hs, g->kernel[0], g->dil[0], ih, &kr[0], &kr[1]);
    for (int64_t j = 0; j < ow; j++) {
      int64_t ws = j * g->stride[1] - g->pad_b[1], arg;
      het_pool_tap_range(ws, g->kernel[1], g->dil[1], iw, &kr[2], &kr[3]);
      int64_t valid = (kr[1] - kr[0]) * (kr[3] - kr[2]);
      float acc = pool2d_f32_window(a, xp, iw, hs, ws, kr, &arg);
      if (a->kind == POOL_AVG) {
        int64_t cnt =
            a->include_pad
                ? het_pool_taps_before(hs, g->kernel[0], 1, ih + g->pad_e[0]) *
                      het_pool_taps_before(ws, g->kernel[1], 1, iw + g->pad_e[1])
                : valid;
        acc /= (float)(cnt ? cnt : 1);
      }
      y[(p * oh + i) * ow + j] = acc;
      if (ind)
        ind[(p * oh + i) * ow + j] =
            p * ih * iw + (arg < 0 ? 0
                           : a->col_major ? (arg % iw) * ih + arg / iw
                                          : arg);
    }
  }
}

static het_status pool_run(het_kernel_ctx *ctx, pool_kind kind) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  het_tensor *ind = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  pool_args a = {.kind = kind};
  HET_TRY(het_lk_geom(ctx, HET_GEOM_POOL, x, NULL, &a.g));
  a.include_pad = het_node_attr_int(ctx->node, "count_include_pad", 0) != 0;
  a.col_major = het_node_attr_int(ctx->node, "storage_order", 0) != 0;
  a.p = (double)het_node_attr_int(ctx->node, "p", 2);
  if (kind != POOL_MAX)
    for (int d = 0; d < a.g.nsp; d++)
      a.g.dil[d] = 1;
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t taps = het_conv_geom_count(a.g.kernel, a.g.nsp) + 1;
  pool_job job = {.a = &a, .x = x->data, .y = y->data,
                  .ind = ind ? (int64_t *)ind->data : NULL};
  bool f32_2d = x->dtype == HET_DTYPE_FLOAT32 && a.g.nsp == 2 &&
                kind != POOL_LP && x->rank == 4;
  if (f32_2d && !ind)
    return het_lk_pool2d_f32_run(ctx, &a.g, kind == POOL_MAX, a.include_pad);
  if ((x->dtype == HET_DTYPE_UINT8 || x->dtype == HET_DTYPE_INT8) &&
      kind == POOL_MAX && a.g.nsp == 2 && x->rank == 4 && !ind &&
      y->dtype == x->dtype)
    return het_lk_maxpool2d_i8_run(ctx, &a.g);
  if ((ctx->nhwc_in | ctx->nhwc_out) & 1)
    return het_lk_fail(ctx, HET_ERR_UNSUPPORTED,
                       "NHWC layout needs float32 2-D pooling without "
                       "Indices");
  if (f32_2d) {
    int64_t row = a.g.out[1] * taps + 1;
    het_parallel_for(ctx->par, planes * a.g.out[0],
                                POOL_GRAIN / row + 1, pool2d_f32, &job);
    return HET_OK;
  }
  het_lk_buf bx, by;
  HET_TRY(het_lk_buf_input(ctx, x, HET_DTYPE_FLOAT64, &bx));
  het_status st = het_lk_buf_output(ctx, y, HET_DTYPE_FLOAT64, &by);
  if (st != HET_OK)
    goto fail;
  job.x = bx.data;
  job.y = by.data;
  int64_t plane = het_conv_geom_count(a.g.out, a.g.nsp) * taps + 1;
  het_parallel_for(ctx->par, planes, POOL_GRAIN / plane + 1,
                              pool_planes, &job);
  het_lk_buf_commit(y, &by);
fail:
  het_lk_buf_release(&bx);
  return st;
}

het_status het_lk_maxpool_run(het_kernel_ctx *ctx) {
  return pool_run(ctx, POOL_MAX);
}

het_status het_lk_avgpool_run(het_kernel_ctx *ctx) {
  return pool_run(ctx, POOL_AVG);
}

het_status het_lk_lppool_run(het_kernel_ctx *ctx) {
  return pool_run(ctx, POOL_LP);
}

typedef struct global_job {
  const double *x;
  double *y;
  int64_t sz;
  double p;
  pool_kind kind;
} global_job;

static void global_planes(void *arg, int64_t i0, int64_t i1) {
  const global_job *j = arg;
  pool_kind kind = j->kind;
  for (int64_t i = i0; i < i1; i++) {
    double acc = kind == POOL_MAX ? -INFINITY : 0.0;
    for (int64_t e = 0; e < j->sz; e++) {
      double v = j->x[i * j->sz + e];
      if (kind == POOL_MAX)
        acc = v > acc ? v : acc;
      else if (kind == POOL_AVG)
        acc += v;
      else
        acc += pow(fabs(v), j->p);
    }
    j->y[i] = kind == POOL_AVG ? acc / (double)j->sz
              : kind == POOL_LP ? pow(acc, 1.0 / j->p)
                                : acc;
  }
}

het_status het_lk_global_pool_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  const char *op = ctx->node->op_type;
  pool_kind kind = op[6] == 'M' ? POOL_MAX : op[6] == 'A' ? POOL_AVG : POOL_LP;
  double p = (double)het_node_attr_int(ctx->node, "p", 2);
  if (x->rank < 2)
    return het_lk_fail(ctx, HET_ERR_SHAPE, "input rank %d < 2", x->rank);
  if (x->dtype == HET_DTYPE_FLOAT32 && x->rank == 4 && kind != POOL_LP)
    return het_lk_global_pool_f32_run(ctx, kind == POOL_MAX);
  if (ctx->nhwc_in & 1)
    return het_lk_fail(ctx, HET_ERR_UNSUPPORTED,
                       "NHWC layout needs a float32 GlobalMax/AveragePool");
  int64_t planes = x->dims[0] * x->dims[1];
  int64_t sz = het_dims_count(x->dims + 2, x->rank - 2);
  het_lk_buf bx, by;
  HET_TRY(het_lk_buf_input(ctx, x, HET_DTYPE_FLOAT64, &bx));
  het_status st = het_lk_buf_output(ctx, y, HET_DTYPE_FLOAT64, &by);
  if (st != HET_OK)
    goto fail;
  global_job job = {.x = bx.data, .y = by.data, .sz = sz, .p = p,
                    .kind = kind};
  het_parallel_for(ctx->par, planes, POOL_GRAIN / (sz + 1) + 1,
                              global_planes, &job);
  het_lk_buf_commit(y, &by);
fail:
  het_lk_buf_release(&bx);
  return st;
}

/* Flat index of the element whose flat index over the default unpool
 * shape def is i, in the actual output shape out (rank dims); -1 when it
 * falls outside. */
static int64_t unpool_remap(int64_t i, const int64_t *def, const int64_t *out,
                            int rank) {
  int64_t res = 0, mul = 1;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t c = i % def[d];
    i /= def[d];
    if (c >= out[d])
      return -1;
    res += c * mul;
    mul *= out[d];
  }
  return i == 0 ? res : -1;
}

het_status het_lk_max_unpool_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *ind = ctx->inputs[1];
  het_tensor *y = ctx->outputs[0];
  int64_t n = het_tensor_count(x);
  if (het_tensor_count(ind) != n || x->rank < 3 || y->rank != x->rank)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "I has %lld elements but X has %lld (rank %d)",
                       (long long)het_tensor_count(ind), (long long)n,
                       x->rank);
  /* Indices refer to the default output shape (kernel/strides/pads). */
  int64_t unknown[HET_GEOM_MAX_SP], def[HET_MAX_RANK];
  for (int i = 0; i < HET_GEOM_MAX_SP; i++)
    unknown[i] = -1;
  het_conv_geom g;
  HET_TRY(het_conv_geom_init(ctx->node, HET_GEOM_POOL, x->rank - 2, unknown,
                             NULL, &g));
  def[0] = x->dims[0];
  def[1] = x->dims[1];
  for (int d = 0; d < g.nsp; d++)
    def[2 + d] = (x->dims[2 + d] - 1) * g.stride[d] + g.kernel[d] -
                 g.pad_b[d] - g.pad_e[d];
  size_t es = het_dtype_size(y->dtype);
  memset(y->data, 0, y->nbytes);
  const int64_t *id = ind->data;
  for (int64_t i = 0; i < n; i++) {
    int64_t at = id[i] < 0 ? -1 : unpool_remap(id[i], def, y->dims, y->rank);
    if (at < 0)
      return het_lk_fail(ctx, HET_ERR_SHAPE,
                         "index %lld outside the output", (long long)id[i]);
    memcpy((char *)y->data + (size_t)at * es,
           (const char *)x->data + (size_t)i * es, es);
  }
  return HET_OK;
}
