/* test_onnx_write.c — Check suites for the ONNX writer (het_onnx_save_*,
 * src/onnx/loader.h): models from tests/data and the ONNX backend suite
 * (If/Loop/Scan subgraphs, initializers of every dtype, attributes of
 * every type) load back from what the writer makes equal node by node, a
 * second round trip is byte-identical, round-tripped models run
 * bit-exactly like the originals, and NULL arguments, unwritable paths,
 * oversize models and what the IR cannot hold fail with a clear status.
 * `test_onnx_write --onnx-check MODEL...` round-trips each model into a
 * temporary file and runs ONNX's checker on it (CTest, with python3-onnx).
 */
#include <check.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ir.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/loader.h"

#define LOADER HETRT_TEST_DATA "/loader/"
#define OPT HETRT_TEST_DATA "/optimizer/"
#define NODE "/usr/share/libonnx-testdata/data/node/"

extern char **environ;

/* Loaded, saved and compared: every dtype (typed fields and raw_data),
 * symbolic dims and value_info, subgraphs reading outer scopes, old
 * opsets and custom domains, every attribute type, float16 and int64
 * initializers, Constant tensors, If/Loop/Scan bodies, sequence values. */
static const char *const k_models[] = {
    LOADER "typed.onnx",
    LOADER "raw.onnx",
    LOADER "shapes.onnx",
    LOADER "subgraph.onnx",
    LOADER "attrs.onnx",
    LOADER "opset6.onnx",
    OPT "const_chain/model.onnx",
    OPT "conv_f16_clamp/model.onnx",
    OPT "if_outer/model.onnx",
    OPT "cnn_bn/model.onnx",
    OPT "shape_dynamic/model.onnx",
    NODE "test_if/model.onnx",
    NODE "test_loop11/model.onnx",
    NODE "test_scan9_sum/model.onnx",
    NODE "test_scan_sum/model.onnx",
    NODE "test_constant/model.onnx",
    NODE "test_cast_FLOAT_to_FLOAT16/model.onnx",
    NODE "test_if_seq/model.onnx",
    NODE "test_loop13_seq/model.onnx",
};

/* Run through the public API, original and round trip, on data set 0. */
static const char *const k_run_dirs[] = {
    OPT "const_chain", OPT "conv_f16_clamp", OPT "if_outer",
    NODE "test_if",    NODE "test_loop11",   NODE "test_scan9_sum",
};

/* ---- helpers ---- */

static het_graph *load_file(const char *path) {
  het_graph *g = NULL;
  het_status st = het_onnx_load_file(path, &g);
  ck_assert_msg(st == HET_OK, "%s: %s (%s)", path, het_status_str(st),
                het_last_error());
  return g;
}

static void save_ok(const het_graph *g, const char *what, uint8_t **buf,
                    size_t *len) {
  het_status st = het_onnx_save_memory(g, buf, len);
  ck_assert_msg(st == HET_OK, "saving %s: %s (%s)", what, het_status_str(st),
                het_last_error());
  ck_assert_ptr_nonnull(*buf);
}

static het_graph *load_bytes(const uint8_t *buf, size_t len, const char *what) {
  het_graph *g = NULL;
  het_status st = het_onnx_load_memory(buf, len, NULL, what, &g);
  ck_assert_msg(st == HET_OK, "reloading %s: %s (%s)", what, het_status_str(st),
                het_last_error());
  return g;
}

/* Saves g and loads the result back.  Caller destroys. */
static het_graph *round_trip(const het_graph *g, const char *what) {
  uint8_t *buf;
  size_t len;
  save_ok(g, what, &buf, &len);
  het_graph *back = load_bytes(buf, len, what);
  free(buf);
  return back;
}

static const het_value *peer(const het_graph *b, const het_value *va,
                             const char *what) {
  int id = het_graph_find_value((het_graph *)b, va->name);
  ck_assert_msg(id >= 0, "%s: value '%s' lost", what, va->name);
  return &b->values[id];
}

static const char *vname(const het_graph *g, int id) {
  return id < 0 ? "" : g->values[id].name;
}

