/* test_qlinear_dnnl.c — Check suite for QLinearConv's oneDNN int8 path
 * (kernels/dnnl/qlinear_dnnl.c): builds one-node graphs by hand with all
 * but X constant, prepares the node through the kernel table, asserts that
 * oneDNN runs it (where built with oneDNN on a VNNI CPU), and compares Y
 * with the reference kernel (same inputs, no state: must be bit-exact) and
 * with a float64 requantization written here (at most 1 LSB: the kernels
 * round float32 products).  Also: nodes it must leave to the reference,
 * the scratch slot, the shape cache running full, threads sharing a node,
 * channels-last 1x1 nodes on hetrt's own VNNI kernel (kernels/qconv_vnni.h)
 * and those its rules leave to oneDNN, and generated models
 * (tests/data/kernels/gen_qlinear.py) run through a session.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HETRT_HAVE_DNNL
#include <dnnl.h>
#endif

#include "common/cases.h"
#include "core/dtype.h"
#include "core/ir.h"
#include "core/tensor.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_kern.h"
#include "kernels/qconv_vnni.h"
#include "providers/cpu/threadpool.h"

#define QLINEAR_DIR HETRT_TEST_DATA "/kernels/qlinear/"

enum {
  IN_X,
  IN_XS,
  IN_XZ,
  IN_W,
  IN_WS,
  IN_WZ,
  IN_YS,
  IN_YZ,
  IN_B,
  OUT_Y,
  N_VALS
};

typedef struct qcase {
  const char *name;
  int rank;           /* 3 (1-D) or 4 */
  int64_t n, c, h, w; /* w unused for rank 3 */
  int64_t m, kh, kw, group;
  int64_t sh, sw, dh, dw;
  int64_t pads[4];      /* ONNX order: begins then ends */
  const char *auto_pad; /* NULL: explicit pads */
  het_dtype xt, yt;
  int32_t xzp, yzp;
  bool per_channel, bias;
  bool pow2_scales; /* scales making exact .5 ties common */
} qcase;

#define U8 HET_DTYPE_UINT8
#define S8 HET_DTYPE_INT8

static const qcase cases[] = {
    {"1x1", 4, 1,   32,   9,  9,  48,  1,   1,    1,    1,    1,
     1,     1, {0}, NULL, U8, U8, 128, 100, true, true, false},
    {"3x3_s2_pads", 4,    1,  32, 17, 15, 64,   3,    3,    1, 2, 2, 1, 1,
     {1, 1, 1, 1},  NULL, U8, U8, 3,  5,  true, true, false},
    {"3x3_asym_pads_s8", 4,    1,  16, 12, 10, 32,   3,    3,    1, 1, 1, 1, 1,
     {0, 1, 2, 1},       NULL, S8, S8, -5, 7,  true, true, false},
    {"3x3_pads_no_xzp", 4,    2,  16, 10, 10, 16,    3,    3,    1, 1, 1, 1, 1,
     {1, 1, 1, 1},      NULL, U8, U8, 0,  9,  false, true, false},
    {"3x3_no_zp_no_bias",
     4,
     1,
     16,
     10,
     10,
     16,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     {1, 1, 1, 1},
     NULL,
     U8,
     U8,
     0,
     0,
     true,
     false,
     false},
    {"3x3_s8_to_u8", 4,    1,  24, 11, 11,  40,    3,    3,    1, 1, 1, 1, 1,
     {1, 1, 1, 1},   NULL, S8, U8, 9,  128, false, true, false},
    {"3x3_u8_to_s8_no_bias",
     4,
     1,
     24,
     11,
     11,
     40,
     3,
     3,
     1,
     1,
     1,
     1,
     1,
     {1, 1, 1, 1},
     NULL,
     U8,
     S8,
     140,
     -3,
     true,
     false,
     false},
    {"5x3_dilated", 4,    1,  16, 15, 13, 16,   5,    3,    1, 1, 2, 2, 1,
     {2, 1, 2, 1},  NULL, U8, U8, 17, 33, true, true, false},
    {"group4",     4,    1,  32, 13,  13,  64,   3,    3,    4, 1, 1, 1, 1,
     {1, 1, 1, 1}, NULL, U8, U8, 120, 130, true, true, false},
    {"group2_odd", 4,    1,  6,  9, 9, 4,    3,    3,    2, 1, 1, 1, 1,
     {1, 1, 1, 1}, NULL, U8, U8, 3, 5, true, true, false},
    {"depthwise_s1", 4,    1,  32, 17, 17, 32,   3,    3,    32, 1, 1, 1, 1,
     {1, 1, 1, 1},   NULL, U8, U8, 3,  5,  true, true, false},
    {"depthwise_s2_s8", 4,    1,  64, 14, 14, 64,    3,    3,    64, 2, 2, 1, 1,
     {1, 1, 1, 1},      NULL, S8, S8, -2, 4,  false, true, false},
    {"depthwise_mult2", 4,    1,  16, 11, 11, 32,   3,    3,    16, 1, 1, 1, 1,
     {1, 1, 1, 1},      NULL, U8, U8, 7,  1,  true, true, false},
    {"same_upper_s2", 4,  1,  16, 15, 16,   24,   3,    3, 1, 2, 2, 1, 1, {0},
     "SAME_UPPER",    U8, U8, 11, 13, true, true, false},
    {"batch2",     4,    2,  64, 14,  14,  64,   3,    3,    1, 1, 1, 1, 1,
     {1, 1, 1, 1}, NULL, U8, U8, 128, 128, true, true, false},
    {"c256",       4,    1,  256, 14,  14,  256,  3,    3,    1, 1, 1, 1, 1,
     {1, 1, 1, 1}, NULL, U8, U8,  131, 120, true, true, false},
    {"conv1d_s2_pads", 3,    2,  16, 31,  0,  24,   5,    0,    1, 2, 0, 1, 0,
     {2, 1, 0, 0},     NULL, U8, U8, 100, 27, true, true, false},
    {"ties_odd_yzp", 4,    1,  16, 8,   8,   16,    3,    3,   1, 1, 1, 1, 1,
     {1, 1, 1, 1},   NULL, U8, U8, 128, 101, false, true, true},
    {"ties_per_channel_s8",
     4,
     1,
     8,
     8,
     8,
     16,
     1,
     1,
     1,
     1,
     1,
     1,
     1,
     {0},
     NULL,
     S8,
     S8,
     1,
     -77,
     true,
     false,
     true},
};

