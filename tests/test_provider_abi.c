/* test_provider_abi.c — what an out-of-tree provider reads through
 * hetrt/provider.h (the graph, node, value, constant and attribute
 * accessors, het_tensor_get_device, het_error_set): the values they give
 * on backend-suite models, and their errors (ids out of range, missing
 * attributes, attributes of another type, NULL arguments).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core/ir.h"
#include "core/status.h"
#include "hetrt/provider.h"
#include "onnx/loader.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node/"

/* The graph of backend case `name`, or NULL (the test is then skipped). */
static het_graph *load_case(const char *name) {
  char path[512];
  snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", name);
  het_graph *g = NULL;
  if (het_onnx_load_file(path, &g) != HET_OK)
    return NULL;
  return g;
}

START_TEST(nodes_values_and_int_lists) {
  het_graph *g = load_case("test_conv_with_strides_padding");
  if (!g)
    return;
  ck_assert_int_eq(het_graph_get_node_count(g), 1);
  het_node_desc n;
  ck_assert_int_eq(het_graph_get_node(g, 0, &n), HET_OK);
  ck_assert_str_eq(n.op_type, "Conv");
  ck_assert_str_eq(n.domain, "");
  ck_assert_int_gt(n.opset, 0);
  ck_assert_int_eq(n.n_inputs, 2);
  ck_assert_int_eq(n.n_outputs, 1);
  het_value_desc x, w;
  ck_assert_int_eq(het_graph_get_value(g, n.inputs[0], &x), HET_OK);
  ck_assert_str_eq(x.name, "x");
  ck_assert_int_eq(x.dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(x.rank, 4);
  ck_assert_int_eq(x.dims[2], 7);
  ck_assert_int_eq(het_graph_get_value(g, n.inputs[1], &w), HET_OK);
  ck_assert_str_eq(w.name, "W");
  /* W is a graph input in this case, not an initializer */
  ck_assert_ptr_null(het_graph_get_constant(g, n.inputs[1]));
  const int64_t *strides = NULL;
  size_t count = 0;
  ck_assert_int_eq(het_graph_get_attr_ints(g, 0, "strides", &strides, &count), HET_OK);
  ck_assert_uint_eq(count, 2);
  ck_assert_int_eq(strides[0], 2);
  ck_assert_int_eq(strides[1], 2);
  int64_t group = 0;
  ck_assert_int_eq(het_graph_get_attr_int(g, 0, "group", &group), HET_ERR_NOT_FOUND);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "group"));
  /* the wrong type is ERR_TYPE naming the attribute */
  ck_assert_int_eq(het_graph_get_attr_int(g, 0, "strides", &group), HET_ERR_TYPE);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "strides"));
  het_graph_destroy(g);
}
END_TEST

START_TEST(float_and_string_attributes) {
  het_graph *g = load_case("test_leakyrelu");
  if (!g)
    return;
  float alpha = 0;
  ck_assert_int_eq(het_graph_get_attr_float(g, 0, "alpha", &alpha), HET_OK);
  ck_assert_float_eq_tol(alpha, 0.1f, 1e-7f);
  const float *fs = NULL;
  size_t count = 0;
  ck_assert_int_eq(het_graph_get_attr_floats(g, 0, "alpha", &fs, &count), HET_ERR_TYPE);
  het_graph_destroy(g);
  g = load_case("test_averagepool_2d_same_upper");
  if (!g)
    return;
  const char *pad = NULL;
  ck_assert_int_eq(het_graph_get_attr_string(g, 0, "auto_pad", &pad), HET_OK);
  ck_assert_str_eq(pad, "SAME_UPPER");
  het_graph_destroy(g);
}
END_TEST

START_TEST(constants_and_devices) {
  het_graph *g = load_case("test_relu");
  if (!g)
    return;
  int64_t dims[1] = {3};
  het_tensor *t = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 1, &t), HET_OK);
  int id = -1;
  ck_assert_int_eq(het_graph_add_constant(g, "k", t, &id), HET_OK);
  ck_assert_ptr_eq(het_graph_get_constant(g, id), t);
  ck_assert_ptr_null(het_tensor_get_device(het_graph_get_constant(g, id)));
  ck_assert_ptr_null(het_tensor_get_device(NULL));
  het_value_desc v;
  ck_assert_int_eq(het_graph_get_value(g, id, &v), HET_OK);
  ck_assert_int_eq(v.rank, 1);
  ck_assert_int_eq(v.dims[0], 3);
  het_graph_destroy(g);
}
END_TEST

START_TEST(ids_out_of_range_and_null) {
  het_graph *g = load_case("test_relu");
  if (!g)
    return;
  het_node_desc n;
  het_value_desc v;
  int nodes = het_graph_get_node_count(g), values = het_graph_get_value_count(g);
  ck_assert_int_eq(het_graph_get_node(g, nodes, &n), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "out of range"));
  ck_assert_int_eq(het_graph_get_node(g, -1, &n), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_graph_get_value(g, values, &v), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_graph_get_node(g, 0, NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_graph_get_node(NULL, 0, &n), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_graph_get_node_count(NULL), 0);
  ck_assert_ptr_null(het_graph_get_constant(g, values));
  int64_t i;
  ck_assert_int_eq(het_graph_get_attr_int(g, nodes, "x", &i), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_graph_get_attr_int(g, 0, NULL, &i), HET_ERR_INVALID_ARGUMENT);
  het_graph_destroy(g);
}
END_TEST

START_TEST(error_set_reaches_last_error) {
  ck_assert_int_eq(het_error_set(HET_ERR_KERNEL, "mine: node '%s' failed (%d)", "n1", 7),
                   HET_ERR_KERNEL);
  ck_assert_str_eq(het_last_error(), "mine: node 'n1' failed (7)");
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  ck_assert_int_eq(het_error_set(HET_ERR_INTERNAL, "%s", big), HET_ERR_INTERNAL);
  ck_assert_uint_le(strlen(het_last_error()), 1023);
}
END_TEST

int main(void) {
  FILE *f = fopen(NODE_DIR "test_relu/model.onnx", "rb");
  if (!f) {
    printf("SKIP: %s not found (install libonnx-testdata)\n", NODE_DIR);
    return 77;
  }
  fclose(f);
  Suite *s = suite_create("provider_abi");
  TCase *tc = tcase_create("accessors");
  tcase_add_test(tc, nodes_values_and_int_lists);
  tcase_add_test(tc, float_and_string_attributes);
  tcase_add_test(tc, constants_and_devices);
  tcase_add_test(tc, ids_out_of_range_and_null);
  tcase_add_test(tc, error_set_reaches_last_error);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
