/* test_regime.c — one partition per shape regime: a model with open dims
 * (tests/data/emu/regime_convs.onnx) split across emu (configs/devices/
 * npu.yaml) and cpu stays on the CPU for small images and moves to the
 * NPU for large ones.  A run whose shapes fall in a new power-of-two range
 * re-plans placement when the estimate gains replan_gain, later runs of
 * that range reuse the regime, outputs match a CPU-only session's, the
 * report and the trace say what happened, the options are checked, and
 * concurrent runs of mixed shapes agree with single-threaded ones.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cases.h"
#include "hetrt/hetrt.h"

#define MODEL HETRT_TEST_DATA "/emu/regime_convs.onnx"
#define NPU "devices=" HETRT_SOURCE_DIR "/configs/devices/npu.yaml"

static het_env *env;

static void env_setup(void) {
  ck_assert_int_eq(het_env_create(&env), HET_OK);
}

static void env_teardown(void) { het_env_destroy(env); }

/* kv: NULL-terminated "key=value" options after providers=emu,cpu and the
 * NPU profile. */
static het_session *open_split(const char *const *kv) {
  const char *all[16] = {"providers=emu,cpu", NPU};
  int n = 2;
  for (; kv && *kv && n < 15; kv++)
    all[n++] = *kv;
  all[n] = NULL;
  het_session *s = NULL;
  ck_assert_msg(case_open_session(env, MODEL, all, &s) == HET_OK, "%s",
                het_last_error());
  return s;
}

/* x[1,3,h,w] filled with a fixed pattern.  Caller owns. */
static het_tensor *image(int64_t h, int64_t w) {
  int64_t dims[4] = {1, 3, h, w};
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &t), HET_OK);
  float *p = het_tensor_get_data(t);
  for (int64_t i = 0; i < het_tensor_get_count(t); i++)
    p[i] = (float)(1.5 * sin(0.37 * (double)i));
  return t;
}

static het_tensor *run(het_session *s, int64_t h, int64_t w) {
  het_tensor *x = image(h, w), *y = NULL;
  const char *names[1] = {"x"};
  het_status st = het_session_run(s, names, &x, 1, NULL, 1, &y);
  ck_assert_msg(st == HET_OK, "run %lldx%lld: %s", (long long)h,
                (long long)w, het_last_error());
  het_tensor_destroy(x);
  return y;
}

static __attribute__((noinline)) char *explain(het_session *s,
                                              const char *format) {
  char *out = NULL;
  ck_assert_msg(het_session_explain(s, format, &out) == HET_OK, "%s",
                het_last_error());
  return out;
}

/* The output of the CPU-only session for an h x w image.  Caller owns. */
static het_tensor *cpu_reference(int64_t h, int64_t w) {
  static const char *const kv[] = {"providers=cpu", NULL};
  het_session *s;
  ck_assert_int_eq(case_open_session(env, MODEL, kv, &s), HET_OK);
  het_tensor *y = run(s, h, w);
  het_session_destroy(s);
  return y;
}

static int count(const char *text, const char *word) {
  int n = 0;
  size_t at = 0, len = strlen(word);
  for (const char *p; (p = strstr(text + at, word)) != NULL; n++)
    at = (size_t)(p - text) + len;
  return n;
}

/* Small images keep the creation partition (all on the CPU: unknown dims
 * count 1), a large image makes regime 1 with the convolutions on the
 * NPU, another image of the large range reuses it, a small one goes back
 * to regime 0; every output equals the CPU-only session's. */