/* A one-node QLinearConv graph and its tensors. */
typedef struct fixture {
  het_value vals[N_VALS];
  het_tensor t[N_VALS];
  het_node node;
  int ins[9], outs[1];
  het_attr attrs[5];
  int64_t strides[2], dil[2], pads[4]; /* the attributes' lists */
  het_graph g;
  double acc_std; /* of the accumulator, for the scales */
} fixture;

static void tensor_init(het_tensor *t, het_dtype dt, int rank,
                        const int64_t *dims) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  size_t n = (size_t)het_dims_count(dims, rank);
  t->nbytes = n * het_dtype_size(dt);
  t->data = calloc(n ? n : 1, het_dtype_size(dt));
  ck_assert_ptr_nonnull(t->data);
}

static int32_t rand_in(unsigned *seed, int32_t lo, int32_t hi) {
  return lo + (int32_t)(rand_r(seed) % (unsigned)(hi - lo + 1));
}

static void attr_ints(het_attr *a, const char *name, int64_t *v, size_t n) {
  memset(a, 0, sizeof *a);
  a->name = name;
  a->type = HET_ATTR_INTS;
  a->ints = v;
  a->n = n;
}

/* Random X, W and bias; scales that keep most outputs off the rails. */
static void fixture_init(fixture *f, const qcase *qc, unsigned seed) {
  memset(f, 0, sizeof *f);
  int sp = qc->rank - 2;
  int64_t xd[4] = {qc->n, qc->c, qc->h, qc->w};
  int64_t wd[4] = {qc->m, qc->c / qc->group, qc->kh, qc->kw};
  int64_t one = 1, m = qc->m;
  tensor_init(&f->t[IN_X], qc->xt, qc->rank, xd);
  tensor_init(&f->t[IN_W], S8, qc->rank, wd);
  for (int i = IN_XS; i <= IN_B; i++)
    if (i != IN_W)
      tensor_init(&f->t[i],
                  i == IN_XS || i == IN_WS || i == IN_YS ? HET_DTYPE_FLOAT32
                  : i == IN_XZ                           ? qc->xt
                  : i == IN_YZ                           ? qc->yt
                  : i == IN_WZ                           ? S8
                                                         : HET_DTYPE_INT32,
                  (i == IN_WS && qc->per_channel) || i == IN_B ? 1 : 0,
                  (i == IN_WS && qc->per_channel) || i == IN_B ? &m : &one);
  int32_t xlo = qc->xt == U8 ? 0 : -128, xhi = qc->xt == U8 ? 255 : 127;
  if (qc->pow2_scales) { /* X near its zero point: small accumulators */
    xlo = qc->xzp - 8 > xlo ? qc->xzp - 8 : xlo;
    xhi = qc->xzp + 8 < xhi ? qc->xzp + 8 : xhi;
  }
  /* W and the bias first: the same for every batch size.  Tie cases
   * take small weights (and X), so that the multiplier is a large power
   * of two and many products end in exactly .5. */
  int32_t wmax = qc->pow2_scales ? 2 : 127;
  for (int64_t i = 0; i < het_tensor_count(&f->t[IN_W]); i++)
    ((int8_t *)f->t[IN_W].data)[i] = (int8_t)rand_in(&seed, -wmax, wmax);
  het_dtype_store_i64(qc->xt, f->t[IN_XZ].data, 0, qc->xzp);
  het_dtype_store_i64(qc->yt, f->t[IN_YZ].data, 0, qc->yzp);
  double xdev = fmax(abs(xlo - qc->xzp), abs(xhi - qc->xzp)) / sqrt(3.0);
  double k = (double)(qc->c / qc->group * qc->kh * (sp == 2 ? qc->kw : 1));
  f->acc_std = sqrt(k) * xdev * (qc->pow2_scales ? sqrt(2.0) : 73.0);
  float *xs = f->t[IN_XS].data, *ws = f->t[IN_WS].data;
  float *ys = f->t[IN_YS].data;
  xs[0] = qc->pow2_scales ? 0.5f : 0.013f;
  for (int64_t i = 0; i < het_tensor_count(&f->t[IN_WS]); i++)
    ws[i] = qc->pow2_scales ? ldexpf(1.0f, -(int)(i % 3) - 1)
                            : 0.002f + 0.0005f * (float)(i % 7);
  /* Y's std about 40 steps: clipping at both ends, most values inside
   * (but for a zero point near a rail) */
  ys[0] = qc->pow2_scales ? ldexpf(1.0f, (int)ceil(log2(f->acc_std / 80.0)))
                          : (float)(xs[0] * 0.0035 * f->acc_std / 40.0);
  int32_t *b = f->t[IN_B].data;
  for (int64_t i = 0; i < m; i++)
    b[i] = rand_in(&seed, -(int32_t)f->acc_std, (int32_t)f->acc_std);
  for (int64_t i = 0; i < het_tensor_count(&f->t[IN_X]); i++)
    het_dtype_store_i64(qc->xt, f->t[IN_X].data, i, rand_in(&seed, xlo, xhi));
  for (int i = 0; i < IN_B + 1; i++) {
    f->vals[i].dtype = f->t[i].dtype;
    f->vals[i].shape.rank = f->t[i].rank;
    for (int d = 0; d < f->t[i].rank; d++)
      f->vals[i].shape.dims[d].value = f->t[i].dims[d];
    f->vals[i].producer = -1;
    f->vals[i].initializer = i == IN_X ? NULL : &f->t[i];
    f->ins[i] = i;
  }
  if (!qc->bias)
    f->ins[IN_B] = -1;
  f->vals[OUT_Y].dtype = qc->yt;
  f->vals[OUT_Y].shape.rank = -1;
  f->outs[0] = OUT_Y;
  int na = 0;
  f->strides[0] = qc->sh;
  f->strides[1] = qc->sw;
  f->dil[0] = qc->dh;
  f->dil[1] = qc->dw;
  attr_ints(&f->attrs[na++], "strides", f->strides, (size_t)sp);
  attr_ints(&f->attrs[na++], "dilations", f->dil, (size_t)sp);
  if (qc->auto_pad) {
    memset(&f->attrs[na], 0, sizeof f->attrs[na]);
    f->attrs[na].name = "auto_pad";
    f->attrs[na].type = HET_ATTR_STRING;
    f->attrs[na].s = qc->auto_pad;
    f->attrs[na++].s_len = strlen(qc->auto_pad);
  } else {
    /* ONNX order for sp dims: begins, then ends */
    for (int i = 0; i < sp; i++) {
      f->pads[i] = qc->pads[i];
      f->pads[sp + i] = qc->pads[sp == 2 ? 2 + i : 1 + i];
    }
    attr_ints(&f->attrs[na++], "pads", f->pads, (size_t)(2 * sp));
  }
  memset(&f->attrs[na], 0, sizeof f->attrs[na]);
  f->attrs[na].name = "group";
  f->attrs[na].type = HET_ATTR_INT;
  f->attrs[na++].i = qc->group;
  f->node = (het_node){.name = "qconv0",
                       .op_type = "QLinearConv",
                       .domain = "",
                       .opset = 10,
                       .n_inputs = 9,
                       .inputs = f->ins,
                       .n_outputs = 1,
                       .outputs = f->outs,
                       .n_attrs = na,
                       .attrs = f->attrs};
  f->g.values = f->vals;
  f->g.n_values = N_VALS;
  het_conv_geom g;
  ck_assert_int_eq(
      het_conv_geom_init(&f->node, HET_GEOM_CONV, sp, xd + 2, wd + 2, &g),
      HET_OK);
  int64_t yd[4] = {qc->n, qc->m, g.out[0], sp == 2 ? g.out[1] : 0};
  tensor_init(&f->t[OUT_Y], qc->yt, qc->rank, yd);
}

