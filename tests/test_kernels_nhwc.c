/* test_kernels_nhwc.c — Check suite for the CPU kernels the layout pass
 * may run channels-last (MaxPool, AveragePool, Global*Pool, Concat,
 * depthwise Conv): each runs once on NCHW tensors and once on the same
 * data stored NHWC with the context's nhwc bits set; the NHWC result,
 * transposed back, must match (exactly for max/copies, 1e-6 relative for
 * sums).  Also checks the float32 pool fast path against the per-window
 * Indices path and a double-precision reference, the fused clamp, and
 * the named activations (hetrt_act) on the Conv paths without oneDNN.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ops/linalg_geom.h"
#include "core/tensor.h"
#include "kernels/linalg_conv_dw.h"
#include "kernels/linalg_kern.h"
#include "kernels/tensor_kernels.h"

#define MAXA 8

/* A hand-built node: attributes set by the helpers below. */
typedef struct tnode {
  het_node n;
  het_attr a[MAXA];
  int64_t ints[MAXA][8];
} tnode;

static void tnode_init(tnode *t, const char *op) {
  memset(t, 0, sizeof *t);
  t->n.name = "t";
  t->n.op_type = op;
  t->n.domain = "";
  t->n.opset = 13;
  t->n.attrs = t->a;
}

static void attr_ints(tnode *t, const char *name, int n, const int64_t *v) {
  het_attr *a = &t->a[t->n.n_attrs];
  a->name = name;
  a->type = HET_ATTR_INTS;
  a->n = (size_t)n;
  memcpy(t->ints[t->n.n_attrs], v, sizeof(int64_t) * (size_t)n);
  a->ints = t->ints[t->n.n_attrs++];
}

static void attr_int(tnode *t, const char *name, int64_t v) {
  het_attr *a = &t->a[t->n.n_attrs++];
  a->name = name;
  a->type = HET_ATTR_INT;
  a->i = v;
}

static void attr_float(tnode *t, const char *name, float v) {
  het_attr *a = &t->a[t->n.n_attrs++];
  a->name = name;
  a->type = HET_ATTR_FLOAT;
  a->f = v;
}

static het_tensor *tensor4(int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t d[4] = {n, c, h, w};
  het_tensor *t = NULL;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, d, 4, &t),
                   HET_OK);
  return t;
}

static uint64_t rng = 88172645463325252ull;
static float frand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}

static void fill(het_tensor *t, double nan_rate) {
  float *p = t->data;
  for (int64_t i = 0; i < het_tensor_count(t); i++)
    p[i] = (nan_rate > 0 && (frand() + 2.0) / 4.0 < nan_rate) ? NAN : frand();
}

/* NCHW t → new NHWC copy (same dims), and back. */
static het_tensor *to_layout(const het_tensor *t, bool nhwc) {
  const int64_t *d = t->dims;
  het_tensor *o = tensor4(d[0], d[1], d[2], d[3]);
  const float *s = t->data;
  float *q = o->data;
  for (int64_t n = 0; n < d[0]; n++)
    for (int64_t c = 0; c < d[1]; c++)
      for (int64_t i = 0; i < d[2] * d[3]; i++) {
        int64_t a = (n * d[1] + c) * d[2] * d[3] + i;
        int64_t b = (n * d[2] * d[3] + i) * d[1] + c;
        if (nhwc)
          q[b] = s[a];
        else
          q[a] = s[b];
      }
  return o;
}

/* Same values (NaN matches NaN); tol 0 means bitwise-equal values. */
static void assert_close(const het_tensor *a, const het_tensor *b, double tol) {
  ck_assert_int_eq(het_tensor_count(a), het_tensor_count(b));
  const float *p = a->data, *q = b->data;
  for (int64_t i = 0; i < het_tensor_count(a); i++) {
    if (isnan(p[i]) || isnan(q[i])) {
      ck_assert_msg(isnan(p[i]) && isnan(q[i]), "at %lld: %g vs %g",
                    (long long)i, p[i], q[i]);
      continue;
    }
    double d = fabs((double)p[i] - q[i]);
    ck_assert_msg(tol == 0 ? p[i] == q[i] : d <= tol * (fabs(p[i]) + 1.0),
                  "at %lld: %.9g vs %.9g", (long long)i, p[i], q[i]);
  }
}

