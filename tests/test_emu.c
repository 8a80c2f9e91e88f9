/* test_emu.c — the emulated accelerator's device model: profile parsing
 * (good profiles and malformed ones, whose messages name file, line and
 * key), options, the handle-based memory space (round trips, capacity,
 * handles that are not host pointers), allocation and copy fault injection,
 * stream order and timed-mode copy pacing.  Graph compile/run on the emu is
 * in test_emu_run.c, sessions in test_emu_e2e.c.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/status.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"
#include "common/emu_helpers.h"

#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"

/* ---- profiles -------------------------------------------------------------- */

START_TEST(test_profile_npu) {
  het_emu_profile p;
  ck_assert_int_eq(het_emu_profile_load(DEVICES "npu.yaml", &p), HET_OK);
  ck_assert_str_eq(p.name, "npu");
  ck_assert_uint_eq(p.memory_capacity, (size_t)512 << 20);
  ck_assert_double_eq_tol(p.peak_flops_f32, 4e12, 1);
  ck_assert_double_eq_tol(p.peak_flops_f16, 8e12, 1);
  ck_assert_double_eq_tol(p.link_bandwidth, 8e9, 1);
  ck_assert_double_eq_tol(p.link_latency, 20e-6, 1e-12);
  ck_assert_double_eq_tol(p.launch_overhead, 10e-6, 1e-12);
  ck_assert(p.preferred_layout == HET_LAYOUT_NCHW);
  ck_assert(het_emu_profile_has_op(&p, "", "Conv"));
  ck_assert(het_emu_profile_has_op(&p, "ai.onnx", "Softmax"));
  ck_assert(!het_emu_profile_has_op(&p, "", "Resize"));
  ck_assert(!het_emu_profile_dtype_ok(&p, HET_DTYPE_INT16));
  ck_assert(het_emu_profile_dtype_ok(&p, HET_DTYPE_FLOAT32));
  het_emu_profile_deinit(&p);

  ck_assert_int_eq(het_emu_profile_load(DEVICES "big-gpu-like.yaml", &p),
                   HET_OK);
  ck_assert(p.preferred_layout == HET_LAYOUT_NHWC);
  ck_assert_uint_eq(p.memory_capacity, (size_t)40 << 30);
  ck_assert_double_eq_tol(p.memory_bandwidth, 1.5e12, 1);
  ck_assert(het_emu_profile_has_op(&p, "", "Resize")); /* no list = all */
  het_emu_profile_deinit(&p);

  ck_assert_int_eq(het_emu_profile_load(DEVICES "tiny.yaml", &p), HET_OK);
  ck_assert_uint_eq(p.memory_capacity, 16 * 1024);
  ck_assert_double_eq_tol(p.peak_flops_i8, 100e9, 1); /* scalar sets all */
  het_emu_profile_deinit(&p);
}
END_TEST

START_TEST(test_profile_units) {
  char path[64];
  write_profile("name: units\nprovider: emu\nmemory_capacity: 1.5 GB\n"
                "peak_flops: {float32: 3 TFLOPS, float16: 500G, int8: 2e12}\n"
                "memory_bandwidth: 2 GiB/s\nlink_bandwidth: 1e9\n"
                "link_latency: 2ms\nlaunch_overhead: 300ns\n"
                "supported_ops: []\nunsupported_dtypes: [float64]\n",
                path, sizeof path);
  het_emu_profile p;
  ck_assert_int_eq(het_emu_profile_load(path, &p), HET_OK);
  ck_assert_uint_eq(p.memory_capacity, 1500000000u);
  ck_assert_double_eq_tol(p.peak_flops_f32, 3e12, 1);
  ck_assert_double_eq_tol(p.peak_flops_f16, 5e11, 1);
  ck_assert_double_eq_tol(p.peak_flops_i8, 2e12, 1);
  ck_assert_double_eq_tol(p.memory_bandwidth, 2.0 * 1073741824.0, 1);
  ck_assert_double_eq_tol(p.link_bandwidth, 1e9, 1);
  ck_assert_double_eq_tol(p.link_latency, 2e-3, 1e-12);
  ck_assert_double_eq_tol(p.launch_overhead, 300e-9, 1e-15);
  ck_assert(het_emu_profile_has_op(&p, "", "Resize")); /* empty = all */
  ck_assert(!het_emu_profile_dtype_ok(&p, HET_DTYPE_FLOAT64));
  het_emu_profile_deinit(&p);
  unlink(path);
}
END_TEST

