/* test_gemm_dnnl.c — Check suite for the float32 Gemm kernel with a
 * constant B: builds a one-node graph by hand, prepares the node's oneDNN
 * state (when built with oneDNN; asserting that the fast path really runs)
 * and compares Y with a naive double-precision reference (transA/transB,
 * C as row / scalar / column / full matrix / constant or not, alpha, beta),
 * and under cpu.precision=bf16 within bfloat16's rounding of it.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/cases.h"
#include "core/ir.h"
#include "core/tensor.h"
#include "kernels/dnnl/gemm_dnnl.h"
#include "kernels/linalg_kern.h"

typedef enum { C_ABSENT, C_ROW, C_SCALAR, C_COL, C_FULL } c_kind;

typedef struct gcase {
  int64_t m, k, n;
  bool ta, tb;
  float alpha, beta;
  c_kind c;
  bool c_const; /* C an initializer (else a run-time input) */
} gcase;

typedef struct fixture {
  het_value vals[4];
  het_node node;
  int ins[3], outs[1];
  het_attr attrs[4];
  het_tensor ta, tb, tc, ty;
  het_graph g;
} fixture;

static float *rand_buf(int64_t cnt, unsigned *seed) {
  float *p = malloc((size_t)cnt * sizeof *p);
  ck_assert_ptr_nonnull(p);
  for (int64_t i = 0; i < cnt; i++)
    p[i] = (float)rand_r(seed) / (float)RAND_MAX * 2.0f - 1.0f;
  return p;
}

static void tensor2(het_tensor *t, int rank, int64_t d0, int64_t d1,
                    float *data) {
  memset(t, 0, sizeof *t);
  t->dtype = HET_DTYPE_FLOAT32;
  t->rank = rank;
  t->dims[0] = rank == 1 ? d1 : d0;
  t->dims[1] = d1;
  t->data = data;
  t->nbytes = (size_t)(rank == 0 ? 1 : rank == 1 ? d1 : d0 * d1) * 4;
}

static void c_dims(const gcase *gc, int *rank, int64_t *d0, int64_t *d1) {
  *rank = gc->c == C_SCALAR ? 0 : gc->c == C_ROW ? 1 : 2;
  *d0 = gc->c == C_FULL || gc->c == C_COL ? gc->m : 1;
  *d1 = gc->c == C_COL || gc->c == C_SCALAR ? 1 : gc->n;
}

static void fixture_init(fixture *f, const gcase *gc, float *a, float *b,
                         float *c, float *y) {
  memset(f, 0, sizeof *f);
  tensor2(&f->ta, 2, gc->ta ? gc->k : gc->m, gc->ta ? gc->m : gc->k, a);
  tensor2(&f->tb, 2, gc->tb ? gc->n : gc->k, gc->tb ? gc->k : gc->n, b);
  int cr;
  int64_t c0, c1;
  c_dims(gc, &cr, &c0, &c1);
  tensor2(&f->tc, cr, c0, c1, c);
  tensor2(&f->ty, 2, gc->m, gc->n, y);
  het_tensor *ts[4] = {&f->ta, &f->tb, &f->tc, &f->ty};
  for (int i = 0; i < 4; i++) {
    f->vals[i].dtype = HET_DTYPE_FLOAT32;
    f->vals[i].shape.rank = ts[i]->rank;
    for (int d = 0; d < ts[i]->rank; d++)
      f->vals[i].shape.dims[d].value = ts[i]->dims[d];
    f->vals[i].producer = -1;
  }
  f->vals[1].initializer = &f->tb;
  f->vals[2].initializer = gc->c_const ? &f->tc : NULL;
  const char *names[4] = {"transA", "transB", "alpha", "beta"};
  for (int i = 0; i < 4; i++) {
    f->attrs[i].name = names[i];
    f->attrs[i].type = i < 2 ? HET_ATTR_INT : HET_ATTR_FLOAT;
  }
  f->attrs[0].i = gc->ta;
  f->attrs[1].i = gc->tb;
  f->attrs[2].f = gc->alpha;
  f->attrs[3].f = gc->beta;
  f->ins[0] = 0;
  f->ins[1] = 1;
  f->ins[2] = 2;
  f->outs[0] = 3;
  f->node = (het_node){.name = "gemm0", .op_type = "Gemm", .domain = "",
                       .opset = 13, .n_inputs = gc->c == C_ABSENT ? 2 : 3,
                       .inputs = f->ins, .n_outputs = 1, .outputs = f->outs,
                       .n_attrs = 4, .attrs = f->attrs};
  f->g.values = f->vals;
  f->g.n_values = 4;
}

static double ref_at(const gcase *gc, const float *a, const float *b,
                     const float *c, int64_t i, int64_t j) {
  double acc = 0;
  for (int64_t p = 0; p < gc->k; p++)
    acc += (double)a[gc->ta ? p * gc->m + i : i * gc->k + p] *
           (double)b[gc->tb ? j * gc->k + p : p * gc->n + j];
  acc *= gc->alpha;
  if (gc->c != C_ABSENT) {
    int cr;
    int64_t c0, c1;
    c_dims(gc, &cr, &c0, &c1);
    acc += gc->beta * (double)c[(c0 == 1 ? 0 : i) * c1 + (c1 == 1 ? 0 : j)];
  }
  return acc;
}