typedef het_status (*kernel_fn)(het_kernel_ctx *);

static het_status run_kernel(kernel_fn fn, const het_node *node,
                             het_tensor **in, int n_in, het_tensor **out,
                             int n_out, uint32_t bits_in, uint32_t bits_out) {
  het_kernel_ctx ctx = {.node = node, .opset = node->opset,
                            .n_inputs = n_in, .inputs = in,
                            .n_outputs = n_out, .outputs = out,
                            .threads = 1, .nhwc_in = bits_in,
                            .nhwc_out = bits_out};
  return fn(&ctx);
}

static het_tensor *convert(const het_tensor *t, het_dtype dt) {
  het_tensor *o = NULL;
  ck_assert_int_eq(het_tensor_create_empty(dt, t->dims, t->rank, &o), HET_OK);
  for (int64_t i = 0; i < het_tensor_count(t); i++) {
    if (dt == HET_DTYPE_FLOAT64)
      ((double *)o->data)[i] = ((const float *)t->data)[i];
    else
      ((float *)o->data)[i] = (float)((const double *)t->data)[i];
  }
  return o;
}

/* Runs a pool node NCHW, NHWC and through the float64 generic path (and
 * with Indices for MaxPool), comparing all. */
static void check_pool(const tnode *t, bool is_max, int64_t n, int64_t c,
                       int64_t h, int64_t w, double nan_rate) {
  kernel_fn fn = is_max ? het_lk_maxpool_run : het_lk_avgpool_run;
  het_tensor *x = tensor4(n, c, h, w);
  fill(x, nan_rate);
  int64_t in[2] = {h, w};
  het_conv_geom g;
  ck_assert_int_eq(het_conv_geom_init(&t->n, HET_GEOM_POOL, 2, in, NULL, &g),
                   HET_OK);
  bool flat = g.out[0] * g.out[1] == 1;
  het_tensor *y = tensor4(n, c, g.out[0], g.out[1]);
  het_tensor *yn = tensor4(n, c, g.out[0], g.out[1]);
  het_tensor *xn = to_layout(x, true);
  ck_assert_int_eq(run_kernel(fn, &t->n, &x, 1, &y, 1, 0, 0), HET_OK);
  ck_assert_int_eq(run_kernel(fn, &t->n, &xn, 1, &yn, 1, 1, flat ? 0 : 1),
                   HET_OK);
  het_tensor *back = flat ? yn : to_layout(yn, false);
  assert_close(y, back, 0);
  /* float64 generic path */
  het_tensor *xd = convert(x, HET_DTYPE_FLOAT64), *yd = NULL;
  ck_assert_int_eq(
      het_tensor_create_empty(HET_DTYPE_FLOAT64, y->dims, 4, &yd), HET_OK);
  ck_assert_int_eq(run_kernel(fn, &t->n, &xd, 1, &yd, 1, 0, 0), HET_OK);
  het_tensor *yf = convert(yd, HET_DTYPE_FLOAT32);
  assert_close(y, yf, is_max ? 0 : 1e-6);
  if (is_max) { /* the per-window float32 path with Indices */
    het_tensor *yi = tensor4(n, c, g.out[0], g.out[1]), *ind = NULL;
    ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_INT64, y->dims, 4,
                                             &ind), HET_OK);
    het_tensor *outs[2] = {yi, ind};
    ck_assert_int_eq(run_kernel(fn, &t->n, &x, 1, outs, 2, 0, 0), HET_OK);
    assert_close(y, yi, 0);
    /* Indices cannot be NHWC: refused, not misread */
    ck_assert_int_ne(run_kernel(fn, &t->n, &xn, 1, outs, 2, 1, 1), HET_OK);
    het_tensor_destroy(yi);
    het_tensor_destroy(ind);
  }
  if (!flat)
    het_tensor_destroy(back);
  het_tensor *all[] = {x, y, yn, xn, xd, yd, yf};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    het_tensor_destroy(all[i]);
}