static void fixture_deinit(fixture *f) {
  for (int i = 0; i < N_VALS; i++)
    free(f->t[i].data);
}

static void ctx_init(het_kernel_ctx *ctx, fixture *f, het_tensor **ins,
                     het_tensor **outs, void *state) {
  for (int i = 0; i < 9; i++)
    ins[i] = f->ins[i] >= 0 ? &f->t[i] : NULL;
  outs[0] = &f->t[OUT_Y];
  memset(ctx, 0, sizeof *ctx);
  ctx->node = &f->node;
  ctx->opset = 10;
  ctx->n_inputs = f->ins[IN_B] >= 0 ? 9 : 8;
  ctx->inputs = ins;
  ctx->n_outputs = 1;
  ctx->outputs = outs;
  ctx->state = state;
  ctx->threads = 1;
}

static const het_kernel *qconv_kernel(void) {
  const het_kernel *k = het_kernel_find("", "QLinearConv");
  ck_assert_ptr_nonnull(k);
  return k;
}

/* True where this build and CPU should run the node on oneDNN. */
static bool dnnl_expected(void) {
#ifdef HETRT_HAVE_DNNL
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx512_core_vnni) ==
             dnnl_cpu_isa_avx512_core_vnni ||
         (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
#else
  return false;
#endif
}

/* Runs Y with state: through het_dnnl_qconv_run alone (direct) or the
 * kernel table's run.  Returns a copy of Y (caller frees), NULL when the
 * direct oneDNN run declined; *on_dnnl: whether oneDNN ran it. */
static uint8_t *run_kernel(fixture *f, void *state, bool direct,
                           bool *on_dnnl) {
  het_tensor *ins[9], *outs[1];
  het_kernel_ctx ctx;
  memset(f->t[OUT_Y].data, 0xa5, f->t[OUT_Y].nbytes);
  ctx_init(&ctx, f, ins, outs, state);
  *on_dnnl = false;
  if (direct) {
#ifdef HETRT_HAVE_DNNL
    ck_assert_int_eq(het_dnnl_qconv_run(&ctx, on_dnnl), HET_OK);
#endif
    if (!*on_dnnl)
      return NULL;
  } else {
    ck_assert_int_eq(qconv_kernel()->run(&ctx), HET_OK);
  }
  uint8_t *y = malloc(f->t[OUT_Y].nbytes);
  ck_assert_ptr_nonnull(y);
  memcpy(y, f->t[OUT_Y].data, f->t[OUT_Y].nbytes);
  return y;
}

/* Y element i by the definition, in float64 (independent of both
 * kernels): round half to even, add y's zero point, saturate. */
