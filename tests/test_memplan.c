/* test_memplan.c — the memory planner: hand-built lifetime sets against
 * their optimal peaks, in-place chains, the validator catching injected
 * overlaps; sessions running with plans (backend cases and fixtures from
 * tests/data/memplan/gen_memplan.py give the expected outputs, bit-identical
 * to runs without a plan), re-planning on a new batch size, device capacity
 * errors, and concurrent runs of one session.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "executor/plan.h"
#include "common/ref_run.h"
#include "session/session.h"
#include "core/status.h"
#include "executor/memplan.h"
#include "hetrt/hetrt.h"
#include "testcase/testcase.h"

#define DATA HETRT_TEST_DATA "/memplan/"
#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"
#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"

/* ---- planner ---------------------------------------------------------- */

/* vals[i] = {bytes, space 0, [first, last]}, no in-place candidates. */
static void set_val(het_memplan_value *v, size_t bytes, int first, int last) {
  memset(v, 0, sizeof *v);
  v->bytes = bytes;
  v->first = first;
  v->last = last;
  v->inplace[0] = v->inplace[1] = -1;
}

/* Largest sum of aligned sizes live at one step of space sp: a lower bound
 * for any plan (without in-place sharing). */
static size_t live_bound(const het_memplan_value *v, int n, int sp) {
  size_t best = 0;
  for (int t = 0; t < 64; t++) {
    size_t live = 0;
    for (int i = 0; i < n; i++)
      if (!v[i].skip && v[i].space == sp && v[i].first <= t && t <= v[i].last)
        live += (v[i].bytes + 63) & ~(size_t)63;
    if (live > best)
      best = live;
  }
  return best;
}

static void plan_ok(const het_memplan_value *v, int n, int spaces,
                    het_memplan *p) {
  ck_assert_msg(het_memplan_compute(v, n, spaces, NULL, p) == HET_OK, "%s",
                het_last_error());
  ck_assert_msg(het_memplan_validate(v, NULL, p) == HET_OK, "%s", het_last_error());
}

/* Sets whose optimum equals the live bound, including one where
 * greedy-by-size alone is not optimal (A B C D: 2048 by size, 1536 best). */
START_TEST(test_known_optimal_peaks) {
  het_memplan_value v[6];
  het_memplan p;
  set_val(&v[0], 1024, 0, 2); /* A */
  set_val(&v[1], 512, 1, 3);  /* B */
  set_val(&v[2], 512, 3, 4);  /* C */
  set_val(&v[3], 1024, 4, 5); /* D */
  plan_ok(v, 4, 1, &p);
  ck_assert_uint_eq(p.peak[0], 1536);
  ck_assert_uint_eq(p.total[0], 3072);
  het_memplan_deinit(&p);
  /* A sequence: each value lives over two steps: two blocks suffice. */
  for (int i = 0; i < 6; i++)
    set_val(&v[i], 4096, i, i + 1);
  plan_ok(v, 6, 1, &p);
  ck_assert_uint_eq(p.peak[0], 8192);
  ck_assert_uint_eq(p.offset[0], p.offset[2]);
  het_memplan_deinit(&p);
  /* Unaligned sizes: blocks at 64-byte multiples, peak = last end. */
  set_val(&v[0], 100, 0, 1);
  set_val(&v[1], 10, 0, 1);
  set_val(&v[2], 100, 2, 3);
  plan_ok(v, 3, 1, &p);
  ck_assert_uint_eq(p.peak[0], 128 + 10);
  ck_assert_uint_eq(p.offset[0] % 64, 0);
  ck_assert_uint_eq(p.offset[1] % 64, 0);
  het_memplan_deinit(&p);
}
END_TEST