START_TEST(test_maxpool_ceil_pads_nan) {
  tnode t;
  tnode_init(&t, "MaxPool");
  attr_ints(&t, "kernel_shape", 2, (int64_t[]){3, 3});
  attr_ints(&t, "strides", 2, (int64_t[]){2, 2});
  attr_int(&t, "ceil_mode", 1);
  check_pool(&t, true, 2, 19, 17, 15, 0.05);
  attr_ints(&t, "pads", 4, (int64_t[]){1, 0, 1, 2});
  check_pool(&t, true, 1, 21, 13, 14, 0.05);
  /* 64-channel spans and a tail: 64, 2 x 64, 64 + 19 */
  check_pool(&t, true, 1, 64, 9, 8, 0.05);
  check_pool(&t, true, 1, 128, 7, 6, 0.05);
  check_pool(&t, true, 2, 83, 9, 11, 0.05);
}
END_TEST

/* 8-bit MaxPool (linalg_pool_i8.c): NHWC, where AVX-512BW keeps each
 * 64-channel block's maximum in a register over the window, against the
 * NCHW path, which goes output by output: byte for byte, uint8 and int8
 * (whose minimum pads differ), channel counts below, at and past 64. */
static void check_pool_i8(const tnode *t, het_dtype dt, int64_t n, int64_t c,
                          int64_t h, int64_t w) {
  int64_t in[2] = {h, w};
  het_conv_geom g;
  ck_assert_int_eq(het_conv_geom_init(&t->n, HET_GEOM_POOL, 2, in, NULL, &g),
                   HET_OK);
  int64_t xd[4] = {n, c, h, w}, yd[4] = {n, c, g.out[0], g.out[1]};
  het_tensor *x, *xn, *y, *yn;
  ck_assert_int_eq(het_tensor_create_empty(dt, xd, 4, &x), HET_OK);
  ck_assert_int_eq(het_tensor_create_empty(dt, xd, 4, &xn), HET_OK);
  ck_assert_int_eq(het_tensor_create_empty(dt, yd, 4, &y), HET_OK);
  ck_assert_int_eq(het_tensor_create_empty(dt, yd, 4, &yn), HET_OK);
  uint8_t *xp = x->data, *xq = xn->data;
  for (int64_t i = 0; i < het_tensor_count(x); i++)
    xp[i] = (uint8_t)(frand() * 64.0 + 128.0);
  int64_t px = h * w, opx = g.out[0] * g.out[1];
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t i = 0; i < px; i++)
        xq[(b * px + i) * c + ch] = xp[(b * c + ch) * px + i];
  ck_assert_int_eq(run_kernel(het_lk_maxpool_run, &t->n, &x, 1, &y, 1, 0, 0),
                   HET_OK);
  ck_assert_int_eq(
      run_kernel(het_lk_maxpool_run, &t->n, &xn, 1, &yn, 1, 1, 1), HET_OK);
  const uint8_t *yp = y->data, *yq = yn->data;
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t i = 0; i < opx; i++)
        ck_assert_msg(yq[(b * opx + i) * c + ch] == yp[(b * c + ch) * opx + i],
                      "%s c %lld: image %lld channel %lld pixel %lld: NHWC "
                      "%d, NCHW %d", dt == HET_DTYPE_INT8 ? "int8" : "uint8",
                      (long long)c, (long long)b, (long long)ch, (long long)i,
                      yq[(b * opx + i) * c + ch], yp[(b * c + ch) * opx + i]);
  het_tensor *all[] = {x, xn, y, yn};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    het_tensor_destroy(all[i]);
}