static int32_t ref_f64(const fixture *f, const qcase *qc, int64_t i,
                       bool *tie) {
  const het_tensor *x = &f->t[IN_X], *w = &f->t[IN_W], *y = &f->t[OUT_Y];
  int sp = qc->rank - 2;
  het_conv_geom g;
  ck_assert_int_eq(het_conv_geom_init(&f->node, HET_GEOM_CONV, sp, x->dims + 2,
                                      w->dims + 2, &g),
                   HET_OK);
  int64_t ow = sp == 2 ? y->dims[3] : 1, oh = y->dims[2];
  int64_t ox = i % ow, oy = (i / ow) % oh, oc = (i / (ow * oh)) % qc->m;
  int64_t b = i / (ow * oh * qc->m), cg = qc->c / qc->group;
  int64_t g0 = oc / (qc->m / qc->group) * cg;
  int64_t kw = sp == 2 ? qc->kw : 1, iw = sp == 2 ? qc->w : 1;
  int64_t acc = qc->bias ? ((const int32_t *)f->t[IN_B].data)[oc] : 0;
  for (int64_t c = 0; c < cg; c++)
    for (int64_t ky = 0; ky < qc->kh; ky++)
      for (int64_t kx = 0; kx < kw; kx++) {
        int64_t iy = oy * g.stride[0] - g.pad_b[0] + ky * g.dil[0];
        int64_t ix =
            sp == 2 ? ox * g.stride[1] - g.pad_b[1] + kx * g.dil[1] : 0;
        if (iy < 0 || iy >= qc->h || ix < 0 || ix >= iw)
          continue;
        int64_t xv = het_dtype_load_i64(
            qc->xt, x->data, ((b * qc->c + g0 + c) * qc->h + iy) * iw + ix);
        int64_t wv =
            ((const int8_t *)w->data)[((oc * cg + c) * qc->kh + ky) * kw + kx];
        acc += (xv - qc->xzp) * wv;
      }
  const float *ws = f->t[IN_WS].data;
  double mult = (double)((const float *)f->t[IN_XS].data)[0] *
                ws[qc->per_channel ? oc : 0] /
                ((const float *)f->t[IN_YS].data)[0];
  double prod = (double)acc * mult;
  *tie = prod - floor(prod) == 0.5;
  double v = nearbyint(prod) + qc->yzp;
  double lo = qc->yt == U8 ? 0 : -128, hi = qc->yt == U8 ? 255 : 127;
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

static int32_t y_at(const qcase *qc, const uint8_t *y, int64_t i) {
  return qc->yt == U8 ? y[i] : ((const int8_t *)y)[i];
}

/* got against the reference kernel (bit-exact) and the float64 one (1
 * LSB; an output that lies within float32 rounding of a half-integer may
 * round either way), and Y not degenerate. */
static void assert_matches(fixture *f, const qcase *qc, const uint8_t *got,
                           const uint8_t *ref, const char *what) {
  int64_t n = het_tensor_count(&f->t[OUT_Y]), off64 = 0, clipped = 0;
  int64_t ties = 0; /* unclipped outputs whose product ends in .5 */
  int32_t lo = qc->yt == U8 ? 0 : -128, hi = qc->yt == U8 ? 255 : 127;
  bool seen[256] = {false};
  int distinct = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t g = y_at(qc, got, i), r = y_at(qc, ref, i);
    ck_assert_msg(g == r, "%s %s: Y[%lld] = %d, reference kernel %d", qc->name,
                  what, (long long)i, g, r);
    bool tie;
    int32_t d = ref_f64(f, qc, i, &tie);
    ties += tie && d > lo && d < hi;
    ck_assert_msg(abs(g - d) <= 1, "%s %s: Y[%lld] = %d, float64 says %d",
                  qc->name, what, (long long)i, g, d);
    off64 += g != d;
    clipped += g == lo || g == hi;
    distinct += !seen[g & 0xff];
    seen[g & 0xff] = true;
  }
  ck_assert_msg(off64 * 1000 <= n, "%s: %lld of %lld off the float64 result",
                qc->name, (long long)off64, (long long)n);
  ck_assert_msg(!qc->pow2_scales || ties * 50 >= n,
                "%s: only %lld ties in %lld", qc->name, (long long)ties,
                (long long)n);
  /* a zero point near a rail clips up to half of Y */
  ck_assert_msg(distinct >= (n > 400 ? 40 : 8) && clipped * 10 < n * 6,
                "%s: degenerate Y (%d values, %lld clipped)", qc->name,
                distinct, (long long)clipped);
}

/* Prepares the node through the kernel table and checks the oneDNN path
 * ran it and agrees with the reference. */
static void run_case(const qcase *qc) {
  fixture f;
  fixture_init(&f, qc, 777u + (unsigned)(qc->c * 13 + qc->m + qc->h));
  const het_kernel *k = qconv_kernel();
  void *state = NULL;
  bool on;
  uint8_t *ref = run_kernel(&f, NULL, false, &on);
  if (k->prepare)
    ck_assert_int_eq(k->prepare(&f.g, &f.node, &state), HET_OK);
  if (!dnnl_expected()) { /* the reference alone, against float64 */
    ck_assert_ptr_null(state);
    assert_matches(&f, qc, ref, ref, "reference");
    free(ref);
    fixture_deinit(&f);
    return;
  }
#ifdef HETRT_HAVE_DNNL
  ck_assert_msg(state != NULL, "%s: no oneDNN state", qc->name);
  const char *impl = het_dnnl_qconv_impl(state);
  ck_assert_msg(impl != NULL, "%s: oneDNN refused the node", qc->name);
  ck_assert_msg(strncmp(impl, "ref", 3) != 0, "%s: %s", qc->name, impl);
  uint8_t *got = run_kernel(&f, state, true, &on);
  ck_assert_msg(on, "%s: oneDNN run declined", qc->name);
  assert_matches(&f, qc, got, ref, impl);
  free(got);
  /* the whole kernel, with the run's scratch sized by the scratch slot */
  het_tensor *ins[9], *outs[1];
  het_kernel_ctx ctx;
  ctx_init(&ctx, &f, ins, outs, state);
  size_t need = k->scratch(&ctx);
  ck_assert_uint_gt(need, 0);
  ctx.scratch = aligned_alloc(64, need);
  ctx.scratch_size = need;
  memset(f.t[OUT_Y].data, 0x5a, f.t[OUT_Y].nbytes);
  ck_assert_int_eq(k->run(&ctx), HET_OK);
  ck_assert_uint_le(ctx.scratch_used, need);
  assert_matches(&f, qc, f.t[OUT_Y].data, ref, "kernel");
  free(ctx.scratch);
  k->destroy_state(state);
#endif
  free(ref);
  fixture_deinit(&f);
}