static void same_type(const het_value *a, const het_value *b,
                      const char *what) {
  ck_assert_msg(a->dtype == b->dtype, "%s '%s': dtype %s, back %s", what,
                a->name, het_dtype_str(a->dtype), het_dtype_str(b->dtype));
  ck_assert_msg(a->shape.rank == b->shape.rank, "%s '%s': rank %d, back %d",
                what, a->name, a->shape.rank, b->shape.rank);
  for (int i = 0; i < a->shape.rank; i++) {
    const het_dim *x = &a->shape.dims[i], *y = &b->shape.dims[i];
    ck_assert_msg(x->value == y->value, "%s '%s' dim %d: %lld, back %lld", what,
                  a->name, i, (long long)x->value, (long long)y->value);
    ck_assert_msg(
        (!x->symbol && !y->symbol) ||
            (x->symbol && y->symbol && strcmp(x->symbol, y->symbol) == 0),
        "%s '%s' dim %d: symbol '%s', back '%s'", what, a->name, i,
        x->symbol ? x->symbol : "(none)", y->symbol ? y->symbol : "(none)");
  }
}

static void same_tensor(const het_tensor *a, const het_tensor *b,
                        const char *what) {
  ck_assert_msg(a && b, "%s: tensor missing", what);
  ck_assert_msg(a->dtype == b->dtype && a->rank == b->rank &&
                    a->nbytes == b->nbytes,
                "%s: %s rank %d (%zu bytes), back %s rank %d (%zu bytes)", what,
                het_dtype_str(a->dtype), a->rank, a->nbytes,
                het_dtype_str(b->dtype), b->rank, b->nbytes);
  for (int i = 0; i < a->rank; i++)
    ck_assert_msg(a->dims[i] == b->dims[i], "%s: dim %d differs", what, i);
  ck_assert_msg(a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0,
                "%s: data differs", what);
}

static void same_graph(const het_graph *a, const het_graph *b,
                       const char *what);

static void same_attr(const het_graph *ga, const het_attr *a,
                      const het_graph *gb, const het_attr *b,
                      const char *what) {
  ck_assert_str_eq(a->name, b->name);
  ck_assert_msg(a->type == b->type, "%s: attribute '%s' type %d, back %d", what,
                a->name, a->type, b->type);
  switch (a->type) {
  case HET_ATTR_FLOAT:
    ck_assert(memcmp(&a->f, &b->f, sizeof a->f) == 0);
    break;
  case HET_ATTR_INT:
    ck_assert_int_eq(a->i, b->i);
    break;
  case HET_ATTR_STRING:
    ck_assert_uint_eq(a->s_len, b->s_len);
    ck_assert(memcmp(a->s, b->s, a->s_len) == 0);
    break;
  case HET_ATTR_TENSOR:
    same_tensor(a->t, b->t, a->name);
    break;
  case HET_ATTR_GRAPH:
    same_graph(a->g, b->g, a->name);
    break;
  default:
    ck_assert_uint_eq(a->n, b->n);
    for (size_t k = 0; k < a->n; k++) {
      if (a->type == HET_ATTR_FLOATS)
        ck_assert(memcmp(&a->floats[k], &b->floats[k], sizeof(float)) == 0);
      else if (a->type == HET_ATTR_INTS)
        ck_assert_int_eq(a->ints[k], b->ints[k]);
      else if (a->type == HET_ATTR_STRINGS)
        ck_assert_str_eq(a->strings[k], b->strings[k]);
      else if (a->type == HET_ATTR_TENSORS)
        same_tensor(a->tensors[k], b->tensors[k], a->name);
      else
        same_graph(ga->subgraphs[a->i + (int64_t)k],
                   gb->subgraphs[b->i + (int64_t)k], a->name);
    }
  }
}

static int trimmed(const int *ids, int n) {
  while (n > 0 && ids[n - 1] < 0)
    n--;
  return n;
}

