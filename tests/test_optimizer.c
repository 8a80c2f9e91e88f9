/* test_optimizer.c — Check suites for the graph optimizer (src/optimizer):
 * for each model in tests/data/optimizer (made by gen_optimizer.py) the
 * optimized graph must have the expected node and op counts, keep its
 * output names, and compute what the unoptimized graph computes (rtol
 * 1e-5, atol 1e-5) and what the numpy/torch reference says; sessions with the
 * "optimization" option at every level must pass each case.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/ir.h"
#include "core/status.h"
#include "executor/run.h"
#include "hetrt/hetrt.h"
#include "onnx/loader.h"
#include "onnx/testcase.h"
#include "optimizer/optimizer.h"
#include "providers/cpu/cpu.h"

#define DATA HETRT_TEST_DATA "/optimizer/"
#define MAX_IO 8

typedef struct opt_count {
  const char *op;
  int count;
} opt_count;

typedef struct opt_case {
  const char *dir;
  int level;
  int nodes;           /* node count after optimizing */
  opt_count ops[6];    /* op counts after optimizing (op NULL ends) */
} opt_case;

static const opt_case k_cases[] = {
    {"identity_chain", HET_OPT_BASIC, 3, {{"Identity", 0}, {"Relu", 1}}},
    {"identity_passthrough", HET_OPT_EXTENDED, 2, {{"Identity", 2}}},
    {"dropout", HET_OPT_BASIC, 2, {{"Dropout", 1}, {"Relu", 1}}},
    {"dropout_opset7", HET_OPT_BASIC, 1, {{"Dropout", 0}, {"Abs", 1}}},
    {"const_chain", HET_OPT_BASIC, 1,
     {{"Constant", 0}, {"ConstantOfShape", 0}, {"Range", 0}, {"Neg", 0}}},
    {"shape_dynamic", HET_OPT_EXTENDED, 5,
     {{"Shape", 1}, {"ReduceProd", 0}, {"Reshape", 1}}},
    {"bn_fold", HET_OPT_EXTENDED, 1, {{"BatchNormalization", 0}}},
    {"bn_fold", HET_OPT_BASIC, 2, {{"BatchNormalization", 1}}},
    {"bn_shared", HET_OPT_EXTENDED, 3, {{"BatchNormalization", 1}}},
    {"bn_chain", HET_OPT_EXTENDED, 1,
     {{"BatchNormalization", 0}, {"Conv", 1}, {"Relu", 0}}},
    {"if_outer", HET_OPT_EXTENDED, 2,
     {{"If", 1}, {"Mul", 0}, {"Identity", 0}, {"Xor", 1}}},
    {"cnn_bn", HET_OPT_EXTENDED, 4, /* BNs folded, Relus fused into Convs */
     {{"BatchNormalization", 0}, {"Shape", 0}, {"Gather", 0}, {"Concat", 0},
      {"Conv", 2}, {"Relu", 0}}},
    {"cnn_bn", HET_OPT_BASIC, 8,
     {{"BatchNormalization", 2}, {"Shape", 0}, {"Unsqueeze", 0}}},
    {"conv_clip", HET_OPT_EXTENDED, 2, /* gen_conv_clip.py */
     {{"Clip", 0}, {"Relu", 0}, {"Conv", 2}}},
    {"conv_clip", HET_OPT_BASIC, 4, {{"Clip", 1}, {"Relu", 1}}},
    {"fold_large", HET_OPT_EXTENDED, 3,
     {{"ConstantOfShape", 1}, {"ReduceSum", 1}}},
    /* gen_resnet_block.py: both residual Adds go into FusedConv, the Relu
     * after the first one with them */
    {"resnet_block", HET_OPT_ALL, 10,
     {{"FusedConv", 2}, {"Conv", 3}, {"Add", 0}, {"Relu", 0}, {"Clip", 0}}},
    /* gen_conv_acts.py: LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh
     * each taken over by its Conv (hetrt_act) */
    {"conv_acts", HET_OPT_EXTENDED, 5,
     {{"Conv", 5}, {"LeakyRelu", 0}, {"HardSigmoid", 0}, {"Sigmoid", 0}}},
    {"resnet_block", HET_OPT_EXTENDED, 13,
     {{"FusedConv", 0}, {"Conv", 5}, {"Add", 2}, {"Relu", 1}, {"Clip", 0}}},
};