START_TEST(test_qconv_case) { run_case(&cases[_i]); }
END_TEST

/* Nodes oneDNN must leave to the reference: prepare gives no state and
 * the kernel still computes Y. */
typedef enum {
  DECLINE_W_ZP,       /* nonzero weight zero point */
  DECLINE_X_SCALE,    /* x_scale computed at run time */
  DECLINE_BIAS,       /* bias computed at run time */
  DECLINE_W_PER_CH_ZP /* per-channel weight zero points, one nonzero */
} decline_kind;

START_TEST(test_qconv_declines) {
  const qcase *qc = &cases[1];
  fixture f;
  fixture_init(&f, qc, 31u);
  uint8_t *before = run_kernel(&f, NULL, false, &(bool){false});
  switch ((decline_kind)_i) {
  case DECLINE_W_ZP:
    ((int8_t *)f.t[IN_WZ].data)[0] = 1;
    break;
  case DECLINE_X_SCALE:
    f.vals[IN_XS].initializer = NULL;
    break;
  case DECLINE_BIAS:
    f.vals[IN_B].initializer = NULL;
    break;
  case DECLINE_W_PER_CH_ZP: {
    int64_t m = qc->m;
    free(f.t[IN_WZ].data);
    tensor_init(&f.t[IN_WZ], S8, 1, &m);
    ((int8_t *)f.t[IN_WZ].data)[m - 1] = -1;
    f.vals[IN_WZ].shape.rank = 1;
    f.vals[IN_WZ].shape.dims[0].value = m;
    break;
  }
  }
  void *state = (void *)&f;
  const het_kernel *k = qconv_kernel();
  if (k->prepare)
    ck_assert_int_eq(k->prepare(&f.g, &f.node, &state), HET_OK);
  else
    state = NULL;
  ck_assert_ptr_null(state);
  bool on;
  uint8_t *y = run_kernel(&f, NULL, false, &on);
  if (_i == DECLINE_X_SCALE || _i == DECLINE_BIAS)
    ck_assert_mem_eq(y, before, f.t[OUT_Y].nbytes); /* same values */
  else
    ck_assert_int_ne(memcmp(y, before, f.t[OUT_Y].nbytes), 0);
  free(y);
  free(before);
  fixture_deinit(&f);
}
END_TEST

#ifdef HETRT_HAVE_DNNL
/* A symbolic X shape: entries are built per batch size at run time; a
 * ninth and tenth size find the cache full and get a primitive for the
 * call (oneDNN still runs them, results still exact). */
START_TEST(test_qconv_cache_full) {
  if (!dnnl_expected())
    return;
  qcase qc = cases[1];
  void *state = NULL;
  for (int64_t nb = 1; nb <= 10; nb++) {
    qc.n = nb;
    fixture f;
    fixture_init(&f, &qc, 5u);
    f.vals[IN_X].shape.rank = -1;
    if (!state) {
      ck_assert_int_eq(het_dnnl_qconv_prepare(&f.g, &f.node, &state), HET_OK);
      ck_assert_ptr_nonnull(state);
      ck_assert_ptr_null(het_dnnl_qconv_impl(state)); /* nothing built */
    }
    bool on;
    uint8_t *ref = run_kernel(&f, NULL, false, &on);
    uint8_t *got = run_kernel(&f, state, true, &on);
    ck_assert_msg(on, "batch %lld: oneDNN declined", (long long)nb);
    assert_matches(&f, &qc, got, ref, nb <= 8 ? "cached" : "uncached");
    free(got);
    got = run_kernel(&f, state, false, &on);
    ck_assert_mem_eq(got, ref, f.t[OUT_Y].nbytes);
    free(got);
    free(ref);
    fixture_deinit(&f);
  }
  het_dnnl_qconv_destroy(state);
}
END_TEST

typedef struct thread_arg {
  void *state;
  int64_t batch;
  int failures, declined;
} thread_arg;

/* Each thread runs its own batch size and a shared one on one state, so
 * entries are built lazily from several threads at once; the constants
 * come from the same seed in every thread. */
static void *thread_main(void *p) {
  thread_arg *t = p;
  const int64_t batch[3] = {t->batch, 1, 2};
  for (int rep = 0; rep < 3; rep++) {
    qcase qc = cases[1];
    qc.n = batch[rep];
    fixture f;
    fixture_init(&f, &qc, 99u);
    bool on;
    uint8_t *ref = run_kernel(&f, NULL, false, &on);
    uint8_t *got = run_kernel(&f, t->state, true, &on);
    if (!on)
      t->declined++;
    else if (memcmp(got, ref, f.t[OUT_Y].nbytes) != 0)
      t->failures++;
    free(got);
    free(ref);
    fixture_deinit(&f);
  }
  return NULL;
}

