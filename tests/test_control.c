/* test_control.c — control flow as plan steps: the bodies of If, Loop and
 * Scan (tests/data/control/gen_control.py: Convs, MatMuls, activations
 * inside them, an If nested in an If) are partitioned like any graph, so
 * with emu,cpu their nodes run on the emu; every data set matches a
 * CPU-only session within 1e-5 and the numpy reference within the backend
 * tolerance, on the sequential and the streams plan; placements name the
 * body nodes by their path with provider and reason; a repeated signature
 * plans nothing new, bodies included.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan.h"
#include "hetrt/hetrt.h"
#include "onnx/loader.h"
#include "testcase/testcase.h"
#include "common/opt_helpers.h"

#define CONTROL HETRT_TEST_DATA "/control/"
#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"
#define MAX_IO 4

static het_env *env;

static const char *const cases[] = {"if_conv", "loop_conv", "scan_rnn",
                                    "nested_if"};
/* A body node of each case that must run on the emu. */
static const char *const body_nodes[] = {
    "If_0/then_branch/then_conv", "Loop_0/body/body_conv",
    "Scan_0/body/scan_mx",
    "If_outer/then_branch/If_inner/then_branch/inner_conv_a"};

static het_session *open_session(const char *name, bool emu,
                                 const char *executor) {
  char path[512];
  snprintf(path, sizeof path, CONTROL "%s/model.onnx", name);
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers",
                                           emu ? "emu,cpu" : "cpu"),
                   HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "executor", executor), HET_OK);
  if (emu) {
    ck_assert_int_eq(het_session_options_set(o, "devices",
                                             DEVICES "npu.yaml"),
                     HET_OK);
    ck_assert_int_eq(het_session_options_set(o, "algorithm", "priority"),
                     HET_OK);
  }
  het_session *s = NULL;
  het_status st = het_session_create(env, path, o, &s);
  het_session_options_destroy(o);
  ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  return s;
}

/* Tensors test_data_set_<set>/<kind>_*.pb of case name; their count. */
static int load_set(const char *name, int set, const char *kind,
                    het_tensor **t, char **names) {
  char dir[512];
  snprintf(dir, sizeof dir, CONTROL "%s", name);
  return opt_load_tensors(dir, set, kind, t, names, MAX_IO);
}

static void run(het_session *s, het_tensor **in, char **names, int n_in,
                het_tensor **out) {
  size_t n_out = het_session_get_output_count(s);
  ck_assert_msg(het_session_run(s, (const char *const *)names, in, (size_t)n_in,
                                NULL, n_out, out) == HET_OK,
                "%s", het_last_error());
}

static void assert_close(const het_tensor *got, const het_tensor *want,
                         double tol, const char *what) {
  ck_assert_int_eq(het_tensor_get_count(got), het_tensor_get_count(want));
  int64_t dg[HET_MAX_RANK], dw[HET_MAX_RANK];
  int rg = het_tensor_get_dims(got, dg, HET_MAX_RANK);
  int rw = het_tensor_get_dims(want, dw, HET_MAX_RANK);
  ck_assert_int_eq(rg, rw);
  ck_assert_mem_eq(dg, dw, (size_t)rg * sizeof *dg);
  const float *a = het_tensor_get_data((het_tensor *)got);
  const float *b = het_tensor_get_data((het_tensor *)want);
  double worst = 0;
  for (int64_t i = 0; i < het_tensor_get_count(got); i++)
    worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
  ck_assert_msg(worst <= tol, "%s: max |diff| = %g", what, worst);
}

/* The body node named `name` is placed on provider, with a reason. */
static void assert_placed(het_session *s, const char *name,
                          const char *provider) {
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    if (strcmp(p.name, name) != 0)
      continue;
    ck_assert_msg(strcmp(p.provider, provider) == 0, "%s on %s", name,
                  p.provider);
    ck_assert_ptr_nonnull(p.reason);
    ck_assert(p.reason[0] != '\0');
    return;
  }
  ck_abort_msg("no node '%s' in the placement", name);
}

