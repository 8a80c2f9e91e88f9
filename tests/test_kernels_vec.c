/* test_kernels_vec.c — Check suites for the vectorised float32 kernel paths
 * (simd.h clones): every elementwise, broadcast, Softmax and reduction fast
 * path is run on random data with odd lengths (tails of 1..17 elements),
 * broadcast shapes and NaN/inf inputs, on the calling thread and on a
 * thread pool, and compared with a straightforward double reference.
 * Exact ops (add, max, relu, sqrt ...) must match bit for bit; exp, erf,
 * tanh and sigmoid stay within 1e-6 relative error over a sweep.  The
 * vectorised float16 conversions (kernels/half.h) match core/dtype.h's
 * scalar ones bit for bit: every half value, and floats around every
 * rounding tie, the subnormals, overflow and NaN.  The 8-bit quantization
 * loops (kernels/quant_vec.h) match the ONNX formulas computed here one
 * element at a time: ties, saturation, NaN and infinities, every tail.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cases.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "kernels/half.h"
#include "kernels/quant_vec.h"
#include "kernels/elementwise_internal.h"
#include "kernels/reduce_common.h"
#include "providers/cpu/threadpool.h"

/* ---- helpers ---- */

/* Per-element checks: Check logs every ck_assert* it passes (a write per
 * call), so element loops only call into Check on a failure. */
#define EXPECT(cond, ...)        \
  do {                           \
    if (!(cond))                 \
      ck_abort_msg(__VA_ARGS__); \
  } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rng_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 16);
}

/* Uniform in [-scale, scale], with specials mixed in: level 1 NaN, +-inf,
 * +-0 and subnormals, level 2 also +-FLT_MAX. */
static float rng_float(float scale, int specials) {
  uint32_t r = rng_u32();
  if (specials && r % 23 == 0) {
    static const float sp[] = {NAN,    INFINITY, -INFINITY, 0.0f,    -0.0f,
                               1e-40f, -3e-39f,  FLT_MAX,   -FLT_MAX};
    return sp[(r / 23) % (specials > 1 ? 9 : 7)];
  }
  return ((float)(rng_u32() % 2000001) / 1000000.0f - 1.0f) * scale;
}

static void fill(het_tensor *t, float scale, int specials) {
  float *p = t->data;
  for (int64_t i = 0; i < het_tensor_count(t); i++)
    p[i] = rng_float(scale, specials);
}

static het_tensor make(int rank, const int64_t *dims) {
  het_tensor t;
  memset(&t, 0, sizeof t);
  ck_assert_int_eq(het_tensor_alloc(&t, HET_DTYPE_FLOAT32, dims, rank),
                   HET_OK);
  return t;
}

typedef het_status (*kernel_fn)(het_kernel_ctx *ctx);

/* Runs kernel on ins -> out with a node of op/opset/attrs. */
static void run_kernel(kernel_fn fn, const char *op, int opset,
                       het_attr *attrs, int n_attrs, het_tensor **ins,
                       int n_in, het_tensor *out, het_threadpool *pool) {
  het_node node = {.name = "vec_node", .op_type = op, .domain = "",
                   .opset = opset, .n_attrs = n_attrs, .attrs = attrs};
  het_tensor *outs[1] = {out};
  het_parallel par;
  if (pool)
    het_threadpool_parallel(pool, &par);
  het_kernel_ctx ctx = {.node = &node, .opset = opset, .n_inputs = n_in,
                        .inputs = ins, .n_outputs = 1, .outputs = outs,
                        .threads = pool ? 3 : 1, .par = pool ? &par : NULL};
  het_status st = fn(&ctx);
  EXPECT(st == HET_OK, "%s failed: %s", op, het_last_error());
}

static bool same_bits(float a, float b) {
  if (a != a && b != b)
    return true; /* any NaN */
  return memcmp(&a, &b, sizeof a) == 0;
}

/* Relative error with denominators floored at FLT_MIN (subnormal results
 * are judged on absolute error). */
static double rel_err(float y, double ref) {
  if (isnan(ref))
    return isnan(y) ? 0 : INFINITY;
  float rf = (float)ref; /* overflow judged after rounding to float */
  if (isinf(rf) || isinf(y))
    return y == rf ? 0 : INFINITY;
  double d = fabs(ref) < FLT_MIN ? FLT_MIN : fabs(ref);
  return fabs((double)y - ref) / d;
}

/* Lengths with every tail 1..17 over a 16-lane body, plus a pool-sized one. */
static const int64_t lengths[] = {1,  2,  3,  5,  7,  9,  15, 16, 17, 31,
                                  33, 47, 63, 65, 97, 127, 129, 257, 70001};
#define N_LENGTHS ((int)(sizeof lengths / sizeof *lengths))

static het_threadpool *make_pool(void) {
  het_threadpool *pool = NULL;
  ck_assert_int_eq(het_threadpool_create(3, &pool), HET_OK);
  return pool;
}