START_TEST(test_maxpool_i8_nhwc) {
  het_dtype dt = _i ? HET_DTYPE_INT8 : HET_DTYPE_UINT8;
  tnode t;
  tnode_init(&t, "MaxPool");
  attr_ints(&t, "kernel_shape", 2, (int64_t[]){3, 3});
  attr_ints(&t, "strides", 2, (int64_t[]){2, 2});
  attr_ints(&t, "pads", 4, (int64_t[]){1, 1, 1, 1});
  check_pool_i8(&t, dt, 1, 64, 17, 16); /* ResNet's stem pool */
  check_pool_i8(&t, dt, 2, 83, 9, 11);
  check_pool_i8(&t, dt, 1, 19, 8, 7);
  attr_int(&t, "ceil_mode", 1);
  check_pool_i8(&t, dt, 1, 128, 10, 9);
  tnode_init(&t, "MaxPool");
  attr_ints(&t, "kernel_shape", 2, (int64_t[]){2, 3});
  attr_ints(&t, "dilations", 2, (int64_t[]){2, 1});
  attr_ints(&t, "pads", 4, (int64_t[]){0, 2, 1, 0});
  check_pool_i8(&t, dt, 1, 70, 11, 12);
}
END_TEST

START_TEST(test_maxpool_stride1_dilated) {
  tnode t;
  tnode_init(&t, "MaxPool");
  attr_ints(&t, "kernel_shape", 2, (int64_t[]){3, 2});
  attr_ints(&t, "pads", 4, (int64_t[]){1, 1, 1, 1});
  check_pool(&t, true, 1, 35, 16, 40, 0.02);
  attr_ints(&t, "dilations", 2, (int64_t[]){2, 3});
  attr_ints(&t, "strides", 2, (int64_t[]){3, 1});
  check_pool(&t, true, 2, 17, 19, 23, 0.02);
}
END_TEST

START_TEST(test_avgpool_pads_ceil) {
  for (int inc = 0; inc < 2; inc++) {
    tnode t;
    tnode_init(&t, "AveragePool");
    attr_ints(&t, "kernel_shape", 2, (int64_t[]){3, 2});
    attr_ints(&t, "strides", 2, (int64_t[]){2, 1});
    attr_ints(&t, "pads", 4, (int64_t[]){1, 1, 2, 0});
    attr_int(&t, "count_include_pad", inc);
    check_pool(&t, false, 2, 19, 15, 17, 0);
    attr_int(&t, "ceil_mode", 1);
    check_pool(&t, false, 1, 33, 14, 21, 0);
    check_pool(&t, false, 2, 83, 9, 10, 0); /* a 64-channel span + 19 */
  }
  tnode t;
  tnode_init(&t, "AveragePool");
  attr_ints(&t, "kernel_shape", 2, (int64_t[]){7, 7});
  check_pool(&t, false, 2, 23, 7, 7, 0); /* 1x1 output: layouts agree */
}
END_TEST

static void check_global(const char *op, int64_t n, int64_t c, int64_t h,
                         int64_t w) {
  tnode t;
  tnode_init(&t, op);
  het_tensor *x = tensor4(n, c, h, w), *y = tensor4(n, c, 1, 1);
  het_tensor *yn = tensor4(n, c, 1, 1), *yd = NULL;
  fill(x, 0);
  het_tensor *xn = to_layout(x, true), *xd = convert(x, HET_DTYPE_FLOAT64);
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT64, y->dims, 4,
                                           &yd), HET_OK);
  ck_assert_int_eq(run_kernel(het_lk_global_pool_run, &t.n, &x, 1, &y, 1, 0,
                              0), HET_OK);
  ck_assert_int_eq(run_kernel(het_lk_global_pool_run, &t.n, &xn, 1, &yn, 1,
                              1, 0), HET_OK);
  ck_assert_int_eq(run_kernel(het_lk_global_pool_run, &t.n, &xd, 1, &yd, 1,
                              0, 0), HET_OK);
  het_tensor *yf = convert(yd, HET_DTYPE_FLOAT32);
  assert_close(y, yn, 1e-6);
  assert_close(y, yf, 1e-6);
  het_tensor *all[] = {x, y, yn, yd, xn, xd, yf};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    het_tensor_destroy(all[i]);
}