static void same_ids(const het_graph *ga, const int *a, int na,
                     const het_graph *gb, const int *b, int nb,
                     const char *what) {
  ck_assert_msg(trimmed(a, na) == nb, "%s: %d names, back %d", what,
                trimmed(a, na), nb);
  for (int i = 0; i < nb; i++)
    ck_assert_msg(strcmp(vname(ga, a[i]), vname(gb, b[i])) == 0,
                  "%s %d: '%s', back '%s'", what, i, vname(ga, a[i]),
                  vname(gb, b[i]));
}

/* Node a (of ga) and b (of gb), attributes in order, valueless ones
 * (TYPE_PROTO) not written. */
static void same_node(const het_graph *ga, const het_node *a,
                      const het_graph *gb, const het_node *b) {
  ck_assert_str_eq(a->name, b->name);
  ck_assert_str_eq(a->op_type, b->op_type);
  ck_assert_str_eq(a->domain, b->domain);
  ck_assert_int_eq(a->opset, b->opset);
  same_ids(ga, a->inputs, a->n_inputs, gb, b->inputs, b->n_inputs, a->name);
  same_ids(ga, a->outputs, a->n_outputs, gb, b->outputs, b->n_outputs, a->name);
  int k = 0;
  for (int i = 0; i < a->n_attrs; i++) {
    if (a->attrs[i].type == HET_ATTR_UNDEFINED)
      continue;
    ck_assert_msg(k < b->n_attrs, "node '%s': attribute '%s' lost", a->name,
                  a->attrs[i].name);
    same_attr(ga, &a->attrs[i], gb, &b->attrs[k++], a->name);
  }
  ck_assert_int_eq(k, b->n_attrs);
}

static void same_graph(const het_graph *a, const het_graph *b,
                       const char *what) {
  ck_assert_str_eq(a->name, b->name);
  ck_assert_int_eq(a->n_inputs, b->n_inputs);
  for (int i = 0; i < a->n_inputs; i++) {
    ck_assert_str_eq(vname(a, a->inputs[i]), vname(b, b->inputs[i]));
    same_type(&a->values[a->inputs[i]], &b->values[b->inputs[i]], "input");
  }
  ck_assert_int_eq(a->n_outputs, b->n_outputs);
  for (int i = 0; i < a->n_outputs; i++) {
    ck_assert_str_eq(vname(a, a->outputs[i]), vname(b, b->outputs[i]));
    same_type(&a->values[a->outputs[i]], &b->values[b->outputs[i]], "output");
  }
  int inits_a = 0, inits_b = 0;
  for (int v = 0; v < b->n_values; v++)
    inits_b += (b->values[v].flags & HET_VALUE_INITIALIZER) != 0;
  for (int v = 0; v < a->n_values; v++) {
    const het_value *va = &a->values[v];
    if (va->flags & HET_VALUE_INITIALIZER) {
      inits_a++;
      const het_value *vb = peer(b, va, what);
      ck_assert_msg(vb->flags & HET_VALUE_INITIALIZER,
                    "%s: '%s' is no longer an initializer", what, va->name);
      same_tensor(va->initializer, vb->initializer, va->name);
    }
    /* What the loader knew of every value a node touches (value_info). */
    if (va->dtype != HET_DTYPE_UNDEFINED &&
        (va->producer >= 0 || (va->flags & HET_VALUE_INITIALIZER)))
      same_type(va, peer(b, va, what), "value");
  }
  ck_assert_int_eq(inits_a, inits_b);
  ck_assert_int_eq(a->n_nodes, b->n_nodes);
  for (int i = 0; i < a->n_nodes; i++)
    same_node(a, &a->nodes[a->order ? a->order[i] : i], b, &b->nodes[i]);
}

