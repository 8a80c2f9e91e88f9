/* test_steady.c — a steady run allocates nothing and infers nothing.  The
 * process's malloc family is interposed here, counting, from every thread
 * while a window is open, the calls made by hetrt's own code (the caller's
 * address in this executable's text, where libhetrt_static is linked)
 * apart from those made by the libraries it calls (oneDNN 2.6 builds a
 * small argument map inside every primitive execution through its C API;
 * those are counted and printed separately).  Across 100 runs of one
 * shape signature of a static-shape model, after the first,
 * het_session_run_into makes zero allocations and zero shape-inference
 * calls, on the CPU alone and split across emu and cpu (sequential and
 * streams plans, the emu in timed mode so its streams really run
 * concurrently); het_session_run makes exactly the two allocations per
 * output it hands over.  In a sanitizer build (the sanitizers interpose
 * malloc themselves) it reports itself skipped (exit 77).
 */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "hetrt/hetrt.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HET_STEADY_SKIP 1
#else
#define HET_STEADY_SKIP 0
#endif

#define MODELS HETRT_TEST_DATA "/emu/"
#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"

/* ---- counting allocations --------------------------------------------- */

static atomic_bool counting;
static atomic_long allocations; /* by hetrt's code */
static atomic_long foreign;     /* by the libraries it calls */

#if !HET_STEADY_SKIP
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

extern char __executable_start, etext; /* this executable's text */

/* Counts an allocation whose caller returns to `ret`. */
static void count(const void *ret) {
  if (!atomic_load_explicit(&counting, memory_order_relaxed))
    return;
  const char *r = ret;
  bool ours = r >= &__executable_start && r < &etext;
  atomic_fetch_add(ours ? &allocations : &foreign, 1);
}

#define HET_CALLER __builtin_return_address(0)

void *malloc(size_t n) {
  count(HET_CALLER);
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t size) {
  count(HET_CALLER);
  return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n) {
  count(HET_CALLER);
  return __libc_realloc(p, n);
}

void *aligned_alloc(size_t align, size_t n) {
  count(HET_CALLER);
  return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n) {
  count(HET_CALLER);
  return __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
  count(HET_CALLER);
  void *p = __libc_memalign(align, n);
  if (!p)
    return 12; /* ENOMEM */
  *out = p;
  return 0;
}
#endif

/* ---- sessions --------------------------------------------------------- */

static het_env *env;

static het_session *open_session(const char *model, const char *const *kv) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  for (int i = 0; kv && kv[i]; i += 2)
    ck_assert_msg(het_session_options_set(o, kv[i], kv[i + 1]) == HET_OK,
                  "%s=%s: %s", kv[i], kv[i + 1], het_last_error());
  char path[512];
  snprintf(path, sizeof path, MODELS "%s", model);
  het_session *s = NULL;
  het_status st = het_session_create(env, path, o, &s);
  het_session_options_destroy(o);
  ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  return s;
}

static het_tensor *make_input(het_session *s, const char **name) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &x), HET_OK);
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    p[i] = (float)sin(0.29 * (double)i);
  *name = d.name;
  return x;
}

static het_tensor *make_output(het_session *s) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_output(s, 0, &d), HET_OK);
  het_tensor *y;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &y), HET_OK);
  return y;
}

/* Placement sets: cpu alone; emu,cpu split on each plan form. */
static const char *const *configs[] = {
    (const char *const[]){"providers", "cpu", NULL},
    (const char *const[]){"providers", "emu,cpu", "devices",
                          DEVICES "npu.yaml", "algorithm", "priority",
                          "emu.mode", "timed", NULL},
    (const char *const[]){"providers", "emu,cpu", "devices",
                          DEVICES "npu.yaml", "algorithm", "priority",
                          "emu.mode", "timed", "executor", "streams", NULL},
};
static const char *const models[] = {"resnet_small.onnx",
                                     "transformer_small.onnx"};