/* ---- helpers ---- */

static het_graph *load_graph(const char *dir, int level,
                             het_optimize_stats *stats) {
  char path[512];
  het_graph *g = NULL;
  snprintf(path, sizeof path, DATA "%s/model.onnx", dir);
  ck_assert_msg(het_onnx_load_file(path, &g) == HET_OK, "%s: %s", path,
                het_last_error());
  ck_assert_msg(het_graph_infer_shapes(g) == HET_OK, "%s", het_last_error());
  het_status st = het_optimize(g, level, stats);
  ck_assert_msg(st == HET_OK, "%s: %s", dir, het_last_error());
  return g;
}

static int count_op(const het_graph *g, const char *op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    n += strcmp(g->nodes[i].op_type, op) == 0;
  return n;
}

/* Reads test_data_set_<set>/<kind>_*.pb; returns the count (0 = no set). */
static int load_tensors(const char *dir, int set, const char *kind,
                        het_tensor **t, char **names) {
  int n = 0;
  for (; n < MAX_IO; n++) {
    char path[512];
    uint8_t *buf;
    size_t len;
    snprintf(path, sizeof path, DATA "%s/test_data_set_%d/%s_%d.pb", dir, set,
             kind, n);
    if (het_read_file(path, 1 << 26, &buf, &len) != HET_OK)
      break;
    het_status st = het_onnx_tensor_decode(buf, len, path, &t[n], &names[n]);
    free(buf);
    ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  }
  return n;
}

static void free_tensors(het_tensor **t, char **names, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(t[i]);
    if (names)
      free(names[i]);
  }
}

/* Runs g on the CPU kernels directly (no session): outputs in g->outputs
 * order, caller owns. */
static void run_graph(het_graph *g, het_tensor **in, char **names, int n_in,
                      het_tensor **out) {
  int *uses = malloc(((size_t)g->n_values + 1) * sizeof *uses);
  ck_assert_ptr_nonnull(uses);
  for (int v = 0; v < g->n_values; v++)
    uses[v] = -1;
  het_run_ctx ctx;
  ck_assert_int_eq(het_run_ctx_init(&ctx, g, uses, NULL), HET_OK);
  for (int i = 0; i < n_in; i++) {
    int v = het_graph_find_value(g, names[i]);
    ck_assert_msg(v >= 0, "input %s not in graph", names[i]);
    ctx.values[v] = in[i];
  }
  void *compiled = NULL;
  ck_assert_msg(het_cpu_graph_compile(g, &compiled) == HET_OK, "%s",
                het_last_error());
  ck_assert_msg(het_cpu_graph_run(compiled, 1, &ctx) == HET_OK, "%s",
                het_last_error());
  ck_assert_int_eq(het_run_take_outputs(&ctx, g->outputs,
                                        (size_t)g->n_outputs, out),
                   HET_OK);
  het_cpu_graph_destroy(compiled);
  het_run_ctx_deinit(&ctx);
  free(uses);
}

static void compare_all(const char *what, het_tensor **want, het_tensor **got,
                        int n, double rtol, double atol) {
  for (int i = 0; i < n; i++) {
    char msg[256];
    ck_assert_msg(het_testcase_compare(want[i], got[i], rtol, atol, msg,
                                       sizeof msg),
                  "%s output %d: %s", what, i, msg);
  }
}