/* Two spaces never share an arena; skipped values take no space. */
START_TEST(test_spaces_and_skips) {
  het_memplan_value v[4];
  het_memplan p;
  set_val(&v[0], 256, 0, 3);
  set_val(&v[1], 256, 0, 3);
  v[1].space = 1;
  set_val(&v[2], 1 << 20, 0, 3);
  v[2].skip = true;
  set_val(&v[3], 0, 1, 2);
  plan_ok(v, 4, 2, &p);
  ck_assert_uint_eq(p.peak[0], 256);
  ck_assert_uint_eq(p.peak[1], 256);
  ck_assert_uint_eq(p.offset[2], HET_MEMPLAN_NONE);
  ck_assert_uint_eq(p.offset[3], HET_MEMPLAN_NONE);
  het_memplan_deinit(&p);
  set_val(&v[0], 64, 0, 1);
  v[0].space = 2;
  ck_assert_int_eq(het_memplan_compute(v, 1, 2, NULL, &p), HET_ERR_INVALID_ARGUMENT);
}
END_TEST

/* Relu chain x -> r1 -> r2 -> r3 -> y: r2 takes r1's block, r3 takes r2's:
 * the peak is one tensor. */
START_TEST(test_inplace_chain) {
  het_memplan_value v[3];
  het_memplan p;
  for (int i = 0; i < 3; i++) {
    set_val(&v[i], 4096, i, i + 1);
    v[i].inplace[0] = i - 1;
  }
  plan_ok(v, 3, 1, &p);
  ck_assert_uint_eq(p.peak[0], 4096);
  ck_assert_int_eq(p.n_inplace, 2);
  ck_assert_int_eq(p.shares[2], 1);
  het_memplan_deinit(&p);
}
END_TEST

/* r1 is read again after r2 is produced: no in-place, two tensors; a
 * candidate of another size or space is refused too. */
START_TEST(test_inplace_refused) {
  het_memplan_value v[3];
  het_memplan p;
  set_val(&v[0], 4096, 0, 2); /* r1, read at steps 1 and 2 */
  set_val(&v[1], 4096, 1, 2); /* r2 = Relu(r1) */
  v[1].inplace[0] = 0;
  plan_ok(v, 2, 1, &p);
  ck_assert_int_eq(p.n_inplace, 0);
  ck_assert_uint_eq(p.peak[0], 8192);
  het_memplan_deinit(&p);
  set_val(&v[0], 4096, 0, 1);
  set_val(&v[1], 8192, 1, 2);
  v[1].inplace[0] = 0;
  set_val(&v[2], 4096, 2, 3);
  v[2].space = 1;
  v[2].inplace[0] = 1;
  plan_ok(v, 3, 2, &p);
  ck_assert_int_eq(p.n_inplace, 0);
  het_memplan_deinit(&p);
}
END_TEST

/* Which inputs an output may take over: elementwise inputs, and
 * hetrt.FusedConv's residual (input 3) unless it is also X. */
START_TEST(test_inplace_ops) {
  int in4[4] = {0, 1, 2, 3}, out[1] = {4};
  het_node add = {.name = "a", .op_type = "Add", .domain = "",
                  .n_inputs = 2, .inputs = in4, .n_outputs = 1,
                  .outputs = out};
  ck_assert(het_memplan_inplace_ok(&add, 0, 1));
  ck_assert(!het_memplan_inplace_ok(&add, 0, 2));
  het_node conv = {.name = "c", .op_type = "Conv", .domain = "",
                   .n_inputs = 3, .inputs = in4, .n_outputs = 1,
                   .outputs = out};
  ck_assert(!het_memplan_inplace_ok(&conv, 0, 0));
  het_node fused = conv;
  fused.op_type = "FusedConv";
  fused.domain = "hetrt";
  fused.n_inputs = 4;
  ck_assert(het_memplan_inplace_ok(&fused, 0, 3));
  ck_assert(!het_memplan_inplace_ok(&fused, 0, 0));
  ck_assert(!het_memplan_inplace_ok(&fused, 0, 1));
  int same[4] = {0, 1, 2, 0}; /* FusedConv(x, w, b, x) */
  fused.inputs = same;
  ck_assert(!het_memplan_inplace_ok(&fused, 0, 3));
}
END_TEST

/* The validator accepts the plan, then catches an injected overlap, a
 * misaligned offset and an in-place claim that was never a candidate. */