/* ---- unary ---- */

typedef double (*ref1_fn)(double x);
static double ref_relu(double x) { return x < 0 ? 0 : x; }
static double ref_neg(double x) { return -x; }
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }

static const struct {
  const char *op;
  kernel_fn fn;
  ref1_fn ref;
  bool exact;
  float scale;
} unary_ops[] = {
    {"Relu", het_kernel_ew_run_Relu, ref_relu, true, 10},
    {"Neg", het_kernel_ew_run_Neg, ref_neg, true, 10},
    {"Abs", het_kernel_ew_run_Abs, fabs, true, 10},
    {"Sqrt", het_kernel_ew_run_Sqrt, sqrt, true, 100},
    {"Exp", het_kernel_ew_run_Exp, exp, false, 100},
    {"Erf", het_kernel_ew_run_Erf, erf, false, 5},
    {"Tanh", het_kernel_ew_run_Tanh, tanh, false, 10},
    {"Sigmoid", het_kernel_ew_run_Sigmoid, ref_sigmoid, false, 100},
};
#define N_UNARY ((int)(sizeof unary_ops / sizeof *unary_ops))

static void check_unary(int k, const het_tensor *x, const het_tensor *y) {
  const float *xp = x->data, *yp = y->data;
  for (int64_t i = 0; i < het_tensor_count(x); i++) {
    double ref = unary_ops[k].ref((double)xp[i]);
    if (unary_ops[k].exact)
      EXPECT(same_bits(yp[i], (float)ref),
                    "%s(%.9g) = %.9g, want %.9g (n=%lld i=%lld)",
                    unary_ops[k].op, xp[i], yp[i], (float)ref,
                    (long long)het_tensor_count(x), (long long)i);
    else
      EXPECT(rel_err(yp[i], ref) < 1e-6,
                    "%s(%.9g) = %.9g, want %.9g (rel err %g)",
                    unary_ops[k].op, xp[i], yp[i], ref,
                    rel_err(yp[i], ref));
  }
}

START_TEST(test_unary_lengths) {
  het_threadpool *pool = make_pool();
  for (int li = 0; li < N_LENGTHS; li++) {
    int64_t n = lengths[li];
    het_tensor x = make(1, &n), y = make(1, &n), y2 = make(1, &n);
    fill(&x, unary_ops[_i].scale, 2);
    het_tensor *ins[1] = {&x};
    run_kernel(unary_ops[_i].fn, unary_ops[_i].op, 13, NULL, 0, ins, 1, &y,
               NULL);
    check_unary(_i, &x, &y);
    run_kernel(unary_ops[_i].fn, unary_ops[_i].op, 13, NULL, 0, ins, 1, &y2,
               pool);
    ck_assert_int_eq(memcmp(y.data, y2.data, y.nbytes), 0);
    het_tensor_reset(&x), het_tensor_reset(&y), het_tensor_reset(&y2);
  }
  het_threadpool_destroy(pool);
}
END_TEST

/* Every 257th float bit pattern (all exponents, both signs): the math
 * approximations against libm in double. */
START_TEST(test_unary_sweep) {
  if (unary_ops[_i].exact)
    return;
  int64_t n = 1 << 20;
  het_tensor x = make(1, &n), y = make(1, &n);
  het_tensor *ins[1] = {&x};
  float *xp = x.data;
  for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)n * 257) {
    for (int64_t i = 0; i < n; i++) {
      uint32_t b = (uint32_t)(base + (uint64_t)i * 257);
      memcpy(&xp[i], &b, sizeof b);
    }
    run_kernel(unary_ops[_i].fn, unary_ops[_i].op, 13, NULL, 0, ins, 1, &y,
               NULL);
    check_unary(_i, &x, &y);
  }
  het_tensor_reset(&x), het_tensor_reset(&y);
}
END_TEST

START_TEST(test_unary_specials) {
  static const float xs[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f,
                             1e-45f, -1e-45f, 88.72f, -88.72f, 89.0f,
                             -104.0f, 0.625f, -0.625f, 4.0f, -4.0f};
  int64_t n = (int64_t)(sizeof xs / sizeof *xs);
  het_tensor x = make(1, &n), y = make(1, &n);
  memcpy(x.data, xs, sizeof xs);
  het_tensor *ins[1] = {&x};
  run_kernel(unary_ops[_i].fn, unary_ops[_i].op, 13, NULL, 0, ins, 1, &y,
             NULL);
  check_unary(_i, &x, &y);
  const float *yp = y.data;
  /* Odd functions keep the sign of zero. */
  if (strcmp(unary_ops[_i].op, "Tanh") == 0 ||
      strcmp(unary_ops[_i].op, "Erf") == 0)
    ck_assert(signbit(yp[5]) && !signbit(yp[4]));
  het_tensor_reset(&x), het_tensor_reset(&y);
}
END_TEST