START_TEST(test_new_range_replans) {
  het_session *s = open_split(NULL);
  ck_assert_int_eq(case_placed_on(s, "emu"), 0);
  static const int64_t sizes[][2] = {{8, 8}, {128, 128}, {160, 200},
                                     {9, 12}};
  for (int i = 0; i < CASE_COUNT(sizes); i++) {
    het_tensor *y = run(s, sizes[i][0], sizes[i][1]);
    het_tensor *want = cpu_reference(sizes[i][0], sizes[i][1]);
    case_assert_close(y, want, 1e-4, "regime run vs cpu");
    het_tensor_destroy(want);
    het_tensor_destroy(y);
  }
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "shape regimes"), "%s", text);
  ck_assert_msg(strstr(text, "regime 1: x=1x3x128x128, made by run 2"), "%s",
                text);
  ck_assert_msg(strstr(text, "c1 cpu->emu"), "%s", text);
  ck_assert_msg(strstr(text, "run 1, x=1x3x8x8: regime 0 (kept: the gain is "
                             "below replan_gain"),
                "%s", text);
  ck_assert_msg(strstr(text, "run 2, x=1x3x128x128: regime 1 (new regime"),
                "%s", text);
  /* 160x200 and 9x12 fall in ranges seen already: no new choice */
  ck_assert_int_eq(count(text, "    run "), 2);
  ck_assert_int_eq(count(text, "  regime "), 2);
  free(text);
  char *json = explain(s, "json");
  ck_assert_msg(strstr(json, "\"regimes\": [") &&
                    strstr(json, "\"regime_choices\": [") &&
                    strstr(json, "\"why\":\"new regime\""),
                "%s", json);
  free(json);
  het_session_destroy(s);
}
END_TEST

/* Planned for large images: the large range is regime 0 without a
 * trial, and small images get a CPU regime (the NPU's latency dominates
 * there). */
START_TEST(test_planned_shapes_are_regime_zero) {
  static const char *const kv[] = {"shape=x=1x3x128x128", NULL};
  het_session *s = open_split(kv);
  ck_assert_int_gt(case_placed_on(s, "emu"), 0);
  het_tensor_destroy(run(s, 130, 140));
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "regime 0: x=1x3x128x128 (shapes to plan for)"),
                "%s", text);
  ck_assert_msg(strstr(text, "no run has yet seen shapes"), "%s", text);
  free(text);
  het_tensor *y = run(s, 6, 7), *want = cpu_reference(6, 7);
  case_assert_close(y, want, 1e-4, "small regime vs cpu");
  het_tensor_destroy(y);
  het_tensor_destroy(want);
  text = explain(s, "text");
  ck_assert_msg(strstr(text, "regime 1: x=1x3x6x7, made by run 2"), "%s",
                text);
  ck_assert_msg(strstr(text, "c1 emu->cpu"), "%s", text);
  free(text);
  het_session_destroy(s);
}
END_TEST

/* replan=off keeps one partition and says nothing of regimes; max_regimes
 * 1 and replan_gain 1 keep regime 0 and say why. */
START_TEST(test_options_limit_regimes) {
  static const char *const off[] = {"replan=off", NULL};
  het_session *s = open_split(off);
  het_tensor_destroy(run(s, 128, 128));
  char *text = explain(s, "text");
  ck_assert_msg(!strstr(text, "shape regimes"), "%s", text);
  free(text);
  het_session_destroy(s);
  static const char *const one[] = {"max_regimes=1", NULL};
  s = open_split(one);
  het_tensor_destroy(run(s, 128, 128));
  text = explain(s, "text");
  ck_assert_msg(strstr(text, "regime 0 (kept: max_regimes reached"), "%s",
                text);
  free(text);
  het_session_destroy(s);
  static const char *const all[] = {"replan_gain=1", NULL};
  s = open_split(all);
  het_tensor_destroy(run(s, 128, 128));
  text = explain(s, "text");
  ck_assert_msg(strstr(text, "kept: the gain is below replan_gain"), "%s",
                text);
  ck_assert_msg(strstr(text, "estimate for a run's shapes drops by 100%"),
                "%s", text);
  free(text);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_bad_options) {
  static const struct {
    const char *key, *value, *word;
  } bad[] = {{"replan", "yes", "on or off"},
             {"replan_gain", "0", "(0, 1]"},
             {"replan_gain", "1.5", "(0, 1]"},
             {"replan_gain", "x", "fraction"},
             {"max_regimes", "0", "1..16"},
             {"max_regimes", "17", "1..16"}};
  for (int i = 0; i < CASE_COUNT(bad); i++) {
    het_session_options *o;
    ck_assert_int_eq(het_session_options_create(&o), HET_OK);
    ck_assert_int_eq(het_session_options_set(o, bad[i].key, bad[i].value),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(het_last_error(), bad[i].key) &&
                      strstr(het_last_error(), bad[i].word),
                  "%s=%s: %s", bad[i].key, bad[i].value, het_last_error());
    het_session_options_destroy(o);
  }
}
END_TEST