START_TEST(test_validator_catches_overlap) {
  het_memplan_value v[4];
  het_memplan p;
  set_val(&v[0], 1000, 0, 2);
  set_val(&v[1], 1000, 1, 3);
  set_val(&v[2], 1000, 2, 4);
  set_val(&v[3], 1000, 3, 4);
  v[3].inplace[0] = 0; /* dies at 2, not 3: no in-place */
  plan_ok(v, 4, 1, &p);
  size_t keep = p.offset[1];
  p.offset[1] = p.offset[0] + 64; /* both live at steps 1-2 */
  ck_assert_int_eq(het_memplan_validate(v, NULL, &p), HET_ERR_INTERNAL);
  ck_assert_msg(strstr(het_last_error(), "overlap"), "%s", het_last_error());
  p.offset[1] = keep + 8;
  p.peak[0] += 64;
  ck_assert_int_eq(het_memplan_validate(v, NULL, &p), HET_ERR_INTERNAL);
  ck_assert_msg(strstr(het_last_error(), "aligned"), "%s", het_last_error());
  p.offset[1] = keep;
  p.peak[0] -= 64;
  ck_assert_int_eq(het_memplan_validate(v, NULL, &p), HET_OK);
  p.offset[2] = p.offset[1];
  p.shares[2] = 1; /* not a candidate of value 2 */
  ck_assert_int_eq(het_memplan_validate(v, NULL, &p), HET_ERR_INTERNAL);
  het_memplan_deinit(&p);
}
END_TEST

/* Random lifetime sets: every plan validates, stays within [bound, sum]. */
START_TEST(test_random_sets_validate) {
  enum { N = 60 };
  het_memplan_value v[N];
  unsigned seed = 12345u + (unsigned)_i;
  for (int i = 0; i < N; i++) {
    int first = (int)(rand_r(&seed) % 40);
    set_val(&v[i], 1 + rand_r(&seed) % 5000, first,
            first + (int)(rand_r(&seed) % 12));
    v[i].space = (int)(rand_r(&seed) % 2);
    v[i].skip = rand_r(&seed) % 10 == 0;
    v[i].inplace[0] = i > 0 ? (int)(rand_r(&seed) % (unsigned)i) : -1;
    if (i > 0 && rand_r(&seed) % 3 == 0) { /* a real in-place candidate */
      v[i].inplace[0] = i - 1;
      v[i].first = v[i - 1].last;
      v[i].last = v[i].first + 1 + (int)(rand_r(&seed) % 5);
      v[i].bytes = v[i - 1].bytes;
      v[i].space = v[i - 1].space;
    }
  }
  het_memplan p;
  plan_ok(v, N, 2, &p);
  for (int sp = 0; sp < 2; sp++) {
    size_t sum = 0;
    for (int i = 0; i < N; i++)
      if (!v[i].skip && v[i].space == sp)
        sum += (v[i].bytes + 63) & ~(size_t)63;
    ck_assert_uint_le(p.peak[sp], sum);
    if (p.n_inplace == 0)
      ck_assert_uint_ge(p.peak[sp] + 63, live_bound(v, N, sp));
  }
  het_memplan_deinit(&p);
}
END_TEST

/* ---- sessions ----------------------------------------------------------- */

static het_env *env;

static het_session *open_session(const char *path, const char *const *kv) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  for (int i = 0; kv && kv[i]; i += 2)
    ck_assert_msg(het_session_options_set(o, kv[i], kv[i + 1]) == HET_OK,
                  "%s", het_last_error());
  het_session *s = NULL;
  het_status st = het_session_create(env, path, o, &s);
  het_session_options_destroy(o);
  ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  return s;
}

/* x[batch, cols] filled with a fixed pattern of both signs.  Caller owns. */
static het_tensor *pattern(int64_t batch, int64_t cols) {
  int64_t dims[2] = {batch, cols};
  het_tensor *x;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 2, &x), HET_OK);
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < batch * cols; i++)
    p[i] = (float)sin(0.61 * (double)i) * 2.0f;
  return x;
}