START_TEST(test_clip) {
  het_threadpool *pool = make_pool();
  int64_t one = 1;
  het_tensor lo = make(0, &one), hi = make(0, &one);
  *(float *)lo.data = -0.5f, *(float *)hi.data = 2.25f;
  for (int li = 0; li < N_LENGTHS; li++) {
    int64_t n = lengths[li];
    het_tensor x = make(1, &n), y = make(1, &n);
    fill(&x, 4, 2);
    het_tensor *ins[3] = {&x, &lo, &hi};
    run_kernel(het_kernel_ew_run_Clip, "Clip", 13, NULL, 0, ins, 3, &y,
               li % 2 ? pool : NULL);
    const float *xp = x.data, *yp = y.data;
    for (int64_t i = 0; i < n; i++) {
      float v = xp[i] < -0.5f ? -0.5f : xp[i] > 2.25f ? 2.25f : xp[i];
      EXPECT(same_bits(yp[i], v), "Clip(%g) = %g", xp[i], yp[i]);
    }
    het_tensor_reset(&x), het_tensor_reset(&y);
  }
  het_tensor_reset(&lo), het_tensor_reset(&hi);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- binary with broadcasting ---- */

static double ref_max(double a, double b) {
  return a != a || a > b ? a : b;
}
static double ref_min(double a, double b) {
  return a != a || a < b ? a : b;
}
static double ref_add(double a, double b) { return a + b; }
static double ref_sub(double a, double b) { return a - b; }
static double ref_mul(double a, double b) { return a * b; }
static double ref_div(double a, double b) { return a / b; }

static const struct {
  const char *op;
  kernel_fn fn;
  double (*ref)(double, double);
} binary_ops[] = {
    {"Add", het_kernel_ew_run_Add, ref_add}, {"Sub", het_kernel_ew_run_Sub, ref_sub},
    {"Mul", het_kernel_ew_run_Mul, ref_mul}, {"Div", het_kernel_ew_run_Div, ref_div},
    {"Max", het_kernel_ew_run_Max, ref_max}, {"Min", het_kernel_ew_run_Min, ref_min},
};
#define N_BINARY ((int)(sizeof binary_ops / sizeof *binary_ops))

/* Shapes {rank_a, a dims, rank_b, b dims}; the output is their broadcast. */
typedef struct shape_pair {
  int ra;
  int64_t a[4];
  int rb;
  int64_t b[4];
} shape_pair;

static const shape_pair shape_pairs[] = {
    {1, {37}, 1, {37}},                      /* same shape */
    {3, {3, 5, 71}, 3, {3, 5, 71}},          /* same shape, big tail */
    {2, {4, 19}, 0, {0}},                    /* scalar right */
    {0, {0}, 2, {6, 33}},                    /* scalar left */
    {3, {2, 7, 45}, 1, {45}},                /* row vector [.., C] */
    {3, {2, 7, 45}, 2, {1, 45}},             /* row vector, rank 2 */
    {1, {45}, 3, {2, 7, 45}},                /* row vector on the left */
    {4, {2, 5, 7, 9}, 4, {1, 5, 1, 1}},      /* per channel [N, C, 1, 1] */
    {4, {2, 5, 7, 9}, 3, {5, 1, 1}},         /* per channel [C, 1, 1] */
    {3, {1, 11, 13}, 3, {1, 11, 1}},         /* column [.., 1] */
    {2, {9, 1}, 2, {1, 17}},                 /* outer product */
    {3, {1, 128, 769}, 3, {1, 128, 1}},      /* pool-sized, per row */
    {4, {1, 64, 31, 37}, 4, {1, 64, 1, 1}},  /* pool-sized, per channel */
};
#define N_SHAPES ((int)(sizeof shape_pairs / sizeof *shape_pairs))

/* Element of x (rank rx, dims dx) that output index idx (rank r) reads. */
static int64_t bcast_index(const int64_t *idx, int r, const int64_t *dx,
                           int rx) {
  int64_t off = 0;
  for (int d = 0; d < rx; d++) {
    int od = d + (r - rx);
    off = off * dx[d] + (dx[d] == 1 ? 0 : idx[od]);
  }
  return off;
}

static void check_binary(int k, const het_tensor *a, const het_tensor *b,
                         const het_tensor *y) {
  int64_t idx[HET_MAX_RANK] = {0};
  const float *ap = a->data, *bp = b->data, *yp = y->data;
  for (int64_t i = 0; i < het_tensor_count(y); i++) {
    float va = ap[bcast_index(idx, y->rank, a->dims, a->rank)];
    float vb = bp[bcast_index(idx, y->rank, b->dims, b->rank)];
    float want = (float)binary_ops[k].ref(va, vb);
    EXPECT(same_bits(yp[i], want), "%s(%.9g, %.9g) = %.9g, want %.9g",
                  binary_ops[k].op, va, vb, yp[i], want);
    for (int d = y->rank - 1; d >= 0; d--) {
      if (++idx[d] < y->dims[d])
        break;
      idx[d] = 0;
    }
  }
}

START_TEST(test_binary_shapes) {
  het_threadpool *pool = make_pool();
  for (int s = 0; s < N_SHAPES; s++) {
    const shape_pair *sp = &shape_pairs[s];
    het_tensor a = make(sp->ra, sp->a), b = make(sp->rb, sp->b);
    int64_t od[HET_MAX_RANK];
    int orank;
    ck_assert_int_eq(het_bcast_shape(sp->a, sp->ra, sp->b, sp->rb, od, &orank),
                     HET_OK);
    het_tensor y = make(orank, od), y2 = make(orank, od);
    fill(&a, 8, 2), fill(&b, 8, 2);
    het_tensor *ins[2] = {&a, &b};
    run_kernel(binary_ops[_i].fn, binary_ops[_i].op, 13, NULL, 0, ins, 2, &y,
               NULL);
    check_binary(_i, &a, &b, &y);
    run_kernel(binary_ops[_i].fn, binary_ops[_i].op, 13, NULL, 0, ins, 2, &y2,
               pool);
    ck_assert_int_eq(memcmp(y.data, y2.data, y.nbytes), 0);
    het_tensor_reset(&a), het_tensor_reset(&b);
    het_tensor_reset(&y), het_tensor_reset(&y2);
  }
  het_threadpool_destroy(pool);
}
END_TEST

START_TEST(test_binary_lengths) {
  for (int li = 0; li < N_LENGTHS; li++) {
    int64_t n = lengths[li], one = 1;
    /* same shape, scalar right, scalar left */
    for (int form = 0; form < 3; form++) {
      het_tensor a = make(1, form == 2 ? &one : &n);
      het_tensor b = make(1, form == 1 ? &one : &n), y = make(1, &n);
      fill(&a, 3, 2), fill(&b, 3, 2);
      het_tensor *ins[2] = {&a, &b};
      run_kernel(binary_ops[_i].fn, binary_ops[_i].op, 13, NULL, 0, ins, 2,
                 &y, NULL);
      check_binary(_i, &a, &b, &y);
      het_tensor_reset(&a), het_tensor_reset(&b), het_tensor_reset(&y);
    }
  }
}
END_TEST

/* ---- Softmax / LogSoftmax ---- */

/* Reference over rows of the [O, N, I] view in double, with each element's
 * tolerance: 1e-6 relative, plus what rounding x - max to float (which a
 * float32 softmax may do) moves the result: |x - max| * 2^-24 relative for
 * Softmax, absolute for LogSoftmax. */
static void ref_softmax(const float *x, double *y, double *tol, int64_t O,
                        int64_t N, int64_t I, bool log_out) {
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      int64_t base = o * N * I + i;
      const float *xr = x + base;
      double mx = -INFINITY, sum = 0;
      bool nan = false;
      for (int64_t n = 0; n < N; n++) {
        nan |= xr[n * I] != xr[n * I];
        mx = xr[n * I] > mx ? xr[n * I] : mx;
      }
      for (int64_t n = 0; n < N; n++)
        sum += exp(xr[n * I] - mx);
      for (int64_t n = 0; n < N; n++) {
        double d = xr[n * I] - mx, v = log_out ? d - log(sum) : exp(d) / sum;
        double slack = isinf(d) ? 0 : fabs(d) * 6e-8;
        y[base + n * I] = nan ? NAN : v;
        tol[base + n * I] = log_out ? 1e-6 * fmax(fabs(v), 1) + slack
                                    : (1e-6 + slack) * v;
      }
    }
}

