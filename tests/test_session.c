/* test_session.c — session-level partitioning through the public API:
 * placement constraints (pin, forbid, prefer, budgets), strict and
 * non-strict provider lists, the algorithm option, boundary copies, casts
 * and layout changes between cpu and emu, profile-guided plans, and the
 * placement report (het_session_explain).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetrt/hetrt.h"

#define MODEL HETRT_TEST_DATA "/emu/resnet_small.onnx"
#define NPU HETRT_SOURCE_DIR "/configs/devices/npu.yaml"

static het_env *env;

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

static het_session_options *emu_cpu_options(const char *algorithm) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", "emu,cpu"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "devices", NPU), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "algorithm", algorithm), HET_OK);
  return o;
}

/* Provider of the node named name. */
static const char *provider_of(het_session *s, const char *name) {
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    if (strcmp(p.name, name) == 0)
      return p.provider;
  }
  ck_abort_msg("no node %s", name);
  return NULL;
}

static size_t count_copies(het_session *s) {
  size_t n = 0;
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    n += strcmp(p.op_type, "Copy") == 0;
  }
  return n;
}

START_TEST(test_priority_splits_with_copies) {
  het_session_options *o = emu_cpu_options("priority");
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  /* LeakyRelu is not in the npu profile, and the optimizer fused it into
   * b2c1_conv: that Conv runs on the cpu, between emu nodes, so copies
   * appear on both sides of it, and the report says why. */
  ck_assert_str_eq(provider_of(s, "b2c1_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "stem_conv"), "emu");
  ck_assert_uint_gt(count_copies(s), 2);
  char *json;
  ck_assert_int_eq(het_session_explain(s, "json", &json), HET_OK);
  ck_assert_ptr_nonnull(strstr(json, "\"b2c1_conv\""));
  ck_assert_ptr_nonnull(strstr(json, "fused LeakyRelu not in profile"));
  het_string_destroy(json);
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_pin_and_forbid) {
  het_session_options *o = emu_cpu_options("priority");
  ck_assert_int_eq(het_session_options_pin(o, "stem_conv", "cpu"), HET_OK);
  ck_assert_int_eq(het_session_options_forbid(o, "fc", "emu"), HET_OK);
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "fc"), "cpu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_prefer_moves_cost_choice) {
  /* Under cost the small model stays on the cpu (launches and copies cost
   * more than the npu saves); a strong preference moves a conv over. */
  het_session_options *o = emu_cpu_options("cost");
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "cpu");
  het_session_destroy(s);
  ck_assert_int_eq(het_session_options_prefer(o, "b1c1_conv", "cpu", 1e5),
                   HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_cost_not_worse_than_priority) {
  het_session_options *o = emu_cpu_options("cost");
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  char *text;
  ck_assert_int_eq(het_session_explain(s, "json", &text), HET_OK);
  double cost = -1, prio = -1;
  const char *c = strstr(text, "\"cost_seconds\"");
  const char *p = strstr(text, "\"priority_seconds\"");
  ck_assert_msg(c && p, "estimates missing from %s", text);
  ck_assert_int_eq(sscanf(strchr(c, ':') + 1, "%lf", &cost), 1);
  ck_assert_int_eq(sscanf(strchr(p, ':') + 1, "%lf", &prio), 1);
  ck_assert(cost > 0 && cost <= prio);
  het_string_destroy(text);
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_non_strict_skips_unbuilt) {
  het_session_options *o;
  het_session *s = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", "cuda,cpu"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_ERR_NOT_BUILT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cuda"));
  ck_assert_int_eq(het_session_options_set(o, "strict", "false"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  char *text;
  ck_assert_int_eq(het_session_explain(s, "text", &text), HET_OK);
  ck_assert_ptr_nonnull(strstr(text, "provider 'cuda' skipped"));
  het_string_destroy(text);
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_constraint_errors) {
  het_session_options *o = emu_cpu_options("cost");
  het_session *s = NULL;
  ck_assert_int_eq(het_session_options_pin(o, "no_such_node", "cpu"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no_such_node"));
  het_session_options_destroy(o);
  o = emu_cpu_options("cost");
  ck_assert_int_eq(het_session_options_forbid(o, "fc", "tpu"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "tpu"));
  ck_assert_int_eq(het_session_options_prefer(o, "fc", "cpu", -1.0),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_options_set(o, "algorithm", "greedy"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "greedy"));
  ck_assert_int_eq(het_session_options_set(o, "emu.mode", "timed"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "npu.mode", "timed"), HET_OK);
  het_session_options_destroy(o);
  o = emu_cpu_options("cost");
  ck_assert_int_eq(het_session_options_set(o, "npu.mode", "timed"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "npu.mode"));
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_explain_formats) {
  het_session_options *o = emu_cpu_options("priority");
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  static const char *const formats[] = {"text", "json", "dot", "html"};
  for (int i = 0; i < 4; i++) {
    char *out = NULL;
    ck_assert_int_eq(het_session_explain(s, formats[i], &out), HET_OK);
    ck_assert_ptr_nonnull(strstr(out, "stem_conv"));
    het_string_destroy(out);
  }
  char *out = NULL;
  ck_assert_int_eq(het_session_explain(s, "yaml", &out),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(out);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "yaml"));
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

/* Profile-guided mode: measured times replace estimates. */
START_TEST(test_node_times_guide_cost) {
  char path[] = "/tmp/hetrt_node_times_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "# measured elsewhere\nstem_conv\tcpu\t1.0\t3\nghost\tcpu\t1\t1\n");
  fclose(f);
  het_session_options *o = emu_cpu_options("cost");
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  het_session_destroy(s);
  ck_assert_int_eq(het_session_options_set(o, "node_times", path), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "emu");
  het_session_destroy(s);
  f = fopen(path, "w");
  fprintf(f, "stem_conv\tcpu\tfast\n");
  fclose(f);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "line 1"));
  remove(path);
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_measure_and_save) {
  het_session_options *o = emu_cpu_options("priority");
  ck_assert_int_eq(het_session_options_set(o, "measure", "true"), HET_OK);
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &x), HET_OK);
  /* 3 warm-up runs, forgotten by clear_trace, then 2 counted ones */
  for (int r = 0; r < 5; r++) {
    if (r == 3)
      het_session_clear_trace(s);
    ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
    het_tensor_destroy(y);
  }
  char path[] = "/tmp/hetrt_saved_times_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(het_session_save_node_times(s, path), HET_OK);
  FILE *f = fopen(path, "r");
  char line[512];
  int lines = 0, conv_on_emu = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#')
      continue;
    lines++;
    conv_on_emu += strncmp(line, "stem_conv\temu\t", 14) == 0 &&
                   strstr(line, "\t2\n") != NULL;
  }
  fclose(f);
  remove(path);
  /* every node (6 BNs folded, 2 Relus and the LeakyRelu fused away, then
   * at level all 2 residual Adds and the 2 Relus after them taken into
   * FusedConv), no copies */
  ck_assert_int_eq(lines, 11);
  ck_assert_int_eq(conv_on_emu, 1);
  het_tensor_destroy(x);
  het_session_destroy(s);
  /* Without measure=true there is nothing to save. */
  ck_assert_int_eq(het_session_options_set(o, "measure", "false"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_int_eq(het_session_save_node_times(s, "/tmp/unused"),
                   HET_ERR_INVALID_ARGUMENT);
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

/* Runs MODEL once on the given options with a fixed input; caller owns. */
static het_tensor *run_model(het_session_options *o, const char **json) {
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &x), HET_OK);
  float *px = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    px[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
  if (json) {
    char *text;
    ck_assert_int_eq(het_session_explain(s, "json", &text), HET_OK);
    *json = text;
  }
  het_tensor_destroy(x);
  het_session_destroy(s);
  return y;
}

static double max_rel_diff(het_tensor *a, het_tensor *b) {
  const float *pa = het_tensor_get_data(a), *pb = het_tensor_get_data(b);
  double worst = 0, scale = 1e-6;
  ck_assert_int_eq(het_tensor_get_count(a), het_tensor_get_count(b));
  for (int64_t i = 0; i < het_tensor_get_count(a); i++)
    scale = fmax(scale, fabs(pa[i]));
  for (int64_t i = 0; i < het_tensor_get_count(a); i++)
    worst = fmax(worst, fabs(pa[i] - pb[i]) / scale);
  return worst;
}

/* A device that keeps float32 as float16 and rank-4 tensors in NHWC gets
 * Cast and Layout boundary nodes; results match the CPU to float16
 * precision.  NHWC alone is exact. */
START_TEST(test_cast_and_layout_boundaries) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  het_tensor *ref = run_model(o, NULL);
  het_session_options_destroy(o);

  o = emu_cpu_options("priority");
  ck_assert_int_eq(het_session_options_set(o, "devices",
                   HETRT_SOURCE_DIR "/configs/devices/npu-fp16-nhwc.yaml"), HET_OK);
  const char *json;
  het_tensor *got = run_model(o, &json);
  ck_assert_ptr_nonnull(strstr(json, "\"boundary\":\"cast\""));
  ck_assert_ptr_nonnull(strstr(json, "\"boundary\":\"layout\""));
  ck_assert_ptr_nonnull(strstr(json, "\"boundary\":\"copy\""));
  het_string_destroy((char *)json);
  double fp16_err = max_rel_diff(ref, got);
  ck_assert_msg(fp16_err < 2e-2 && fp16_err > 0, "fp16 error %g", fp16_err);
  het_tensor_destroy(got);
  het_session_options_destroy(o);

  char path[] = "/tmp/hetrt_nhwc_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "name: nhwc\nprovider: emu\npreferred_layout: NHWC\n");
  fclose(f);
  o = emu_cpu_options("priority");
  ck_assert_int_eq(het_session_options_set(o, "devices", path), HET_OK);
  got = run_model(o, &json);
  ck_assert_ptr_null(strstr(json, "\"boundary\":\"cast\""));
  ck_assert_ptr_nonnull(strstr(json, "\"boundary\":\"layout\""));
  het_string_destroy((char *)json);
  ck_assert_double_lt(max_rel_diff(ref, got), 1e-5);
  het_tensor_destroy(got);
  het_session_options_destroy(o);
  remove(path);
  het_tensor_destroy(ref);
}
END_TEST