START_TEST(test_global_pools) {
  check_global("GlobalAveragePool", 2, 67, 13, 11);
  check_global("GlobalMaxPool", 2, 67, 13, 11);
  check_global("GlobalAveragePool", 1, 130, 3, 7);
  check_global("GlobalMaxPool", 1, 5, 1, 2);
}
END_TEST

/* Concat on axis 1 (also written -3) of inputs with 3, 5 and 17
 * channels: all inputs NHWC, then input 1 left NCHW. */
START_TEST(test_concat_channels) {
  static const int64_t ch[3] = {3, 5, 17};
  for (int variant = 0; variant < 2; variant++) {
    tnode t;
    tnode_init(&t, "Concat");
    attr_int(&t, "axis", variant ? -3 : 1);
    het_tensor *x[3], *xn[3];
    for (int k = 0; k < 3; k++) {
      x[k] = tensor4(2, ch[k], 7, 9);
      fill(x[k], 0);
      if (variant && k == 1)
        ck_assert_int_eq(het_tensor_clone(x[k], &xn[k]), HET_OK);
      else
        xn[k] = to_layout(x[k], true);
    }
    het_tensor *y = tensor4(2, 25, 7, 9), *yn = tensor4(2, 25, 7, 9);
    ck_assert_int_eq(run_kernel(het_kernel_run_concat, &t.n, x, 3, &y, 1, 0, 0),
                     HET_OK);
    uint32_t bits = variant ? 5u : 7u;
    ck_assert_int_eq(
        run_kernel(het_kernel_run_concat, &t.n, xn, 3, &yn, 1, bits, 1), HET_OK);
    het_tensor *back = to_layout(yn, false);
    assert_close(y, back, 0);
    het_tensor_destroy(back);
    het_tensor_destroy(y);
    het_tensor_destroy(yn);
    for (int k = 0; k < 3; k++) {
      het_tensor_destroy(x[k]);
      het_tensor_destroy(xn[k]);
    }
  }
}
END_TEST

static het_status dw_kernel(het_kernel_ctx *ctx) {
  bool done = false;
  HET_TRY(het_lk_conv_dw_run(ctx, &done));
  return done ? HET_OK : HET_ERR_UNSUPPORTED;
}

/* Direct double reference of a depthwise conv (multiplier 1), clamped. */
static double dw_ref(const tnode *t, const het_conv_geom *g,
                     const het_tensor *x, const het_tensor *w,
                     const het_tensor *b, int64_t n, int64_t c, int64_t oy,
                     int64_t ox) {
  const float *xp = x->data, *wp = w->data;
  double acc = b ? ((const float *)b->data)[c] : 0.0;
  for (int64_t kh = 0; kh < g->kernel[0]; kh++)
    for (int64_t kw = 0; kw < g->kernel[1]; kw++) {
      int64_t iy = oy * g->stride[0] - g->pad_b[0] + kh * g->dil[0];
      int64_t ix = ox * g->stride[1] - g->pad_b[1] + kw * g->dil[1];
      if (iy < 0 || iy >= g->in[0] || ix < 0 || ix >= g->in[1])
        continue;
      acc += (double)wp[(c * g->kernel[0] + kh) * g->kernel[1] + kw] *
             xp[((n * x->dims[1] + c) * g->in[0] + iy) * g->in[1] + ix];
    }
  const het_attr *lo = het_node_find_attr(&t->n, "hetrt_act_min");
  const het_attr *hi = het_node_find_attr(&t->n, "hetrt_act_max");
  if (lo && hi)
    acc = acc < lo->f ? lo->f : acc > hi->f ? hi->f : acc;
  return acc;
}