static void check_softmax(const het_tensor *x, const het_tensor *y,
                          int64_t O, int64_t N, int64_t I, bool log_out) {
  int64_t c = het_tensor_count(x);
  double *ref = malloc(sizeof(double) * 2 * (size_t)(c ? c : 1));
  ck_assert_ptr_nonnull(ref);
  double *tol = ref + c;
  ref_softmax(x->data, ref, tol, O, N, I, log_out);
  const float *yp = y->data;
  for (int64_t i = 0; i < c; i++) {
    bool ok = isnan(ref[i]) ? isnan(yp[i])
              : isinf(ref[i]) ? (double)yp[i] == ref[i]
                              : fabs(yp[i] - ref[i]) <= tol[i] + 1e-37;
    EXPECT(ok, "%s [%lld,%lld,%lld] element %lld: %.9g, want %.9g",
           log_out ? "LogSoftmax" : "Softmax", (long long)O, (long long)N,
           (long long)I, (long long)i, yp[i], ref[i]);
  }
  free(ref);
}

static void softmax_case(het_threadpool *pool, int rank, const int64_t *dims,
                         int64_t axis, bool log_out, bool specials) {
  het_tensor x = make(rank, dims), y = make(rank, dims);
  fill(&x, 20, 0);
  if (specials) { /* one -inf in row 0, a NaN in the last row */
    float *xp = x.data;
    xp[0] = -INFINITY;
    if (het_tensor_count(&x) > 1)
      xp[het_tensor_count(&x) - 1] = NAN;
  }
  het_attr at = {.name = "axis", .type = HET_ATTR_INT, .i = axis};
  het_tensor *ins[1] = {&x};
  const char *op = log_out ? "LogSoftmax" : "Softmax";
  run_kernel(het_kernel_softmax_run, op, 13, &at, 1, ins, 1, &y, pool);
  int ax = (int)(axis < 0 ? axis + rank : axis);
  int64_t O = 1, N = dims[ax], I = 1;
  for (int d = 0; d < ax; d++)
    O *= dims[d];
  for (int d = ax + 1; d < rank; d++)
    I *= dims[d];
  check_softmax(&x, &y, O, N, I, log_out);
  het_tensor_reset(&x), het_tensor_reset(&y);
}