START_TEST(test_qconv_threads) {
  if (!dnnl_expected())
    return;
  fixture f;
  fixture_init(&f, &cases[1], 99u);
  f.vals[IN_X].shape.rank = -1;
  void *state = NULL;
  ck_assert_int_eq(het_dnnl_qconv_prepare(&f.g, &f.node, &state), HET_OK);
  ck_assert_ptr_nonnull(state);
  pthread_t th[4];
  thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){state, 3 + i, 0, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
    ck_assert_int_eq(args[i].declined, 0);
  }
  het_dnnl_qconv_destroy(state);
  fixture_deinit(&f);
}
END_TEST
#endif

#ifdef HETRT_HAVE_DNNL
/* Nodes with channels-last Y, as the layout pass prepares them, on hetrt's
 * VNNI kernel where its rules hold (kernels/qconv_own.h: 1x1 from
 * channels-last uint8 X (or one pixel, where NCHW is channels-last), K a
 * multiple of 4, unpadded, the last 64-channel weight panel at most 1/16
 * padding; or narrow, at most 4 input channels, planar or
 * channels-last X, any kernel, stride and pads), else on oneDNN; either
 * way bit-exact with the reference.  Rows not a multiple of the kernel's
 * 6-pixel tile, batches, 1-D, int8 Y, ties, strides (1x1: pixels gathered
 * into the run's scratch), asymmetric pads and a second thread each get a
 * case. */
typedef struct own_case {
  qcase q;
  const char *impl; /* the VNNI kernel's way (on a CPU that has it), or
                       NULL: oneDNN's */
  int threads;
  bool x_planar; /* X stays NCHW (as a graph input does) */
} own_case;

#define V1X1 "hetrt:vnni_1x1"
#define VNARROW "hetrt:vnni_narrow"

static const own_case own_cases[] = {
    {{"own_tail_rows", 4, 1, 64, 7, 5, 64, 1, 1, 1, 1, 1, 1, 1, {0}, NULL,
      U8, U8, 128, 100, true, true, false},
     V1X1, 1, false},
    {{"own_k68_s8_batch2", 4, 2, 68, 5, 6, 128, 1, 1, 1, 1, 1, 1, 1, {0},
      NULL, U8, S8, 3, -3, true, false, false},
     V1X1, 1, false},
    {{"own_ties_per_tensor", 4, 1, 16, 8, 8, 192, 1, 1, 1, 1, 1, 1, 1, {0},
      NULL, U8, U8, 128, 101, false, true, true},
     V1X1, 1, false},
    {{"own_two_threads", 4, 1, 128, 13, 13, 256, 1, 1, 1, 1, 1, 1, 1, {0},
      NULL, U8, U8, 7, 9, true, true, false},
     V1X1, 2, false},
    /* 320 KiB of weights: one thread sweeps panel by panel, fetching the
     * next panel ahead */
    {{"own_panel_major", 4, 1, 512, 5, 8, 640, 1, 1, 1, 1, 1, 1, 1, {0},
      NULL, U8, U8, 9, 120, true, true, false},
     V1X1, 1, false},
    /* a classifier: one pixel per image (NCHW X is channels-last), 1000
     * outputs, the last panel 24 channels of padding not stored */
    {{"own_m1000_one_pixel", 4, 2, 512, 1, 1, 1000, 1, 1, 1, 1, 1, 1, 1,
      {0}, NULL, U8, U8, 128, 100, true, true, false},
     V1X1, 1, true},
    {{"own_m184_partial_threads", 4, 1, 64, 7, 5, 184, 1, 1, 1, 1, 1, 1, 1,
      {0}, NULL, U8, S8, 3, -3, true, true, false},
     V1X1, 2, false},
    /* 288 KiB of weights: panel-major, the fetch reaching the last,
     * partial panel */
    {{"own_m1000_panel_major", 4, 1, 288, 3, 5, 1000, 1, 1, 1, 1, 1, 1, 1,
      {0}, NULL, U8, U8, 7, 9, false, true, true},
     V1X1, 1, false},
    /* two threads split the panels (weights outweigh X), one of them
     * ending on the partial panel */
    {{"own_m1000_panels_threads", 4, 1, 288, 3, 5, 1000, 1, 1, 1, 1, 1, 1,
      1, {0}, NULL, U8, S8, 7, -9, true, true, false},
     V1X1, 2, false},
    {{"own_conv1d", 3, 1, 32, 37, 0, 64, 1, 0, 1, 1, 0, 1, 0, {0}, NULL, U8,
      U8, 5, 250, true, true, false},
     V1X1, 1, false},
    {{"dnnl_m48", 4, 1, 32, 9, 9, 48, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, U8, U8,
      128, 100, true, true, false},
     NULL, 1, false},
    {{"dnnl_s8_x", 4, 1, 64, 6, 6, 64, 1, 1, 1, 1, 1, 1, 1, {0}, NULL, S8,
      S8, -5, 7, true, true, false},
     NULL, 1, false},
    {{"own_stride2x3", 4, 2, 64, 9, 10, 64, 1, 1, 1, 2, 3, 1, 1, {0}, NULL,
      U8, U8, 3, 5, true, true, false},
     V1X1, 1, false},
    {{"narrow_stem_planar", 4, 1, 3, 23, 21, 64, 7, 7, 1, 2, 2, 1, 1,
      {3, 3, 3, 3}, NULL, U8, U8, 128, 3, true, true, false},
     VNARROW, 1, true},
    /* rows of 139 pixels: two 64-pixel interleave blocks and a masked one */
    {{"narrow_stem_planar_wide", 4, 1, 3, 5, 139, 64, 7, 7, 1, 2, 2, 1, 1,
      {3, 3, 3, 3}, NULL, U8, U8, 128, 3, true, true, false},
     VNARROW, 1, true},
    {{"narrow_stem_nhwc_batch2", 4, 2, 3, 16, 17, 64, 7, 7, 1, 2, 2, 1, 1,
      {3, 3, 3, 3}, NULL, U8, U8, 117, 3, true, true, false},
     VNARROW, 1, false},
    {{"narrow_c1_asym_pads_s8", 4, 1, 1, 12, 9, 128, 3, 5, 1, 1, 2, 1, 1,
      {0, 2, 1, 1}, NULL, U8, S8, 7, -4, false, false, false},
     VNARROW, 1, true},
    {{"narrow_c4_threads", 4, 1, 4, 30, 31, 64, 3, 3, 1, 1, 1, 1, 1,
      {1, 1, 1, 1}, NULL, U8, U8, 0, 9, true, true, false},
     VNARROW, 2, true},
    {{"narrow_c2_ties", 4, 1, 2, 10, 10, 64, 3, 3, 1, 1, 1, 1, 1,
      {1, 1, 1, 1}, NULL, U8, U8, 128, 101, true, true, true},
     VNARROW, 1, false},
    {{"dnnl_c5", 4, 1, 5, 9, 9, 64, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, NULL,
      U8, U8, 3, 5, true, true, false},
     NULL, 1, true},
    {{"dnnl_narrow_dilated", 4, 1, 3, 12, 12, 64, 3, 3, 1, 1, 1, 2, 2,
      {2, 2, 2, 2}, NULL, U8, U8, 3, 5, true, true, false},
     NULL, 1, true},
    {{"dnnl_1x1_padded", 4, 1, 64, 6, 6, 64, 1, 1, 1, 1, 1, 1, 1,
      {1, 0, 0, 1}, NULL, U8, U8, 0, 5, true, true, false},
     NULL, 1, false},
};