/* Every data set: optimized == unoptimized (rtol 1e-5) and == reference. */
static void check_numerics(const char *dir, het_graph *g0, het_graph *g1) {
  for (int set = 0;; set++) {
    het_tensor *in[MAX_IO], *ref[MAX_IO], *o0[MAX_IO], *o1[MAX_IO];
    char *names[MAX_IO], *ref_names[MAX_IO];
    int n_in = load_tensors(dir, set, "input", in, names);
    int n_ref = load_tensors(dir, set, "output", ref, ref_names);
    if (n_ref == 0) {
      ck_assert_msg(set > 0, "%s: no test data", dir);
      return;
    }
    ck_assert_int_eq(n_ref, g0->n_outputs);
    run_graph(g0, in, names, n_in, o0);
    run_graph(g1, in, names, n_in, o1);
    /* atol: folding BN into weights reorders rounding in conv sums that
     * cancel, so tiny outputs can differ by more than rtol alone allows. */
    compare_all("optimized vs unoptimized", o0, o1, n_ref, 1e-5, 1e-5);
    compare_all("optimized vs reference", ref, o1, n_ref, 1e-4, 1e-5);
    free_tensors(o0, NULL, n_ref);
    free_tensors(o1, NULL, n_ref);
    free_tensors(in, names, n_in);
    free_tensors(ref, ref_names, n_ref);
  }
}

/* ---- core ---- */

START_TEST(test_case_counts_and_numerics) {
  const opt_case *c = &k_cases[_i];
  het_optimize_stats st;
  het_graph *g0 = load_graph(c->dir, HET_OPT_NONE, NULL);
  het_graph *g1 = load_graph(c->dir, c->level, &st);
  ck_assert_int_eq(st.nodes_before, g0->n_nodes);
  ck_assert_msg(g1->n_nodes == c->nodes, "%s level %d: %d nodes, want %d",
                c->dir, c->level, g1->n_nodes, c->nodes);
  ck_assert_int_eq(st.nodes_after, g1->n_nodes);
  for (int k = 0; k < 6 && c->ops[k].op; k++)
    ck_assert_msg(count_op(g1, c->ops[k].op) == c->ops[k].count,
                  "%s: %d %s nodes, want %d", c->dir,
                  count_op(g1, c->ops[k].op), c->ops[k].op, c->ops[k].count);
  ck_assert_int_eq(g1->n_outputs, g0->n_outputs);
  for (int i = 0; i < g0->n_outputs; i++)
    ck_assert_str_eq(g1->values[g1->outputs[i]].name,
                     g0->values[g0->outputs[i]].name);
  ck_assert_int_eq(het_graph_validate(g1, NULL), HET_OK);
  check_numerics(c->dir, g0, g1);
  het_graph_destroy(g0);
  het_graph_destroy(g1);
}
END_TEST

START_TEST(test_stats) {
  het_optimize_stats st;
  het_graph *g = load_graph("cnn_bn", HET_OPT_EXTENDED, &st);
  ck_assert_int_eq(st.batchnorms_fused, 2);
  ck_assert_int_ge(st.shapes_folded, 1);
  ck_assert_int_ge(st.nodes_folded, 6); /* Shape..Concat + Constants */
  ck_assert_int_ge(st.initializers_dropped, 1);
  het_graph_destroy(g);
  g = load_graph("identity_chain", HET_OPT_BASIC, &st);
  ck_assert_int_eq(st.identities_removed, 6);
  het_graph_destroy(g);
  g = load_graph("const_chain", HET_OPT_BASIC, &st);
  ck_assert_int_eq(st.dead_removed, 1);
  het_graph_destroy(g);
  g = load_graph("resnet_block", HET_OPT_ALL, &st);
  ck_assert_int_eq(st.conv_adds_fused, 2);
  ck_assert_int_eq(st.activations_fused, 3); /* relu1, clip3, relu2 */
  het_graph_destroy(g);
}
END_TEST

/* Folded weights replace the old ones: nothing reads W any more. */
START_TEST(test_bn_weights_replaced) {
  het_graph *g = load_graph("bn_fold", HET_OPT_EXTENDED, NULL);
  int w = het_graph_find_value(g, "W");
  ck_assert_int_ge(w, 0);
  ck_assert_ptr_null(g->values[w].initializer);
  const het_node *conv = &g->nodes[0];
  ck_assert_str_eq(conv->op_type, "Conv");
  ck_assert_int_eq(conv->n_inputs, 3);
  ck_assert_ptr_nonnull(g->values[conv->inputs[2]].initializer);
  ck_assert_str_eq(g->values[conv->outputs[0]].name, "Y");
  ck_assert_int_eq(g->values[conv->outputs[0]].producer, 0);
  het_graph_destroy(g);
}
END_TEST