START_TEST(test_softmax_rows) {
  bool log_out = _i == 1;
  het_threadpool *pool = make_pool();
  for (int li = 0; li < N_LENGTHS - 1; li++) {
    int64_t dims[2] = {3, lengths[li]};
    softmax_case(NULL, 2, dims, -1, log_out, li % 3 == 0);
    softmax_case(pool, 2, dims, -1, log_out, false);
  }
  int64_t attn[3] = {12, 128, 128}; /* pool-sized, BERT attention */
  softmax_case(pool, 3, attn, -1, log_out, true);
  int64_t inner[3] = {3, 17, 5};    /* generic axis path (inner > 1) */
  softmax_case(NULL, 3, inner, 1, log_out, false);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- reductions ---- */

static const char *const reduce_ops[] = {"ReduceSum", "ReduceMean",
                                         "ReduceMax", "ReduceMin"};

static double ref_reduce(int k, const float *x, int64_t R, int64_t I,
                         double *abs_sum) {
  double s = k >= 2 ? x[0] : 0, a = 0;
  bool nan = false;
  for (int64_t r = 0; r < R; r++) {
    double v = x[r * I];
    nan |= v != v;
    a += fabs(v);
    if (k < 2)
      s += v;
    else
      s = k == 2 ? (v > s ? v : s) : (v < s ? v : s);
  }
  *abs_sum = a;
  if (nan)
    return NAN;
  return k == 1 ? s / (double)R : s;
}

/* Reduces axis 1 of [O, R, I] (keepdims) and checks every output. */
static void reduce_case(het_threadpool *pool, int k, int64_t O, int64_t R,
                        int64_t I, bool specials) {
  int64_t dx[3] = {O, R, I}, dy[3] = {O, 1, I}, axes[1] = {1};
  het_tensor x = make(3, dx), y = make(3, dy);
  fill(&x, 5, specials ? 1 : 0);
  het_attr at = {.name = "axes", .type = HET_ATTR_INTS, .n = 1,
                 .ints = axes};
  het_tensor *ins[1] = {&x};
  run_kernel(het_kernel_reduce_run, reduce_ops[k], 13, &at, 1, ins, 1, &y, pool);
  const float *xp = x.data, *yp = y.data;
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      double as, ref = ref_reduce(k, xp + o * R * I + i, R, I, &as);
      float got = yp[o * I + i];
      bool ok = isnan(ref) ? isnan(got)
                : k >= 2 || isinf(ref) ? got == (float)ref
                           : fabs(got - ref) <= 1e-6 * as + 1e-30;
      EXPECT(ok, "%s [%lld,%lld,%lld] at (%lld,%lld): %.9g, want %.9g",
                    reduce_ops[k], (long long)O, (long long)R, (long long)I,
                    (long long)o, (long long)i, got, ref);
    }
  het_tensor_reset(&x), het_tensor_reset(&y);
}

START_TEST(test_reduce_last_axis) {
  het_threadpool *pool = make_pool();
  for (int li = 0; li < N_LENGTHS; li++) {
    reduce_case(NULL, _i, 3, lengths[li], 1, li % 2 == 0);
    reduce_case(pool, _i, 5, lengths[li], 1, false);
  }
  reduce_case(pool, _i, 128, 768, 1, false); /* BERT LayerNorm mean */
  het_threadpool_destroy(pool);
}
END_TEST

