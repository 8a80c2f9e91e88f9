/* test_emu.c — the emulated accelerator's device model: profile parsing
 * (good profiles and malformed ones, whose messages name file, line and
 * key), the device and instance levels (device facts from device_open,
 * instance options, two instances sharing one device's memory), the
 * device's own memory space (round trips at interior addresses, capacity,
 * addresses that are not host pointers), allocation and copy fault
 * injection, streams (FIFO order, a failure skipping what follows until
 * synchronize, events ordering two streams, host functions), and timed
 * mode (copies paced to the link, engines shared by streams: two copies
 * in one direction serialize, opposite directions overlap).  Graph runs on
 * the emu are in test_emu_run.c, sessions in test_emu_e2e.c.
 */
#include <check.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/ep.h"
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

START_TEST(test_device_facts) {
  emu_ctx e;
  ck_assert_int_eq(emu_open(NULL, NULL, &e), HET_OK);
  ck_assert(!e.dev.info.host_memory);
  ck_assert_uint_gt(e.dev.info.memory_capacity, 0);
  ck_assert(e.dev.info.peak_flops_f32 > 0 && e.dev.info.link_bandwidth > 0);
  ck_assert_str_eq(e.dev.name, "emu:emu");
  emu_close(&e);
  ck_assert_int_eq(emu_open(DEVICES "npu.yaml", NULL, &e), HET_OK);
  ck_assert_uint_eq(e.dev.info.memory_capacity, (size_t)512 << 20);
  ck_assert_double_eq_tol(e.dev.info.link_latency, 20e-6, 1e-12);
  ck_assert_str_eq(e.dev.name, "emu:npu");
  int count = 0;
  ck_assert_int_eq(het_emu_provider.device_count(DEVICES "npu.yaml", &count),
                   HET_OK);
  ck_assert_int_eq(count, 1);
  emu_close(&e);
  /* a profile gives one device; asking for another names the index */
  void *ds = (void *)0x1;
  het_device_info info;
  char name[32];
  ck_assert_int_eq(het_emu_provider.device_open(1, NULL, &ds, &info, name,
                                                sizeof name),
                   HET_ERR_NO_DEVICE);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no device 1"));
  ck_assert_ptr_eq(ds, (void *)0x1);
  /* an instance needs its device */
  het_provider_config cfg = {.threads = 1};
  void *st = NULL;
  ck_assert_int_eq(het_emu_provider.create(&cfg, &st), HET_ERR_INTERNAL);
  ck_assert_ptr_null(st);
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
  /* opening a device from it fails the same way, leaving nothing open */
  emu_ctx e;
  ck_assert_int_eq(emu_open(path, NULL, &e), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), b->why));
  ck_assert_ptr_null(e.dev.state);
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
  emu_ctx e;
  static const char *const unknown[] = {"speed=3", NULL};
  ck_assert_int_eq(emu_open(NULL, unknown, &e), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'speed'"));
  static const char *const mode[] = {"mode=slow", NULL};
  ck_assert_int_eq(emu_open(NULL, mode, &e), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "mode=slow"));
  static const char *const count[] = {"fail_kernel=-1", NULL};
  ck_assert_int_eq(emu_open(NULL, count, &e), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "fail_kernel"));
  static const char *const jitter[] = {"jitter_us=x", NULL};
  ck_assert_int_eq(emu_open(NULL, jitter, &e), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "jitter_us=x"));
  static const char *const good[] = {"mode=timed", "jitter_us=5",
                                     "fail_alloc=0", NULL};
  ck_assert_int_eq(emu_open(NULL, good, &e), HET_OK);
  ck_assert_int_eq(((het_emu_state *)e.ep.state)->mode, HET_EMU_TIMED);
  ck_assert_uint_eq(((het_emu_state *)e.ep.state)->jitter_us, 5);
  emu_close(&e);
}
END_TEST

/* ---- memory ---------------------------------------------------------------- */