static void session_case(het_env *env, const char *dir, const char *level) {
  char path[512], msg[512];
  het_session_options *o;
  het_testcase_verdict v;
  snprintf(path, sizeof path, DATA "%s", dir);
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "optimization", level), HET_OK);
  ck_assert_int_eq(het_testcase_run(env, path, o, &v, msg, sizeof msg),
                   HET_OK);
  ck_assert_msg(v == HET_TESTCASE_PASS, "%s (optimization=%s): %s", dir,
                level, msg);
  het_session_options_destroy(o);
}

START_TEST(test_sessions_by_level) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *levels[] = {"none", "basic", "extended", "all"};
  for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++)
    for (int l = 0; l < 4; l++)
      session_case(env, k_cases[c].dir, levels[l]);
  het_env_destroy(env);
}
END_TEST

/* The session applies the optimizer by default (extended). */
START_TEST(test_session_default_optimizes) {
  het_env *env;
  het_session *s;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_int_eq(het_session_create(env, DATA "cnn_bn/model.onnx", NULL, &s),
                   HET_OK);
  ck_assert_uint_eq(het_session_get_node_count(s), 4);
  het_session_destroy(s);
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "optimization", "none"), HET_OK);
  ck_assert_int_eq(het_session_create(env, DATA "cnn_bn/model.onnx", o, &s),
                   HET_OK);
  ck_assert_uint_eq(het_session_get_node_count(s), 17);
  het_session_destroy(s);
  het_session_options_destroy(o);
  het_env_destroy(env);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_level_none_is_identity) {
  het_optimize_stats st;
  het_graph *g = load_graph("cnn_bn", HET_OPT_NONE, &st);
  ck_assert_int_eq(g->n_nodes, 17);
  ck_assert_int_eq(st.nodes_before, 17);
  ck_assert_int_eq(st.nodes_after, 17);
  ck_assert_int_eq(st.rounds, 0);
  het_graph_destroy(g);
}
END_TEST

/* A second pass finds nothing left to do. */
START_TEST(test_idempotent) {
  for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
    het_optimize_stats st;
    het_graph *g = load_graph(k_cases[c].dir, k_cases[c].level, NULL);
    int n = g->n_nodes;
    ck_assert_int_eq(het_optimize(g, k_cases[c].level, &st), HET_OK);
    ck_assert_msg(g->n_nodes == n && st.rounds == 1,
                  "%s: second pass changed %d -> %d nodes in %d rounds",
                  k_cases[c].dir, n, g->n_nodes, st.rounds);
    het_graph_destroy(g);
  }
}
END_TEST

/* Levels above extended act as extended. */
START_TEST(test_level_clamped) {
  het_graph *g = load_graph("bn_fold", 99, NULL);
  ck_assert_int_eq(count_op(g, "BatchNormalization"), 0);
  het_graph_destroy(g);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_unvalidated_graph) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  ck_assert_int_eq(het_optimize(g, HET_OPT_BASIC, NULL), HET_ERR_INTERNAL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "not validated"));
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_bad_option_value) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "optimization", "fast"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "optimization"));
  het_session_options_destroy(o);
}
END_TEST

static Suite *optimizer_suite(void) {
  Suite *s = suite_create("optimizer");
  TCase *core = tcase_create("core");
  tcase_add_loop_test(core, test_case_counts_and_numerics, 0,
                      (int)(sizeof k_cases / sizeof k_cases[0]));
  tcase_add_test(core, test_stats);
  tcase_add_test(core, test_bn_weights_replaced);
  tcase_add_test(core, test_sessions_by_level);
  tcase_add_test(core, test_session_default_optimizes);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_level_none_is_identity);
  tcase_add_test(limits, test_idempotent);
  tcase_add_test(limits, test_level_clamped);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_unvalidated_graph);
  tcase_add_test(errors, test_bad_option_value);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(optimizer_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