static het_tensor *run1(het_session *s, het_tensor *x) {
  const char *names[1] = {"x"};
  het_tensor *y = NULL;
  ck_assert_msg(het_session_run(s, names, &x, 1, NULL, 1, &y) == HET_OK, "%s",
                het_last_error());
  return y;
}

/* The host space's figures of the session's latest plan. */
static het_plan_summary host_summary(het_session *s) {
  het_plan *plan;
  het_plan_summary m[HET_MAX_EPS + 1];
  ck_assert_msg(het_session_plan_for_report(s, true, &plan) == HET_OK, "%s",
                het_last_error());
  het_plan_summary_get(plan, m);
  het_plan_put(plan);
  return m[0];
}

/* Backend cases and the torch CNN (two batch sizes in one session) pass
 * with plans. */
START_TEST(test_cases_pass_with_plans) {
  static const char *const cases[] = {
      NODE_DIR "test_relu", NODE_DIR "test_add_bcast",
      NODE_DIR "test_conv_with_strides_padding", NODE_DIR "test_gemm_default_no_bias",
      NODE_DIR "test_maxpool_2d_pads", NODE_DIR "test_softmax_axis_1",
      NODE_DIR "test_reshape_reordered_all_dims", DATA "cnn"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    het_testcase_verdict verdict;
    char msg[512];
    ck_assert_int_eq(het_testcase_run(env, cases[i], NULL, &verdict, msg,
                                      sizeof msg),
                     HET_OK);
    ck_assert_msg(verdict == HET_TESTCASE_PASS, "%s: %s", cases[i], msg);
  }
}
END_TEST

/* The CNN and resnet_small give the same bits through a session (its
 * plan reuses bytes and runs in place) as node by node with every value
 * its own allocation (tests/common/ref_run.h, same kernels: NCHW, direct
 * convolution), and their plans place most intermediates in the arena. */
START_TEST(test_bit_identical_to_unplanned) {
  static const char *const models[] = {
      DATA "cnn/model.onnx", HETRT_TEST_DATA "/emu/resnet_small.onnx"};
  static const char *const plain_cpu[] = {"cpu.layout", "nchw",
                                          "cpu.conv_algo", "direct", NULL};
  het_session *s = open_session(models[_i], plain_cpu);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  int64_t dims[4] = {d.dims[0] > 0 ? d.dims[0] : 2, d.dims[1], d.dims[2],
                     d.dims[3]};
  het_tensor *x;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x), HET_OK);
  float *px = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    px[i] = (float)cos(0.13 * (double)i);
  const char *names[1] = {d.name};
  het_tensor *planned, *plain;
  ck_assert_msg(het_session_run(s, names, &x, 1, NULL, 1, &planned) == HET_OK,
                "%s", het_last_error());
  het_plan_summary m = host_summary(s);
  ck_assert_int_ge(m.n_planned, 5);
  ck_assert_uint_lt(m.peak, m.total);
  char *ref_names[1] = {(char *)d.name};
  ck_assert_msg(ref_run_graph(s->graph, &x, ref_names, 1, &plain) == HET_OK,
                "%s", het_last_error());
  ck_assert_int_eq(het_tensor_get_count(planned), het_tensor_get_count(plain));
  ck_assert_mem_eq(het_tensor_get_data(planned), het_tensor_get_data(plain),
                   (size_t)het_tensor_get_count(plain) * sizeof(float));
  het_tensor_destroy(planned);
  het_tensor_destroy(plain);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* relu_chain: the host peak is one tensor and scales with the batch; a
 * new batch size computes a new plan, a repeated one reuses it. */
