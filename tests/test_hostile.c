/* test_hostile.c — models that ask for absurd tensors
 * (tests/data/hostile/gen_hostile.py): each fails with a clean status
 * whose message names what asked (the node, or the output that cannot be
 * allocated) at session creation or at the run, never crashes; a failed
 * run can be retried with the same answer, and the env goes on serving
 * other sessions.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"

#define DIR HETRT_TEST_DATA "/hostile/"

static const struct {
  const char *model;
  het_status status;  /* of creation or of the run */
  const char *words[2];
} k_cases[] = {
    {"constantofshape_2e40", HET_ERR_OUT_OF_MEMORY,
     {"output 'y'", "cannot allocate 4398046511104 bytes"}},
    {"expand_2e42", HET_ERR_OUT_OF_MEMORY,
     {"output 'y'", "cannot allocate"}},
    {"expand_empty_2e64", HET_ERR_OUT_OF_MEMORY,
     {"output 'y'", "element count overflows"}},
    {"expand_negative", HET_ERR_SHAPE,
     {"Expand", "shape[1] is -9 (must be >= 0)"}},
    {"tile_2e64", HET_ERR_OUT_OF_MEMORY,
     {"output 'y'", "element count overflows"}},
    {"range_1e30", HET_ERR_SHAPE,
     {"node 'Range_0'", "would make 1e+30 elements (more than 2^48)"}},
};

static het_status run_once(het_session *s) {
  size_t n_in = het_session_get_input_count(s);
  het_tensor *x = NULL, *y = NULL;
  const char *names[1];
  if (n_in) {
    het_value_desc d;
    ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
    ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d.dims, d.rank, &x),
                     HET_OK);
    memset(het_tensor_get_data(x), 0, het_tensor_get_nbytes(x));
    names[0] = d.name;
  }
  het_status st = het_session_run(s, names, &x, n_in, NULL, 1, &y);
  ck_assert_ptr_null(y);
  het_tensor_destroy(x);
  return st;
}

static void expect_words(const char *model, const char *const *words) {
  for (int w = 0; w < 2; w++)
    ck_assert_msg(strstr(het_last_error(), words[w]), "%s: wanted '%s' in: %s",
                  model, words[w], het_last_error());
}

START_TEST(test_absurd_sizes) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  char path[512];
  snprintf(path, sizeof path, DIR "%s.onnx", k_cases[_i].model);
  het_session *s = NULL;
  het_status st = het_session_create(env, path, NULL, &s);
  if (st != HET_OK) { /* refused at load */
    ck_assert_int_eq(st, k_cases[_i].status);
    expect_words(k_cases[_i].model, k_cases[_i].words);
    ck_assert_ptr_null(s);
  } else {
    for (int r = 0; r < 2; r++) { /* and again: the same answer */
      ck_assert_int_eq(run_once(s), k_cases[_i].status);
      expect_words(k_cases[_i].model, k_cases[_i].words);
    }
    het_session_destroy(s);
  }
  /* the env still serves a sane model */
  ck_assert_int_eq(het_session_create(env, HETRT_TEST_DATA
                                      "/emu/transformer_small.onnx",
                                      NULL, &s),
                   HET_OK);
  het_session_destroy(s);
  het_env_destroy(env);
}
END_TEST

int main(void) {
  Suite *s = suite_create("hostile");
  TCase *tc = tcase_create("core");
  tcase_add_loop_test(tc, test_absurd_sizes, 0,
                      (int)(sizeof k_cases / sizeof *k_cases));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