/* _i: case (bits 0-1), streams plan (bit 2). */
START_TEST(test_bodies_on_emu_match_cpu) {
  const char *name = cases[_i & 3];
  const char *executor = _i & 4 ? "streams" : "sequential";
  het_session *cpu = open_session(name, false, "sequential");
  het_session *emu = open_session(name, true, executor);
  assert_placed(emu, body_nodes[_i & 3], "emu");
  for (int set = 0;; set++) {
    het_tensor *in[MAX_IO], *ref[MAX_IO], *want[MAX_IO], *got[MAX_IO];
    char *names[MAX_IO], *ref_names[MAX_IO];
    int n_in = load_set(name, set, "input", in, names);
    if (n_in == 0)
      break;
    int n_ref = load_set(name, set, "output", ref, ref_names);
    ck_assert_int_eq((size_t)n_ref, het_session_get_output_count(emu));
    run(cpu, in, names, n_in, want);
    for (int rep = 0; rep < 2; rep++) {
      long builds = het_plan_builds();
      run(emu, in, names, n_in, got);
      if (rep == 1 && set == 0) /* the signature (and its bodies') planned */
        ck_assert_int_eq(het_plan_builds() - builds, 0);
      for (int o = 0; o < n_ref; o++) {
        char msg[256];
        assert_close(got[o], want[o], 1e-5, "emu+cpu vs cpu");
        ck_assert_msg(het_testcase_compare(ref[o], got[o], 1e-3, 1e-5, msg,
                                           sizeof msg),
                      "%s set %d output %d vs numpy: %s", name, set, o, msg);
        het_tensor_destroy(got[o]);
      }
    }
    opt_free_tensors(want, NULL, n_ref);
    opt_free_tensors(ref, ref_names, n_ref);
    opt_free_tensors(in, names, n_in);
  }
  het_session_destroy(emu);
  het_session_destroy(cpu);
}
END_TEST

/* The report lists the body nodes with provider and reason (JSON). */
START_TEST(test_report_lists_body_nodes) {
  het_session *s = open_session("nested_if", true, "sequential");
  char *json = NULL;
  ck_assert_int_eq(het_session_explain(s, "json", &json), HET_OK);
  ck_assert_ptr_nonnull(strstr(
      json, "\"If_outer/then_branch/If_inner/else_branch/inner_conv_b\""));
  ck_assert_ptr_nonnull(strstr(json, "control flow: the host runs it"));
  ck_assert_ptr_nonnull(strstr(json, "emu 'npu' runs Conv"));
  het_string_destroy(json);
  het_session_destroy(s);
}
END_TEST

/* A Loop with a trip count of 0 gives its inputs back and an empty scan
 * output; a negative count is no trip either. */
START_TEST(test_loop_zero_trips) {
  het_session *s = open_session("loop_conv", true, "sequential");
  het_tensor *in[MAX_IO], *out[2];
  char *names[MAX_IO];
  int n_in = load_set("loop_conv", 0, "input", in, names);
  ck_assert_int_eq(n_in, 2);
  *(int64_t *)het_tensor_get_data(in[1]) = 0;
  run(s, in, names, n_in, out);
  assert_close(out[0], in[0], 0, "state after no trip");
  ck_assert_int_eq(het_tensor_get_count(out[1]), 0);
  het_tensor_destroy(out[0]);
  het_tensor_destroy(out[1]);
  opt_free_tensors(in, names, n_in);
  het_session_destroy(s);
}
END_TEST

/* A body reading a name no enclosing graph defines fails at creation,
 * naming the node, the body and the name. */
START_TEST(test_undefined_capture_named) {
  char path[512];
  snprintf(path, sizeof path, CONTROL "if_conv/model.onnx");
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(het_read_file(path, 1 << 24, &buf, &len), HET_OK);
  /* the then branch's read of the outer weight W1 (nodes come before the
   * initializers in the file) now names W9, which nothing defines */
  size_t at = 0;
  while (at + 2 <= len && !(buf[at] == 'W' && buf[at + 1] == '1'))
    at++;
  ck_assert_uint_lt(at + 2, len);
  buf[at + 1] = '9';
  het_session *s = NULL;
  het_status st = het_session_create_from_memory(env, buf, len, NULL, &s);
  free(buf);
  ck_assert_int_ne(st, HET_OK);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(het_last_error(), "W9"), "%s", het_last_error());
}
END_TEST

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

static Suite *control_suite(void) {
  Suite *s = suite_create("control");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);
  tcase_add_loop_test(core, test_bodies_on_emu_match_cpu, 0, 8);
  tcase_add_test(core, test_report_lists_body_nodes);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, setup, teardown);
  tcase_add_test(limits, test_loop_zero_trips);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_undefined_capture_named);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(control_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
