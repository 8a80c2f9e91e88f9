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
#include "hetrt/hetrt.h"
#include "testcase/testcase.h"
#include "kernels/kernel.h"
#include "onnx/loader.h"
#include "optimizer/optimizer.h"

#include "common/opt_helpers.h"

#define DATA HETRT_TEST_DATA "/optimizer/"

typedef struct opt_count {
  const char *op;
  int count;
} opt_count;

typedef struct opt_case {
  const char *dir;
  int level;
  int nodes;           /* node count after optimizing (-1: not checked) */
  opt_count ops[10];   /* op counts after optimizing (op NULL ends) */
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
    /* Reshape targets from Shape(X) in symbols: numerics on two shapes */
    {"shape_sym", HET_OPT_ALL, -1, {{"Reshape", 3}}},
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
    /* gen_conv_dw.py: five 1x1 + depthwise pairs (clamps, LeakyRelu and
     * HardSigmoid, no biases, asymmetric pads, strides (2, 1), one read
     * by a squeeze-excitation gate) become hetrt.FusedConvDw; the 1x1
     * with a second reader stays two Convs */
    {"conv_dw", HET_OPT_ALL, 18,
     {{"FusedConvDw", 5}, {"Conv", 9}, {"Clip", 0}, {"Relu", 1},
      {"LeakyRelu", 0}, {"HardSigmoid", 0}, {"Mul", 1}}},
    {"conv_dw", HET_OPT_EXTENDED, 23, {{"FusedConvDw", 0}, {"Conv", 19}}},
    /* gen_conv_pool.py: four Conv + MaxPool pairs (stems with pool pads
     * and ceil_mode, a Clip between, asymmetric pool pads) become
     * hetrt.FusedConvPool; the Conv with a second reader, the MaxPool
     * whose Indices are read and the pair too small to gain stay apart */
    {"conv_pool", HET_OPT_ALL, 16,
     {{"FusedConvPool", 4}, {"Conv", 8}, {"MaxPool", 3}, {"Relu", 0},
      {"Clip", 0}}},
    {"conv_pool", HET_OPT_EXTENDED, 20,
     {{"FusedConvPool", 0}, {"MaxPool", 7}}},
    /* gen_convt_bn.py: two BatchNormalizations fold into their
     * ConvTransposes, which take the Relu and the LeakyRelu; the grouped
     * ConvTranspose keeps its BatchNormalization and Tanh */
    {"convt_bn", HET_OPT_EXTENDED, 5,
     {{"ConvTranspose", 3}, {"BatchNormalization", 1}, {"Relu", 0},
      {"LeakyRelu", 0}, {"Tanh", 1}}},
    {"convt_bn", HET_OPT_BASIC, 9, {{"BatchNormalization", 3}}},
    /* gen_conv_acts.py: LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh
     * each taken over by its Conv (hetrt_act) */
    {"conv_acts", HET_OPT_EXTENDED, 5,
     {{"Conv", 5}, {"LeakyRelu", 0}, {"HardSigmoid", 0}, {"Sigmoid", 0}}},
    {"resnet_block", HET_OPT_EXTENDED, 13,
     {{"FusedConv", 0}, {"Conv", 5}, {"Add", 2}, {"Relu", 1}, {"Clip", 0}}},
    /* gen_fire.py: the MaxPool and the GlobalAveragePool move above their
     * Concats; sq2 (2 parts) and sq3 (3 parts, Clip on the last) split
     * into FusedConv chains; the wide Conv's Concat stays */
    {"fire", HET_OPT_ALL, 17,
     {{"Concat", 2}, {"MaxPool", 2}, {"GlobalAveragePool", 2},
      {"FusedConv", 3}, {"Conv", 8}, {"Clip", 0}}},
    {"fire_dyn", HET_OPT_ALL, 17,
     {{"Concat", 2}, {"MaxPool", 2}, {"FusedConv", 3}, {"Conv", 8}}},
    /* gen_conv_f16.py: Relu and Clip fused into float16 Convs */
    {"conv_f16_clamp", HET_OPT_EXTENDED, 4,
     {{"Conv", 2}, {"Relu", 0}, {"Clip", 0}, {"Cast", 2}}},
    /* gen_f16_region.py: float16 values computed in float32 (opt_f16.c):
     * Casts to float32 for x, CumSum's output and t; back to float16 for
     * CumSum's input and the graph outputs y16 and u; the model's Cast of
     * s stays; its Cast of a to float32 goes; Relu fused into the Conv */
    {"f16_region", HET_OPT_EXTENDED, 12,
     {{"Cast", 7}, {"Conv", 1}, {"Relu", 0}, {"CumSum", 1}, {"Identity", 0}}},
    {"f16_region", HET_OPT_BASIC, 8, {{"Cast", 2}, {"Relu", 1}}},
    /* gen_cast_pairs.py: float16 -> float32 -> float16 and a Cast to the
     * input's own type go; float32 -> float16 -> float32 rounds: stays */
    {"cast_pairs", HET_OPT_BASIC, 4, {{"Cast", 2}, {"CumSum", 2}}},
    /* gen_hard_acts.py: four written-out hard activations become the
     * ops and their Convs take them over; the near misses stay */
    {"hard_acts", HET_OPT_EXTENDED, 4,
     {{"Conv", 4}, {"Clip", 0}, {"Mul", 0}, {"Div", 0}, {"Add", 0},
      {"HardSigmoid", 0}}},
    {"hard_acts", HET_OPT_BASIC, 16, {{"Clip", 3}, {"HardSwish", 0}}},
    /* gen_max_acts.py: Max(x, 0.1 x) and Max(0, x) become LeakyRelu and
     * Relu, taken over by their Convs; Max(2 x, x) and Max(x, 0.5) stay */
    {"max_acts", HET_OPT_EXTENDED, 6,
     {{"Conv", 3}, {"Max", 2}, {"Mul", 1}, {"LeakyRelu", 0}, {"Relu", 0}}},
    {"max_acts", HET_OPT_BASIC, 9, {{"Max", 4}, {"Mul", 2}}},
    {"hard_acts_near_miss", HET_OPT_EXTENDED, 10,
     {{"Div", 2}, {"Clip", 2}, {"HardSwish", 0}, {"HardSigmoid", 0}}},
    {"fire", HET_OPT_EXTENDED, 14,
     {{"Concat", 4}, {"MaxPool", 1}, {"FusedConv", 0}, {"Relu", 0}}},
    /* gen_qlut.py: hard-swish with its inner Q/DQ pair, a Sigmoid on
     * int8, LeakyRelu + Add and the requantization after an 8-bit MaxPool
     * (its DQ moved below it) become hetrt.QLinearLut tables; a chain
     * with a per-channel constant and one whose Tanh is a graph output
     * stay; the DQs the latter read stay */
    {"qdq_lut", HET_OPT_EXTENDED, 19,
     {{"QLinearLut", 4}, {"HardSigmoid", 0}, {"Sigmoid", 0},
      {"LeakyRelu", 0}, {"Add", 0}, {"Mul", 1}, {"Tanh", 1},
      {"MaxPool", 1}, {"QuantizeLinear", 4}, {"DequantizeLinear", 8}}},
    {"qdq_lut", HET_OPT_BASIC, 27, {{"QLinearLut", 0}}},
    /* gen_qdq.py: Q -> DQ -> Conv -> Relu -> Q -> DQ keeps the first Q
     * and the last DQ around one QLinearConv; likewise for a MatMul */
    {"qdq_conv", HET_OPT_EXTENDED, 3,
     {{"QLinearConv", 1}, {"Conv", 0}, {"Relu", 0}, {"QuantizeLinear", 1},
      {"DequantizeLinear", 1}}},
    {"qdq_conv", HET_OPT_BASIC, 6, /* weight and bias DQs folded */
     {{"QLinearConv", 0}, {"DequantizeLinear", 2}}},
    /* the same with weight and bias in Constant nodes (as tf2onnx) */
    {"qdq_conv_const", HET_OPT_EXTENDED, 3,
     {{"QLinearConv", 1}, {"Conv", 0}, {"Constant", 0},
      {"DequantizeLinear", 1}}},
    {"qdq_matmul", HET_OPT_EXTENDED, 3,
     {{"QLinearMatMul", 1}, {"MatMul", 0}, {"QuantizeLinear", 1}}},
    /* Gemm islands (transB 1 and 0, int32 and float bias): Reshape ->
     * QLinearConv 1x1 -> Reshape each */
    {"qdq_gemm", HET_OPT_EXTENDED, 9,
     {{"QLinearConv", 2}, {"Gemm", 0}, {"Reshape", 4}, {"QuantizeLinear", 1},
      {"DequantizeLinear", 2}}},
    /* a Flatten and a Transpose between the DQ and the op: the DQs move
     * below them and both islands fuse; DQ -> Reshape -> Q of the same
     * scale leaves the Reshape alone */
    {"qdq_moves", HET_OPT_EXTENDED, 13,
     {{"QLinearConv", 1}, {"QLinearMatMul", 1}, {"Gemm", 0}, {"MatMul", 0},
      {"Flatten", 1}, {"Transpose", 1}, {"Reshape", 3},
      {"QuantizeLinear", 3}, {"DequantizeLinear", 3}}},
    /* DQ + DQ -> Add -> Relu -> Q: one hetrt.QLinearAdd */
    {"qdq_add", HET_OPT_EXTENDED, 4,
     {{"QLinearAdd", 1}, {"Add", 0}, {"Relu", 0}, {"QuantizeLinear", 2},
      {"DequantizeLinear", 1}}},
    /* a clamping Relu, a foreign bias scale, a second reader: all float */
    {"qdq_near_miss", HET_OPT_EXTENDED, -1,
     {{"QLinearConv", 0}, {"Conv", 3}, {"QuantizeLinear", 6}}},
};

