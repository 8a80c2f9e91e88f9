/* test_qlinear_matmul_dnnl.c — Check suite for QLinearMatMul's oneDNN int8
 * path (kernels/dnnl/qlinear_matmul_dnnl.c): one-node graphs built by hand
 * with B, the scales and zero points constant, prepared through the kernel
 * table; asserts that oneDNN runs them (where built with oneDNN on a VNNI
 * CPU) and that Y equals the reference kernel's (bit-exact) and is within
 * 1 LSB of a float64 requantization written here.  Also: nodes it must
 * leave to the reference, the cache running full and threads sharing a
 * node.  MatMulInteger on the same path: the cases of
 * tests/data/kernels/qlinear/matmulinteger_* (gen_qlinear.py) pass in a
 * session, and oneDNN runs all but the per-row zero point.
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
#include "common/opt_helpers.h"
#include "core/dtype.h"
#include "core/ir.h"
#include "core/tensor.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_kern.h"

enum { IN_A, IN_AS, IN_AZ, IN_B, IN_BS, IN_BZ, IN_YS, IN_YZ, OUT_Y, N_VALS };

#define U8 HET_DTYPE_UINT8
#define S8 HET_DTYPE_INT8

typedef struct mcase {
  const char *name;
  int rank;          /* of A: 1-3 */
  int64_t a_dims[3]; /* last is K */
  int64_t n;         /* columns of B */
  het_dtype at, yt;
  int32_t azp, yzp;
  bool per_col;
  bool pow2_scales; /* small values, power-of-two scales: many .5 ties */
} mcase;

static const mcase cases[] = {
    {"2d_small", 2, {7, 33}, 5, U8, U8, 3, 5, true, false},
    {"3d_batch_s8", 3, {2, 4, 64}, 48, S8, S8, -3, 7, false, false},
    {"1d_a_u8_to_s8", 1, {16}, 24, U8, S8, 128, -2, true, false},
    {"bert_like", 2, {128, 768}, 256, U8, U8, 131, 127, true, false},
    {"no_zero_points", 2, {9, 40}, 17, S8, S8, 0, 0, true, false},
    {"ties_odd_yzp", 2, {16, 24}, 32, U8, U8, 128, 101, false, true},
    {"ties_per_col_s8", 3, {2, 8, 12}, 20, S8, S8, 1, -77, true, true},
};