/* b was loaded from what the writer made of a. */
static void same_model(const het_graph *a, const het_graph *b,
                       const char *what) {
  ck_assert_int_eq(b->ir_version, a->ir_version ? a->ir_version : 8);
  ck_assert_str_eq(b->producer_name,
                   *a->producer_name ? a->producer_name : "hetrt");
  ck_assert_int_eq(a->n_opsets, b->n_opsets);
  for (int i = 0; i < a->n_opsets; i++) {
    ck_assert_str_eq(a->opsets[i].domain, b->opsets[i].domain);
    ck_assert_int_eq(a->opsets[i].version, b->opsets[i].version);
  }
  ck_assert_int_eq(a->n_metadata, b->n_metadata);
  for (int i = 0; i < a->n_metadata; i++) {
    ck_assert_str_eq(a->metadata_keys[i], b->metadata_keys[i]);
    ck_assert_str_eq(a->metadata_values[i], b->metadata_values[i]);
  }
  same_graph(a, b, what);
}

static const het_node *node_of(const het_graph *g, const char *op) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].op_type, op) == 0)
      return &g->nodes[i];
  ck_abort_msg("no %s node", op);
  return NULL;
}

/* ---- core ---- */

/* load → save → load equals the original; the next round trip is
 * byte-identical (the written node order is a fixed point). */
START_TEST(test_round_trip_models) {
  const char *path = k_models[_i];
  het_graph *a = load_file(path);
  het_graph *b = round_trip(a, path);
  same_model(a, b, path);
  uint8_t *buf1, *buf2;
  size_t len1, len2;
  save_ok(b, path, &buf1, &len1);
  het_graph *c = load_bytes(buf1, len1, path);
  same_model(b, c, path);
  save_ok(c, path, &buf2, &len2);
  ck_assert_msg(len1 == len2 && memcmp(buf1, buf2, len1) == 0,
                "%s: second round trip differs (%zu vs %zu bytes)", path, len1,
                len2);
  free(buf1);
  free(buf2);
  het_graph_destroy(c);
  het_graph_destroy(b);
  het_graph_destroy(a);
}
END_TEST

/* The attribute fixture's values, checked by hand after a round trip. */
START_TEST(test_attribute_values) {
  het_graph *a = load_file(LOADER "attrs.onnx");
  het_graph *b = round_trip(a, "attrs");
  const het_node *n = node_of(b, "Everything");
  ck_assert_str_eq(n->domain, "test.attrs");
  ck_assert_int_eq(n->n_attrs, 10);
  ck_assert(het_node_attr_float(n, "f", 0) == 0.25f);
  ck_assert_int_eq(het_node_attr_int(n, "i", 0), -3);
  ck_assert_str_eq(het_node_attr_string(n, "s"), "hello");
  const het_attr *t = het_node_find_attr(n, "t");
  ck_assert_int_eq(t->type, HET_ATTR_TENSOR);
  ck_assert_int_eq(t->t->dtype, HET_DTYPE_INT32);
  ck_assert_int_eq(((int32_t *)t->t->data)[1], -7);
  const het_attr *g = het_node_find_attr(n, "g");
  ck_assert_int_eq(g->type, HET_ATTR_GRAPH);
  ck_assert_str_eq(g->g->name, "g_g_out");
  size_t cnt;
  const float *fl = het_node_attr_floats(n, "floats", &cnt);
  ck_assert(cnt == 2 && fl[1] == 2.5f);
  const int64_t *in = het_node_attr_ints(n, "ints", &cnt);
  ck_assert(cnt == 3 && in[2] == 6);
  const het_attr *ss = het_node_find_attr(n, "strings");
  ck_assert(ss->n == 2 && strcmp(ss->strings[1], "bc") == 0);
  const het_attr *ts = het_node_find_attr(n, "tensors");
  ck_assert(ts->n == 2 && ts->tensors[0]->dtype == HET_DTYPE_FLOAT32);
  const het_attr *gs = het_node_find_attr(n, "graphs");
  ck_assert_int_eq(gs->type, HET_ATTR_GRAPHS);
  ck_assert_uint_eq(gs->n, 2);
  ck_assert_str_eq(b->subgraphs[gs->i + 1]->name, "g_g1");
  het_graph_destroy(b);
  het_graph_destroy(a);
}
END_TEST

/* Symbolic and unknown dims, a rank-less input, value_info, an input that
 * is also an initializer, metadata and producer survive. */
