/* test_ir.c — the graph IR: construction, lookup, validation errors that
 * name the node at fault, topological order, attribute getters, clones.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/ir.h"
#include "core/status.h"
#include "onnx/loader.h"

/* Adds node `name` of type op reading ins and writing outs (NULL-ended
 * name lists; "" = omitted input). */
static int add_node(het_graph *g, const char *name, const char *op,
                    const char *const *ins, const char *const *outs) {
  het_node n = {0};
  n.name = het_arena_strdup(&g->arena, name);
  n.op_type = het_arena_strdup(&g->arena, op);
  n.domain = "";
  n.opset = 13;
  while (ins && ins[n.n_inputs])
    n.n_inputs++;
  while (outs && outs[n.n_outputs])
    n.n_outputs++;
  n.inputs = het_arena_calloc(&g->arena, (size_t)n.n_inputs + 1, sizeof(int));
  n.outputs = het_arena_calloc(&g->arena, (size_t)n.n_outputs + 1, sizeof(int));
  for (int i = 0; i < n.n_inputs; i++) {
    if (!*ins[i]) {
      n.inputs[i] = -1;
      continue;
    }
    ck_assert_int_eq(het_graph_intern_value(g, ins[i], &n.inputs[i]), HET_OK);
  }
  for (int i = 0; i < n.n_outputs; i++)
    ck_assert_int_eq(het_graph_intern_value(g, outs[i], &n.outputs[i]), HET_OK);
  int id = -1;
  het_status st = het_graph_add_node(g, &n, &id);
  return st == HET_OK ? id : -(int)st;
}

static void mark_input(het_graph *g, const char *name) {
  int id;
  ck_assert_int_eq(het_graph_intern_value(g, name, &id), HET_OK);
  g->values[id].flags |= HET_VALUE_GRAPH_INPUT;
  g->inputs = realloc(g->inputs, sizeof(int) * (size_t)(g->n_inputs + 1));
  g->inputs[g->n_inputs++] = id;
}

static void mark_output(het_graph *g, const char *name) {
  int id;
  ck_assert_int_eq(het_graph_intern_value(g, name, &id), HET_OK);
  g->values[id].flags |= HET_VALUE_GRAPH_OUTPUT;
  g->outputs = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
  g->outputs[g->n_outputs++] = id;
}

static void graph_free(het_graph *g) {
  free(g->inputs);
  free(g->outputs);
  g->inputs = g->outputs = NULL;
  het_graph_destroy(g);
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

START_TEST(test_order_is_topological) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  /* Added out of order: c needs b needs a. */
  add_node(g, "c", "Relu", L("b_out"), L("y"));
  add_node(g, "b", "Relu", L("a_out"), L("b_out"));
  add_node(g, "a", "Relu", L("x"), L("a_out"));
  mark_output(g, "y");
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  int pos[3];
  for (int k = 0; k < 3; k++)
    pos[g->order[k]] = k;
  ck_assert_int_lt(pos[2], pos[1]);
  ck_assert_int_lt(pos[1], pos[0]);
  graph_free(g);
}
END_TEST

START_TEST(test_find_value_many) {
  het_graph *g;
  char name[32];
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  for (int i = 0; i < 5000; i++) {
    int id;
    snprintf(name, sizeof name, "v%d", i);
    ck_assert_int_eq(het_graph_intern_value(g, name, &id), HET_OK);
    ck_assert_int_eq(id, i);
  }
  for (int i = 0; i < 5000; i += 7) {
    snprintf(name, sizeof name, "v%d", i);
    ck_assert_int_eq(het_graph_find_value(g, name), i);
  }
  ck_assert_int_eq(het_graph_find_value(g, "nope"), -1);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_dangling_input_names_node) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  add_node(g, "adder", "Add", L("x", "ghost"), L("y"));
  mark_output(g, "y");
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "adder"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "ghost"));
  graph_free(g);
}
END_TEST

START_TEST(test_cycle_names_node) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  add_node(g, "first", "Add", L("x", "q"), L("p"));
  add_node(g, "second", "Relu", L("p"), L("q"));
  mark_output(g, "q");
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cycle"));
  ck_assert(strstr(het_last_error(), "first") ||
            strstr(het_last_error(), "second"));
  graph_free(g);
}
END_TEST

