/* test_legacy.c — the core's defaults for providers built against ABI 1
 * and 2 (tests/common/legacy_provider.c, an out-of-tree ABI 2 provider):
 * the double-buffered staged copy through the four ABI 2 staging slots is
 * byte-exact both ways for sizes around the chunk size without touching
 * bytes past the copy; stream copies above HET_STAGED_CHUNK go staged,
 * smaller ones through the synchronous slots; copy_submit returns before a
 * slow copy ends; bad submits are refused at once; a fault in the middle
 * chunk is reported and the next copy works; a table saying ABI 1 has no
 * staging slots whatever lies past it.  Then whole sessions: the provider
 * registered with het_env_register_provider runs its share of a
 * transformer-style model next to the CPU (sequential and streams
 * executors, and as ABI 1) with the CPU-only outputs, frees every device
 * block with the session, fails one run cleanly on an injected copy fault,
 * and registration refuses tables it cannot use.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ep.h"
#include "core/status.h"
#include "hetrt/hetrt.h"
#include "common/cases.h"
#include "common/emu_helpers.h"
#include "common/legacy_provider.h"

#define CHUNK 4096
#define GUARD 64
#define MODEL HETRT_TEST_DATA "/emu/transformer_small.onnx"

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (unsigned char)(seed >> 16);
  }
}

/* A legacy instance and the per-session device the core would make for
 * it (state = the instance's, no device_open before ABI 3). */
typedef struct legacy_ctx {
  het_device dev;
  het_ep ep;
} legacy_ctx;

static void legacy_open(const het_provider_vtable *vt, const char *opt_key,
                        const char *opt_value, legacy_ctx *c) {
  memset(c, 0, sizeof *c);
  het_provider_config cfg = {.threads = 1, .n_options = opt_key ? 1 : 0,
                             .option_keys = &opt_key,
                             .option_values = &opt_value};
  ck_assert_int_eq(vt->create(&cfg, &c->ep.state), HET_OK);
  c->dev = (het_device){.vt = vt, .state = c->ep.state,
                        .kind = HET_DEVICE_EMU, .name = "legacy:0"};
  ck_assert_int_eq(vt->get_device_info(c->ep.state, &c->dev.info), HET_OK);
  c->ep.vt = vt;
  c->ep.device = &c->dev;
}

static void legacy_close(legacy_ctx *c) { c->ep.vt->destroy(c->ep.state); }

/* ---- staged copies ------------------------------------------------------- */

/* Host -> device staged, read back synchronously; device filled
 * synchronously, staged back to the host; both byte-exact, guard bytes
 * untouched. */
static void round_trip(legacy_ctx *c, size_t n, size_t chunk) {
  const het_provider_vtable *vt = c->ep.vt;
  void *st = c->ep.state, *h;
  unsigned char *src = malloc(n + GUARD), *dst = malloc(n + GUARD);
  ck_assert(src && dst);
  ck_assert_int_eq(vt->alloc(st, n, &h), HET_OK);
  fill(src, n, 7u + (unsigned)n);
  ck_assert_int_eq(het_ep_staged_copy(&c->ep, HET_COPY_TO_DEVICE, h, src, n,
                                      chunk),
                   HET_OK);
  memset(dst, 0xA5, n + GUARD);
  ck_assert_int_eq(vt->copy_to_host(st, dst, h, n), HET_OK);
  ck_assert_msg(memcmp(src, dst, n) == 0, "to device, %zu bytes", n);
  fill(src, n, 99u + (unsigned)n);
  ck_assert_int_eq(vt->copy_from_host(st, h, src, n), HET_OK);
  memset(dst, 0x5A, n + GUARD);
  ck_assert_int_eq(het_ep_staged_copy(&c->ep, HET_COPY_TO_HOST, h, dst, n,
                                      chunk),
                   HET_OK);
  ck_assert_msg(memcmp(src, dst, n) == 0, "to host, %zu bytes", n);
  for (size_t i = n; i < n + GUARD; i++)
    ck_assert_msg(dst[i] == 0x5A, "byte %zu past a %zu-byte copy written", i,
                  n);
  vt->free(st, h);
  free(src);
  free(dst);
}