static void check_dw(const tnode *t, int64_t n, int64_t c, int64_t h,
                     int64_t w, bool bias) {
  const het_attr *ks = het_node_find_attr(&t->n, "kernel_shape");
  het_tensor *x = tensor4(n, c, h, w), *wt = tensor4(c, 1, ks->ints[0],
                                                     ks->ints[1]);
  het_tensor *b = bias ? tensor4(1, 1, 1, c) : NULL;
  fill(x, 0);
  fill(wt, 0);
  if (b) {
    b->rank = 1;
    b->dims[0] = c;
    fill(b, 0);
  }
  int64_t in[2] = {h, w};
  het_conv_geom g;
  ck_assert_int_eq(het_conv_geom_init(&t->n, HET_GEOM_CONV, 2, in,
                                      ks->ints, &g), HET_OK);
  het_tensor *y = tensor4(n, c, g.out[0], g.out[1]);
  het_tensor *yn = tensor4(n, c, g.out[0], g.out[1]);
  het_tensor *xn = to_layout(x, true);
  het_tensor *ins[3] = {x, wt, b}, *insn[3] = {xn, wt, b};
  ck_assert_int_eq(run_kernel(dw_kernel, &t->n, ins, 3, &y, 1, 0, 0), HET_OK);
  ck_assert_int_eq(run_kernel(dw_kernel, &t->n, insn, 3, &yn, 1, 1, 1),
                   HET_OK);
  het_tensor *back = to_layout(yn, false);
  assert_close(y, back, 1e-6);
  const float *yp = y->data;
  for (int64_t i = 0; i < het_tensor_count(y); i++) {
    int64_t ox = i % g.out[1], oy = i / g.out[1] % g.out[0];
    int64_t cc = i / (g.out[0] * g.out[1]) % c, nn = i / (g.out[0] * g.out[1] * c);
    double r = dw_ref(t, &g, x, wt, b, nn, cc, oy, ox);
    ck_assert_msg(fabs(yp[i] - r) <= 1e-5 * (fabs(r) + 1.0),
                  "at %lld: %.9g vs ref %.9g", (long long)i, yp[i], r);
  }
  het_tensor *all[] = {x, wt, b, y, yn, xn, back};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i])
      het_tensor_destroy(all[i]);
}

static void dw_node(tnode *t, int64_t c, int64_t k0, int64_t k1) {
  tnode_init(t, "Conv");
  attr_int(t, "group", c);
  attr_ints(t, "kernel_shape", 2, (int64_t[]){k0, k1});
}

START_TEST(test_dw_conv) {
  tnode t;
  dw_node(&t, 37, 3, 3);
  attr_ints(&t, "pads", 4, (int64_t[]){1, 1, 1, 1});
  check_dw(&t, 2, 37, 13, 17, true);
  attr_float(&t, "hetrt_act_min", 0.f);
  attr_float(&t, "hetrt_act_max", 0.5f);
  check_dw(&t, 1, 37, 11, 21, true);
  dw_node(&t, 48, 3, 3);
  attr_ints(&t, "pads", 4, (int64_t[]){1, 1, 0, 1});
  attr_ints(&t, "strides", 2, (int64_t[]){2, 2});
  attr_float(&t, "hetrt_act_min", -1.f);
  attr_float(&t, "hetrt_act_max", 1.f);
  check_dw(&t, 1, 48, 15, 22, false);
  dw_node(&t, 19, 5, 3);
  attr_ints(&t, "pads", 4, (int64_t[]){2, 0, 3, 1});
  attr_ints(&t, "dilations", 2, (int64_t[]){2, 1});
  attr_ints(&t, "strides", 2, (int64_t[]){1, 2});
  check_dw(&t, 1, 19, 14, 25, true);
}
END_TEST

/* Channel multiplier 2 has no NHWC path: done stays false. */
START_TEST(test_dw_conv_mult2_nhwc_refused) {
  tnode t;
  dw_node(&t, 4, 3, 3);
  het_tensor *x = tensor4(1, 4, 6, 6), *w = tensor4(8, 1, 3, 3);
  het_tensor *y = tensor4(1, 8, 4, 4);
  fill(x, 0);
  fill(w, 0);
  het_tensor *ins[2] = {x, w};
  ck_assert_int_eq(run_kernel(dw_kernel, &t.n, ins, 2, &y, 1, 0, 0), HET_OK);
  ck_assert_int_eq(run_kernel(dw_kernel, &t.n, ins, 2, &y, 1, 1, 1),
                   HET_ERR_UNSUPPORTED);
  het_tensor_destroy(x);
  het_tensor_destroy(w);
  het_tensor_destroy(y);
}
END_TEST