START_TEST(test_declared_types) {
  het_graph *a = load_file(LOADER "shapes.onnx");
  het_graph *b = round_trip(a, "shapes");
  const het_value *x = &b->values[het_graph_find_value(b, "X")];
  ck_assert_int_eq(x->shape.rank, 3);
  ck_assert_str_eq(x->shape.dims[0].symbol, "N");
  ck_assert_int_eq(x->shape.dims[1].value, 3);
  ck_assert_int_eq(x->shape.dims[2].value, -1);
  ck_assert_ptr_null(x->shape.dims[2].symbol);
  ck_assert_int_eq(b->values[het_graph_find_value(b, "Y")].shape.rank, -1);
  const het_value *m = &b->values[het_graph_find_value(b, "M")];
  ck_assert_int_eq(m->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(m->shape.dims[2].value, 7);
  const het_value *bv = &b->values[het_graph_find_value(b, "B")];
  ck_assert(bv->flags & HET_VALUE_GRAPH_INPUT);
  ck_assert(bv->flags & HET_VALUE_INITIALIZER);
  ck_assert_str_eq(b->producer_name, "hetrt-test");
  ck_assert_int_eq(b->n_metadata, 2);
  ck_assert_str_eq(b->metadata_values[1], "test");
  het_graph_destroy(b);
  het_graph_destroy(a);
}
END_TEST

/* An omitted optional input inside a nested subgraph stays omitted. */
START_TEST(test_subgraph_omitted_input) {
  het_graph *a = load_file(LOADER "subgraph.onnx");
  het_graph *b = round_trip(a, "subgraph");
  const het_node *iff = node_of(b, "If");
  const het_graph *then_g = het_node_find_attr(iff, "then_branch")->g;
  const het_node *loop = node_of(then_g, "Loop");
  ck_assert_int_eq(loop->n_inputs, 3);
  ck_assert_int_eq(loop->inputs[1], -1);
  ck_assert_str_eq(then_g->values[loop->inputs[2]].name, "A");
  het_graph_destroy(b);
  het_graph_destroy(a);
}
END_TEST

static het_tensor *read_pb(const char *path, char **name) {
  uint8_t *data;
  size_t size;
  het_tensor *t = NULL;
  ck_assert_int_eq(het_read_file(path, (size_t)1 << 30, &data, &size), HET_OK);
  ck_assert_msg(het_onnx_tensor_decode(data, size, path, &t, name) == HET_OK,
                "%s: %s", path, het_last_error());
  free(data);
  return t;
}

/* Runs the serialized model on the inputs of data set 0; outputs[] gets
 * the results (caller destroys).  Returns the output count. */
static size_t run_model(het_env *env, const uint8_t *model, size_t len,
                        const char *dir, het_tensor **outputs, size_t cap) {
  het_session *s = NULL;
  het_status st = het_session_create_from_memory(env, model, len, NULL, &s);
  ck_assert_msg(st == HET_OK, "%s: %s (%s)", dir, het_status_str(st),
                het_last_error());
  het_tensor *in[16] = {0};
  char *names[16] = {0};
  const char *cnames[16];
  size_t n_in = 0;
  for (; n_in < 16; n_in++) {
    char path[600];
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%zu.pb", dir, n_in);
    if (access(path, R_OK) != 0)
      break;
    in[n_in] = read_pb(path, &names[n_in]);
    cnames[n_in] = names[n_in];
    het_value_desc d;
    if (!*names[n_in] && het_session_get_input(s, n_in, &d) == HET_OK)
      cnames[n_in] = d.name;
  }
  size_t n_out = het_session_get_output_count(s);
  ck_assert(n_out > 0 && n_out <= cap);
  st = het_session_run(s, cnames, in, n_in, NULL, n_out, outputs);
  ck_assert_msg(st == HET_OK, "%s: run: %s (%s)", dir, het_status_str(st),
                het_last_error());
  for (size_t i = 0; i < n_in; i++) {
    het_tensor_destroy(in[i]);
    free(names[i]);
  }
  het_session_destroy(s);
  return n_out;
}

/* The round-tripped model computes bit-exactly what the original does. */
START_TEST(test_run_round_trip) {
  const char *dir = k_run_dirs[_i];
  char path[600];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  uint8_t *orig, *saved;
  size_t olen, slen;
  ck_assert_int_eq(het_read_file(path, (size_t)1 << 30, &orig, &olen), HET_OK);
  het_graph *g = load_file(path);
  save_ok(g, path, &saved, &slen);
  het_graph_destroy(g);
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_tensor *want[8] = {0}, *got[8] = {0};
  size_t n = run_model(env, orig, olen, dir, want, 8);
  ck_assert_uint_eq(run_model(env, saved, slen, dir, got, 8), n);
  for (size_t i = 0; i < n; i++) {
    char what[700];
    snprintf(what, sizeof what, "%s output %zu", dir, i);
    same_tensor(want[i], got[i], what);
    het_tensor_destroy(want[i]);
    het_tensor_destroy(got[i]);
  }
  het_env_destroy(env);
  free(orig);
  free(saved);
}
END_TEST

/* ---- limits ---- */

/* A graph with nothing in it: ir_version 8 and producer "hetrt" appear. */
START_TEST(test_empty_graph) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  het_graph *b = round_trip(g, "empty");
  ck_assert_int_eq(b->ir_version, 8);
  ck_assert_str_eq(b->producer_name, "hetrt");
  ck_assert_int_eq(b->n_nodes, 0);
  ck_assert_int_eq(b->n_inputs + b->n_outputs + b->n_opsets, 0);
  het_graph_destroy(b);
  het_graph_destroy(g);
}
END_TEST

