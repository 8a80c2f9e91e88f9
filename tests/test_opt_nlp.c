/* test_opt_nlp.c — Check suites for the transformer fusions of
 * src/optimizer/opt_nlp*.c and their CPU kernels (kernels/nlp*.c): for each
 * model in tests/data/nlp (made by gen_nlp.py) the graph optimized at level
 * all must hold the expected hetrt/ai.onnx op counts and stats, and compute
 * what the unoptimized graph computes (rtol 1e-5, atol 1e-5) and what the
 * float64 numpy/torch reference says; the *_keep cases must not be fused.
 * Sessions at optimization none and all must pass every case as well.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/ir.h"
#include "hetrt/hetrt.h"
#include "testcase/testcase.h"
#include "optimizer/optimizer.h"

#include "common/opt_helpers.h"

#define DATA HETRT_TEST_DATA "/nlp/"

typedef struct nlp_count {
  const char *op;
  int count;
} nlp_count;

typedef struct nlp_case {
  const char *dir;
  int gelus, layernorms, attentions, matmul_adds; /* stats */
  nlp_count ops[6]; /* op counts after optimizing (op NULL ends) */
} nlp_case;

static const nlp_case k_cases[] = {
    {"gelu_torch", 1, 0, 0, 0, {{"Gelu", 1}, {"Erf", 0}, {"Mul", 0}}},
    {"gelu_hf", 1, 0, 0, 0, {{"Gelu", 1}, {"Erf", 0}, {"Mul", 0}}},
    /* Erf's output is a graph output: nothing fused */
    {"gelu_shared_keep", 0, 0, 0, 0, {{"Gelu", 0}, {"Erf", 1}, {"Mul", 2}}},
    /* x / 1.5 is not x / sqrt(2) */
    {"gelu_const_keep", 0, 0, 0, 0, {{"Gelu", 0}, {"Erf", 1}}},
    {"layernorm", 0, 1, 0, 0,
     {{"LayerNorm", 1}, {"ReduceMean", 0}, {"Mul", 0}, {"Add", 0}}},
    {"layernorm_plain", 0, 1, 0, 0, {{"LayerNorm", 1}, {"Div", 0}}},
    /* reduces axis 1, not the last one */
    {"layernorm_axis_keep", 0, 0, 0, 0, {{"LayerNorm", 0}, {"ReduceMean", 2}}},
    /* exponent 3 */
    {"layernorm_pow_keep", 0, 0, 0, 0, {{"LayerNorm", 0}, {"Pow", 1}}},
    {"attention", 0, 0, 1, 0,
     {{"Attention", 1}, {"Softmax", 0}, {"MatMul", 0}, {"Div", 0}}},
    {"attention_mask", 0, 0, 1, 0,
     {{"Attention", 1}, {"Softmax", 0}, {"Add", 0}, {"Mul", 0}}},
    /* open dims: the mask [S, T] fits the scores [B, S, T] by name */
    {"attention_mask_dyn", 0, 0, 1, 0,
     {{"Attention", 1}, {"Softmax", 0}, {"Add", 0}, {"Mul", 0}}},
    /* a mask [S, U]: U may differ from T (then the Add would broadcast
     * the scores up or fail), so it stays as written */
    {"attention_mask_dyn_keep", 0, 0, 0, 0,
     {{"Attention", 0}, {"Softmax", 1}, {"Add", 1}}},
    /* the probabilities are a graph output */
    {"attention_shared_keep", 0, 0, 0, 0,
     {{"Attention", 0}, {"Softmax", 1}, {"MatMul", 2}}},
    /* torch's [S,B,D] layout: the four Transposes go too (layout 1) */
    {"attention_sbd", 0, 0, 1, 0,
     {{"Attention", 1}, {"Transpose", 0}, {"Softmax", 0}, {"MatMul", 0}}},
    {"matmul_add", 0, 0, 0, 1, {{"FusedMatMul", 1}, {"MatMul", 0}, {"Add", 0}}},
    {"matmul_add_gelu", 1, 0, 0, 1,
     {{"FusedMatMul", 1}, {"Gelu", 0}, {"Erf", 0}, {"Add", 0}}},
    /* the bias is a graph input, not a constant */
    {"matmul_add_input_keep", 0, 0, 0, 0,
     {{"FusedMatMul", 0}, {"MatMul", 1}, {"Add", 1}}},
    /* torch TransformerEncoderLayer(32, 4, 64, gelu): in-proj, linear1
     * (+Gelu) and linear2 fused, out-proj stays a Gemm; the Attention reads
     * the packed in-proj output (no Slice, no head Transposes) */
    {"encoder", 1, 2, 1, 3,
     {{"Attention", 1}, {"LayerNorm", 2}, {"FusedMatMul", 3}, {"Gelu", 0},
      {"Slice", 0}, {"Transpose", 2}}},
    /* the same exported with dynamic axes: the head Reshapes' targets are
     * Concat(Shape(input)[0] ...) at run time, their dims known only as
     * symbols (core/infer_sym.c), which must agree for the Attention; the
     * packed in-proj stays sliced (its offsets need concrete shapes) */
    {"encoder_dyn", 1, 2, 1, 3,
     {{"Attention", 1}, {"LayerNorm", 2}, {"FusedMatMul", 3}, {"Gelu", 0},
      {"Softmax", 0}, {"Transpose", 2}}},
};