static const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1,
                               2 * CHUNK, 3 * CHUNK + 5};

START_TEST(test_staged_sizes_exact) {
  legacy_ctx c;
  legacy_open(&legacy_provider_v2, NULL, NULL, &c);
  long submits = atomic_load(&legacy_counts.submits);
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    round_trip(&c, sizes[i], CHUNK);
  /* 3 * CHUNK + 5 is four chunks each way */
  ck_assert_int_ge(atomic_load(&legacy_counts.submits) - submits, 8);
  round_trip(&c, 3 * CHUNK + 5, 1); /* one-byte chunks */
  ck_assert_int_eq(atomic_load(&legacy_counts.live_blocks), 0);
  ck_assert_int_eq(atomic_load(&legacy_counts.live_host), 0);
  legacy_close(&c);
}
END_TEST

/* Copies through the core's stream wrappers: above HET_STAGED_CHUNK they
 * go staged (copy_submit), at or below it through the synchronous slots. */
START_TEST(test_stream_copies_choose_path) {
  legacy_ctx c;
  legacy_open(&legacy_provider_v2, NULL, NULL, &c);
  const size_t ns[] = {1, HET_STAGED_CHUNK, HET_STAGED_CHUNK + 5};
  for (size_t i = 0; i < 3; i++) {
    size_t n = ns[i];
    unsigned char *src = malloc(n), *dst = calloc(1, n);
    void *h;
    fill(src, n, 3u + (unsigned)i);
    ck_assert_int_eq(c.ep.vt->alloc(c.ep.state, n, &h), HET_OK);
    long submits = atomic_load(&legacy_counts.submits);
    long sync = atomic_load(&legacy_counts.sync_copies);
    ck_assert_int_eq(het_ep_copy_now(&c.ep, h, &c.dev, src, NULL, n), HET_OK);
    ck_assert_int_eq(het_ep_copy_now(&c.ep, dst, NULL, h, &c.dev, n), HET_OK);
    ck_assert_int_eq(memcmp(src, dst, n), 0);
    bool staged = n > HET_STAGED_CHUNK;
    ck_assert_int_eq(atomic_load(&legacy_counts.submits) - submits,
                     staged ? 4 : 0); /* two chunks each way */
    ck_assert_int_eq(atomic_load(&legacy_counts.sync_copies) - sync,
                     staged ? 0 : 2);
    c.ep.vt->free(c.ep.state, h);
    free(src);
    free(dst);
  }
  /* an ABI 1-2 provider cannot copy device to device */
  void *a, *b;
  ck_assert_int_eq(c.ep.vt->alloc(c.ep.state, 8, &a), HET_OK);
  ck_assert_int_eq(c.ep.vt->alloc(c.ep.state, 8, &b), HET_OK);
  ck_assert(!het_ep_can_copy(&c.ep, &c.dev, &c.dev));
  ck_assert_int_eq(het_ep_copy_now(&c.ep, b, &c.dev, a, &c.dev, 8),
                   HET_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "device to device"));
  c.ep.vt->free(c.ep.state, a);
  c.ep.vt->free(c.ep.state, b);
  legacy_close(&c);
}
END_TEST

/* 1 MB submitted with a 200 ms copy: submit returns well before the copy
 * could have finished (a synchronous submit takes >= 200 ms; the bound
 * leaves room for a sanitizer's slow memcpy on a shared core), wait takes
 * the copy's time. */