/* The activation the optimizer fuses by name (hetrt_act, alpha, beta),
 * applied by Conv paths without oneDNN (no state: the depthwise kernel,
 * im2col + GEMM) through the op's own kernel: equals the plain Conv's
 * output put through the ONNX formula. */
static double act_ref(const char *op, double a, double b, double x) {
  if (strcmp(op, "LeakyRelu") == 0)
    return x < 0 ? a * x : x;
  if (strcmp(op, "HardSigmoid") == 0)
    return fmax(0.0, fmin(1.0, a * x + b));
  return 1.0 / (1.0 + exp(-x)); /* Sigmoid */
}

static void check_named_act(int64_t group, const char *op, float a,
                            float b) {
  tnode plain, fused;
  int64_t c = 8;
  for (int k = 0; k < 2; k++) {
    tnode *t = k ? &fused : &plain;
    tnode_init(t, "Conv");
    attr_int(t, "group", group);
    attr_ints(t, "kernel_shape", 2, (int64_t[]){3, 3});
    attr_ints(t, "pads", 4, (int64_t[]){1, 1, 1, 1});
  }
  het_attr *name = &fused.a[fused.n.n_attrs++];
  name->name = "hetrt_act";
  name->type = HET_ATTR_STRING;
  name->s = op;
  name->s_len = strlen(op);
  attr_float(&fused, "hetrt_act_alpha", a);
  attr_float(&fused, "hetrt_act_beta", b);
  het_tensor *x = tensor4(1, c, 9, 7), *w = tensor4(c, c / group, 3, 3);
  het_tensor *y0 = tensor4(1, c, 9, 7), *y1 = tensor4(1, c, 9, 7);
  fill(x, 0);
  fill(w, 0);
  het_tensor *ins[2] = {x, w};
  ck_assert_int_eq(run_kernel(het_lk_conv_run, &plain.n, ins, 2, &y0, 1, 0,
                              0),
                   HET_OK);
  ck_assert_int_eq(run_kernel(het_lk_conv_run, &fused.n, ins, 2, &y1, 1, 0,
                              0),
                   HET_OK);
  const float *p = y0->data, *q = y1->data;
  for (int64_t i = 0; i < het_tensor_count(y0); i++) {
    double r = act_ref(op, a, b, p[i]);
    ck_assert_msg(fabs(q[i] - r) <= 1e-6 * (fabs(r) + 1.0),
                  "%s group %lld at %lld: %.9g vs %.9g", op, (long long)group,
                  (long long)i, q[i], r);
  }
  het_tensor *all[] = {x, w, y0, y1};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    het_tensor_destroy(all[i]);
}

START_TEST(test_conv_named_act_without_dnnl) {
  for (int64_t group = 1; group <= 8; group += 7) { /* im2col, depthwise */
    check_named_act(group, "LeakyRelu", 0.1f, 0.0f);
    check_named_act(group, "HardSigmoid", 0.3f, 0.4f);
    check_named_act(group, "Sigmoid", 0.0f, 0.0f);
  }
}
END_TEST

static Suite *nhwc_suite(void) {
  Suite *s = suite_create("kernels_nhwc");
  TCase *tc = tcase_create("nhwc");
  tcase_add_test(tc, test_conv_named_act_without_dnnl);
  tcase_add_test(tc, test_maxpool_ceil_pads_nan);
  tcase_add_loop_test(tc, test_maxpool_i8_nhwc, 0, 2);
  tcase_add_test(tc, test_maxpool_stride1_dilated);
  tcase_add_test(tc, test_avgpool_pads_ceil);
  tcase_add_test(tc, test_global_pools);
  tcase_add_test(tc, test_concat_channels);
  tcase_add_test(tc, test_dw_conv);
  tcase_add_test(tc, test_dw_conv_mult2_nhwc_refused);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(nhwc_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