static int *ids_of(het_graph *g, const int *ids, int n) {
  int *a = het_arena_calloc(&g->arena, (size_t)n, sizeof *a);
  ck_assert_ptr_nonnull(a);
  memcpy(a, ids, (size_t)n * sizeof *a);
  return a;
}

/* Omitted optional inputs and outputs: "" in the middle, trailing ones
 * dropped; a valueless attribute is left out, the others kept. */
START_TEST(test_omitted_io) {
  het_graph *g;
  int x, lo, y;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  g->name = "omitted";
  ck_assert_int_eq(het_graph_intern_value(g, "x", &x), HET_OK);
  ck_assert_int_eq(het_graph_intern_value(g, "lo", &lo), HET_OK);
  ck_assert_int_eq(het_graph_intern_value(g, "y", &y), HET_OK);
  g->values[x].flags = g->values[lo].flags = HET_VALUE_GRAPH_INPUT;
  g->values[x].dtype = g->values[lo].dtype = HET_DTYPE_FLOAT32;
  g->values[y].flags = HET_VALUE_GRAPH_OUTPUT;
  g->inputs = ids_of(g, (int[]){x, lo}, 2);
  g->n_inputs = 2;
  g->outputs = ids_of(g, &y, 1);
  g->n_outputs = 1;
  het_attr *attrs = het_arena_calloc(&g->arena, 2, sizeof *attrs);
  attrs[0] = (het_attr){.name = "kept", .type = HET_ATTR_INT, .i = 42};
  attrs[1] = (het_attr){.name = "typeless", .type = HET_ATTR_UNDEFINED};
  het_node n = {.name = "n",
                .op_type = "Custom",
                .domain = "",
                .n_inputs = 5,
                .inputs = ids_of(g, (int[]){x, -1, lo, -1, -1}, 5),
                .n_outputs = 2,
                .outputs = ids_of(g, (int[]){y, -1}, 2),
                .n_attrs = 2,
                .attrs = attrs};
  ck_assert_int_eq(het_graph_add_node(g, &n, NULL), HET_OK);
  het_graph *b = round_trip(g, "omitted");
  const het_node *m = &b->nodes[0];
  ck_assert_int_eq(m->n_inputs, 3);
  ck_assert_str_eq(b->values[m->inputs[0]].name, "x");
  ck_assert_int_eq(m->inputs[1], -1);
  ck_assert_str_eq(b->values[m->inputs[2]].name, "lo");
  ck_assert_int_eq(m->n_outputs, 1);
  ck_assert_int_eq(m->n_attrs, 1);
  ck_assert_int_eq(het_node_attr_int(m, "kept", 0), 42);
  ck_assert_int_eq(b->values[m->inputs[0]].dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(b->values[m->inputs[0]].shape.rank, -1);
  ck_assert_int_eq(b->values[m->outputs[0]].dtype, HET_DTYPE_UNDEFINED);
  het_graph_destroy(b);
  het_graph_destroy(g);
}
END_TEST

/* A graph whose initializer claims 2 GiB + 1 byte (its data is never
 * read): refused before anything is packed, nothing written. */
START_TEST(test_over_2gib) {
  het_graph *g;
  int v;
  static uint8_t byte;
  het_tensor *t;
  int64_t one = 1;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  ck_assert_int_eq(
      het_tensor_create_over(HET_DTYPE_UINT8, &one, 1, &byte, 1, &t), HET_OK);
  t->dims[0] = ((int64_t)2 << 30) + 1;
  t->nbytes = (size_t)t->dims[0];
  ck_assert_int_eq(het_graph_intern_value(g, "huge", &v), HET_OK);
  g->values[v].initializer = t;
  g->values[v].flags = HET_VALUE_INITIALIZER;
  uint8_t *buf = (uint8_t *)&one;
  size_t len = 7;
  het_status st = het_onnx_save_memory(g, &buf, &len);
  ck_assert_int_eq(st, HET_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(het_last_error(), "2 GiB"), "%s", het_last_error());
  ck_assert_ptr_eq(buf, (uint8_t *)&one);
  ck_assert_uint_eq(len, 7);
  het_graph_destroy(g);
}
END_TEST

/* A subgraph that contains itself: refused at the loader's depth limit,
 * not recursed forever. */
START_TEST(test_nesting_limit) {
  het_graph *g;
  int x;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  ck_assert_int_eq(het_graph_intern_value(g, "x", &x), HET_OK);
  het_attr *a = het_arena_calloc(&g->arena, 1, sizeof *a);
  *a = (het_attr){.name = "body", .type = HET_ATTR_GRAPH, .g = g};
  het_node n = {.name = "loop",
                .op_type = "Loop",
                .domain = "",
                .n_outputs = 1,
                .outputs = ids_of(g, &x, 1),
                .n_attrs = 1,
                .attrs = a};
  ck_assert_int_eq(het_graph_add_node(g, &n, NULL), HET_OK);
  uint8_t *buf = NULL;
  size_t len = 0;
  ck_assert_int_eq(het_onnx_save_memory(g, &buf, &len), HET_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(het_last_error(), "nested more than 32 deep"), "%s",
                het_last_error());
  ck_assert_msg(strstr(het_last_error(), "node 'loop' (Loop)"), "%s",
                het_last_error());
  ck_assert_ptr_null(buf);
  het_graph_destroy(g);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_null_arguments) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  uint8_t *buf = NULL;
  size_t len = 0;
  het_error_clear();
  ck_assert_int_eq(het_onnx_save_memory(NULL, &buf, &len),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "het_onnx_save_memory"), "%s",
                het_last_error());
  ck_assert_int_eq(het_onnx_save_memory(g, NULL, &len),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_onnx_save_memory(g, &buf, NULL),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(buf);
  ck_assert_uint_eq(len, 0);
  ck_assert_int_eq(het_onnx_save_file(NULL, "x.onnx"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_onnx_save_file(g, NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "het_onnx_save_file"), "%s",
                het_last_error());
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_missing_folder) {
  het_graph *g = load_file(LOADER "subgraph.onnx");
  char path[256];
  snprintf(path, sizeof path, "/nonexistent-hetrt-%d/sub/model.onnx",
           (int)getpid());
  het_status st = het_onnx_save_file(g, path);
  ck_assert_int_eq(st, HET_ERR_IO);
  ck_assert_msg(strstr(het_last_error(), path), "%s", het_last_error());
  ck_assert_msg(strstr(het_last_error(), strerror(ENOENT)), "%s",
                het_last_error());
  het_graph_destroy(g);
}
END_TEST

/* save_file writes what save_memory makes; a failed save leaves no file. */
START_TEST(test_save_file) {
  het_graph *g = load_file(NODE "test_if/model.onnx");
  char path[] = "/tmp/hetrt_write_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(het_onnx_save_file(g, path), HET_OK);
  uint8_t *file, *mem;
  size_t flen, mlen;
  ck_assert_int_eq(het_read_file(path, (size_t)1 << 30, &file, &flen), HET_OK);
  save_ok(g, "test_if", &mem, &mlen);
  ck_assert(flen == mlen && memcmp(file, mem, flen) == 0);
  free(file);
  free(mem);
  ck_assert_int_eq(unlink(path), 0);
  het_graph *bad;
  ck_assert_int_eq(het_graph_create(&bad), HET_OK);
  het_tensor *s = calloc(1, sizeof *s);
  s->dtype = HET_DTYPE_STRING;
  s->rank = 1;
  s->dims[0] = 1;
  int v;
  ck_assert_int_eq(het_graph_intern_value(bad, "words", &v), HET_OK);
  bad->values[v].initializer = s;
  bad->values[v].flags = HET_VALUE_INITIALIZER;
  ck_assert_int_eq(het_onnx_save_file(bad, path), HET_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(het_last_error(), "words") &&
                    strstr(het_last_error(), "string") &&
                    strstr(het_last_error(), path),
                "%s", het_last_error());
  ck_assert_int_ne(access(path, F_OK), 0);
  het_graph_destroy(bad);
  het_graph_destroy(g);
}
END_TEST

static Suite *write_suite(void) {
  Suite *s = suite_create("onnx_write");
  TCase *core = tcase_create("core");
  tcase_add_loop_test(core, test_round_trip_models, 0,
                      (int)(sizeof k_models / sizeof *k_models));
  tcase_add_test(core, test_attribute_values);
  tcase_add_test(core, test_declared_types);
  tcase_add_test(core, test_subgraph_omitted_input);
  tcase_add_loop_test(core, test_run_round_trip, 0,
                      (int)(sizeof k_run_dirs / sizeof *k_run_dirs));
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_empty_graph);
  tcase_add_test(limits, test_omitted_io);
  tcase_add_test(limits, test_over_2gib);
  tcase_add_test(limits, test_nesting_limit);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_null_arguments);
  tcase_add_test(errors, test_missing_folder);
  tcase_add_test(errors, test_save_file);
  suite_add_tcase(s, errors);
  return s;
}