START_TEST(test_submit_is_asynchronous) {
  legacy_ctx c;
  legacy_open(&legacy_provider_v2, "copy_delay_ms", "200", &c);
  const het_provider_vtable *vt = c.ep.vt;
  void *st = c.ep.state, *h, *buf, *ticket;
  size_t n = 1000000;
  ck_assert_int_eq(vt->alloc(st, n, &h), HET_OK);
  ck_assert_int_eq(vt->alloc_host(st, n, &buf), HET_OK);
  memset(buf, 1, n);
  double t0 = now_s();
  ck_assert_int_eq(vt->copy_submit(st, HET_COPY_TO_DEVICE, h, 0, buf, n,
                                   &ticket),
                   HET_OK);
  double submitted = now_s() - t0;
  ck_assert_int_eq(vt->copy_wait(st, ticket), HET_OK);
  double done = now_s() - t0;
  ck_assert_msg(submitted < 100e-3, "submit took %.2f ms", submitted * 1e3);
  ck_assert_msg(done >= 199e-3, "200 ms copy done in %.2f ms", done * 1e3);
  unsigned char back[16];
  ck_assert_int_eq(vt->copy_to_host(st, back, h, sizeof back), HET_OK);
  for (size_t i = 0; i < sizeof back; i++)
    ck_assert_uint_eq(back[i], 1);
  vt->free_host(st, buf);
  vt->free(st, h);
  legacy_close(&c);
}
END_TEST

START_TEST(test_submit_errors) {
  legacy_ctx c;
  legacy_open(&legacy_provider_v2, NULL, NULL, &c);
  const het_provider_vtable *vt = c.ep.vt;
  void *st = c.ep.state, *h, *buf, *ticket = NULL;
  ck_assert_int_eq(vt->alloc(st, 100, &h), HET_OK);
  ck_assert_int_eq(vt->alloc_host(st, 100, &buf), HET_OK);
  ck_assert_int_eq(vt->copy_submit(st, HET_COPY_TO_HOST, h, 60, buf, 41,
                                   &ticket),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "access of 41 bytes"));
  ck_assert_int_eq(vt->copy_submit(st, HET_COPY_TO_HOST, buf, 0, buf, 1,
                                   &ticket),
                   HET_ERR_INVALID_ARGUMENT); /* a host pointer */
  ck_assert_int_eq(vt->copy_submit(st, HET_COPY_TO_HOST, h, SIZE_MAX, buf, 2,
                                   &ticket),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(ticket);
  ck_assert_int_eq(vt->copy_submit(st, HET_COPY_TO_HOST, h, 60, buf, 40,
                                   &ticket),
                   HET_OK);
  ck_assert_int_eq(vt->copy_wait(st, ticket), HET_OK);
  /* the core's staged copy refuses a zero chunk and a bad direction */
  ck_assert_int_eq(het_ep_staged_copy(&c.ep, HET_COPY_TO_HOST, h, buf, 10, 0),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_ep_staged_copy(&c.ep, (het_copy_direction)7, h, buf,
                                      10, CHUNK),
                   HET_ERR_INVALID_ARGUMENT);
  vt->free_host(st, buf);
  vt->free(st, h);
  legacy_close(&c);
}
END_TEST

/* The second of four chunks fails: the copy reports it, every ticket is
 * waited for and every staging buffer freed, and the next copy works. */
START_TEST(test_staged_fault_mid_copy) {
  legacy_ctx c;
  legacy_open(&legacy_provider_v2, "fail_copy", "2", &c);
  void *h;
  size_t n = 3 * CHUNK + 5;
  unsigned char *src = malloc(n), *dst = malloc(n);
  fill(src, n, 5u);
  ck_assert_int_eq(c.ep.vt->alloc(c.ep.state, n, &h), HET_OK);
  ck_assert_int_eq(het_ep_staged_copy(&c.ep, HET_COPY_TO_DEVICE, h, src, n,
                                      CHUNK),
                   HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "injected fault: copy #2"));
  ck_assert_int_eq(atomic_load(&legacy_counts.live_host), 0);
  ck_assert_int_eq(het_ep_staged_copy(&c.ep, HET_COPY_TO_DEVICE, h, src, n,
                                      CHUNK),
                   HET_OK);
  ck_assert_int_eq(het_ep_staged_copy(&c.ep, HET_COPY_TO_HOST, h, dst, n,
                                      CHUNK),
                   HET_OK);
  ck_assert_int_eq(memcmp(src, dst, n), 0);
  c.ep.vt->free(c.ep.state, h);
  legacy_close(&c);
  free(src);
  free(dst);
}
END_TEST

/* A table saying ABI 1 has no staging slots as far as the core can tell,
 * whatever lies past its version-1 part; ABI 2 without all four neither. */