START_TEST(test_default_profile_and_info) {
  void *st;
  ck_assert_int_eq(het_emu_provider.create(NULL, &st), HET_OK);
  het_device_info info;
  ck_assert_int_eq(het_emu_provider.get_device_info(st, &info), HET_OK);
  ck_assert(!info.host_memory);
  ck_assert_uint_gt(info.memory_capacity, 0);
  ck_assert(info.peak_flops_f32 > 0 && info.link_bandwidth > 0);
  het_emu_provider.destroy(st);
  ck_assert_int_eq(emu_create(DEVICES "npu.yaml", NULL, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.get_device_info(st, &info), HET_OK);
  ck_assert_uint_eq(info.memory_capacity, (size_t)512 << 20);
  ck_assert_double_eq_tol(info.link_latency, 20e-6, 1e-12);
  het_emu_provider.destroy(st);
}
END_TEST

typedef struct bad_profile {
  const char *text;
  const char *line; /* "line N" expected in the message */
  const char *key;  /* "key 'K'" expected */
  const char *why;  /* another expected fragment */
} bad_profile;

static const bad_profile bad_profiles[] = {
    {"name: x\nmemory_capacity: 12 XB\n", "line 2", "memory_capacity",
     "12 XB"},
    {"name: x\nprovider: emu\nspeed: 3\n", "line 3", "speed", "unknown key"},
    {"peak_flops:\n  float32: 1T\n  bfloat8: 2T\n", "line 3", "peak_flops",
     "bfloat8"},
    {"peak_flops:\n  float32: fast\n", "line 2", "peak_flops.float32",
     "fast"},
    {"supported_ops: [Conv, NoSuchOp]\n", "line 1", "supported_ops",
     "NoSuchOp"},
    {"name: x\n\npreferred_layout: NCWH\n", "line 3", "preferred_layout",
     "NCWH"},
    {"link_bandwidth: 0\n", "line 1", "link_bandwidth", "greater than 0"},
    {"name: a\nname: b\n", "line 2", "name", "twice"},
    {"provider: cuda\n", "line 1", "provider", "cuda"},
    {"link_latency: 3 parsecs\n", "line 1", "link_latency", "parsecs"},
    {"unsupported_dtypes: [int16, float128]\n", "line 1",
     "unsupported_dtypes", "float128"},
    {"supported_ops: Conv\n", "line 1", "supported_ops", "list"},
};

START_TEST(test_profile_malformed) {
  const bad_profile *b = &bad_profiles[_i];
  char path[64], frag[64];
  write_profile(b->text, path, sizeof path);
  het_emu_profile p;
  ck_assert_int_eq(het_emu_profile_load(path, &p), HET_ERR_INVALID_ARGUMENT);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, path), "no file in: %s", msg);
  ck_assert_msg(strstr(msg, b->line), "no '%s' in: %s", b->line, msg);
  snprintf(frag, sizeof frag, "key '%s'", b->key);
  ck_assert_msg(strstr(msg, frag), "no '%s' in: %s", frag, msg);
  ck_assert_msg(strstr(msg, b->why), "no '%s' in: %s", b->why, msg);
  /* the provider refuses it the same way */
  void *st = NULL;
  ck_assert_int_eq(emu_create(path, NULL, &st), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(st);
  unlink(path);
}
END_TEST

START_TEST(test_profile_syntax_and_missing) {
  char path[64];
  write_profile("name: x\nsupported_ops: [Conv,\n  Relu\nfoo: [\n", path,
                sizeof path);
  het_emu_profile p;
  ck_assert_int_eq(het_emu_profile_load(path, &p), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "YAML error"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "line "));
  unlink(path);
  ck_assert_int_eq(het_emu_profile_load("/nonexistent/npu.yaml", &p),
                   HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "/nonexistent/npu.yaml"));
  write_profile("- just\n- a list\n", path, sizeof path);
  ck_assert_int_eq(het_emu_profile_load(path, &p), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "mapping"));
  unlink(path);
}
END_TEST

START_TEST(test_options) {
  void *st = NULL;
  static const char *const unknown[] = {"speed=3", NULL};
  ck_assert_int_eq(emu_create(NULL, unknown, &st), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'speed'"));
  static const char *const mode[] = {"mode=slow", NULL};
  ck_assert_int_eq(emu_create(NULL, mode, &st), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "mode=slow"));
  static const char *const count[] = {"fail_kernel=-1", NULL};
  ck_assert_int_eq(emu_create(NULL, count, &st), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "fail_kernel"));
  static const char *const good[] = {"mode=timed", "jitter_us=5",
                                     "fail_alloc=0", NULL};
  ck_assert_int_eq(emu_create(NULL, good, &st), HET_OK);
  het_emu_provider.destroy(st);
}
END_TEST