/* ---- helpers ---- */

static het_graph *load_graph(const char *name, int level,
                             het_optimize_stats *stats) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  return opt_load_graph(dir, level, stats);
}

/* Every data set: optimized == unoptimized and == reference. */
static void check_numerics(const char *name, het_graph *g0, het_graph *g1) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  int set = 0;
  while (opt_check_numerics(dir, set, g0, g1))
    set++;
  ck_assert_msg(set > 0, "%s: no test data", name);
}

/* The cases whose counts assume Conv/MatMul/Gemm islands fused, which
 * the optimizer does only where het_kernels_int8_fast(). */
static bool fuses_int8(const opt_case *c) {
  static const char *const dirs[] = {"qdq_conv", "qdq_conv_const",
                                     "qdq_matmul", "qdq_gemm", "qdq_moves"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    if (strcmp(c->dir, dirs[i]) == 0 && c->level >= HET_OPT_EXTENDED)
      return true;
  return false;
}

/* ---- core ---- */

START_TEST(test_case_counts_and_numerics) {
  const opt_case *c = &k_cases[_i];
  het_optimize_stats st;
  het_graph *g0 = load_graph(c->dir, HET_OPT_NONE, NULL);
  het_graph *g1 = load_graph(c->dir, c->level, &st);
  ck_assert_int_eq(st.nodes_before, g0->n_nodes);
  /* without fast int8 kernels the islands stay float: numerics only */
  bool counts = !fuses_int8(c) || het_kernels_int8_fast();
  ck_assert_msg(!counts || c->nodes < 0 || g1->n_nodes == c->nodes,
                "%s level %d: %d nodes, want %d", c->dir, c->level,
                g1->n_nodes, c->nodes);
  ck_assert_int_eq(st.nodes_after, g1->n_nodes);
  int max_ops = (int)(sizeof c->ops / sizeof c->ops[0]);
  for (int k = 0; counts && k < max_ops && c->ops[k].op; k++)
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
  ck_assert_int_eq(st.pools_below_concat, 0);
  het_graph_destroy(g);
  g = load_graph("conv_dw", HET_OPT_ALL, &st);
  ck_assert_int_eq(st.conv_dws_fused, 5);
  het_graph_destroy(g);
  g = load_graph("conv_pool", HET_OPT_ALL, &st);
  ck_assert_int_eq(st.conv_pools_fused, 4);
  het_graph_destroy(g);
  g = load_graph("qdq_lut", HET_OPT_EXTENDED, &st);
  ck_assert_int_eq(st.qdq_luts, 4);
  het_graph_destroy(g);
  g = load_graph("fire", HET_OPT_ALL, &st);
  ck_assert_int_eq(st.pools_below_concat, 2);
  ck_assert_int_eq(st.concat_convs_split, 2);
  ck_assert_int_eq(st.conv_adds_fused, 0);
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

/* ---- QDQ islands weighed on estimates ---- */

/* A cost model for the weighing: each QLinear* node (the fused probe)
 * costs int8_s, every other node float_s; what the optimizer reports is
 * kept. */
typedef struct weigh_model {
  double int8_s, float_s;
  int probes, weighed, fused, unknown, prepared;
  char last[64];
  double last_int8, last_float;
} weigh_model;

static het_status weigh_estimate(void *ctx, const het_graph *g, int node,
                                 bool fused, double *seconds) {
  weigh_model *m = ctx;
  bool q = strncmp(g->nodes[node].op_type, "QLinear", 7) == 0;
  ck_assert(q == fused);
  m->probes += q;
  *seconds = q ? m->int8_s : m->float_s;
  return HET_OK;
}

static het_status weigh_prepare(void *ctx, const het_graph *g) {
  weigh_model *m = ctx;
  m->prepared++;
  ck_assert_int_gt(g->n_nodes, 0);
  return HET_OK;
}

static het_status weigh_record(void *ctx, const het_optimize_island *w) {
  weigh_model *m = ctx;
  m->weighed++;
  ck_assert_ptr_nonnull(w->graph);
  ck_assert_str_eq(w->graph->nodes[w->node].name, w->name);
  m->fused += w->fused;
  m->unknown += w->unknown_dims;
  snprintf(m->last, sizeof m->last, "%s", w->name);
  m->last_int8 = w->int8_seconds;
  m->last_float = w->float_seconds;
  return HET_OK;
}

/* Case name optimized at the extended level with the weighing of m and
 * the rules of x (may be NULL); unknown_batch makes the inputs' dim 0
 * one unknown dim first. */
static het_graph *load_weighed(const char *name, weigh_model *m,
                               const het_optimize_int8 *x, bool unknown_batch,
                               het_optimize_stats *st) {
  char path[512];
  snprintf(path, sizeof path, DATA "%s/model.onnx", name);
  het_graph *g = NULL;
  ck_assert_int_eq(het_onnx_load_file(path, &g), HET_OK);
  for (int i = 0; unknown_batch && i < g->n_inputs; i++)
    g->values[g->inputs[i]].shape.dims[0] = (het_dim){-1, "N"};
  ck_assert_int_eq(het_graph_infer_shapes(g), HET_OK);
  het_optimize_int8 w = x ? *x : (het_optimize_int8){0};
  w.prepare = weigh_prepare;
  w.estimate = weigh_estimate;
  w.weighed = weigh_record;
  w.ctx = m;
  ck_assert_msg(het_optimize_with(g, NULL, HET_OPT_EXTENDED, &w, st) == HET_OK,
                "%s", het_last_error());
  return g;
}

/* Where the float form is cheaper the island stays float, computing what
 * the model computes; where it is not, or ties, it fuses. */
START_TEST(test_qdq_weighed_by_cost) {
  /* float_nodes: the float form's nodes (the input DequantizeLinears
   * read by the island alone, the operator, the QuantizeLinear); the
   * Gemms share theirs */
  static const struct {
    const char *dir, *op, *fused, *name;
    double float_nodes;
  } k[] = {{"qdq_conv", "Conv", "QLinearConv", "conv", 3},
           {"qdq_matmul", "MatMul", "QLinearMatMul", "mm", 3},
           {"qdq_gemm", "Gemm", "QLinearConv", "b_gemm", 2},
           {"qdq_add", "Add", "QLinearAdd", "add", 4}};
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    bool add = strcmp(k[i].op, "Add") == 0;
    if (!add && !het_kernels_int8_fast())
      continue; /* never weighed: the capability rule keeps them float */
    int islands = strcmp(k[i].op, "Gemm") == 0 ? 2 : 1;
    het_optimize_stats st;
    double float_nodes = k[i].float_nodes;
    weigh_model dear = {.int8_s = 1.0, .float_s = 0.125};
    het_graph *g0 = load_graph(k[i].dir, HET_OPT_NONE, NULL);
    het_graph *g1 = load_weighed(k[i].dir, &dear, NULL, false, &st);
    ck_assert_msg(opt_count_op(g1, k[i].fused) == 0, "%s", k[i].dir);
    ck_assert_int_eq(opt_count_op(g1, k[i].op), islands);
    ck_assert_int_eq(dear.probes, dear.weighed);
    ck_assert_int_ge(dear.weighed, islands);
    /* claims taken once per pass that weighs, not per island */
    ck_assert_int_ge(dear.prepared, 1);
    ck_assert_int_le(dear.prepared, st.rounds);
    ck_assert_int_eq(dear.fused, 0);
    ck_assert_int_eq(st.qdq_kept_float, dear.weighed);
    ck_assert_int_eq(st.qdq_fused, 0);
    ck_assert_str_eq(dear.last, k[i].name);
    ck_assert_msg(dear.last_int8 == 1.0 &&
                      dear.last_float == 0.125 * float_nodes,
                  "%s: int8 %g float %g", k[i].dir, dear.last_int8,
                  dear.last_float);
    check_numerics(k[i].dir, g0, g1);
    het_graph_destroy(g1);

    /* a tie fuses */
    weigh_model tie = {.int8_s = 0.25 * float_nodes, .float_s = 0.25};
    g1 = load_weighed(k[i].dir, &tie, NULL, false, &st);
    ck_assert_msg(opt_count_op(g1, k[i].fused) == islands, "%s", k[i].dir);
    ck_assert_int_eq(tie.weighed, islands);
    ck_assert_int_eq(tie.fused, islands);
    ck_assert_int_eq(st.qdq_kept_float, 0);
    check_numerics(k[i].dir, g0, g1);
    het_graph_destroy(g1);
    het_graph_destroy(g0);
  }
}
END_TEST

/* A chain into a table follows a policy rule that gives one of its nodes
 * a float precision (hard-swish's HardSigmoid, Sigmoid's Q) and stays as
 * written; an int8 rule changes nothing. */
START_TEST(test_qlut_rules) {
  weigh_model m = {.int8_s = 1.0, .float_s = 1.0};
  const char *names[] = {"A_hsig", "B_q", "C_add"};
  bool int8[] = {false, false, true};
  het_optimize_int8 rule = {.names = names, .int8 = int8, .n_names = 3};
  het_optimize_stats st;
  het_graph *g = load_weighed("qdq_lut", &m, &rule, false, &st);
  ck_assert_int_eq(opt_count_op(g, "QLinearLut"), 2); /* C's, F's */
  ck_assert_int_eq(opt_count_op(g, "HardSigmoid"), 1);
  ck_assert_int_eq(opt_count_op(g, "Sigmoid"), 1);
  ck_assert_int_eq(st.qdq_luts, 2);
  het_graph_destroy(g);
}
END_TEST

/* A policy rule decides without weighing; an island with an unknown dim
 * is weighed (as the estimates take such dims) and says so. */
START_TEST(test_qdq_weighing_rules_and_dims) {
  weigh_model m = {.int8_s = 1.0, .float_s = 0.01};
  const char *names[] = {"add"};
  bool int8[] = {true};
  het_optimize_int8 rule = {.names = names, .int8 = int8, .n_names = 1};
  het_graph *g = load_weighed("qdq_add", &m, &rule, false, NULL);
  ck_assert_int_eq(opt_count_op(g, "QLinearAdd"), 1);
  ck_assert_int_eq(m.weighed + m.probes + m.prepared, 0);
  het_graph_destroy(g);
  g = load_weighed("qdq_add", &m, NULL, false, NULL);
  ck_assert_int_eq(opt_count_op(g, "QLinearAdd"), 0);
  ck_assert_int_eq(m.unknown, 0);
  het_graph_destroy(g);
  m = (weigh_model){.int8_s = 0.01, .float_s = 1.0};
  g = load_weighed("qdq_add", &m, NULL, true, NULL);
  ck_assert_int_eq(opt_count_op(g, "QLinearAdd"), 1);
  ck_assert_int_eq(m.weighed, 1);
  ck_assert_int_eq(m.unknown, 1);
  het_graph_destroy(g);
}
END_TEST

static void session_case(het_env *env, const char *name, const char *level) {
  char dir[512];
  snprintf(dir, sizeof dir, DATA "%s", name);
  opt_session_case(env, dir, level, NULL, NULL);
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
  ck_assert_int_eq(opt_count_op(g, "BatchNormalization"), 0);
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
  tcase_add_test(core, test_qdq_weighed_by_cost);
  tcase_add_test(core, test_qdq_weighing_rules_and_dims);
  tcase_add_test(core, test_qlut_rules);
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