/* --onnx-check: each model round-tripped into a temporary file must pass
 * onnx.checker.check_model(full_check=True) of /usr/bin/python3. */
static int onnx_check(int n, char **models) {
  static const char code[] =
      "import onnx,sys; "
      "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)";
  int failed = 0;
  for (int i = 0; i < n; i++) {
    het_graph *g = NULL;
    char path[] = "/tmp/hetrt_check_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
      fprintf(stderr, "mkstemp: %s\n", strerror(errno));
      return 1;
    }
    close(fd);
    het_status st = het_onnx_load_file(models[i], &g);
    if (st == HET_OK)
      st = het_onnx_save_file(g, path);
    het_graph_destroy(g);
    bool ok = false;
    fflush(stdout);
    if (st == HET_OK) {
      char *argv[] = {"python3", "-c", (char *)code, path, NULL};
      pid_t pid;
      int status;
      ok = posix_spawn(&pid, "/usr/bin/python3", NULL, NULL, argv, environ) ==
               0 &&
           waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
    } else {
      fprintf(stderr, "%s: %s (%s)\n", models[i], het_status_str(st),
              het_last_error());
    }
    unlink(path);
    printf("%s: %s\n", models[i], ok ? "checker passed" : "FAILED");
    failed += !ok;
  }
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--onnx-check") == 0)
    return onnx_check(argc - 2, argv + 2);
  SRunner *sr = srunner_create(write_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
