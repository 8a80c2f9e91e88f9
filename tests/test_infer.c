/* test_infer.c — shape and type inference: broadcasting with symbolic
 * dims, axis checks, and whole-graph inference that keeps a symbolic batch
 * dim through a chain of ops while failing with the node's name on
 * contradictions.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "onnx/loader.h"

static het_infer_ctx fake_ctx(void) {
  static het_node node = {.name = "probe", .op_type = "Add", .domain = ""};
  het_infer_ctx ctx = {.node = &node, .opset = 13};
  return ctx;
}

static het_shape shape_of(int rank, const int64_t *dims, const char **syms) {
  het_shape s = {.rank = rank};
  for (int i = 0; i < rank; i++) {
    s.dims[i].value = dims[i];
    s.dims[i].symbol = syms ? syms[i] : NULL;
  }
  return s;
}

START_TEST(test_broadcast_numpy_rules) {
  het_infer_ctx ctx = fake_ctx();
  het_shape a = shape_of(3, (int64_t[]){2, 1, 4}, NULL);
  het_shape b = shape_of(2, (int64_t[]){3, 1}, NULL);
  het_shape out;
  ck_assert_int_eq(het_shape_broadcast(&ctx, &a, &b, &out), HET_OK);
  ck_assert_int_eq(out.rank, 3);
  ck_assert_int_eq(out.dims[0].value, 2);
  ck_assert_int_eq(out.dims[1].value, 3);
  ck_assert_int_eq(out.dims[2].value, 4);
}
END_TEST

START_TEST(test_broadcast_symbolic) {
  het_infer_ctx ctx = fake_ctx();
  const char *syms[] = {"N", NULL};
  het_shape a = shape_of(2, (int64_t[]){-1, 8}, syms);
  het_shape b = shape_of(1, (int64_t[]){8}, NULL);
  het_shape out;
  ck_assert_int_eq(het_shape_broadcast(&ctx, &a, &b, &out), HET_OK);
  ck_assert_int_eq(out.rank, 2);
  ck_assert_int_eq(out.dims[0].value, -1);
  ck_assert_str_eq(out.dims[0].symbol, "N");
  ck_assert_int_eq(out.dims[1].value, 8);
  /* unknown vs known > 1: the known size wins */
  het_shape c = shape_of(1, (int64_t[]){-1}, NULL);
  het_shape d = shape_of(1, (int64_t[]){5}, NULL);
  ck_assert_int_eq(het_shape_broadcast(&ctx, &c, &d, &out), HET_OK);
  ck_assert_int_eq(out.dims[0].value, 5);
}
END_TEST

START_TEST(test_broadcast_conflict_names_node) {
  het_infer_ctx ctx = fake_ctx();
  het_shape a = shape_of(1, (int64_t[]){3}, NULL);
  het_shape b = shape_of(1, (int64_t[]){4}, NULL);
  het_shape out;
  ck_assert_int_eq(het_shape_broadcast(&ctx, &a, &b, &out), HET_ERR_SHAPE);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "probe"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "3 vs 4"));
}
END_TEST

START_TEST(test_axis_normalisation) {
  het_infer_ctx ctx = fake_ctx();
  int axis;
  ck_assert_int_eq(het_infer_axis(&ctx, -1, 4, "axis", &axis), HET_OK);
  ck_assert_int_eq(axis, 3);
  ck_assert_int_eq(het_infer_axis(&ctx, 4, 4, "axis", &axis),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "axis 4"));
  ck_assert_int_eq(het_infer_axis(&ctx, -5, 4, "axis", &axis),
                   HET_ERR_INVALID_MODEL);
}
END_TEST

