/* testcase.h — runs one directory in the ONNX backend-test layout
 * (model.onnx + test_data_set_N/{input,output}_K.pb) and compares outputs
 * the way onnx's runner does: rtol 1e-3, atol 1e-7 for floats (NaN equals
 * NaN), exact for integers and bools, shapes and dtypes must match.
 * Shared by `hetrt test` and the Check suites.
 */
#ifndef HET_ONNX_TESTCASE_H
#define HET_ONNX_TESTCASE_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/hetrt.h"

typedef enum het_testcase_verdict {
  HET_TESTCASE_PASS,
  HET_TESTCASE_FAIL,  /* ran, outputs differ; or the model/run failed */
  HET_TESTCASE_SKIP,  /* cannot be compared by design (see .c) */
} het_testcase_verdict;

/* Runs the case in dir with options (NULL = defaults).  *verdict gets the
 * outcome and msg (cap bytes) a one-line reason for FAIL/SKIP ("" for
 * PASS).  Returns non-OK only when dir itself is unusable (no model.onnx). */
het_status het_testcase_run(het_env *env, const char *dir,
                            const het_session_options *options,
                            het_testcase_verdict *verdict, char *msg,
                            size_t cap);

/* Compares one output against its reference as described above; on
 * mismatch writes a reason to msg and returns false. */
bool het_testcase_compare(const het_tensor *expected, const het_tensor *got,
                          double rtol, double atol, char *msg, size_t cap);

#endif
