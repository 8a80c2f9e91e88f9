/* cases.c — the helpers declared in cases.h. */
#include "common/cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


het_env *case_env;

static void case_setup(void) {
  ck_assert_int_eq(het_env_create(&case_env), HET_OK);
}

static void case_teardown(void) {
  het_env_destroy(case_env);
  case_env = NULL;
}

TCase *case_tcase(const char *name) {
  TCase *tc = tcase_create(name);
  tcase_add_checked_fixture(tc, case_setup, case_teardown);
  return tc;
}

het_testcase_verdict case_run(const char *dir, const char *name, char *msg,
                              size_t cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s", dir, name);
  het_testcase_verdict v = HET_TESTCASE_SKIP;
  het_status st = het_testcase_run(case_env, path, NULL, &v, msg, cap);
  ck_assert_msg(st == HET_OK, "%s: case unusable: %s", name, het_last_error());
  return v;
}

TCase *case_loop_tcase(Suite *s, const char *name, const TTest *test,
                       int n) {
  TCase *tc = case_tcase(name);
  tcase_add_loop_test(tc, test, 0, n);
  suite_add_tcase(s, tc);
  return tc;
}

void case_assert_pass(const char *dir, const char *name) {
  char msg[512] = "";
  het_testcase_verdict v = case_run(dir, name, msg, sizeof msg);
  ck_assert_msg(v == HET_TESTCASE_PASS, "%s: %s", name, msg);
}

void case_assert_fails(const char *dir, const char *name, const char *word1,
                       const char *word2) {
  char msg[512] = "", node[160];
  het_testcase_verdict v = case_run(dir, name, msg, sizeof msg);
  ck_assert_msg(v == HET_TESTCASE_FAIL, "%s: expected FAIL, got %d (%s)", name,
                (int)v, msg);
  snprintf(node, sizeof node, "'%s_node'", name);
  const char *words[3] = {node, word1, word2};
  for (int i = 0; i < 3; i++)
    ck_assert_msg(!words[i] || strstr(msg, words[i]),
                  "%s: message lacks '%s': %s", name, words[i], msg);
}

void case_assert_load_fails(const char *dir, const char *name,
                            het_status status, const char *word) {
  char path[1024], node[160];
  snprintf(path, sizeof path, "%s%s/model.onnx", dir, name);
  snprintf(node, sizeof node, "'%s_node'", name);
  het_session *s = NULL;
  het_status st = het_session_create(case_env, path, NULL, &s);
  ck_assert_msg(st == status, "%s: expected status %s, got %s (%s)", name,
                het_status_str(status), het_status_str(st), het_last_error());
  ck_assert_ptr_null(s);
  const char *msg = het_last_error();
  const char *words[2] = {node, word};
  for (int i = 0; i < 2; i++)
    ck_assert_msg(!words[i] || strstr(msg, words[i]),
                  "%s: message lacks '%s': %s", name, words[i], msg);
}

int case_run_suite(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

het_status case_open_session(het_env *env, const char *path,
                             const char *const *kv, het_session **out) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  for (int i = 0; kv && kv[i]; i++) {
    char key[128];
    const char *eq = strchr(kv[i], '=');
    ck_assert_msg(eq != NULL, "option '%s' has no '='", kv[i]);
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv[i]), kv[i]);
    ck_assert_msg(het_session_options_set(o, key, eq + 1) == HET_OK, "%s: %s",
                  kv[i], het_last_error());
  }
  het_status st = het_session_create(env, path, o, out);
  het_session_options_destroy(o);
  return st;
}

het_tensor *case_pattern_input(het_session *s) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d.dims, d.rank, &x),
                   HET_OK);
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    p[i] = (float)sin(0.37 * (double)i) * 1.5f;
  return x;
}

int case_placed_on(het_session *s, const char *provider) {
  int n = 0;
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    n += strcmp(p.provider, provider) == 0 && strcmp(p.op_type, "Copy") != 0;
  }
  return n;
}

void case_assert_close(het_tensor *got, het_tensor *want, double tol,
                       const char *what) {
  ck_assert_uint_eq(het_tensor_get_nbytes(got), het_tensor_get_nbytes(want));
  const float *a = het_tensor_get_data(got), *b = het_tensor_get_data(want);
  double worst = 0;
  int64_t at = 0;
  for (int64_t i = 0; i < het_tensor_get_count(got); i++)
    if (fabs((double)a[i] - (double)b[i]) > worst) {
      worst = fabs((double)a[i] - (double)b[i]);
      at = i;
    }
  ck_assert_msg(worst <= tol, "%s: max |got - want| = %g at element %lld",
                what, worst, (long long)at);
}