START_TEST(test_abi1_has_no_staging) {
  het_ep e1 = {.vt = &legacy_provider_v1}, e2 = {.vt = &legacy_provider_v2};
  ck_assert(!het_ep_has_staging(&e1));
  ck_assert(het_ep_has_staging(&e2));
  het_provider_vtable v2 = legacy_provider_v2;
  v2.copy_wait = NULL;
  het_ep e3 = {.vt = &v2};
  ck_assert(!het_ep_has_staging(&e3));
  ck_assert(!het_ep_has_staging(NULL));
  ck_assert_int_eq(het_ep_staged_copy(&e1, HET_COPY_TO_DEVICE, NULL, NULL, 0,
                                      CHUNK),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert(!het_ep_is_native(&e2)); /* no ABI 3 run path */
}
END_TEST

/* ---- sessions ------------------------------------------------------------------ */

static het_status open_session(het_env *env, const char *const *kv,
                               het_session **out) {
  return case_open_session(env, MODEL, kv, out);
}

static het_status run_once(het_session *s, het_tensor **y) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x = case_pattern_input(s);
  const char *names[1] = {d.name};
  het_status st = het_session_run(s, names, &x, 1, NULL, 1, y);
  het_tensor_destroy(x);
  return st;
}

static het_tensor *cpu_reference(het_env *env) {
  static const char *const kv[] = {"providers=cpu", "optimization=none",
                                   NULL};
  het_session *s;
  het_tensor *y;
  ck_assert_msg(open_session(env, kv, &s) == HET_OK, "%s", het_last_error());
  ck_assert_msg(run_once(s, &y) == HET_OK, "%s", het_last_error());
  het_session_destroy(s);
  return y;
}

/* The legacy provider (as name) next to the CPU under executor: the
 * CPU-only outputs, twice (the second run on a warm plan), with its nodes
 * run by its run slot and every device block freed with the session. */
static void session_matches_cpu(const het_provider_vtable *vt,
                                const char *executor) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_msg(het_env_register_provider(env, vt) == HET_OK, "%s",
                het_last_error());
  het_tensor *ref = cpu_reference(env);
  char providers[64], exec[64];
  snprintf(providers, sizeof providers, "providers=%s,cpu", vt->name);
  snprintf(exec, sizeof exec, "executor=%s", executor);
  /* unfused, so MatMul, Add, Softmax... stay ops the provider claims */
  const char *const kv[] = {providers, exec, "optimization=none", NULL};
  het_session *s;
  ck_assert_msg(open_session(env, kv, &s) == HET_OK, "%s", het_last_error());
  int mine = case_placed_on(s, vt->name);
  ck_assert_int_gt(mine, 0);
  ck_assert_int_gt(case_placed_on(s, "cpu"), 0); /* Pow, ReduceMean, ... */
  for (int r = 0; r < 2; r++) {
    long nodes = atomic_load(&legacy_counts.nodes_run);
    het_tensor *y;
    ck_assert_msg(run_once(s, &y) == HET_OK, "%s", het_last_error());
    ck_assert_int_eq(atomic_load(&legacy_counts.nodes_run) - nodes, mine);
    case_assert_close(y, ref, 1e-5, "legacy+cpu vs cpu");
    het_tensor_destroy(y);
  }
  het_session_destroy(s);
  ck_assert_int_eq(atomic_load(&legacy_counts.live_blocks), 0);
  het_tensor_destroy(ref);
  het_env_destroy(env);
}

START_TEST(test_session_sequential) {
  session_matches_cpu(&legacy_provider_v2, "sequential");
}
END_TEST

START_TEST(test_session_streams) {
  session_matches_cpu(&legacy_provider_v2, "streams");
}
END_TEST

START_TEST(test_session_abi1) {
  session_matches_cpu(&legacy_provider_v1, "streams");
}
END_TEST

static long copies_so_far(void) {
  return atomic_load(&legacy_counts.sync_copies) +
         atomic_load(&legacy_counts.submits);
}

/* A copy fault fails one run with the provider's message; the next run of
 * the same session gives the right outputs.  The fault is set to the
 * second copy of the first run: session creation copies the weights
 * first, as many as a fault-free session's creation does. */