START_TEST(test_alloc_copy_round_trip) {
  emu_ctx e;
  ck_assert_int_eq(emu_open(NULL, NULL, &e), HET_OK);
  enum { N = 100003 };
  unsigned char *src = malloc(N), *dst = calloc(1, N), patch[100];
  for (int i = 0; i < N; i++)
    src[i] = (unsigned char)(i * 7 + 3);
  void *h;
  ck_assert_int_eq(het_device_alloc(&e.dev, N, &h), HET_OK);
  ck_assert_int_eq(emu_put(&e, h, src, N), HET_OK);
  ck_assert_int_eq(emu_get(&e, dst, h, N), HET_OK);
  ck_assert_mem_eq(src, dst, N);
  /* an address inside the block names those bytes: [1000, 1100) rewritten
   * through h + 1000, and read back through h + 1050 */
  memset(patch, 0xEE, sizeof patch);
  ck_assert_int_eq(emu_put(&e, (char *)h + 1000, patch, sizeof patch),
                   HET_OK);
  ck_assert_int_eq(emu_get(&e, dst, h, N), HET_OK);
  ck_assert_mem_eq(dst, src, 1000);
  ck_assert_mem_eq(dst + 1000, patch, sizeof patch);
  ck_assert_mem_eq(dst + 1100, src + 1100, N - 1100);
  unsigned char two[2];
  ck_assert_int_eq(emu_get(&e, two, (char *)h + 1099, 2), HET_OK);
  ck_assert_uint_eq(two[0], 0xEE);
  ck_assert_uint_eq(two[1], src[1100]);
  /* device to device, inside one device */
  void *h2;
  ck_assert_int_eq(het_device_alloc(&e.dev, N, &h2), HET_OK);
  ck_assert_int_eq(het_ep_copy_now(&e.ep, h2, &e.dev, h, &e.dev, N), HET_OK);
  memset(dst, 0, N);
  ck_assert_int_eq(emu_get(&e, dst, h2, N), HET_OK);
  ck_assert_mem_eq(dst + 1000, patch, sizeof patch);
  het_device_free(&e.dev, h2);
  /* an access past the block is refused, not performed */
  ck_assert_int_eq(emu_get(&e, dst, h, N + 1), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "runs past"));
  ck_assert_int_eq(emu_get(&e, dst, (char *)h + N - 10, 11),
                   HET_ERR_INVALID_ARGUMENT);
  het_device_free(&e.dev, h);
  /* a freed address no longer resolves; addresses are not reused */
  void *h3;
  ck_assert_int_eq(het_device_alloc(&e.dev, 16, &h3), HET_OK);
  ck_assert_ptr_ne(h, h3);
  ck_assert_int_eq(emu_get(&e, dst, h, 16), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "not an address of a live"));
  /* a host pointer is not a device address */
  ck_assert_int_eq(emu_get(&e, dst, src, 16), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "host pointer"));
  het_device_free(&e.dev, h3);
  ck_assert_uint_eq(emu_used(&e), 0);
  free(src);
  free(dst);
  emu_close(&e);
}
END_TEST

/* Two instances (two sessions) on one device share its memory; another
 * device's memory is not theirs to copy. */