static void assert_close(const gcase *gc, const float *a, const float *b,
                         const float *c, const float *y) {
  for (int64_t i = 0; i < gc->m; i++)
    for (int64_t j = 0; j < gc->n; j++) {
      double r = ref_at(gc, a, b, c, i, j), v = y[i * gc->n + j];
      ck_assert_msg(fabs(v - r) <= 1e-4 * (fabs(r) + 1.0),
                    "Y[%lld,%lld] = %g, reference %g", (long long)i,
                    (long long)j, v, r);
    }
}

static void ctx_init(het_kernel_ctx *ctx, fixture *f,
                     het_tensor **ins, het_tensor **outs, void *state) {
  ins[0] = &f->ta;
  ins[1] = &f->tb;
  ins[2] = &f->tc;
  outs[0] = &f->ty;
  memset(ctx, 0, sizeof *ctx);
  ctx->node = &f->node;
  ctx->opset = 13;
  ctx->n_inputs = f->node.n_inputs;
  ctx->inputs = ins;
  ctx->n_outputs = 1;
  ctx->outputs = outs;
  ctx->state = state;
  ctx->threads = 1;
}

/* A case's random A, B, C and Y (seeded by its dims) and its fixture;
 * made in place (the fixture points into itself). */
typedef struct gdata {
  float *a, *b, *c, *y;
  fixture f;
} gdata;

static void gdata_init(gdata *d, const gcase *gc) {
  unsigned seed = 1234u + (unsigned)(gc->m * 7 + gc->k * 3 + gc->n);
  d->a = rand_buf(gc->m * gc->k, &seed);
  d->b = rand_buf(gc->k * gc->n, &seed);
  d->c = rand_buf(gc->m * gc->n, &seed);
  d->y = rand_buf(gc->m * gc->n, &seed);
  fixture_init(&d->f, gc, d->a, d->b, d->c, d->y);
}

static void gdata_free(gdata *d) {
  free(d->a);
  free(d->b);
  free(d->c);
  free(d->y);
}

/* Runs gc through the oneDNN entry point (when built) and through the
 * whole Gemm kernel, checking both against the reference. */
static void run_case(const gcase *gc) {
  gdata d;
  gdata_init(&d, gc);
  het_tensor *ins[3], *outs[1];
  het_kernel_ctx ctx;
  void *state = NULL;
#ifdef HETRT_HAVE_DNNL
  ck_assert_int_eq(het_gemm_dnnl_prepare(&d.f.g, &d.f.node, &state), HET_OK);
  ck_assert_ptr_nonnull(state);
  ctx_init(&ctx, &d.f, ins, outs, state);
  bool done = false;
  ck_assert_int_eq(het_gemm_dnnl_run(&ctx, &done), HET_OK);
  ck_assert_msg(done, "oneDNN path declined the case");
  assert_close(gc, d.a, d.b, d.c, d.y);
  memset(d.y, 0xff, (size_t)(gc->m * gc->n) * sizeof *d.y); /* NaNs */
#endif
  ctx_init(&ctx, &d.f, ins, outs, state);
  ck_assert_int_eq(het_lk_gemm_run(&ctx), HET_OK);
  assert_close(gc, d.a, d.b, d.c, d.y);
#ifdef HETRT_HAVE_DNNL
  het_gemm_dnnl_destroy(state);
#endif
  gdata_free(&d);
}

static const gcase cases[] = {
    {64, 1024, 1024, false, true, 1.0f, 1.0f, C_ROW, true},  /* Linear */
    {64, 1024, 1024, false, false, 1.0f, 1.0f, C_ABSENT, true},
    {3, 5, 4, false, false, 1.0f, 1.0f, C_ABSENT, true},
    {3, 5, 4, true, false, 1.0f, 1.0f, C_ROW, true},
    {3, 5, 4, false, true, 1.0f, 1.0f, C_ROW, true},
    {7, 6, 9, true, true, 0.5f, 2.0f, C_ROW, true},
    {7, 6, 9, false, true, 1.0f, 1.0f, C_SCALAR, true},
    {7, 6, 9, true, false, 1.0f, 0.25f, C_SCALAR, false},
    {7, 6, 9, false, false, 2.0f, 1.0f, C_COL, true},
    {7, 6, 9, true, true, 1.5f, -0.5f, C_FULL, false},
    {7, 6, 9, false, true, 1.0f, 0.0f, C_FULL, true},
    {5, 33, 1, false, true, 3.0f, 0.5f, C_ROW, true},
    {1, 17, 31, false, false, 1.0f, 1.0f, C_ROW, false},
};

START_TEST(test_gemm_case) { run_case(&cases[_i]); }
END_TEST