START_TEST(test_reduce_inner_blocks) {
  het_threadpool *pool = make_pool();
  static const int64_t inner[] = {2, 7, 17, 33, 515, 1037};
  for (int ii = 0; ii < 6; ii++) {
    reduce_case(NULL, _i, 2, 5, inner[ii], ii % 2 == 0);
    reduce_case(pool, _i, 3, 19, inner[ii], false);
  }
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- float16 conversions ---- */

START_TEST(test_half_to_float_all) {
  enum { N = 65536 + 5 }; /* odd tail */
  uint16_t *h = malloc(N * sizeof *h);
  float *f = malloc(N * sizeof *f);
  for (int i = 0; i < N; i++)
    h[i] = (uint16_t)i;
  het_half_to_float(h, f, N);
  for (int i = 0; i < N; i++) {
    float want = het_f16_to_f32(h[i]);
    EXPECT(isnan(want) ? isnan(f[i]) : memcmp(&want, &f[i], 4) == 0,
           "half 0x%04x: %a, want %a", h[i], f[i], want);
  }
  free(h);
  free(f);
}
END_TEST

START_TEST(test_float_to_half_ties_and_specials) {
  enum { N = 4 * 65536 + 7 };
  float *f = malloc(N * sizeof *f);
  uint16_t *h = malloc(N * sizeof *h);
  int n = 0;
  /* every finite half, the midpoints to its neighbour and just off them */
  for (int i = 0; i < 65536 && n + 4 <= N; i++) {
    float a = het_f16_to_f32((uint16_t)i);
    float b = het_f16_to_f32((uint16_t)(i + 1));
    if (!isfinite(a) || !isfinite(b) || (i & 0x7fff) == 0x7bff)
      continue;
    float mid = (float)(((double)a + b) / 2);
    f[n++] = a;
    f[n++] = mid;
    f[n++] = nextafterf(mid, a);
    f[n++] = nextafterf(mid, b);
  }
  const float specials[] = {INFINITY, -INFINITY, NAN, 65504.0f, 65520.0f,
                            1e9f, -1e9f, 1e-10f, -0.0f};
  for (size_t k = 0; k < sizeof specials / sizeof *specials && n < N; k++)
    f[n++] = specials[k];
  het_float_to_half(f, h, n);
  for (int i = 0; i < n; i++) {
    uint16_t want = het_f32_to_f16(f[i]);
    bool nan = isnan(f[i]);
    EXPECT(nan ? (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff) != 0
               : h[i] == want,
           "float %a: half 0x%04x, want 0x%04x", f[i], h[i], want);
  }
  free(f);
  free(h);
}
END_TEST

/* ---- 8-bit quantization ---- */

/* The ONNX QuantizeLinear of one element (NaN to the minimum). */
static int32_t q_ref(float x, float s, int32_t zp, bool sgn) {
  float lo = sgn ? -128 : 0, hi = sgn ? 127 : 255;
  float v = x / s;
  if (isnan(v))
    return (int32_t)lo;
  v = nearbyintf(v) + (float)zp;
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

static int32_t q_get(const void *p, bool sgn, int i) {
  return sgn ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

START_TEST(test_quant_vec) {
  enum { N = 600 };
  float x[N], y[N], s = 0.0625f;
  uint8_t q[N], a[N], b[N], c[N];
  int n = 0;
  for (int k = -300; k < 300 && n < N - 12; k += 3) { /* ties and neighbours */
    float t = ((float)k + 0.5f) * s;
    x[n++] = t;
    x[n++] = nextafterf(t, INFINITY);
    x[n++] = nextafterf(t, -INFINITY);
  }
  const float specials[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 3e9f,
                            -3e9f, 0.0f, -0.0f, 1e-30f};
  for (size_t k = 0; k < sizeof specials / sizeof *specials; k++)
    x[n++] = specials[k];
  for (int sgn = 0; sgn < 2; sgn++)
    for (int zi = 0; zi < 3; zi++) {
      int32_t zp = sgn ? (int32_t[]){0, -128, 37}[zi] : (int32_t[]){0, 128, 255}[zi];
      for (int len = 1; len <= n; len += len < 40 ? 1 : 97) {
        het_quant_vec_quantize(x, s, zp, sgn, q, len);
        for (int i = 0; i < len; i++) {
          int32_t want = q_ref(x[i], s, zp, sgn), got = q_get(q, sgn, i);
          EXPECT(got == want, "quantize %a (zp %d, %s): %d, want %d", x[i], zp,
                 sgn ? "int8" : "uint8", got, want);
        }
        het_quant_vec_dequantize(q, sgn, zp, s, y, len);
        for (int i = 0; i < len; i++) {
          float want = (float)(q_get(q, sgn, i) - zp) * s;
          EXPECT(y[i] == want, "dequantize %d: %a, want %a", q_get(q, sgn, i), y[i], want);
        }
      }
      /* minmax from every start and length (NaN skipped, inf kept) */
      for (int len = 1; len <= n; len += len < 40 ? 1 : 97) {
        float mn = 0.0f, mx = 0.0f, wmn = 0.0f, wmx = 0.0f;
        het_quant_vec_minmax(x + (n - len), len, &mn, &mx);
        for (int i = n - len; i < n; i++) {
          wmn = x[i] < wmn ? x[i] : wmn;
          wmx = x[i] > wmx ? x[i] : wmx;
        }
        EXPECT(mn == wmn && mx == wmx, "minmax of %d: [%a, %a], want [%a, %a]",
               len, mn, mx, wmn, wmx);
      }
      /* add: a and b are two quantized arrays, c = Q(DQ(a) + DQ(b)) with
       * the scale ratios: exactly what quant_vec.h says, and at most one
       * step from the three ops one by one (more than that, or an
       * exactness that holds only for the ratios' ties, fails) */
      for (int i = 0; i < n; i++) {
        a[i] = (uint8_t)(i * 37);
        b[i] = (uint8_t)(i * 101 + 7);
      }
      const float as = 0.05f, bs = 0.0375f, cs = 0.07f;
      const float ra = as / cs, rb = bs / cs;
      int apart = 0, total = 0;
      for (int len = 1; len <= n; len += len < 40 ? 1 : 97) {
        het_quant_vec_add(a, as, zp, b, bs, zp / 2, cs, zp, sgn, c, len);
        for (int i = 0; i < len; i++) {
          int32_t da = q_get(a, sgn, i) - zp, db = q_get(b, sgn, i) - zp / 2;
          float r = fmaf((float)db, rb, (float)da * ra);
          int32_t want = q_ref(r, 1.0f, zp, sgn), got = q_get(c, sgn, i);
          int32_t ops = q_ref((float)da * as + (float)db * bs, cs, zp, sgn);
          EXPECT(got == want, "add %d + %d: %d, want %d", q_get(a, sgn, i),
                 q_get(b, sgn, i), got, want);
          EXPECT(abs(got - ops) <= 1, "add %d + %d: %d, %d one op at a time",
                 q_get(a, sgn, i), q_get(b, sgn, i), got, ops);
          apart += got != ops;
          total++;
        }
      }
      /* these scales make ties (a sum of steps of 0.05 and 0.0375 lying
       * on a half-step of 0.07), where the two may part; few do */
      EXPECT(apart * 20 < total, "add: %d of %d one step from the three ops",
             apart, total);
      /* ratios whose sums pass 2^30 or are not numbers (the vector body's
       * clamped loop; the others skip the clamp) */
      const float odd[][3] = {{1e30f, 0.0375f, 0.07f},
                              {0.05f, -3e7f, 0.5f},
                              {4.3e6f, 0.0f, 1.0f},
                              {1.0f, 1.0f, NAN},
                              {INFINITY, 1.0f, 1.0f}};
      for (size_t o = 0; o < sizeof odd / sizeof *odd; o++) {
        float oa = odd[o][0] / odd[o][2], ob = odd[o][1] / odd[o][2];
        het_quant_vec_add(a, odd[o][0], zp, b, odd[o][1], zp / 2, odd[o][2],
                          zp, sgn, c, n);
        for (int i = 0; i < n; i++) {
          int32_t da = q_get(a, sgn, i) - zp, db = q_get(b, sgn, i) - zp / 2;
          int32_t want = q_ref(fmaf((float)db, ob, (float)da * oa), 1.0f, zp,
                               sgn);
          EXPECT(q_get(c, sgn, i) == want,
                 "add %d + %d, scales %g %g %g: %d, want %d", q_get(a, sgn, i),
                 q_get(b, sgn, i), odd[o][0], odd[o][1], odd[o][2],
                 q_get(c, sgn, i), want);
        }
      }
    }
}
END_TEST

/* hetrt.QLinearLut: y = table[x] for uint8 x (entry x) and int8 x (entry
 * x + 128), over every length of the lengths list (the 64-byte vector body
 * and its tails, a pool-sized one on three threads) and every byte. */
START_TEST(test_qlinear_lut) {
  het_threadpool *pool = make_pool();
  int64_t n256 = 256;
  het_tensor *table = NULL;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_UINT8, &n256, 1, &table),
                   HET_OK);
  uint8_t *tb = table->data;
  for (int i = 0; i < 256; i++)
    tb[i] = (uint8_t)(i * 97 + 13); /* a permutation: every entry differs */
  for (int sgn = 0; sgn < 2; sgn++)
    for (int l = 0; l < N_LENGTHS; l++) {
      int64_t n = lengths[l];
      het_dtype xt = sgn ? HET_DTYPE_INT8 : HET_DTYPE_UINT8;
      het_tensor *x = NULL, *y = NULL;
      ck_assert_int_eq(het_tensor_create_empty(xt, &n, 1, &x), HET_OK);
      ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_UINT8, &n, 1, &y),
                       HET_OK);
      uint8_t *xb = x->data, *yb = y->data;
      for (int64_t i = 0; i < n; i++)
        xb[i] = (uint8_t)(i * 7 + l);
      het_tensor *ins[2] = {x, table};
      run_kernel(het_kernel_ew_run_QLinearLut, "QLinearLut", 1, NULL, 0, ins,
                 2, y, n > 1000 ? pool : NULL);
      for (int64_t i = 0; i < n; i++) {
        int entry = sgn ? (int8_t)xb[i] + 128 : xb[i];
        EXPECT(yb[i] == tb[entry], "%s x %d at %lld of %lld: %d, want %d",
               sgn ? "int8" : "uint8", sgn ? (int8_t)xb[i] : xb[i],
               (long long)i, (long long)n, yb[i], tb[entry]);
      }
      het_tensor_destroy(x);
      het_tensor_destroy(y);
    }
  het_tensor_destroy(table);
  het_threadpool_destroy(pool);
}
END_TEST