/* ---- memory ---------------------------------------------------------------- */

START_TEST(test_alloc_copy_round_trip) {
  void *st, *h;
  ck_assert_int_eq(emu_create(NULL, NULL, &st), HET_OK);
  enum { N = 100003 };
  unsigned char *src = malloc(N), *dst = calloc(1, N);
  for (int i = 0; i < N; i++)
    src[i] = (unsigned char)(i * 7 + 3);
  ck_assert_int_eq(het_emu_provider.alloc(st, N, &h), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_from_host(st, h, src, N), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, dst, h, N), HET_OK);
  ck_assert_mem_eq(src, dst, N);
  /* an access past the block is refused, not performed */
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, dst, h, N + 1),
                   HET_ERR_INVALID_ARGUMENT);
  het_emu_provider.free(st, h);
  /* a freed handle no longer resolves, even when its slot is reused */
  void *h2;
  ck_assert_int_eq(het_emu_provider.alloc(st, 16, &h2), HET_OK);
  ck_assert_ptr_ne(h, h2);
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, dst, h, 16),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "not a live handle"));
  /* a host pointer is not a handle */
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, dst, src, 16),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "host pointer"));
  het_emu_provider.free(st, h2);
  free(src);
  free(dst);
  het_emu_provider.destroy(st);
}
END_TEST

START_TEST(test_capacity) {
  void *st, *a, *b;
  ck_assert_int_eq(emu_create(DEVICES "tiny.yaml", NULL, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc(st, 10000, &a), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc(st, 10000, &b), HET_ERR_CAPACITY);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, "'tiny'") && strstr(msg, "10000 bytes") &&
                    strstr(msg, "16384"),
                "message: %s", msg);
  het_emu_provider.free(st, a);
  ck_assert_int_eq(het_emu_provider.alloc(st, 10000, &b), HET_OK);
  het_emu_provider.free(st, b);
  het_emu_provider.destroy(st);
}
END_TEST

START_TEST(test_handles_are_not_host_pointers) {
  void *st, *h;
  ck_assert_int_eq(emu_create(NULL, NULL, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc(st, 4096, &h), HET_OK);
  ck_assert(het_emu_handle_is_tagged(h));
  /* nothing is mapped at the handle's address */
  long ps = sysconf(_SC_PAGESIZE);
  unsigned char vec[1];
  void *page = (void *)((uintptr_t)h & ~(uintptr_t)(ps - 1));
  errno = 0;
  ck_assert_int_eq(mincore(page, (size_t)ps, vec), -1);
  ck_assert_int_eq(errno, ENOMEM);
  int local = 0;
  void *mine = (void *)((uintptr_t)&local & ~(uintptr_t)(ps - 1));
  ck_assert_int_eq(mincore(mine, (size_t)ps, vec), 0); /* the probe works */
  /* and reading through it kills the reader */
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    volatile unsigned char c = *(volatile unsigned char *)h;
    _exit(c == 0x5a ? 3 : 0);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(!(WIFEXITED(status) &&
                  (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3)),
                "reading an emu handle as memory succeeded");
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
}
END_TEST

/* ---- faults ----------------------------------------------------------------- */

START_TEST(test_fault_alloc) {
  void *st, *h;
  static const char *const opts[] = {"fail_alloc=2", NULL};
  ck_assert_int_eq(emu_create(NULL, opts, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.alloc(st, 64, &h), HET_OK);
  het_emu_provider.free(st, h);
  void *untouched = (void *)0x1;
  h = untouched;
  ck_assert_int_eq(het_emu_provider.alloc(st, 64, &h), HET_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_eq(h, untouched);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "emu: injected fault:"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "allocation #2"));
  ck_assert_int_eq(het_emu_provider.alloc(st, 64, &h), HET_OK);
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
}
END_TEST

START_TEST(test_fault_copy) {
  void *st, *h;
  static const char *const opts[] = {"fail_copy=1", NULL};
  ck_assert_int_eq(emu_create(NULL, opts, &st), HET_OK);
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  ck_assert_int_eq(het_emu_provider.alloc(st, sizeof x, &h), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_from_host(st, h, x, sizeof x),
                   HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "emu: injected fault: copy #1"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "host to device"));
  ck_assert_int_eq(het_emu_provider.copy_from_host(st, h, x, sizeof x), HET_OK);
  ck_assert_int_eq(het_emu_provider.copy_to_host(st, y, h, sizeof y), HET_OK);
  ck_assert_mem_eq(x, y, sizeof x);
  het_emu_provider.free(st, h);
  het_emu_provider.destroy(st);
}
END_TEST