static size_t count_substr(const char *s, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* trace=true: every node and boundary step of every run, one lane per
 * device stream, and the per-op summary. */
START_TEST(test_trace_runs) {
  het_session_options *o = emu_cpu_options("priority");
  ck_assert_int_eq(het_session_options_set(o, "trace", "true"), HET_OK);
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  size_t per_run = 0;
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    per_run += strstr(p.reason, "prepared once") == NULL;
  }
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &x), HET_OK);
  ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
  het_tensor_destroy(y);
  het_session_clear_trace(s); /* a warm-up run */
  for (int r = 0; r < 2; r++) {
    ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
    het_tensor_destroy(y);
  }
  char path[] = "/tmp/hetrt_trace_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(het_session_save_trace(s, path), HET_OK);
  FILE *f = fopen(path, "r");
  static char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = '\0';
  fclose(f);
  remove(path);
  ck_assert_ptr_nonnull(strstr(buf, "\"traceEvents\""));
  ck_assert_ptr_nonnull(strstr(buf, "\"emu compute\""));
  ck_assert_ptr_nonnull(strstr(buf, "\"copies\""));
  ck_assert_uint_eq(count_substr(buf, "\"ph\":\"X\""), 2 * per_run);
  ck_assert_uint_eq(count_substr(buf, "\"run\":1"), per_run);
  char *summary;
  ck_assert_int_eq(het_session_get_profile_summary(s, &summary), HET_OK);
  ck_assert_ptr_nonnull(strstr(summary, "over 2 runs"));
  ck_assert_ptr_nonnull(strstr(summary, "Conv"));
  ck_assert_ptr_nonnull(strstr(summary, "Copy"));
  het_string_destroy(summary);
  het_tensor_destroy(x);
  het_session_destroy(s);
  /* Without trace=true there is nothing to write. */
  ck_assert_int_eq(het_session_options_set(o, "trace", "false"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_int_eq(het_session_save_trace(s, "/tmp/unused"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "trace=true"));
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

/* executor=streams: the same results as the sequential executor, under
 * random per-op delays, and a failing kernel on one stream stops the run
 * cleanly (the session stays usable). */
START_TEST(test_streams_executor) {
  het_session_options *o = emu_cpu_options("priority");
  het_tensor *ref = run_model(o, NULL);
  ck_assert_int_eq(het_session_options_set(o, "executor", "streams"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "emu.mode", "timed"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "emu.jitter_us", "50"), HET_OK);
  het_session *s;
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y;
  ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &x), HET_OK);
  float *px = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    px[i] = (float)((i * 37) % 101) / 50.0f - 1.0f; /* as run_model */
  for (int r = 0; r < 100; r++) {
    ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
    ck_assert_int_eq(memcmp(het_tensor_get_data(y), het_tensor_get_data(ref),
                            het_tensor_get_nbytes(ref)), 0);
    het_tensor_destroy(y);
  }
  het_session_destroy(s);
  ck_assert_int_eq(het_session_options_set(o, "emu.fail_kernel", "4"), HET_OK);
  ck_assert_int_eq(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK); /* names are the session's */
  y = NULL;
  ck_assert_int_ne(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
  ck_assert_ptr_null(y);
  ck_assert_msg(strstr(het_last_error(), "injected fault"), "%s", het_last_error());
  ck_assert_int_eq(het_session_run(s, &d.name, &x, 1, NULL, 1, &y), HET_OK);
  ck_assert_int_eq(memcmp(het_tensor_get_data(y), het_tensor_get_data(ref),
                          het_tensor_get_nbytes(ref)), 0);
  het_tensor_destroy(y);
  het_session_destroy(s);
  ck_assert_int_eq(het_session_options_set(o, "executor", "async"),
                   HET_ERR_INVALID_ARGUMENT);
  het_tensor_destroy(x);
  het_tensor_destroy(ref);
  het_session_options_destroy(o);
}
END_TEST

/* A run of the soak model (x: [N, 3, H, W], all symbolic) at N x 3 x hw x hw. */
static het_status run_soak(het_session *s, int64_t n, int64_t hw) {
  int64_t dims[4] = {n, 3, hw, hw};
  het_tensor *x, *y = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x), HET_OK);
  memset(het_tensor_get_data(x), 0, het_tensor_get_nbytes(x));
  const char *name = "x";
  het_status st = het_session_run(s, &name, &x, 1, NULL, 1, &y);
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  return st;
}