/* hetrt.QLinearAdd on three threads gives the bytes het_quant_vec_add
 * gives on one, uint8 and int8, over every length of the lengths list
 * (the pool-sized one split between the threads). */
START_TEST(test_qlinear_add_pool) {
  het_threadpool *pool = make_pool();
  int64_t one = 1;
  const float sc[3] = {0.05f, 0.0375f, 0.07f};
  for (int sgn = 0; sgn < 2; sgn++)
    for (int l = 0; l < N_LENGTHS; l++) {
      int64_t n = lengths[l];
      het_dtype qt = sgn ? HET_DTYPE_INT8 : HET_DTYPE_UINT8;
      /* a, a_scale, a_zp, b, b_scale, b_zp, c_scale, c_zp */
      het_tensor *ins[8] = {NULL}, *c = NULL;
      for (int k = 0; k < 8; k++) {
        bool data = k == 0 || k == 3, scale = k == 1 || k == 4 || k == 6;
        ck_assert_int_eq(
            het_tensor_create_empty(scale ? HET_DTYPE_FLOAT32 : qt,
                                    data ? &n : &one, data ? 1 : 0, &ins[k]),
            HET_OK);
      }
      *(float *)ins[1]->data = sc[0];
      *(float *)ins[4]->data = sc[1];
      *(float *)ins[6]->data = sc[2];
      ((uint8_t *)ins[2]->data)[0] = (uint8_t)(sgn ? 3 : 128);
      ((uint8_t *)ins[5]->data)[0] = (uint8_t)(sgn ? -5 : 100);
      ((uint8_t *)ins[7]->data)[0] = (uint8_t)(sgn ? 0 : 7);
      uint8_t *a = ins[0]->data, *b = ins[3]->data;
      for (int64_t i = 0; i < n; i++) {
        a[i] = (uint8_t)(i * 37 + l);
        b[i] = (uint8_t)(i * 101 + 7);
      }
      ck_assert_int_eq(het_tensor_create_empty(qt, &n, 1, &c), HET_OK);
      run_kernel(het_kernel_ew_run_QLinearAdd, "QLinearAdd", 1, NULL, 0, ins,
                 8, c, pool);
      uint8_t *want = malloc((size_t)n);
      ck_assert_ptr_nonnull(want);
      het_quant_vec_add(a, sc[0], sgn ? 3 : 128, b, sc[1], sgn ? -5 : 100,
                        sc[2], sgn ? 0 : 7, sgn, want, n);
      EXPECT(memcmp(want, c->data, (size_t)n) == 0,
             "%s QLinearAdd of %lld on three threads differs from one",
             sgn ? "int8" : "uint8", (long long)n);
      free(want);
      for (int k = 0; k < 8; k++)
        het_tensor_destroy(ins[k]);
      het_tensor_destroy(c);
    }
  het_threadpool_destroy(pool);
}
END_TEST

