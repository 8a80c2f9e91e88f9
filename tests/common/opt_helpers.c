/* opt_helpers.c — the helpers declared in opt_helpers.h. */
#include "opt_helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "onnx/loader.h"
#include "testcase/testcase.h"
#include "common/ref_run.h"

#define MAX_IO 16

het_graph *opt_load_model(const char *path, int level,
                          het_optimize_stats *stats) {
  het_graph *g = NULL;
  ck_assert_msg(het_onnx_load_file(path, &g) == HET_OK, "%s: %s", path,
                het_last_error());
  ck_assert_msg(het_graph_infer_shapes(g) == HET_OK, "%s", het_last_error());
  het_status st = het_optimize(g, level, stats);
  ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  return g;
}

het_graph *opt_load_graph(const char *dir, int level,
                          het_optimize_stats *stats) {
  char path[512];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  return opt_load_model(path, level, stats);
}

int opt_count_op(const het_graph *g, const char *op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    n += strcmp(g->nodes[i].op_type, op) == 0;
  return n;
}

int opt_load_tensors(const char *dir, int set, const char *kind,
                     het_tensor **t, char **names, int max) {
  int n = 0;
  for (; n < max; n++) {
    char path[512];
    uint8_t *buf;
    size_t len;
    snprintf(path, sizeof path, "%s/test_data_set_%d/%s_%d.pb", dir, set,
             kind, n);
    if (het_read_file(path, 1 << 26, &buf, &len) != HET_OK)
      break;
    het_status st = het_onnx_tensor_decode(buf, len, path, &t[n], &names[n]);
    free(buf);
    ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  }
  het_error_clear();
  return n;
}

void opt_free_tensors(het_tensor **t, char **names, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(t[i]);
    if (names)
      free(names[i]);
  }
}

/* Runs g on the kernels directly (no session, so no layout pass and no
 * memory plan): outputs in g->outputs order, caller owns. */
static void run_graph(het_graph *g, het_tensor **in, char **names, int n_in,
                      het_tensor **out) {
  ck_assert_msg(ref_run_graph(g, in, names, n_in, out) == HET_OK, "%s",
                het_last_error());
}

static void compare_all(const char *dir, const char *what, het_tensor **want,
                        het_tensor **got, int n, double rtol, double atol) {
  for (int i = 0; i < n; i++) {
    char msg[256];
    ck_assert_msg(het_testcase_compare(want[i], got[i], rtol, atol, msg,
                                       sizeof msg),
                  "%s: %s output %d: %s", dir, what, i, msg);
  }
}

bool opt_check_numerics(const char *dir, int set, het_graph *g0,
                        het_graph *g1) {
  het_tensor *in[MAX_IO], *ref[MAX_IO], *o0[MAX_IO], *o1[MAX_IO];
  char *names[MAX_IO], *ref_names[MAX_IO];
  int n_in = opt_load_tensors(dir, set, "input", in, names, MAX_IO);
  int n_ref = opt_load_tensors(dir, set, "output", ref, ref_names, MAX_IO);
  if (n_ref == 0) {
    opt_free_tensors(in, names, n_in);
    return false;
  }
  ck_assert_int_eq(n_ref, g0->n_outputs);
  run_graph(g0, in, names, n_in, o0);
  run_graph(g1, in, names, n_in, o1);
  /* atol: folding BN into weights reorders rounding in conv sums that
   * cancel, so tiny outputs can differ by more than rtol alone allows. */
  compare_all(dir, "optimized vs unoptimized", o0, o1, n_ref, 1e-5, 1e-5);
  compare_all(dir, "optimized vs reference", ref, o1, n_ref, 1e-4, 1e-5);
  opt_free_tensors(o0, NULL, n_ref);
  opt_free_tensors(o1, NULL, n_ref);
  opt_free_tensors(in, names, n_in);
  opt_free_tensors(ref, ref_names, n_ref);
  return true;
}

void opt_session_case_threads(het_env *env, const char *dir,
                              const char *level, const char *cpu_layout,
                              const char *conv_algo, int threads) {
  char msg[512];
  het_session_options *o;
  het_testcase_verdict v;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "optimization", level), HET_OK);
  if (cpu_layout)
    ck_assert_int_eq(het_session_options_set(o, "cpu.layout", cpu_layout),
                     HET_OK);
  if (conv_algo)
    ck_assert_int_eq(het_session_options_set(o, "cpu.conv_algo", conv_algo),
                     HET_OK);
  char nt[16];
  snprintf(nt, sizeof nt, "%d", threads);
  if (threads > 0)
    ck_assert_int_eq(het_session_options_set(o, "threads", nt), HET_OK);
  ck_assert_int_eq(het_testcase_run(env, dir, o, &v, msg, sizeof msg),
                   HET_OK);
  ck_assert_msg(v == HET_TESTCASE_PASS, "%s (optimization=%s, cpu.layout=%s, "
                "cpu.conv_algo=%s, threads %d): %s",
                dir, level, cpu_layout ? cpu_layout : "default",
                conv_algo ? conv_algo : "default", threads, msg);
  het_session_options_destroy(o);
}

void opt_session_case(het_env *env, const char *dir, const char *level,
                      const char *cpu_layout, const char *conv_algo) {
  opt_session_case_threads(env, dir, level, cpu_layout, conv_algo, 0);
}