typedef struct fixture {
  het_value vals[N_VALS];
  het_tensor t[N_VALS];
  het_node node;
  int ins[8], outs[1];
  het_graph g;
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

/* Random A and B (B first: the same for any A shape), scales that keep
 * most of Y off the rails. */
static void fixture_init(fixture *f, const mcase *mc, unsigned seed) {
  memset(f, 0, sizeof *f);
  int64_t k = mc->a_dims[mc->rank - 1], n = mc->n, one = 1;
  int64_t bd[2] = {k, n}, yd[3];
  for (int i = 0; i < mc->rank - 1; i++)
    yd[i] = mc->a_dims[i];
  yd[mc->rank - 1] = n;
  tensor_init(&f->t[IN_A], mc->at, mc->rank, mc->a_dims);
  tensor_init(&f->t[IN_B], S8, 2, bd);
  tensor_init(&f->t[OUT_Y], mc->yt, mc->rank, yd);
  const het_dtype types[] = {[IN_AS] = HET_DTYPE_FLOAT32, [IN_AZ] = mc->at,
                             [IN_BS] = HET_DTYPE_FLOAT32, [IN_BZ] = S8,
                             [IN_YS] = HET_DTYPE_FLOAT32, [IN_YZ] = mc->yt};
  for (int i = IN_AS; i <= IN_YZ; i++)
    if (i != IN_B)
      tensor_init(&f->t[i], types[i], i == IN_BS && mc->per_col ? 1 : 0,
                  i == IN_BS && mc->per_col ? &n : &one);
  int32_t bmax = mc->pow2_scales ? 2 : 127;
  for (int64_t i = 0; i < k * n; i++)
    ((int8_t *)f->t[IN_B].data)[i] = (int8_t)rand_in(&seed, -bmax, bmax);
  int32_t lo = mc->at == U8 ? 0 : -128, hi = mc->at == U8 ? 255 : 127;
  if (mc->pow2_scales) {
    lo = mc->azp - 8 > lo ? mc->azp - 8 : lo;
    hi = mc->azp + 8 < hi ? mc->azp + 8 : hi;
  }
  for (int64_t i = 0; i < het_tensor_count(&f->t[IN_A]); i++)
    het_dtype_store_i64(mc->at, f->t[IN_A].data, i, rand_in(&seed, lo, hi));
  het_dtype_store_i64(mc->at, f->t[IN_AZ].data, 0, mc->azp);
  het_dtype_store_i64(mc->yt, f->t[IN_YZ].data, 0, mc->yzp);
  double adev = fmax(abs(lo - mc->azp), abs(hi - mc->azp)) / sqrt(3.0);
  double acc_std =
      sqrt((double)k) * adev * (mc->pow2_scales ? sqrt(2.0) : 73.0);
  float *as = f->t[IN_AS].data, *bs = f->t[IN_BS].data;
  float *ys = f->t[IN_YS].data;
  as[0] = mc->pow2_scales ? 0.5f : 0.011f;
  for (int64_t j = 0; j < het_tensor_count(&f->t[IN_BS]); j++)
    bs[j] = mc->pow2_scales ? ldexpf(1.0f, -(int)(j % 3) - 1)
                            : 0.002f + 0.0005f * (float)(j % 7);
  ys[0] = mc->pow2_scales ? ldexpf(1.0f, (int)ceil(log2(acc_std / 80.0)))
                          : (float)(as[0] * 0.0035 * acc_std / 40.0);
  for (int i = 0; i < OUT_Y; i++) {
    f->vals[i].dtype = f->t[i].dtype;
    f->vals[i].shape.rank = f->t[i].rank;
    for (int d = 0; d < f->t[i].rank; d++)
      f->vals[i].shape.dims[d].value = f->t[i].dims[d];
    f->vals[i].producer = -1;
    f->vals[i].initializer = i == IN_A ? NULL : &f->t[i];
    f->ins[i] = i;
  }
  f->vals[OUT_Y].dtype = mc->yt;
  f->vals[OUT_Y].shape.rank = -1;
  f->outs[0] = OUT_Y;
  f->node = (het_node){.name = "qmm0",
                       .op_type = "QLinearMatMul",
                       .domain = "",
                       .opset = 10,
                       .n_inputs = 8,
                       .inputs = f->ins,
                       .n_outputs = 1,
                       .outputs = f->outs};
  f->g.values = f->vals;
  f->g.n_values = N_VALS;
}

static void fixture_deinit(fixture *f) {
  for (int i = 0; i < N_VALS; i++)
    free(f->t[i].data);
}

static const het_kernel *qmm_kernel(void) {
  const het_kernel *k = het_kernel_find("", "QLinearMatMul");
  ck_assert_ptr_nonnull(k);
  return k;
}

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

/* Y from het_dnnl_qmatmul_run alone (direct; NULL when it declined) or the
 * kernel table's run; caller frees.  *on_dnnl: whether oneDNN ran it. */
static uint8_t *run_kernel(fixture *f, void *state, bool direct,
                           bool *on_dnnl) {
  het_tensor *ins[8], *outs[1] = {&f->t[OUT_Y]};
  for (int i = 0; i < 8; i++)
    ins[i] = &f->t[i];
  het_kernel_ctx ctx = {.node = &f->node,
                        .opset = 10,
                        .n_inputs = 8,
                        .inputs = ins,
                        .n_outputs = 1,
                        .outputs = outs,
                        .state = state,
                        .threads = 1};
  memset(f->t[OUT_Y].data, 0xa5, f->t[OUT_Y].nbytes);
  *on_dnnl = false;
  if (direct) {
#ifdef HETRT_HAVE_DNNL
    ck_assert_int_eq(het_dnnl_qmatmul_run(&ctx, on_dnnl), HET_OK);
#endif
    if (!*on_dnnl)
      return NULL;
  } else {
    ck_assert_int_eq(qmm_kernel()->run(&ctx), HET_OK);
  }
  uint8_t *y = malloc(f->t[OUT_Y].nbytes);
  ck_assert_ptr_nonnull(y);
  memcpy(y, f->t[OUT_Y].data, f->t[OUT_Y].nbytes);
  return y;
}

/* Y element i by the definition in float64; *tie: the product ends in
 * exactly .5. */
static int32_t ref_f64(const fixture *f, const mcase *mc, int64_t i,
                       bool *tie) {
  int64_t k = mc->a_dims[mc->rank - 1], n = mc->n;
  int64_t row = i / n, col = i % n, acc = 0;
  for (int64_t p = 0; p < k; p++)
    acc +=
        (het_dtype_load_i64(mc->at, f->t[IN_A].data, row * k + p) - mc->azp) *
        ((const int8_t *)f->t[IN_B].data)[p * n + col];
  const float *bs = f->t[IN_BS].data;
  double prod = (double)acc * ((const float *)f->t[IN_AS].data)[0] *
                bs[mc->per_col ? col : 0] /
                ((const float *)f->t[IN_YS].data)[0];
  *tie = prod - floor(prod) == 0.5;
  double v = nearbyint(prod) + mc->yzp;
  double lo = mc->yt == U8 ? 0 : -128, hi = mc->yt == U8 ? 255 : 127;
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

static int32_t y_at(const mcase *mc, const uint8_t *y, int64_t i) {
  return mc->yt == U8 ? y[i] : ((const int8_t *)y)[i];
}

/* got equals the reference kernel's ref, is within 1 LSB of float64 (off
 * for at most 1 in 1000), ties occur where the case makes them, and Y is
 * not degenerate. */
static void assert_matches(fixture *f, const mcase *mc, const uint8_t *got,
                           const uint8_t *ref) {
  int64_t n = het_tensor_count(&f->t[OUT_Y]), off64 = 0, clipped = 0;
  int64_t ties = 0;
  int32_t lo = mc->yt == U8 ? 0 : -128, hi = mc->yt == U8 ? 255 : 127;
  bool seen[256] = {false};
  int distinct = 0;
  for (int64_t i = 0; i < n; i++) {
    int32_t g = y_at(mc, got, i), r = y_at(mc, ref, i);
    ck_assert_msg(g == r, "%s: Y[%lld] = %d, reference kernel %d", mc->name,
                  (long long)i, g, r);
    bool tie;
    int32_t d = ref_f64(f, mc, i, &tie);
    ck_assert_msg(abs(g - d) <= 1, "%s: Y[%lld] = %d, float64 says %d",
                  mc->name, (long long)i, g, d);
    ties += tie && d > lo && d < hi;
    off64 += g != d;
    clipped += g == lo || g == hi;
    distinct += !seen[g & 0xff];
    seen[g & 0xff] = true;
  }
  ck_assert_msg(off64 * 1000 <= n, "%s: %lld of %lld off the float64 result",
                mc->name, (long long)off64, (long long)n);
  ck_assert_msg(!mc->pow2_scales || ties * 50 >= n,
                "%s: only %lld ties in %lld", mc->name, (long long)ties,
                (long long)n);
  ck_assert_msg(distinct >= (n > 400 ? 40 : 8) && clipped * 10 < n * 6,
                "%s: degenerate Y (%d values, %lld clipped)", mc->name,
                distinct, (long long)clipped);
}

START_TEST(test_qmm_case) {
  const mcase *mc = &cases[_i];
  fixture f;
  fixture_init(&f, mc, 4242u + (unsigned)_i);
  const het_kernel *k = qmm_kernel();
  void *state = NULL;
  bool on;
  uint8_t *ref = run_kernel(&f, NULL, false, &on);
  if (k->prepare)
    ck_assert_int_eq(k->prepare(&f.g, &f.node, &state), HET_OK);
  if (!dnnl_expected()) { /* the reference alone, against float64 */
    ck_assert_ptr_null(state);
    assert_matches(&f, mc, ref, ref);
  } else {
#ifdef HETRT_HAVE_DNNL
    ck_assert_msg(state != NULL, "%s: no oneDNN state", mc->name);
    ck_assert_msg(het_dnnl_qmatmul_impl(state) != NULL,
                  "%s: oneDNN refused the node", mc->name);
    uint8_t *got = run_kernel(&f, state, true, &on);
    ck_assert_msg(on, "%s: oneDNN run declined", mc->name);
    assert_matches(&f, mc, got, ref);
    free(got);
    got = run_kernel(&f, state, false, &on); /* the whole kernel */
    assert_matches(&f, mc, got, ref);
    free(got);
    k->destroy_state(state);
#endif
  }
  free(ref);
  fixture_deinit(&f);
}
END_TEST

/* Nodes oneDNN must leave to the reference. */
typedef enum {
  DECLINE_B_ZP,      /* nonzero B zero point */
  DECLINE_A_PER_ROW, /* a_scale per row of A */
  DECLINE_B_RUNTIME, /* B computed at run time */
  DECLINE_B_3D,      /* batched B */
} decline_kind;

START_TEST(test_qmm_declines) {
  mcase mc = cases[0];
  fixture f;
  fixture_init(&f, &mc, 8u);
  int64_t m = mc.a_dims[0], bd3[3] = {1, mc.a_dims[1], mc.n};
  switch ((decline_kind)_i) {
  case DECLINE_B_ZP:
    ((int8_t *)f.t[IN_BZ].data)[0] = 2;
    break;
  case DECLINE_A_PER_ROW: {
    free(f.t[IN_AS].data);
    tensor_init(&f.t[IN_AS], HET_DTYPE_FLOAT32, 1, &m);
    for (int64_t i = 0; i < m; i++)
      ((float *)f.t[IN_AS].data)[i] = 0.01f * (float)(i + 1);
    break;
  }
  case DECLINE_B_RUNTIME:
    f.vals[IN_B].initializer = NULL;
    break;
  case DECLINE_B_3D:
    f.t[IN_B].rank = 3;
    memcpy(f.t[IN_B].dims, bd3, sizeof bd3);
    break;
  }
  void *state = &f;
  const het_kernel *k = qmm_kernel();
  if (k->prepare)
    ck_assert_int_eq(k->prepare(&f.g, &f.node, &state), HET_OK);
  else
    state = NULL;
  ck_assert_ptr_null(state);
  if (_i != DECLINE_B_3D) { /* the reference still computes Y */
    bool on, tie;
    uint8_t *y = run_kernel(&f, NULL, false, &on);
    if (_i == DECLINE_B_RUNTIME)
      for (int64_t i = 0; i < het_tensor_count(&f.t[OUT_Y]); i++)
        ck_assert_int_le(abs(y_at(&mc, y, i) - ref_f64(&f, &mc, i, &tie)), 1);
    free(y);
  }
  fixture_deinit(&f);
}
END_TEST

#ifdef HETRT_HAVE_DNNL
/* A symbolic A shape: entries are built per M at run time; a ninth M
 * finds the cache full and the reference runs it. */
START_TEST(test_qmm_cache_full) {
  if (!dnnl_expected())
    return;
  mcase mc = cases[0];
  void *state = NULL;
  for (int64_t rows = 1; rows <= 9; rows++) {
    mc.a_dims[0] = rows;
    fixture f;
    fixture_init(&f, &mc, 5u);
    f.vals[IN_A].shape.rank = -1;
    if (!state) {
      ck_assert_int_eq(het_dnnl_qmatmul_prepare(&f.g, &f.node, &state), HET_OK);
      ck_assert_ptr_nonnull(state);
      ck_assert_ptr_null(het_dnnl_qmatmul_impl(state)); /* nothing built */
    }
    bool on;
    uint8_t *ref = run_kernel(&f, NULL, false, &on);
    uint8_t *got = run_kernel(&f, state, true, &on);
    ck_assert_msg(on == (rows <= 8), "M %lld: oneDNN %d", (long long)rows, on);
    if (on)
      ck_assert_mem_eq(got, ref, f.t[OUT_Y].nbytes);
    free(got);
    got = run_kernel(&f, state, false, &on);
    ck_assert_mem_eq(got, ref, f.t[OUT_Y].nbytes);
    free(got);
    free(ref);
    fixture_deinit(&f);
  }
  het_dnnl_qmatmul_destroy(state);
}
END_TEST

typedef struct thread_arg {
  void *state;
  int64_t rows;
  int failures, declined;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *t = p;
  const int64_t rows[3] = {t->rows, 3, 4};
  for (int rep = 0; rep < 3; rep++) {
    mcase mc = cases[0];
    mc.a_dims[0] = rows[rep];
    fixture f;
    fixture_init(&f, &mc, 77u);
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

/* Threads running one state, building entries lazily at once. */
START_TEST(test_qmm_threads) {
  if (!dnnl_expected())
    return;
  fixture f;
  fixture_init(&f, &cases[0], 77u);
  f.vals[IN_A].shape.rank = -1;
  void *state = NULL;
  ck_assert_int_eq(het_dnnl_qmatmul_prepare(&f.g, &f.node, &state), HET_OK);
  ck_assert_ptr_nonnull(state);
  pthread_t th[4];
  thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){state, 10 + i, 0, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
    ck_assert_int_eq(args[i].declined, 0);
  }
  het_dnnl_qmatmul_destroy(state);
  fixture_deinit(&f);
}
END_TEST
#endif

#define QLINEAR_DIR HETRT_TEST_DATA "/kernels/qlinear/"

static const char *const mmint_cases[] = {
    "matmulinteger_u8_runtime_zp", "matmulinteger_s8_const_zp",
    "matmulinteger_u8_no_zp", "matmulinteger_u8_row_zp"};

START_TEST(test_mmint_model) {
  case_assert_pass(QLINEAR_DIR, mmint_cases[_i]);
}
END_TEST

#ifdef HETRT_HAVE_DNNL
/* Runs case name's node through the kernel's prepare and the oneDNN path
 * on its data set; returns whether oneDNN ran it, and checks Y. */
static bool mmint_on_dnnl(const char *name) {
  char dir[512];
  snprintf(dir, sizeof dir, QLINEAR_DIR "%s", name);
  het_graph *g = opt_load_graph(dir, HET_OPT_NONE, NULL);
  const het_kernel *k = het_kernel_find("", "MatMulInteger");
  ck_assert_ptr_nonnull(k);
  ck_assert_ptr_nonnull(k->prepare);
  const het_node *node = &g->nodes[0];
  void *state = NULL;
  ck_assert_int_eq(k->prepare(g, node, &state), HET_OK);
  het_tensor *in[4], *want[1];
  char *in_names[4], *want_names[1];
  int n_in = opt_load_tensors(dir, 0, "input", in, in_names, 4);
  int n_want = opt_load_tensors(dir, 0, "output", want, want_names, 1);
  ck_assert_int_eq(n_want, 1);
  het_tensor *ins[4] = {NULL};
  for (int i = 0; i < node->n_inputs && i < 4; i++) {
    int v = node->inputs[i];
    if (v < 0)
      continue;
    ins[i] = g->values[v].initializer;
    for (int j = 0; j < n_in; j++)
      if (strcmp(in_names[j], g->values[v].name) == 0)
        ins[i] = in[j];
    ck_assert_ptr_nonnull(ins[i]);
  }
  het_tensor *y;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_INT32, want[0]->dims,
                                     want[0]->rank, &y),
                   HET_OK);
  het_kernel_ctx ctx = {.node = node, .opset = 13, .n_inputs = node->n_inputs,
                        .inputs = ins, .n_outputs = 1, .outputs = &y,
                        .state = state, .threads = 1};
  bool done = false;
  if (state)
    ck_assert_int_eq(het_dnnl_mmint_run(&ctx, &done), HET_OK);
  if (done)
    ck_assert_mem_eq(y->data, want[0]->data, want[0]->nbytes);
  if (state)
    k->destroy_state(state);
  het_tensor_destroy(y);
  opt_free_tensors(in, in_names, n_in);
  opt_free_tensors(want, want_names, n_want);
  het_graph_destroy(g);
  return done;
}

START_TEST(test_mmint_paths) {
  bool vnni = dnnl_expected();
  for (int i = 0; i < 3; i++)
    ck_assert_msg(mmint_on_dnnl(mmint_cases[i]) == vnni, "%s: oneDNN %s",
                  mmint_cases[i], vnni ? "declined" : "ran without VNNI");
  ck_assert(!mmint_on_dnnl(mmint_cases[3])); /* per-row zero point */
}
END_TEST
#endif

static Suite *qmm_suite(void) {
  Suite *s = suite_create("qlinear_matmul_dnnl");
  TCase *tc = case_tcase("core");
  tcase_add_loop_test(tc, test_qmm_case, 0, CASE_COUNT(cases));
  tcase_add_loop_test(tc, test_mmint_model, 0, CASE_COUNT(mmint_cases));
#ifdef HETRT_HAVE_DNNL
  tcase_add_test(tc, test_mmint_paths);
#endif
  suite_add_tcase(s, tc);
  TCase *lim = case_tcase("limits");
  tcase_add_loop_test(lim, test_qmm_declines, 0, 4);
#ifdef HETRT_HAVE_DNNL
  tcase_add_test(lim, test_qmm_cache_full);
  tcase_add_test(lim, test_qmm_threads);
#endif
  suite_add_tcase(s, lim);
  return s;
}

int main(void) { return case_run_suite(qmm_suite()); }