START_TEST(test_relu_chain_replans_per_batch) {
  het_session *s = open_session(DATA "relu_chain.onnx", NULL);
  size_t peak;
  ck_assert_int_eq(het_session_get_planned_peak(s, "cpu", &peak),
                   HET_ERR_SHAPE); /* symbolic batch, no run yet */
  static const int64_t batches[] = {2, 5, 2, 5, 7};
  static const int fresh[] = {1, 1, 0, 0, 1};
  for (int k = 0; k < 5; k++) {
    long before = het_plan_builds();
    het_tensor *x = pattern(batches[k], 256), *y = run1(s, x);
    ck_assert_int_eq(het_plan_builds() - before, fresh[k]);
    const float *px = het_tensor_get_data(x), *py = het_tensor_get_data(y);
    for (int64_t i = 0; i < batches[k] * 256; i++)
      ck_assert_float_eq(py[i], px[i] > 0 ? px[i] : 0.0f);
    het_plan_summary m = host_summary(s);
    size_t one = (size_t)batches[k] * 256 * sizeof(float);
    ck_assert_uint_eq(m.peak, one);
    ck_assert_uint_eq(m.total, 3 * one);
    ck_assert_uint_eq(m.intermediates, 3 * one); /* r1..r3, all planned */
    ck_assert_uint_eq(m.weights, 0);
    ck_assert_int_eq(m.n_inplace, 2);
    ck_assert_int_eq(het_session_get_planned_peak(s, "host", &peak), HET_OK);
    ck_assert_uint_eq(peak, one + 2 * one); /* arena + input + output */
    het_tensor_destroy(x);
    het_tensor_destroy(y);
  }
  ck_assert_int_eq(het_session_plan_check(s), HET_OK); /* symbolic */
  het_program_deinit(&s->top.prog); /* drop the cache: the next run plans */
  ck_assert_int_eq(het_program_init(&s->top.prog), HET_OK);
  long before = het_plan_builds();
  het_tensor *x = pattern(2, 256), *y = run1(s, x);
  ck_assert_int_eq(het_plan_builds() - before, 1);
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_session_destroy(s);
}
END_TEST

/* expand_relu: the values Expand and Relu make are shaped by the data of
 * the input 'shape', so one plan (one signature) runs them at sizes that
 * grow and shrink; their storage is kept from run to run and replaced
 * when too small.  Every run's y = 2 relu(x) broadcast, and (under the
 * sanitizers) nothing is read or written outside what was allocated. */
START_TEST(test_dynamic_storage_grows_and_shrinks) {
  het_session *s = open_session(DATA "expand_relu.onnx", NULL);
  static const int64_t rows[] = {3, 50, 2, 50, 64, 1, 64};
  het_tensor *x = pattern(1, 4), *shape;
  int64_t two = 2;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_INT64, &two, 1, &shape), HET_OK);
  const float *px = het_tensor_get_data(x);
  long builds = het_plan_builds();
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    int64_t *ps = het_tensor_get_data(shape);
    ps[0] = rows[k];
    ps[1] = 4;
    const char *names[2] = {"x", "shape"};
    het_tensor *in[2] = {x, shape}, *y = NULL;
    ck_assert_msg(het_session_run(s, names, in, 2, NULL, 1, &y) == HET_OK, "%s",
                  het_last_error());
    ck_assert_int_eq(het_tensor_get_count(y), rows[k] * 4);
    const float *py = het_tensor_get_data(y);
    for (int64_t i = 0; i < rows[k] * 4; i++)
      ck_assert_float_eq(py[i], px[i % 4] > 0 ? 2 * px[i % 4] : px[i % 4]);
    het_tensor_destroy(y);
  }
  /* one signature: its plan was made with the session, none since */
  ck_assert_int_eq(het_plan_builds() - builds, 0);
  het_tensor_destroy(shape);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* relu_lives_on: r1 is read by the final Add, so r2 cannot take its
 * block: two tensors; the result is still right. */
START_TEST(test_no_inplace_when_input_lives_on) {
  het_session *s = open_session(DATA "relu_lives_on.onnx", NULL);
  het_tensor *x = pattern(3, 256), *y = run1(s, x);
  const float *px = het_tensor_get_data(x), *py = het_tensor_get_data(y);
  for (int64_t i = 0; i < 3 * 256; i++)
    ck_assert_float_eq(py[i], px[i] > 0 ? 2 * px[i] : 0.0f);
  het_plan_summary m = host_summary(s);
  ck_assert_uint_eq(m.peak, 2 * 3 * 256 * sizeof(float));
  ck_assert_int_eq(m.n_inplace, 1); /* r3 takes r2's block */
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_session_destroy(s);
}
END_TEST