START_TEST(test_duplicate_producer_rejected) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  ck_assert_int_ge(add_node(g, "one", "Relu", L("x"), L("y")), 0);
  int r = add_node(g, "two", "Relu", L("x"), L("y"));
  ck_assert_int_eq(r, -(int)HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "two"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "one"));
  graph_free(g);
}
END_TEST

START_TEST(test_output_cannot_overwrite_input) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  int r = add_node(g, "bad", "Relu", L("x"), L("x"));
  ck_assert_int_eq(r, -(int)HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "bad"));
  graph_free(g);
}
END_TEST

START_TEST(test_unproduced_graph_output) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  add_node(g, "r", "Relu", L("x"), L("y"));
  mark_output(g, "z");
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'z'"));
  graph_free(g);
}
END_TEST

START_TEST(test_omitted_optional_input) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  int id = add_node(g, "clip", "Clip", L("x", "", ""), L("y"));
  mark_output(g, "y");
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  ck_assert_int_eq(het_node_input(&g->nodes[id], 1), -1);
  ck_assert_int_eq(het_node_input(&g->nodes[id], 7), -1);
  ck_assert_int_ge(het_node_input(&g->nodes[id], 0), 0);
  graph_free(g);
}
END_TEST

START_TEST(test_attribute_getters) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  mark_input(g, "x");
  int id = add_node(g, "n", "Conv", L("x"), L("y"));
  het_node *n = &g->nodes[id];
  static int64_t pads[] = {1, 2, 3, 4};
  static het_attr attrs[3];
  attrs[0] = (het_attr){.name = "group", .type = HET_ATTR_INT, .i = 4};
  attrs[1] = (het_attr){.name = "pads", .type = HET_ATTR_INTS, .n = 4,
                        .ints = pads};
  attrs[2] = (het_attr){.name = "alpha", .type = HET_ATTR_FLOAT, .f = 0.5f};
  n->attrs = attrs;
  n->n_attrs = 3;
  size_t count;
  ck_assert_int_eq(het_node_attr_int(n, "group", 1), 4);
  ck_assert_int_eq(het_node_attr_int(n, "missing", 9), 9);
  ck_assert_int_eq(het_node_attr_int(n, "alpha", 9), 9); /* wrong type */
  ck_assert_ptr_eq(het_node_attr_ints(n, "pads", &count), pads);
  ck_assert_uint_eq(count, 4);
  ck_assert_ptr_null(het_node_attr_ints(n, "group", &count));
  ck_assert_uint_eq(count, 0);
  ck_assert_float_eq(het_node_attr_float(n, "alpha", 1.0f), 0.5f);
  ck_assert_ptr_null(het_node_attr_string(n, "alpha"));
  n->attrs = NULL; /* static storage: not the graph's to free */
  n->n_attrs = 0;
  graph_free(g);
}
END_TEST

START_TEST(test_opset_lookup) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  static het_opset_import ops[] = {{"", 13}, {"ai.onnx.ml", 2}};
  g->opsets = ops;
  g->n_opsets = 2;
  ck_assert_int_eq(het_graph_opset(g, ""), 13);
  ck_assert_int_eq(het_graph_opset(g, "ai.onnx"), 13);
  ck_assert_int_eq(het_graph_opset(g, "ai.onnx.ml"), 2);
  ck_assert_int_eq(het_graph_opset(g, "com.other"), 0);
  g->opsets = NULL;
  g->n_opsets = 0;
  het_graph_destroy(g);
}
END_TEST

/* A node whose subgraph reads an outer value runs after that value's
 * producer, even when it has no ordinary input from it. */