#ifdef HETRT_HAVE_DNNL
/* cpu.precision=bf16 (on a CPU with AVX-512 BF16): every case within
 * bfloat16's rounding of the reference (each product's operands carry 8
 * significant bits: |error| <= 2^-7 |alpha| sum |a b| + float32's), and the
 * larger ones not float32's bytes (bfloat16 did run). */
START_TEST(test_gemm_bf16_case) {
  if (!__builtin_cpu_supports("avx512bf16"))
    return;
  const gcase *gc = &cases[_i];
  gdata d;
  gdata_init(&d, gc);
  const float *a = d.a, *b = d.b, *c = d.c, *y = d.y;
  het_tensor *ins[3], *outs[1];
  het_kernel_ctx ctx;
  void *state = NULL;
  het_kernel_prep prep = {.bf16 = true};
  ck_assert_int_eq(
      het_gemm_dnnl_prepare_with(&d.f.g, &d.f.node, &prep, &state), HET_OK);
  ck_assert_ptr_nonnull(state);
  ctx_init(&ctx, &d.f, ins, outs, state);
  ck_assert_int_eq(het_lk_gemm_run(&ctx), HET_OK);
  int exact = 0;
  for (int64_t i = 0; i < gc->m; i++)
    for (int64_t j = 0; j < gc->n; j++) {
      double mag = 0;
      for (int64_t p = 0; p < gc->k; p++)
        mag += fabs((double)a[gc->ta ? p * gc->m + i : i * gc->k + p] *
                    (double)b[gc->tb ? j * gc->k + p : p * gc->n + j]);
      double r = ref_at(gc, a, b, c, i, j), v = y[i * gc->n + j];
      ck_assert_msg(fabs(v - r) <= fabs(gc->alpha) * mag / 128 +
                                       1e-4 * (fabs(r) + 1.0),
                    "Y[%lld,%lld] = %g, reference %g", (long long)i,
                    (long long)j, v, r);
      exact += fabs(v - r) <= 1e-6 * (fabs(r) + 1.0);
    }
  if (gc->m * gc->n * gc->k >= 4096)
    ck_assert_int_lt(exact, gc->m * gc->n);
  het_gemm_dnnl_destroy(state);
  gdata_free(&d);
}
END_TEST

typedef struct thread_arg {
  void *state;
  int64_t m;
  int failures;
} thread_arg;

/* Each thread runs a shape of its own and one shared shape on one state,
 * so entries are created lazily from several threads at once (B and C
 * come first from the seed: the same constants in every thread). */
static void *thread_main(void *p) {
  thread_arg *t = p;
  for (int rep = 0; rep < 2; rep++) {
    gcase gc = {rep ? 16 : t->m, 48, 40, false, true, 1.0f, 1.0f, C_ROW,
                true};
    unsigned seed = 99u;
    float *b = rand_buf(gc.k * gc.n, &seed), *c = rand_buf(gc.n, &seed);
    float *a = rand_buf(gc.m * gc.k, &seed), *y = calloc((size_t)(gc.m * gc.n), 4);
    fixture f;
    fixture_init(&f, &gc, a, b, c, y);
    het_tensor *ins[3], *outs[1];
    het_kernel_ctx ctx;
    ctx_init(&ctx, &f, ins, outs, t->state);
    ck_assert_int_eq(het_lk_gemm_run(&ctx), HET_OK);
    for (int64_t i = 0; i < gc.m * gc.n; i++)
      if (fabs(y[i] - ref_at(&gc, a, b, c, i / gc.n, i % gc.n)) > 1e-3)
        t->failures++;
    free(a);
    free(b);
    free(c);
    free(y);
  }
  return NULL;
}

START_TEST(test_gemm_threads) {
  gcase gc = {4, 48, 40, false, true, 1.0f, 1.0f, C_ROW, true};
  unsigned seed = 99u;
  float *b = rand_buf(gc.k * gc.n, &seed), *c = rand_buf(gc.n, &seed);
  float *a = rand_buf(gc.m * gc.k, &seed);
  fixture f;
  fixture_init(&f, &gc, a, b, c, NULL);
  f.vals[0].shape.rank = -1; /* nothing built in prepare */
  void *state = NULL;
  ck_assert_int_eq(het_gemm_dnnl_prepare(&f.g, &f.node, &state), HET_OK);
  ck_assert_ptr_nonnull(state);
  pthread_t th[4];
  thread_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){state, 2 + i, 0};
    ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
  }
  het_gemm_dnnl_destroy(state);
  free(a);
  free(b);
  free(c);
}
END_TEST
#endif

static Suite *gemm_suite(void) {
  Suite *s = suite_create("gemm_dnnl");
  TCase *tc = case_tcase("core");
  tcase_add_loop_test(tc, test_gemm_case, 0,
                      (int)(sizeof cases / sizeof *cases));
#ifdef HETRT_HAVE_DNNL
  tcase_add_loop_test(tc, test_gemm_bf16_case, 0,
                      (int)(sizeof cases / sizeof *cases));
  tcase_add_test(tc, test_gemm_threads);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return case_run_suite(gemm_suite()); }