START_TEST(test_instances_share_device) {
  emu_ctx e, other;
  ck_assert_int_eq(emu_open(NULL, NULL, &e), HET_OK);
  ck_assert_int_eq(emu_open(NULL, NULL, &other), HET_OK);
  het_ep second;
  ck_assert_int_eq(emu_add_instance(&e, NULL, &second), HET_OK);
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  void *h;
  ck_assert_int_eq(het_device_alloc(&e.dev, sizeof x, &h), HET_OK);
  ck_assert_int_eq(emu_put(&e, h, x, sizeof x), HET_OK);
  ck_assert_int_eq(het_ep_copy_now(&second, y, NULL, h, &e.dev, sizeof y),
                   HET_OK);
  ck_assert_mem_eq(x, y, sizeof x);
  ck_assert(het_ep_can_copy(&second, &e.dev, NULL));
  ck_assert(het_ep_can_copy(&second, &e.dev, &e.dev));
  ck_assert(!het_ep_can_copy(&second, &other.dev, NULL));
  ck_assert(!het_ep_can_copy(&second, &e.dev, &other.dev));
  void *ho;
  ck_assert_int_eq(het_device_alloc(&other.dev, sizeof x, &ho), HET_OK);
  ck_assert_int_eq(het_ep_copy_now(&second, ho, &other.dev, h, &e.dev,
                                   sizeof x),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cannot copy"));
  /* each device's memory is its own: the other's address is not live here */
  ck_assert_int_eq(emu_get(&e, y, ho, sizeof y), HET_ERR_INVALID_ARGUMENT);
  het_device_free(&other.dev, ho);
  het_device_free(&e.dev, h);
  het_emu_provider.destroy(second.state);
  emu_close(&other);
  emu_close(&e);
}
END_TEST

START_TEST(test_capacity) {
  emu_ctx e;
  void *a, *b;
  ck_assert_int_eq(emu_open(DEVICES "tiny.yaml", NULL, &e), HET_OK);
  ck_assert_int_eq(het_device_alloc(&e.dev, 10000, &a), HET_OK);
  ck_assert_int_eq(het_device_alloc(&e.dev, 10000, &b), HET_ERR_CAPACITY);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, "'tiny'") && strstr(msg, "10000 bytes") &&
                    strstr(msg, "16384"),
                "message: %s", msg);
  het_device_free(&e.dev, a);
  ck_assert_int_eq(het_device_alloc(&e.dev, 10000, &b), HET_OK);
  het_device_free(&e.dev, b);
  emu_close(&e);
}
END_TEST

START_TEST(test_addresses_are_not_host_pointers) {
  emu_ctx e;
  void *h;
  ck_assert_int_eq(emu_open(NULL, NULL, &e), HET_OK);
  ck_assert_int_eq(het_device_alloc(&e.dev, 4096, &h), HET_OK);
  ck_assert(het_emu_handle_is_tagged(h));
  ck_assert(het_emu_handle_is_tagged((char *)h + 100));
  /* nothing is mapped at the address */
  long ps = sysconf(_SC_PAGESIZE);
  unsigned char vec[1];
  void *page = (void *)((uintptr_t)h & ~(uintptr_t)(ps - 1));
  errno = 0;
  ck_assert_int_eq(mincore(page, (size_t)ps, vec), -1);
  ck_assert_int_eq(errno, ENOMEM);
  int local = 0;
  void *mine = (void *)((uintptr_t)&local & ~(uintptr_t)(ps - 1));
  ck_assert_int_eq(mincore(mine, (size_t)ps, vec), 0); /* the probe works */
  /* and reading through it kills the reader (ThreadSanitizer checks the
   * read first, and its own check is what faults) */
#ifndef __SANITIZE_THREAD__
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
                "reading an emu address as memory succeeded");
#endif
  het_device_free(&e.dev, h);
  emu_close(&e);
}
END_TEST

/* ---- faults ----------------------------------------------------------------- */

/* fail_alloc=N counts the device's allocations from the instance's
 * creation: N ahead of the count then, whoever allocates. */
START_TEST(test_fault_alloc) {
  emu_ctx e;
  void *h[4];
  static const char *const opts[] = {"fail_alloc=2", NULL};
  ck_assert_int_eq(emu_open(NULL, opts, &e), HET_OK);
  ck_assert_int_eq(het_device_alloc(&e.dev, 64, &h[0]), HET_OK);
  void *untouched = (void *)0x1;
  h[1] = untouched;
  ck_assert_int_eq(het_device_alloc(&e.dev, 64, &h[1]), HET_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_eq(h[1], untouched);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "emu: injected fault:"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "allocation #2"));
  ck_assert_int_eq(het_device_alloc(&e.dev, 64, &h[1]), HET_OK);
  /* a second session on the device, created after three allocations */
  het_ep second;
  static const char *const next[] = {"fail_alloc=1", NULL};
  ck_assert_int_eq(emu_add_instance(&e, next, &second), HET_OK);
  ck_assert_int_eq(het_device_alloc(&e.dev, 64, &h[2]), HET_ERR_OUT_OF_MEMORY);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "allocation #4"));
  ck_assert_int_eq(het_device_alloc(&e.dev, 64, &h[2]), HET_OK);
  for (int i = 0; i < 3; i++)
    het_device_free(&e.dev, h[i]);
  het_emu_provider.destroy(second.state);
  emu_close(&e);
}
END_TEST