START_TEST(test_subgraph_outer_read_orders) {
  het_graph *g, *sub;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  ck_assert_int_eq(het_graph_create(&sub), HET_OK);
  mark_input(g, "cond");
  mark_input(g, "x");
  int if_id = add_node(g, "branch", "If", L("cond"), L("y"));
  int mk_id = add_node(g, "make_k", "Relu", L("x"), L("k"));
  mark_output(g, "y");
  add_node(sub, "inner", "Identity", L("k"), L("out"));
  mark_output(sub, "out");
  ck_assert_int_eq(het_graph_validate(sub, g), HET_OK);
  het_attr *a = het_arena_calloc(&g->arena, 1, sizeof *a);
  a->name = "then_branch";
  a->type = HET_ATTR_GRAPH;
  a->g = sub;
  g->nodes[if_id].attrs = a;
  g->nodes[if_id].n_attrs = 1;
  ck_assert_int_eq(het_graph_adopt_subgraph(g, sub), HET_OK);
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  ck_assert_int_eq(g->order[0], mk_id);
  ck_assert_int_eq(g->order[1], if_id);
  free(sub->outputs);
  sub->outputs = NULL;
  graph_free(g);
}
END_TEST

/* The serialized model of g (caller frees). */
static uint8_t *write_model(const het_graph *g, size_t *len) {
  uint8_t *buf = NULL;
  het_status st = het_onnx_save_memory(g, &buf, len);
  ck_assert_msg(st == HET_OK, "%s", het_last_error());
  return buf;
}

/* A clone writes the same bytes as its source (every value, node,
 * attribute of every type and subgraph), borrows the initializers' data,
 * has ids of its own to change, and outlives nothing: the source survives
 * the clone's destruction. */
START_TEST(test_clone_equal_and_independent) {
  static const char *const models[] = {"loader/attrs.onnx",
                                       "loader/subgraph.onnx",
                                       "loader/typed.onnx"};
  for (size_t m = 0; m < sizeof models / sizeof *models; m++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", HETRT_TEST_DATA, models[m]);
    het_graph *g = NULL, *c = NULL;
    ck_assert_int_eq(het_onnx_load_file(path, &g), HET_OK);
    ck_assert_int_eq(het_graph_infer_shapes(g), HET_OK);
    ck_assert_int_eq(het_graph_clone(g, &c), HET_OK);
    ck_assert_int_eq(c->n_values, g->n_values);
    ck_assert_int_eq(c->n_nodes, g->n_nodes);
    size_t la, lb;
    uint8_t *a = write_model(g, &la), *b = write_model(c, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0,
                  "%s: the clone serializes differently", models[m]);
    free(b);
    for (int v = 0; v < g->n_values; v++) {
      ck_assert_ptr_ne(c->values[v].name, g->values[v].name);
      ck_assert_int_eq(het_graph_find_value(c, g->values[v].name), v);
      if (g->values[v].initializer) {
        ck_assert(!c->values[v].initializer->owned);
        ck_assert_ptr_eq(c->values[v].initializer->data,
                         g->values[v].initializer->data);
      }
      c->values[v].shape.rank = -1; /* the clone's own */
      c->values[v].dtype = HET_DTYPE_UNDEFINED;
    }
    for (int n = 0; n < g->n_nodes; n++)
      for (int k = 0; k < g->nodes[n].n_attrs; k++)
        if (g->nodes[n].attrs[k].g)
          ck_assert_ptr_ne(c->nodes[n].attrs[k].g, g->nodes[n].attrs[k].g);
    het_graph_destroy(c);
    b = write_model(g, &lb);
    ck_assert_msg(la == lb && memcmp(a, b, la) == 0,
                  "%s: changing the clone changed the source", models[m]);
    free(a);
    free(b);
    het_graph_destroy(g);
  }
}
END_TEST

static Suite *ir_suite(void) {
  Suite *s = suite_create("ir");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_order_is_topological);
  tcase_add_test(core, test_find_value_many);
  tcase_add_test(core, test_omitted_optional_input);
  tcase_add_test(core, test_attribute_getters);
  tcase_add_test(core, test_opset_lookup);
  tcase_add_test(core, test_subgraph_outer_read_orders);
  tcase_add_test(core, test_clone_equal_and_independent);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_dangling_input_names_node);
  tcase_add_test(errors, test_cycle_names_node);
  tcase_add_test(errors, test_duplicate_producer_rejected);
  tcase_add_test(errors, test_output_cannot_overwrite_input);
  tcase_add_test(errors, test_unproduced_graph_output);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(ir_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