/* wide.onnx on emu (tiny.yaml, 16 KiB) under priority: the plan does not
 * fit, and the run fails before allocating, naming the device and bytes. */
START_TEST(test_capacity_error_names_device) {
  /* Static shapes: the plan is made, and refused, at session creation. */
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", "emu,cpu"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "devices", DEVICES "tiny.yaml"),
                   HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "algorithm", "priority"), HET_OK);
  het_session *s = NULL;
  ck_assert_int_eq(het_session_create(env, DATA "wide.onnx", o, &s),
                   HET_ERR_CAPACITY);
  ck_assert_ptr_null(s);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, "memory plan: emu device needs 32768 bytes") &&
                    strstr(msg, "16384"),
                "%s", msg);
  het_session_options_destroy(o);
}
END_TEST

typedef struct worker {
  het_session *s;
  het_tensor *x;
  het_tensor *want;
  int mismatches, failures;
} worker;

static void *worker_run(void *arg) {
  worker *w = arg;
  const char *names[1] = {"x"};
  for (int r = 0; r < 20; r++) {
    het_tensor *y = NULL;
    if (het_session_run(w->s, names, &w->x, 1, NULL, 1, &y) != HET_OK) {
      w->failures++;
      continue;
    }
    if (memcmp(het_tensor_get_data(y), het_tensor_get_data(w->want),
               (size_t)het_tensor_get_count(y) * sizeof(float)) != 0)
      w->mismatches++;
    het_tensor_destroy(y);
  }
  return NULL;
}

/* 4 threads x 20 runs of one session (two of them another batch size, so
 * plans are looked up and built concurrently) give identical outputs. */
START_TEST(test_concurrent_runs_identical) {
  het_session *s = open_session(DATA "cnn/model.onnx", NULL);
  het_tensor *x[2], *want[2];
  for (int k = 0; k < 2; k++) {
    int64_t dims[4] = {2 + k, 3, 12, 12};
    ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x[k]),
                     HET_OK);
    float *p = het_tensor_get_data(x[k]);
    for (int64_t i = 0; i < het_tensor_get_count(x[k]); i++)
      p[i] = (float)sin(0.07 * (double)i + k);
    want[k] = run1(s, x[k]);
  }
  pthread_t t[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.s = s, .x = x[i % 2], .want = want[i % 2]};
    ck_assert_int_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].failures, 0);
    ck_assert_int_eq(w[i].mismatches, 0);
  }
  for (int k = 0; k < 2; k++) {
    het_tensor_destroy(x[k]);
    het_tensor_destroy(want[k]);
  }
  het_session_destroy(s);
}
END_TEST

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

static Suite *memplan_suite(void) {
  Suite *s = suite_create("memplan");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_known_optimal_peaks);
  tcase_add_test(core, test_spaces_and_skips);
  tcase_add_test(core, test_inplace_chain);
  tcase_add_test(core, test_inplace_refused);
  tcase_add_test(core, test_inplace_ops);
  tcase_add_loop_test(core, test_random_sets_validate, 0, 20);
  suite_add_tcase(s, core);
  TCase *sessions = tcase_create("sessions");
  tcase_add_checked_fixture(sessions, setup, teardown);
  tcase_set_timeout(sessions, 120);
  tcase_add_test(sessions, test_cases_pass_with_plans);
  tcase_add_loop_test(sessions, test_bit_identical_to_unplanned, 0, 2);
  tcase_add_test(sessions, test_relu_chain_replans_per_batch);
  tcase_add_test(sessions, test_no_inplace_when_input_lives_on);
  tcase_add_test(sessions, test_dynamic_storage_grows_and_shrinks);
  tcase_add_test(sessions, test_concurrent_runs_identical);
  suite_add_tcase(s, sessions);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_validator_catches_overlap);
  tcase_add_test(errors, test_capacity_error_names_device);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(memplan_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