/* max_memory caps the host memory of a plan: a shape whose plan needs
 * more fails with ERR_CAPACITY naming the sizes, the session stays usable;
 * bad values are refused naming the option. */
START_TEST(test_max_memory) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  static const char *const bad[] = {"", "-1", "12X", "1.5G", "99999999999G"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(het_session_options_set(o, "max_memory", bad[i]),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(het_last_error(), "max_memory"));
  }
  ck_assert_int_eq(het_session_options_set(o, "max_memory", "4M"), HET_OK);
  het_session *s;
  ck_assert_msg(het_session_create(env, HETRT_TEST_DATA "/soak/model.onnx", o,
                                   &s) == HET_OK,
                "%s", het_last_error());
  ck_assert_int_eq(run_soak(s, 1, 16), HET_OK);
  /* 16 x 8 x 128 x 128 floats per intermediate: 8 MiB each */
  ck_assert_int_eq(run_soak(s, 16, 128), HET_ERR_CAPACITY);
  ck_assert_msg(strstr(het_last_error(), "max_memory of 4194304 bytes"), "%s",
                het_last_error());
  ck_assert_int_eq(run_soak(s, 2, 16), HET_OK);
  het_session_destroy(s);
  ck_assert_int_eq(het_session_options_set(o, "max_memory", "0"), HET_OK);
  ck_assert_int_eq(het_session_create(env, HETRT_TEST_DATA "/soak/model.onnx",
                                      o, &s), HET_OK);
  ck_assert_int_eq(run_soak(s, 16, 128), HET_OK);
  het_session_destroy(s);
  /* auto (the default): the machine's memory, far above 8 MiB */
  ck_assert_int_eq(het_session_options_set(o, "max_memory", "4M"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "max_memory", "auto"), HET_OK);
  ck_assert_int_eq(het_session_create(env, HETRT_TEST_DATA "/soak/model.onnx",
                                      o, &s), HET_OK);
  ck_assert_int_eq(run_soak(s, 16, 128), HET_OK);
  het_session_destroy(s);
  het_session_options_destroy(o);
}
END_TEST