/* ---- streams ------------------------------------------------------------- */

typedef struct order_job {
  int id;
  int *log, *n_log; /* only the stream's thread appends */
} order_job;

static het_status order_fn(void *arg) {
  order_job *j = arg;
  struct timespec t = {0, (3 - j->id) * 2000000L}; /* earlier jobs slower */
  nanosleep(&t, NULL);
  j->log[(*j->n_log)++] = j->id;
  return j->id == 1 ? het_error(HET_ERR_KERNEL, "job %d failed", j->id)
                    : HET_OK;
}

START_TEST(test_stream_order) {
  het_emu_stream *s;
  ck_assert_int_eq(het_emu_stream_create("test", 0, &s), HET_OK);
  int log[3], n_log = 0;
  order_job oj[3];
  het_emu_job jobs[3];
  for (int i = 0; i < 3; i++) {
    oj[i] = (order_job){i, log, &n_log};
    jobs[i] = (het_emu_job){.fn = order_fn, .arg = &oj[i]};
    het_emu_stream_submit(s, &jobs[i]);
  }
  /* waiting out of order still sees FIFO execution and each job's status,
   * with a failed job's message raised on the waiting thread */
  ck_assert_int_eq(het_emu_stream_wait(s, &jobs[2]), HET_OK);
  ck_assert_int_eq(het_emu_stream_wait(s, &jobs[1]), HET_ERR_KERNEL);
  ck_assert_str_eq(het_last_error(), "job 1 failed");
  ck_assert_int_eq(het_emu_stream_wait(s, &jobs[0]), HET_OK);
  ck_assert_int_eq(n_log, 3);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(log[i], i);
  het_emu_stream_destroy(s);
}
END_TEST

/* ---- timed mode -------------------------------------------------------------- */

START_TEST(test_timed_copy_pacing) {
  char path[64];
  write_profile("provider: emu\nlink_bandwidth: 1GB/s\nlink_latency: 0\n",
                path, sizeof path);
  static const char *const timed[] = {"mode=timed", NULL};
  size_t n = 8000000; /* 8 MB at 1 GB/s: 8 ms */
  char *buf = calloc(1, n);
  double best[2] = {1e9, 1e9};
  for (int mode = 0; mode < 2; mode++) {
    void *st, *h;
    ck_assert_int_eq(emu_create(path, mode ? timed : NULL, &st), HET_OK);
    ck_assert_int_eq(het_emu_provider.alloc(st, n, &h), HET_OK);
    for (int rep = 0; rep < 3; rep++) {
      double t0 = now_s();
      ck_assert_int_eq(het_emu_provider.copy_from_host(st, h, buf, n), HET_OK);
      double dt = now_s() - t0;
      if (dt < best[mode])
        best[mode] = dt;
    }
    het_emu_provider.free(st, h);
    het_emu_provider.destroy(st);
  }
  ck_assert_msg(best[1] >= 7.9e-3 && best[1] < 40e-3,
                "timed 8 MB copy took %.2f ms, expected ~8", best[1] * 1e3);
  ck_assert_msg(best[0] < 7e-3, "fast 8 MB copy took %.2f ms", best[0] * 1e3);
  free(buf);
  unlink(path);
}
END_TEST

static Suite *emu_suite(void) {
  Suite *s = suite_create("emu");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_profile_npu);
  tcase_add_test(core, test_profile_units);
  tcase_add_test(core, test_default_profile_and_info);
  tcase_add_test(core, test_alloc_copy_round_trip);
  tcase_add_test(core, test_handles_are_not_host_pointers);
  tcase_add_test(core, test_stream_order);
  tcase_add_test(core, test_timed_copy_pacing);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_capacity);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_loop_test(errors, test_profile_malformed, 0,
                      (int)(sizeof bad_profiles / sizeof *bad_profiles));
  tcase_add_test(errors, test_profile_syntax_and_missing);
  tcase_add_test(errors, test_options);
  tcase_add_test(errors, test_fault_alloc);
  tcase_add_test(errors, test_fault_copy);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