/* x[N,4] → Relu → Add(bias[4]) → MatMul(w[4,3]) → y: y is [N,3]. */
static het_graph *chain_graph(int64_t bias_len) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  static het_opset_import op13 = {"", 13};
  g->opsets = &op13;
  g->n_opsets = 1;
  int x, r, b, a, w, y;
  het_graph_intern_value(g, "x", &x);
  het_graph_intern_value(g, "r", &r);
  het_graph_intern_value(g, "bias", &b);
  het_graph_intern_value(g, "a", &a);
  het_graph_intern_value(g, "w", &w);
  het_graph_intern_value(g, "y", &y);
  g->values[x].flags = HET_VALUE_GRAPH_INPUT;
  g->values[x].dtype = HET_DTYPE_FLOAT32;
  g->values[x].shape = shape_of(2, (int64_t[]){-1, 4}, (const char *[]){"N", NULL});
  int64_t bd[1] = {bias_len}, wd[2] = {4, 3};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, bd, 1,
                                     &g->values[b].initializer), HET_OK);
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, wd, 2,
                                     &g->values[w].initializer), HET_OK);
  g->values[b].flags = g->values[w].flags = HET_VALUE_INITIALIZER;
  g->values[y].flags = HET_VALUE_GRAPH_OUTPUT;
  int *io = het_arena_calloc(&g->arena, 8, sizeof(int));
  io[0] = x; io[1] = r; io[2] = r; io[3] = b; io[4] = a; io[5] = a; io[6] = w;
  io[7] = y;
  het_node relu = {.name = "relu", .op_type = "Relu", .domain = "", .opset = 13,
                   .n_inputs = 1, .inputs = &io[0], .n_outputs = 1,
                   .outputs = &io[1]};
  het_node add = {.name = "add", .op_type = "Add", .domain = "", .opset = 13,
                  .n_inputs = 2, .inputs = &io[2], .n_outputs = 1,
                  .outputs = &io[4]};
  het_node mm = {.name = "mm", .op_type = "MatMul", .domain = "", .opset = 13,
                 .n_inputs = 2, .inputs = &io[5], .n_outputs = 1,
                 .outputs = &io[7]};
  ck_assert_int_eq(het_graph_add_node(g, &relu, NULL), HET_OK);
  ck_assert_int_eq(het_graph_add_node(g, &add, NULL), HET_OK);
  ck_assert_int_eq(het_graph_add_node(g, &mm, NULL), HET_OK);
  int *ins = het_arena_calloc(&g->arena, 1, sizeof(int));
  int *outs = het_arena_calloc(&g->arena, 1, sizeof(int));
  ins[0] = x;
  outs[0] = y;
  g->inputs = ins;
  g->n_inputs = 1;
  g->outputs = outs;
  g->n_outputs = 1;
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  return g;
}

static void chain_free(het_graph *g) {
  g->opsets = NULL;
  het_graph_destroy(g);
}