START_TEST(test_fault_copy) {
  emu_ctx e;
  void *h;
  static const char *const opts[] = {"fail_copy=1", NULL};
  ck_assert_int_eq(emu_open(NULL, opts, &e), HET_OK);
  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  ck_assert_int_eq(het_device_alloc(&e.dev, sizeof x, &h), HET_OK);
  ck_assert_int_eq(emu_put(&e, h, x, sizeof x), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "emu: injected fault: copy #1"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "host to device"));
  ck_assert_int_eq(emu_put(&e, h, x, sizeof x), HET_OK);
  ck_assert_int_eq(emu_get(&e, y, h, sizeof y), HET_OK);
  ck_assert_mem_eq(x, y, sizeof x);
  het_device_free(&e.dev, h);
  emu_close(&e);
}
END_TEST

/* ---- streams and events ------------------------------------------------------ */

typedef struct order_log {
  int ids[8];
  int n; /* only the stream's thread appends */
} order_log;

typedef struct order_job {
  int id;
  order_log *log;
} order_job;

static void order_fn(void *arg) {
  order_job *j = arg;
  struct timespec t = {0, (3 - j->id) * 2000000L}; /* earlier jobs slower */
  nanosleep(&t, NULL);
  j->log->ids[j->log->n++] = j->id;
}

/* Work on one stream runs in order, off the enqueueing thread; a failure
 * skips what follows, is reported once by synchronize (its message on the
 * waiting thread) and cleared. */
START_TEST(test_stream_order_and_failure) {
  emu_ctx e;
  static const char *const opts[] = {"fail_copy=2", NULL};
  ck_assert_int_eq(emu_open(NULL, opts, &e), HET_OK);
  het_stream s;
  ck_assert_int_eq(het_stream_init(&s, &e.ep, 0, "test"), HET_OK);
  ck_assert_ptr_nonnull(s.handle);
  order_log log = {.n = 0};
  order_job jobs[3];
  for (int i = 0; i < 3; i++) {
    jobs[i] = (order_job){i, &log};
    ck_assert_int_eq(het_stream_host_func(&s, order_fn, &jobs[i]), HET_OK);
  }
  ck_assert_int_eq(het_stream_synchronize(&s), HET_OK);
  ck_assert_int_eq(log.n, 3);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(log.ids[i], i);

  float x[4] = {1, 2, 3, 4}, y[4] = {0};
  void *h;
  ck_assert_int_eq(het_device_alloc(&e.dev, sizeof x, &h), HET_OK);
  order_job after = {7, &log};
  ck_assert_int_eq(het_stream_copy(&s, h, &e.dev, x, NULL, sizeof x), HET_OK);
  ck_assert_int_eq(het_stream_copy(&s, y, NULL, h, &e.dev, sizeof y), HET_OK);
  ck_assert_int_eq(het_stream_host_func(&s, order_fn, &after), HET_OK);
  ck_assert_int_eq(het_stream_synchronize(&s), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "injected fault: copy #2"));
  ck_assert_int_eq(log.n, 3); /* skipped after the failure */
  /* cleared: the stream works again */
  ck_assert_int_eq(het_stream_copy(&s, y, NULL, h, &e.dev, sizeof y), HET_OK);
  ck_assert_int_eq(het_stream_host_func(&s, order_fn, &after), HET_OK);
  ck_assert_int_eq(het_stream_synchronize(&s), HET_OK);
  ck_assert_mem_eq(x, y, sizeof x);
  ck_assert_int_eq(log.n, 4);
  ck_assert_int_eq(log.ids[3], 7);
  het_stream_deinit(&s);
  het_device_free(&e.dev, h);
  emu_close(&e);
}
END_TEST

typedef struct gate {
  atomic_int open, value, seen;
} gate;

static void gate_hold(void *arg) { /* waits until the test opens the gate */
  gate *g = arg;
  struct timespec t = {0, 200000L};
  while (!atomic_load(&g->open))
    nanosleep(&t, NULL);
  atomic_store(&g->value, 1);
}