/* n images of c channels x px pixels: NCHW <-> NHWC. */
static void swap_layout(const uint8_t *src, uint8_t *dst, int64_t n,
                        int64_t c, int64_t px, bool to_nhwc) {
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < px; p++) {
        size_t planar = (size_t)((b * c + ch) * px + p);
        size_t last = (size_t)((b * px + p) * c + ch);
        if (to_nhwc)
          dst[last] = src[planar];
        else
          dst[planar] = src[last];
      }
}

START_TEST(test_qconv_nhwc_own) {
  if (!dnnl_expected())
    return;
  const own_case *oc = &own_cases[_i];
  const qcase *qc = &oc->q;
  fixture f;
  fixture_init(&f, qc, 4242u + (unsigned)_i);
  bool on;
  uint8_t *ref = run_kernel(&f, NULL, false, &on);
  het_kernel_prep prep = {.nhwc_in = oc->x_planar ? 0 : 1, .nhwc_out = 1,
                          .threads = oc->threads};
  void *state = NULL;
  ck_assert_int_eq(het_dnnl_qconv_prepare_with(&f.g, &f.node, &prep, &state),
                   HET_OK);
  ck_assert_ptr_nonnull(state);
  const char *impl = het_dnnl_qconv_impl(state);
  ck_assert_ptr_nonnull(impl);
  const char *want = oc->impl && het_qv_usable() ? oc->impl : NULL;
  ck_assert_msg(want ? strcmp(impl, want) == 0 : strncmp(impl, "hetrt", 5) != 0,
                "%s: ran on %s", qc->name, impl);
  het_tensor *x = &f.t[IN_X], *y = &f.t[OUT_Y];
  int64_t xpx = het_tensor_count(x) / (qc->n * qc->c);
  int64_t ypx = het_tensor_count(y) / (qc->n * qc->m);
  uint8_t *planar_x = x->data, *planar_y = y->data, *xl = malloc(x->nbytes);
  uint8_t *yl = malloc(y->nbytes), *got = malloc(y->nbytes);
  ck_assert(xl && yl && got);
  if (oc->x_planar)
    memcpy(xl, planar_x, x->nbytes);
  else
    swap_layout(planar_x, xl, qc->n, qc->c, xpx, true);
  x->data = xl;
  het_threadpool *pool = NULL;
  het_parallel par;
  if (oc->threads > 1) {
    ck_assert_int_eq(het_threadpool_create(oc->threads, &pool), HET_OK);
    het_threadpool_parallel(pool, &par);
  }
  het_tensor *ins[9], *outs[1];
  het_kernel_ctx ctx;
  ctx_init(&ctx, &f, ins, outs, state);
  ctx.threads = oc->threads;
  ctx.par = pool ? &par : NULL;
  ctx.nhwc_in = oc->x_planar ? 0 : 1;
  ctx.nhwc_out = 1;
  y->data = yl;
  memset(yl, 0xa5, y->nbytes);
  size_t need = qconv_kernel()->scratch(&ctx);
  if (want && strcmp(want, V1X1) == 0) /* only the gather stages */
    ck_assert_uint_eq(need > 0, qc->sh > 1);
  else if (want) /* the padded image */
    ck_assert_uint_gt(need, 0);
  ctx.scratch = need ? aligned_alloc(64, need) : NULL;
  ctx.scratch_size = need;
  ck_assert_int_eq(het_dnnl_qconv_run(&ctx, &on), HET_OK);
  ck_assert(on);
  ck_assert_uint_le(ctx.scratch_used, need);
  ck_assert_uint_eq(ctx.scratch_used > 0, need > 0);
  /* oneDNN's weights are the ones for the node before to prefetch; the
   * VNNI kernel fetches its own */
  const void *w_ahead = NULL;
  size_t w_ahead_bytes = het_dnnl_qconv_state_prefetch(state, &w_ahead);
  ck_assert_msg((w_ahead_bytes > 0) == (want == NULL) &&
                    (w_ahead != NULL) == (w_ahead_bytes > 0),
                "%s: %zu bytes to prefetch", qc->name, w_ahead_bytes);
  /* a run that prefetches another node's weights meanwhile: the same Y */
  size_t ahead_bytes = (3u << 20) + 7;
  char *ahead = aligned_alloc(64, (ahead_bytes + 63) & ~(size_t)63);
  uint8_t *first = malloc(y->nbytes);
  ck_assert(ahead && first);
  memset(ahead, 1, ahead_bytes);
  memcpy(first, yl, y->nbytes);
  memset(yl, 0xa5, y->nbytes);
  ctx.prefetch = ahead;
  ctx.prefetch_bytes = ahead_bytes;
  ctx.scratch_used = 0;
  ck_assert_int_eq(het_dnnl_qconv_run(&ctx, &on), HET_OK);
  ck_assert_msg(memcmp(first, yl, y->nbytes) == 0,
                "%s: Y differs when prefetching", qc->name);
  free(first);
  free(ahead);
  free(ctx.scratch);
  swap_layout(yl, got, qc->n, qc->m, ypx, false);
  y->data = got; /* ref_f64 reads X planar and Y's dims */
  x->data = planar_x;
  assert_matches(&f, qc, got, ref, impl);
  het_threadpool_destroy(pool);
  het_dnnl_qconv_destroy(state);
  y->data = planar_y;
  free(xl);
  free(yl);
  free(got);
  free(ref);
  fixture_deinit(&f);
}
END_TEST