START_TEST(test_session_copy_fault) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_int_eq(het_env_register_provider(env, &legacy_provider_v2),
                   HET_OK);
  het_tensor *ref = cpu_reference(env);
  static const char *const plain[] = {"providers=legacy,cpu",
                                      "optimization=none", NULL};
  het_session *s;
  long before = copies_so_far();
  ck_assert_msg(open_session(env, plain, &s) == HET_OK, "%s",
                het_last_error());
  long at_create = copies_so_far() - before;
  het_session_destroy(s);
  ck_assert_int_gt(at_create, 0);
  char fault[64];
  snprintf(fault, sizeof fault, "legacy.fail_copy=%ld", at_create + 2);
  const char *const kv[] = {"providers=legacy,cpu", "optimization=none",
                            fault, NULL};
  ck_assert_msg(open_session(env, kv, &s) == HET_OK, "%s", het_last_error());
  het_tensor *y = NULL;
  ck_assert_int_eq(run_once(s, &y), HET_ERR_IO);
  char want[64];
  snprintf(want, sizeof want, "injected fault: copy #%ld", at_create + 2);
  ck_assert_msg(strstr(het_last_error(), want), "%s", het_last_error());
  ck_assert_ptr_null(y);
  ck_assert_msg(run_once(s, &y) == HET_OK, "%s", het_last_error());
  case_assert_close(y, ref, 1e-5, "legacy+cpu vs cpu");
  het_tensor_destroy(y);
  het_session_destroy(s);
  ck_assert_int_eq(atomic_load(&legacy_counts.live_blocks), 0);
  het_tensor_destroy(ref);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_register_errors) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_provider_vtable v = legacy_provider_v2;
  v.abi_version = 0;
  ck_assert_int_eq(het_env_register_provider(env, &v),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "ABI 0"));
  v.abi_version = HET_PROVIDER_ABI_VERSION + 1;
  ck_assert_int_eq(het_env_register_provider(env, &v),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "this build takes 1 to"));
  v = legacy_provider_v2;
  v.create = NULL;
  ck_assert_int_eq(het_env_register_provider(env, &v),
                   HET_ERR_INVALID_ARGUMENT);
  v = legacy_provider_v2;
  v.compile = NULL;
  ck_assert_int_eq(het_env_register_provider(env, &v),
                   HET_ERR_INVALID_ARGUMENT);
  v = legacy_provider_v2;
  v.run = NULL;
  ck_assert_int_eq(het_env_register_provider(env, &v),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "a run slot"));
  ck_assert_int_ne(het_env_register_provider(NULL, &legacy_provider_v2),
                   HET_OK);
  ck_assert_int_ne(het_env_register_provider(env, NULL), HET_OK);
  /* nothing was registered: "legacy" is an unknown provider */
  static const char *const kv[] = {"providers=legacy,cpu", NULL};
  het_session *s = NULL;
  ck_assert_int_ne(open_session(env, kv, &s), HET_OK);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "legacy"));
  ck_assert_ptr_null(s);
  het_env_destroy(env);
}
END_TEST

static Suite *legacy_suite(void) {
  Suite *s = suite_create("legacy");
  TCase *copies = tcase_create("copies");
  tcase_add_test(copies, test_staged_sizes_exact);
  tcase_add_test(copies, test_stream_copies_choose_path);
  tcase_add_test(copies, test_submit_is_asynchronous);
  tcase_add_test(copies, test_submit_errors);
  tcase_add_test(copies, test_staged_fault_mid_copy);
  tcase_add_test(copies, test_abi1_has_no_staging);
  suite_add_tcase(s, copies);
  TCase *sessions = tcase_create("sessions");
  tcase_set_timeout(sessions, 120);
  tcase_add_test(sessions, test_session_sequential);
  tcase_add_test(sessions, test_session_streams);
  tcase_add_test(sessions, test_session_abi1);
  tcase_add_test(sessions, test_session_copy_fault);
  tcase_add_test(sessions, test_register_errors);
  suite_add_tcase(s, sessions);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(legacy_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