static void gate_look(void *arg) {
  gate *g = arg;
  atomic_store(&g->seen, atomic_load(&g->value) + 1); /* 2: after hold */
}

/* An event recorded on one stream orders another: of the same emu, and of
 * the host (a core stream's event). */
START_TEST(test_events_order_streams) {
  emu_ctx e;
  ck_assert_int_eq(emu_open(NULL, NULL, &e), HET_OK);
  for (int host_side = 0; host_side < 2; host_side++) {
    het_stream a, b;
    ck_assert_int_eq(het_stream_init(&a, host_side ? NULL : &e.ep, 0, "a"),
                     HET_OK);
    ck_assert_int_eq(het_stream_init(&b, &e.ep, 0, "b"), HET_OK);
    het_event ev;
    ck_assert_int_eq(het_event_init(&ev, a.ep), HET_OK);
    gate g;
    atomic_init(&g.open, 0);
    atomic_init(&g.value, 0);
    atomic_init(&g.seen, 0);
    ck_assert_int_eq(het_stream_host_func(&a, gate_hold, &g), HET_OK);
    ck_assert_int_eq(het_event_record(&ev, &a), HET_OK);
    ck_assert_int_eq(het_stream_wait(&b, &ev), HET_OK);
    ck_assert_int_eq(het_stream_host_func(&b, gate_look, &g), HET_OK);
    if (!host_side) {
      bool done = true;
      ck_assert_int_eq(e.ep.vt->event_query(e.ep.state, ev.handle, &done),
                       HET_OK);
      ck_assert(!done);
    }
    struct timespec t = {0, 5000000L};
    nanosleep(&t, NULL);
    ck_assert_int_eq(atomic_load(&g.seen), 0); /* b is held by the event */
    atomic_store(&g.open, 1);
    ck_assert_int_eq(het_stream_synchronize(&b), HET_OK);
    ck_assert_int_eq(atomic_load(&g.seen), 2);
    ck_assert_int_eq(het_event_synchronize(&ev), HET_OK);
    if (!host_side) {
      bool done = false;
      ck_assert_int_eq(e.ep.vt->event_query(e.ep.state, ev.handle, &done),
                       HET_OK);
      ck_assert(done);
    }
    het_event_deinit(&ev);
    het_stream_deinit(&a);
    het_stream_deinit(&b);
  }
  emu_close(&e);
}
END_TEST

/* event_synchronize reports a failure of work before the event. */
START_TEST(test_event_reports_failure) {
  emu_ctx e;
  static const char *const opts[] = {"fail_copy=1", NULL};
  ck_assert_int_eq(emu_open(NULL, opts, &e), HET_OK);
  het_stream s;
  ck_assert_int_eq(het_stream_init(&s, &e.ep, 0, "s"), HET_OK);
  het_event ev;
  ck_assert_int_eq(het_event_init(&ev, &e.ep), HET_OK);
  float x[2] = {1, 2};
  void *h;
  ck_assert_int_eq(het_device_alloc(&e.dev, sizeof x, &h), HET_OK);
  ck_assert_int_eq(het_stream_copy(&s, h, &e.dev, x, NULL, sizeof x), HET_OK);
  ck_assert_int_eq(het_event_record(&ev, &s), HET_OK);
  ck_assert_int_eq(het_event_synchronize(&ev), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "copy #1"));
  ck_assert_int_eq(het_stream_synchronize(&s), HET_ERR_IO);
  ck_assert_int_eq(het_stream_synchronize(&s), HET_OK);
  het_event_deinit(&ev);
  het_stream_deinit(&s);
  het_device_free(&e.dev, h);
  emu_close(&e);
}
END_TEST

/* ---- timed mode -------------------------------------------------------------- */