/* ---- helpers ---- */

static het_graph *load_graph(const char *name, int level,
                             het_optimize_stats *stats) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  return opt_load_graph(dir, level, stats);
}

/* optimized == unoptimized (rtol 1e-5) and == reference (rtol 1e-4). */
static void check_numerics(const char *name, het_graph *g0, het_graph *g1) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  ck_assert_msg(opt_check_numerics(dir, 0, g0, g1), "%s: no test data",
                name);
}

/* ---- core ---- */

START_TEST(test_case_fusions_and_numerics) {
  const nlp_case *c = &k_cases[_i];
  het_optimize_stats st;
  het_graph *g0 = load_graph(c->dir, HET_OPT_NONE, NULL);
  het_graph *g1 = load_graph(c->dir, HET_OPT_ALL, &st);
  ck_assert_msg(st.gelus_fused == c->gelus && st.layernorms_fused ==
                c->layernorms && st.attentions_fused == c->attentions &&
                st.matmul_adds_fused == c->matmul_adds,
                "%s: fused gelu %d layernorm %d attention %d matmul+add %d",
                c->dir, st.gelus_fused, st.layernorms_fused,
                st.attentions_fused, st.matmul_adds_fused);
  for (int k = 0; k < 6 && c->ops[k].op; k++)
    ck_assert_msg(opt_count_op(g1, c->ops[k].op) == c->ops[k].count,
                  "%s: %d %s nodes, want %d", c->dir,
                  opt_count_op(g1, c->ops[k].op), c->ops[k].op, c->ops[k].count);
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

/* A second pass finds nothing left to do. */
START_TEST(test_idempotent) {
  const nlp_case *c = &k_cases[_i];
  het_optimize_stats st;
  het_graph *g = load_graph(c->dir, HET_OPT_ALL, NULL);
  int n = g->n_nodes;
  ck_assert_int_eq(het_optimize(g, HET_OPT_ALL, &st), HET_OK);
  ck_assert_msg(g->n_nodes == n && st.rounds == 1,
                "%s: second pass changed %d -> %d nodes in %d rounds", c->dir,
                n, g->n_nodes, st.rounds);
  het_graph_destroy(g);
}
END_TEST

/* Level extended leaves the transformer patterns alone. */
START_TEST(test_extended_does_not_fuse) {
  het_optimize_stats st;
  het_graph *g = load_graph("encoder", HET_OPT_EXTENDED, &st);
  ck_assert_int_eq(st.gelus_fused + st.layernorms_fused +
                       st.attentions_fused + st.matmul_adds_fused,
                   0);
  ck_assert_int_eq(opt_count_op(g, "Softmax"), 1);
  het_graph_destroy(g);
}
END_TEST

static void session_case(het_env *env, const char *name, const char *level) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  opt_session_case(env, dir, level, NULL, NULL);
}

START_TEST(test_sessions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  for (size_t c = 0; c < sizeof k_cases / sizeof k_cases[0]; c++) {
    session_case(env, k_cases[c].dir, "none");
    session_case(env, k_cases[c].dir, "all");
  }
  het_env_destroy(env);
}
END_TEST

static Suite *opt_nlp_suite(void) {
  Suite *s = suite_create("opt_nlp");
  int n = (int)(sizeof k_cases / sizeof k_cases[0]);
  TCase *core = tcase_create("core");
  tcase_add_loop_test(core, test_case_fusions_and_numerics, 0, n);
  tcase_add_loop_test(core, test_idempotent, 0, n);
  tcase_add_test(core, test_extended_does_not_fuse);
  tcase_add_test(core, test_sessions);
  suite_add_tcase(s, core);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(opt_nlp_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