static Suite *vec_suite(void) {
  Suite *s = suite_create("kernels_vec");
  TCase *un = tcase_create("unary");
  tcase_set_timeout(un, 120);
  tcase_add_loop_test(un, test_unary_lengths, 0, N_UNARY);
  tcase_add_loop_test(un, test_unary_specials, 0, N_UNARY);
  tcase_add_loop_test(un, test_unary_sweep, 0, N_UNARY);
  tcase_add_test(un, test_clip);
  suite_add_tcase(s, un);
  TCase *bin = tcase_create("binary");
  tcase_add_loop_test(bin, test_binary_shapes, 0, N_BINARY);
  tcase_add_loop_test(bin, test_binary_lengths, 0, N_BINARY);
  suite_add_tcase(s, bin);
  TCase *red = tcase_create("softmax_reduce");
  tcase_set_timeout(red, 60);
  tcase_add_loop_test(red, test_softmax_rows, 0, 2);
  tcase_add_loop_test(red, test_reduce_last_axis, 0, 4);
  tcase_add_loop_test(red, test_reduce_inner_blocks, 0, 4);
  suite_add_tcase(s, red);
  TCase *half = tcase_create("half");
  tcase_add_test(half, test_half_to_float_all);
  tcase_add_test(half, test_float_to_half_ties_and_specials);
  suite_add_tcase(s, half);
  TCase *quant = tcase_create("quant8");
  tcase_add_test(quant, test_quant_vec);
  tcase_add_test(quant, test_qlinear_lut);
  tcase_add_test(quant, test_qlinear_add_pool);
  suite_add_tcase(s, quant);
  return s;
}

int main(void) { return case_run_suite(vec_suite()); }