START_TEST(test_graph_keeps_symbolic_batch) {
  het_graph *g = chain_graph(4);
  ck_assert_int_eq(het_graph_infer_shapes(g), HET_OK);
  const het_value *y = &g->values[het_graph_find_value(g, "y")];
  ck_assert_int_eq(y->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(y->shape.rank, 2);
  ck_assert_int_eq(y->shape.dims[0].value, -1);
  ck_assert_str_eq(y->shape.dims[0].symbol, "N");
  ck_assert_int_eq(y->shape.dims[1].value, 3);
  chain_free(g);
}
END_TEST

START_TEST(test_graph_contradiction_names_node) {
  het_graph *g = chain_graph(5); /* bias [5] cannot broadcast with [N,4] */
  ck_assert_int_eq(het_graph_infer_shapes(g), HET_ERR_SHAPE);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'add'"));
  chain_free(g);
}
END_TEST

/* The model at path, loaded and its shapes inferred. */
static het_graph *load_inferred(const char *path) {
  het_graph *g = NULL;
  ck_assert_msg(het_onnx_load_file(path, &g) == HET_OK, "%s: %s", path,
                het_last_error());
  ck_assert_int_eq(het_graph_infer_shapes(g), HET_OK);
  return g;
}

/* encoder_dyn (tests/data/nlp/gen_nlp.py): torch's export with dynamic
 * axes computes each head Reshape's target as Concat(Unsqueeze(Gather(
 * Shape(x), i)), ... Mul(., 4) ...): core/infer_sym.c follows those
 * contents, so the head splits of Q, K and V come out [., batch*4, 8]
 * (the second dim named alike in all three, the last literal), and the
 * merge back [seq*batch, 32].  Their first dim is only known for Q (K
 * and V come from Slices whose bounds are computed: unknown). */
START_TEST(test_graph_symbolic_reshape_targets) {
  het_graph *g = load_inferred(HETRT_TEST_DATA "/nlp/encoder_dyn/model.onnx");
  int reshapes = 0, derived = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    if (strcmp(node->op_type, "Reshape") != 0)
      continue;
    const het_shape *s = &g->values[node->outputs[0]].shape;
    ck_assert_int_ge(s->rank, 1);
    if (s->rank == 3 && s->dims[1].symbol && s->dims[2].value == 8 &&
        strcmp(s->dims[1].symbol, "batch*4") == 0)
      derived++;
    reshapes++;
  }
  ck_assert_int_eq(reshapes, 5);
  ck_assert_int_eq(derived, 3); /* Q, K and V split into batch*4 heads */
  int y = het_graph_find_value(g, "output");
  ck_assert_int_ge(y, 0); /* the merge and out-projection keep the names */
  ck_assert_str_eq(g->values[y].shape.dims[0].symbol, "batch");
  ck_assert_str_eq(g->values[y].shape.dims[1].symbol, "seq");
  het_graph_destroy(g);
}
END_TEST

/* shape_sym (tests/data/optimizer/gen_optimizer.py): X [batch, seq, 24]
 * reshaped to targets built from Shape(X) by Gather, Div, Mul, Add, Sub,
 * Squeeze, Unsqueeze and Concat: literal 0 copies X's dim, 24/2 and 24/6
 * are literals, -1 stays unknown (the model's declared name fills it),
 * and compound names are parenthesized. */
static void expect_dims(het_graph *g, const char *value,
                        const char *const *want) {
  const het_shape *s = &g->values[het_graph_find_value(g, value)].shape;
  ck_assert_int_eq(s->rank, 3);
  for (int d = 0; d < 3; d++) {
    char got[64];
    if (s->dims[d].value >= 0)
      snprintf(got, sizeof got, "%lld", (long long)s->dims[d].value);
    else
      snprintf(got, sizeof got, "%s", s->dims[d].symbol ? s->dims[d].symbol : "?");
    ck_assert_msg(strcmp(got, want[d]) == 0, "%s dim %d: %s, want %s", value, d,
                  got, want[d]);
  }
}

START_TEST(test_graph_symbolic_arithmetic) {
  het_graph *g =
      load_inferred(HETRT_TEST_DATA "/optimizer/shape_sym/model.onnx");
  expect_dims(g, "Y1", (const char *const[]){"batch", "seq*2", "12"});
  expect_dims(g, "Y2", (const char *const[]){"batch", "p1", "4"});
  expect_dims(g, "Y3", (const char *const[]){"batch", "(seq+1)-1", "24"});
  het_graph_destroy(g);
}
END_TEST

static Suite *infer_suite(void) {
  Suite *s = suite_create("infer");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_broadcast_numpy_rules);
  tcase_add_test(core, test_broadcast_symbolic);
  tcase_add_test(core, test_axis_normalisation);
  tcase_add_test(core, test_graph_keeps_symbolic_batch);
  tcase_add_test(core, test_graph_symbolic_reshape_targets);
  tcase_add_test(core, test_graph_symbolic_arithmetic);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_broadcast_conflict_names_node);
  tcase_add_test(errors, test_graph_contradiction_names_node);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(infer_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