START_TEST(test_timed_copy_pacing) {
  char path[64];
  write_profile("provider: emu\nlink_bandwidth: 125MB/s\nlink_latency: 0\n",
                path, sizeof path);
  static const char *const timed[] = {"mode=timed", NULL};
  size_t n = 1000000; /* 1 MB at 125 MB/s: 8 ms */
  char *buf = calloc(1, n);
  double best[2] = {1e9, 1e9};
  for (int mode = 0; mode < 2; mode++) {
    emu_ctx e;
    void *h;
    ck_assert_int_eq(emu_open(path, mode ? timed : NULL, &e), HET_OK);
    ck_assert_int_eq(het_device_alloc(&e.dev, n, &h), HET_OK);
    for (int rep = 0; rep < 3; rep++) {
      double t0 = now_s();
      ck_assert_int_eq(emu_put(&e, h, buf, n), HET_OK);
      double dt = now_s() - t0;
      if (dt < best[mode])
        best[mode] = dt;
    }
    het_device_free(&e.dev, h);
    emu_close(&e);
  }
  ck_assert_msg(best[1] >= 7.9e-3 && best[1] < 40e-3,
                "timed 1 MB copy took %.2f ms, expected ~8", best[1] * 1e3);
  ck_assert_msg(best[0] < 7e-3, "fast 1 MB copy took %.2f ms", best[0] * 1e3);
  free(buf);
  unlink(path);
}
END_TEST

/* Two streams: copies in the same direction share the copy-in engine
 * (serialized, ~2 x 8 ms); opposite directions take one engine each and
 * overlap (~8 ms). */
START_TEST(test_timed_engines) {
  char path[64];
  write_profile("provider: emu\nlink_bandwidth: 125MB/s\nlink_latency: 0\n",
                path, sizeof path);
  static const char *const timed[] = {"mode=timed", NULL};
  emu_ctx e;
  ck_assert_int_eq(emu_open(path, timed, &e), HET_OK);
  size_t n = 1000000; /* 8 ms each at 125 MB/s */
  char *host[2] = {calloc(1, n), calloc(1, n)};
  void *dev[2];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(het_device_alloc(&e.dev, n, &dev[i]), HET_OK);
  het_stream s[2];
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(het_stream_init(&s[i], &e.ep, 0, "copy"), HET_OK);
  double best[2] = {1e9, 1e9}; /* same direction, opposite directions */
  for (int rep = 0; rep < 3; rep++)
    for (int opposite = 0; opposite < 2; opposite++) {
      double t0 = now_s();
      ck_assert_int_eq(het_stream_copy(&s[0], dev[0], &e.dev, host[0], NULL,
                                       n),
                       HET_OK);
      if (opposite)
        ck_assert_int_eq(het_stream_copy(&s[1], host[1], NULL, dev[1],
                                         &e.dev, n),
                         HET_OK);
      else
        ck_assert_int_eq(het_stream_copy(&s[1], dev[1], &e.dev, host[1],
                                         NULL, n),
                         HET_OK);
      for (int i = 0; i < 2; i++)
        ck_assert_int_eq(het_stream_synchronize(&s[i]), HET_OK);
      double dt = now_s() - t0;
      if (dt < best[opposite])
        best[opposite] = dt;
    }
  ck_assert_msg(best[0] >= 15.8e-3, "two copies in: %.2f ms, expected ~16",
                best[0] * 1e3);
  ck_assert_msg(best[1] >= 7.9e-3 && best[1] < 14e-3,
                "a copy in and a copy out: %.2f ms, expected ~8",
                best[1] * 1e3);
  for (int i = 0; i < 2; i++) {
    het_stream_deinit(&s[i]);
    het_device_free(&e.dev, dev[i]);
    free(host[i]);
  }
  emu_close(&e);
  unlink(path);
}
END_TEST

static Suite *emu_suite(void) {
  Suite *s = suite_create("emu");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_profile_npu);
  tcase_add_test(core, test_profile_units);
  tcase_add_test(core, test_device_facts);
  tcase_add_test(core, test_alloc_copy_round_trip);
  tcase_add_test(core, test_instances_share_device);
  tcase_add_test(core, test_addresses_are_not_host_pointers);
  tcase_add_test(core, test_stream_order_and_failure);
  tcase_add_test(core, test_events_order_streams);
  tcase_add_test(core, test_timed_copy_pacing);
  tcase_add_test(core, test_timed_engines);
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
  tcase_add_test(errors, test_event_reports_failure);
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