/* _i: model (bit 0), placement set (bits 1-2). */
START_TEST(test_run_into_allocates_nothing) {
  het_session *s = open_session(models[_i & 1], configs[_i >> 1]);
  const char *name;
  het_tensor *x = make_input(s, &name), *y = make_output(s), *first;
  const char *names[1] = {name};
  ck_assert_msg(het_session_run(s, names, &x, 1, NULL, 1, &first) == HET_OK,
                "%s", het_last_error());
  ck_assert_msg(het_session_run_into(s, names, &x, 1, NULL, 1, &y) == HET_OK,
                "%s", het_last_error());
  long infers = het_infer_node_calls();
  atomic_store(&allocations, 0);
  atomic_store(&foreign, 0);
  atomic_store(&counting, true);
  int failures = 0, differ = 0;
  for (int r = 0; r < 100; r++) {
    failures += het_session_run_into(s, names, &x, 1, NULL, 1, &y) != HET_OK;
    differ += memcmp(het_tensor_get_data(y), het_tensor_get_data(first),
                     het_tensor_get_nbytes(y)) != 0;
  }
  atomic_store(&counting, false);
  long allocs = atomic_load(&allocations);
  printf("steady runs (%s, placement %d): hetrt %ld, libraries %ld "
         "allocations in 100 runs\n",
         models[_i & 1], _i >> 1, allocs, atomic_load(&foreign));
  ck_assert_int_eq(failures, 0);
  ck_assert_int_eq(differ, 0);
  ck_assert_msg(allocs == 0, "%ld allocations in 100 steady runs", allocs);
  ck_assert_int_eq(het_infer_node_calls() - infers, 0);
  het_tensor_destroy(first);
  het_tensor_destroy(y);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* het_session_run hands over one new tensor per output: its struct and
 * its data, nothing else. */
START_TEST(test_run_allocates_only_outputs) {
  het_session *s = open_session(models[_i], configs[0]);
  const char *name;
  het_tensor *x = make_input(s, &name), *y;
  const char *names[1] = {name};
  ck_assert_int_eq(het_session_run(s, names, &x, 1, NULL, 1, &y), HET_OK);
  het_tensor_destroy(y);
  atomic_store(&allocations, 0);
  atomic_store(&counting, true);
  int failures = 0;
  for (int r = 0; r < 100; r++) {
    failures += het_session_run(s, names, &x, 1, NULL, 1, &y) != HET_OK;
    het_tensor_destroy(y);
  }
  atomic_store(&counting, false);
  ck_assert_int_eq(failures, 0);
  ck_assert_int_eq(atomic_load(&allocations), 2 * 100);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* transformer_dyn.onnx computes its Reshape targets from Shape(x) (as
 * torch writes dynamic axes), so its attention values are shaped at run
 * time; a steady run reuses their storage from the run before (it used
 * to allocate, populate and free each, every run: 2.6x the static
 * model's time on a 4-layer BERT).  What a run allocates: the output it
 * hands over (struct and data) and the fused Attention's scratch (a
 * kernel whose shapes are known only at run time allocates its own), and
 * nothing per dynamic value (19 a run when each took fresh memory). */
START_TEST(test_dynamic_values_reuse_storage) {
  het_session *s = open_session("transformer_dyn.onnx", configs[0]);
  int64_t dims[3] = {2, 8, 16};
  het_tensor *x, *y, *first;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 3, &x), HET_OK);
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    p[i] = (float)sin(0.29 * (double)i);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  const char *names[1] = {d.name};
  ck_assert_msg(het_session_run(s, names, &x, 1, NULL, 1, &first) == HET_OK,
                "%s", het_last_error());
  atomic_store(&allocations, 0);
  atomic_store(&counting, true);
  int failures = 0, differ = 0;
  for (int r = 0; r < 100; r++) {
    failures += het_session_run(s, names, &x, 1, NULL, 1, &y) != HET_OK;
    differ += !y || memcmp(het_tensor_get_data(y), het_tensor_get_data(first),
                           het_tensor_get_nbytes(first)) != 0;
    het_tensor_destroy(y);
  }
  atomic_store(&counting, false);
  long allocs = atomic_load(&allocations);
  printf("steady runs (transformer_dyn.onnx): hetrt %ld allocations in 100 "
         "runs\n", allocs);
  ck_assert_int_eq(failures, 0);
  ck_assert_int_eq(differ, 0);
  ck_assert_int_eq(allocs, 3 * 100);
  het_tensor_destroy(first);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* A wrong output tensor is refused, naming the output. */
START_TEST(test_run_into_wrong_shape) {
  het_session *s = open_session(models[0], configs[0]);
  const char *name;
  het_tensor *x = make_input(s, &name), *y;
  int64_t dims[1] = {3};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 1, &y), HET_OK);
  const char *names[1] = {name};
  ck_assert_int_eq(het_session_run_into(s, names, &x, 1, NULL, 1, &y),
                   HET_ERR_SHAPE);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_output(s, 0, &d), HET_OK);
  ck_assert_ptr_nonnull(strstr(het_last_error(), d.name));
  het_tensor_destroy(y);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

static Suite *steady_suite(void) {
  Suite *s = suite_create("steady");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);
  tcase_add_loop_test(core, test_run_into_allocates_nothing, 0, 6);
  tcase_add_loop_test(core, test_run_allocates_only_outputs, 0, 2);
  tcase_add_test(core, test_dynamic_values_reuse_storage);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_run_into_wrong_shape);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  if (HET_STEADY_SKIP) {
    printf("test_steady: skipped: a sanitizer build interposes malloc\n");
    return 77;
  }
  SRunner *sr = srunner_create(steady_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