/* The VNNI kernel's requantization at the rails: a multiplier so large
 * that float(acc) * scale overflows int32 must still saturate (vcvtps2dq
 * alone gives INT_MIN there), positive to the top, negative to the
 * bottom, for uint8 and int8 Y. */
START_TEST(test_qv_saturation) {
  if (!het_qv_usable())
    return;
  enum { K = 8, N = 64, PX = 7 };
  int8_t w[N * K];
  uint8_t x[PX * K], y[PX * N];
  for (int i = 0; i < N * K; i++)
    w[i] = (int8_t)(i / K % 2 ? -100 : 100); /* channel parity: the sign */
  for (int i = 0; i < PX * K; i++)
    x[i] = (uint8_t)(200 + i % 50);
  float scale = 1e30f;
  for (int y_signed = 0; y_signed < 2; y_signed++) {
    het_qv_conv q;
    ck_assert(het_qv_init(&q, w, NULL, N, 1, K, NULL, 0, &scale, 1,
                          y_signed ? 5 : 9, y_signed));
    memset(y, 0x11, sizeof y);
    het_qv_geom g = {.rows = 1, .px = PX, .img_rows = 1, .px_step = K};
    het_qv_run(&q, x, &g, y, NULL, NULL, 0);
    for (int p = 0; p < PX; p++)
      for (int c = 0; c < N; c++) {
        int got = y_signed ? (int8_t)y[p * N + c] : y[p * N + c];
        int want = c % 2 ? (y_signed ? -128 : 0) : (y_signed ? 127 : 255);
        ck_assert_msg(got == want, "y_signed %d pixel %d channel %d: %d, not %d",
                      y_signed, p, c, got, want);
      }
    het_qv_free(&q);
  }
}
END_TEST
#endif

/* Generated models (constant W, scales, zero points, bias) through a
 * session on the CPU provider, against numpy's float32 requantization. */
static const char *const model_cases[] = {
    "qlinearconv_u8_3x3_pads_bias",
    "qlinearconv_s8_dw_s2_per_channel",
    "qlinearconv_u8_1x1_group2_no_bias",
    "qlinearconv_u8_chain_1x1_ahead",
};

START_TEST(test_qconv_model) { case_assert_pass(QLINEAR_DIR, model_cases[_i]); }
END_TEST

/* 3x3 -> 1x1 -> 3x3: the CPU provider hands the 1x1 (hetrt's VNNI kernel,
 * channels-last between the Convs) the second 3x3's oneDNN weights to
 * prefetch, once per run, and the bytes stay the reference's. */
START_TEST(test_qconv_ahead) {
  if (!dnnl_expected() || !het_qv_usable())
    return;
  long before = het_qv_ahead_runs();
  case_assert_pass(QLINEAR_DIR, "qlinearconv_u8_chain_1x1_ahead");
  ck_assert_int_ge(het_qv_ahead_runs() - before, 1);
}
END_TEST

static Suite *qlinear_suite(void) {
  Suite *s = suite_create("qlinear_dnnl");
  TCase *tc = case_tcase("core");
  tcase_add_loop_test(tc, test_qconv_case, 0, CASE_COUNT(cases));
  tcase_add_loop_test(tc, test_qconv_model, 0, CASE_COUNT(model_cases));
  tcase_add_test(tc, test_qconv_ahead);
  suite_add_tcase(s, tc);
  TCase *lim = case_tcase("limits");
  tcase_add_loop_test(lim, test_qconv_declines, 0, 4);
#ifdef HETRT_HAVE_DNNL
  tcase_add_test(lim, test_qconv_cache_full);
  tcase_add_test(lim, test_qconv_threads);
  tcase_add_loop_test(lim, test_qconv_nhwc_own, 0, CASE_COUNT(own_cases));
  tcase_add_test(lim, test_qv_saturation);
#endif
  suite_add_tcase(s, lim);
  return s;
}

int main(void) { return case_run_suite(qlinear_suite()); }