/* The trace marks the re-planning run and shows regime 1's runs as a
 * process of their own; the profile summary counts every regime's runs. */
START_TEST(test_trace_shows_regimes) {
  static const char *const kv[] = {"trace=true", NULL};
  het_session *s = open_split(kv);
  het_tensor_destroy(run(s, 8, 8));
  het_tensor_destroy(run(s, 128, 128));
  char path[] = "/tmp/hetrt_regime_traceXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_msg(het_session_save_trace(s, path) == HET_OK, "%s",
                het_last_error());
  FILE *f = fdopen(fd, "r");
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  unlink(path);
  ck_assert_msg(strstr(buf, "shape regime 1 for x=1x3x128x128 (new regime)"),
                "%s", buf);
  ck_assert_msg(strstr(buf, "hetrt session, shape regime 1 (x=1x3x128x128)"),
                "%s", buf);
  ck_assert_msg(strstr(buf, "\"pid\":2,\"tid\":"), "regime 1's events");
  char *summary = NULL;
  ck_assert_int_eq(het_session_get_profile_summary(s, &summary), HET_OK);
  ck_assert_msg(strstr(summary, "over 2 runs") && strstr(summary, "emu"),
                "%s", summary);
  free(summary);
  het_session_destroy(s);
}
END_TEST

typedef struct worker {
  het_session *s;
  het_tensor *want[2];
  int failures;
} worker;

static const int64_t mixed[2][2] = {{8, 8}, {128, 128}};

static void *worker_run(void *arg) {
  worker *w = arg;
  for (int k = 0; k < 12; k++) {
    int which = k & 1;
    het_tensor *x = image(mixed[which][0], mixed[which][1]), *y = NULL;
    const char *names[1] = {"x"};
    if (het_session_run(w->s, names, &x, 1, NULL, 1, &y) != HET_OK ||
        het_tensor_get_nbytes(y) != het_tensor_get_nbytes(w->want[which]) ||
        memcmp(het_tensor_get_data(y), het_tensor_get_data(w->want[which]),
               het_tensor_get_nbytes(y)) != 0)
      w->failures++;
    het_tensor_destroy(x);
    het_tensor_destroy(y);
  }
  return NULL;
}

/* Four threads run small and large images at once on a fresh session
 * (so the regime is made while others run): bit-identical to one
 * thread's outputs on a session that has both regimes. */
START_TEST(test_concurrent_mixed_shapes) {
  het_session *ref = open_split(NULL);
  het_tensor *want[2];
  for (int i = 0; i < 2; i++)
    want[i] = run(ref, mixed[i][0], mixed[i][1]);
  het_session_destroy(ref);
  het_session *s = open_split(NULL);
  worker w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.s = s, .want = {want[0], want[1]}};
    ck_assert_int_eq(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    ck_assert_int_eq(w[i].failures, 0);
  }
  char *text = explain(s, "text");
  ck_assert_int_eq(count(text, "  regime "), 2);
  free(text);
  het_session_destroy(s);
  het_tensor_destroy(want[0]);
  het_tensor_destroy(want[1]);
}
END_TEST

static Suite *regime_suite(void) {
  Suite *s = suite_create("regime");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, env_setup, env_teardown);
  tcase_set_timeout(core, 300);
  tcase_add_test(core, test_new_range_replans);
  tcase_add_test(core, test_planned_shapes_are_regime_zero);
  tcase_add_test(core, test_options_limit_regimes);
  tcase_add_test(core, test_trace_shows_regimes);
  tcase_add_test(core, test_concurrent_mixed_shapes);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_bad_options);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) { return case_run_suite(regime_suite()); }
