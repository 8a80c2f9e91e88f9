/* cases.h — shared Check helpers for the suites that run generated cases in
 * the ONNX backend-test layout: an env fixture, "this case passes", and
 * "this model fails at session creation with a given status and message".
 */
#ifndef HET_TESTS_CASES_H
#define HET_TESTS_CASES_H

#include <check.h>

#include "hetrt/hetrt.h"
#include "testcase/testcase.h"

/* The env of the running test (created by the fixture). */
extern het_env *case_env;

/* A TCase whose tests each get a fresh case_env. */
TCase *case_tcase(const char *name);

/* Runs the case in dir/name (dir ends with '/'); asserts it is usable.
 * msg (cap bytes) gets the reason for FAIL/SKIP. */
het_testcase_verdict case_run(const char *dir, const char *name, char *msg,
                              size_t cap);

/* Asserts that the case in dir/name passes. */
void case_assert_pass(const char *dir, const char *name);

/* Asserts that the case in dir/name fails (verdict FAIL) with a message
 * naming node '<name>_node' and containing each non-NULL word. */
void case_assert_fails(const char *dir, const char *name, const char *word1,
                       const char *word2);

/* Asserts that creating a session on dir/name/model.onnx fails with
 * status and a message naming node '<name>_node' and containing word. */
void case_assert_load_fails(const char *dir, const char *name,
                            het_status status, const char *word);

/* A session on the model at path with the "key=value" session options of
 * kv (NULL-terminated, or NULL); a malformed or refused option fails the
 * test, naming it.  Returns het_session_create's status. */
het_status case_open_session(het_env *env, const char *path,
                             const char *const *kv, het_session **out);

/* The model's first input, float32, filled with the fixed pattern
 * 1.5 sin(0.37 i).  Caller owns. */
het_tensor *case_pattern_input(het_session *s);

/* Model nodes (not copies) the session placed on provider. */
int case_placed_on(het_session *s, const char *provider);

/* got and want are float32 of one size and differ by at most tol
 * anywhere; the message names what is compared. */
void case_assert_close(het_tensor *got, het_tensor *want, double tol,
                       const char *what);

/* Elements of a static array. */
#define CASE_COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

/* Adds to s a case_tcase named name running test for _i in [0, n); returns
 * it for further tests. */
TCase *case_loop_tcase(Suite *s, const char *name, const TTest *test, int n);

/* Runs the suite in the usual Check way; returns the process exit code. */
int case_run_suite(Suite *s);

#endif