/* max_loop_iterations takes a count >= 0 (test_hostile runs the cap). */
START_TEST(test_max_loop_iterations_values) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  static const char *const bad[] = {"", "-1", "1e6", "10x",
                                    "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(het_session_options_set(o, "max_loop_iterations", bad[i]),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(het_last_error(), "max_loop_iterations"));
  }
  ck_assert_int_eq(het_session_options_set(o, "max_loop_iterations", "0"),
                   HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "max_loop_iterations", "1000"),
                   HET_OK);
  het_session_options_destroy(o);
}
END_TEST

static Suite *session_suite(void) {
  Suite *s = suite_create("session");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_priority_splits_with_copies);
  tcase_add_test(core, test_pin_and_forbid);
  tcase_add_test(core, test_prefer_moves_cost_choice);
  tcase_add_test(core, test_cost_not_worse_than_priority);
  tcase_add_test(core, test_explain_formats);
  tcase_add_test(core, test_node_times_guide_cost);
  tcase_add_test(core, test_measure_and_save);
  tcase_add_test(core, test_cast_and_layout_boundaries);
  tcase_add_test(core, test_trace_runs);
  tcase_add_test(core, test_streams_executor);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_non_strict_skips_unbuilt);
  tcase_add_test(errors, test_constraint_errors);
  tcase_add_test(errors, test_max_memory);
  tcase_add_test(errors, test_max_loop_iterations_values);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(session_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
