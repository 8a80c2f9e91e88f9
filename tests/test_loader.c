/* test_loader.c — Check suites for the ONNX loader (src/onnx/loader.h):
 * initializers of every dtype (typed fields and raw_data), external data
 * and its path checks, declared types and symbolic dims, subgraphs and
 * outer scopes, old opsets, attributes of every type, TensorProto
 * encode/decode, large weights in huge-page memory, and robustness against truncated and bit-flipped files.
 * Fixtures come from tests/data/loader/gen_loader_fixtures.py.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/hostmem.h"
#include "core/ir.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/loader.h"

#define DATA HETRT_TEST_DATA "/loader/"

static het_graph *load_ok(const char *name) {
  het_graph *g = NULL;
  het_status st = het_onnx_load_file(name, &g);
  ck_assert_msg(st == HET_OK, "%s: %s (%s)", name, het_status_str(st),
                het_last_error());
  ck_assert_ptr_nonnull(g);
  return g;
}

/* Loading path fails with want and a message naming the file and needle. */
static void expect_fail(const char *path, het_status want,
                        const char *needle) {
  het_graph *g = NULL;
  het_error_clear();
  het_status st = het_onnx_load_file(path, &g);
  const char *msg = het_last_error();
  ck_assert_msg(st == want, "%s: got %s (%s), want %s", path,
                het_status_str(st), msg, het_status_str(want));
  ck_assert_ptr_null(g);
  ck_assert_msg(strstr(msg, path) != NULL, "message '%s' lacks the file",
                msg);
  ck_assert_msg(strstr(msg, needle) != NULL, "message '%s' lacks '%s'", msg,
                needle);
}

static const het_value *value(het_graph *g, const char *name) {
  int id = het_graph_find_value(g, name);
  ck_assert_msg(id >= 0, "value '%s' missing", name);
  return &g->values[id];
}

static const het_node *node_named(const het_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0)
      return &g->nodes[i];
  ck_abort_msg("node '%s' missing", name);
  return NULL;
}

/* ---- expected initializer contents (mirror of DTYPES in the script) ---- */

static const float k_f32[6] = {0.5f, -1.25f, 2.0f, 3.75f, -4.5f, 100.0f};
static const uint8_t k_u8[6] = {0, 1, 2, 200, 254, 255};
static const int8_t k_i8[6] = {-128, -1, 0, 1, 2, 127};
static const uint16_t k_u16[6] = {0, 1, 2, 40000, 65534, 65535};
static const int16_t k_i16[6] = {-32768, -1, 0, 1, 2, 32767};
static const int32_t k_i32[6] = {INT32_MIN, -1, 0, 1, 2, INT32_MAX};
static const int64_t k_i64[6] = {INT64_MIN, -1, 0, 1, 2, INT64_MAX};
static const uint8_t k_bool[6] = {1, 0, 1, 1, 0, 0};
static const double k_f64[6] = {0.5, -1.25, 2.0, 3.75, -4.5, 1e300};
static const uint32_t k_u32[6] = {0, 1, 2, 3000000000u, 4294967294u,
                                  4294967295u};
static const uint64_t k_u64[6] = {0, 1, 2, 10000000000000000000ull,
                                  18446744073709551614ull,
                                  18446744073709551615ull};

static void check_dtype_tensor(het_graph *g, het_dtype dt, const void *want) {
  char name[64];
  snprintf(name, sizeof name, "t_%s", het_dtype_str(dt));
  const het_value *v = value(g, name);
  ck_assert_msg(v->flags & HET_VALUE_INITIALIZER, "%s not initializer", name);
  ck_assert_int_eq(v->dtype, dt);
  ck_assert_int_eq(v->shape.rank, 2);
  ck_assert_int_eq(v->shape.dims[1].value, 3);
  const het_tensor *t = v->initializer;
  ck_assert_ptr_nonnull(t);
  ck_assert_int_eq(t->dtype, dt);
  ck_assert_int_eq(t->rank, 2);
  ck_assert_int_eq(t->dims[0], 2);
  ck_assert_int_eq(t->dims[1], 3);
  ck_assert_uint_eq(t->nbytes, 6 * het_dtype_size(dt));
  ck_assert_msg(memcmp(t->data, want, t->nbytes) == 0, "%s data differs",
                name);
}

static void check_all_dtypes(const char *file) {
  het_graph *g = load_ok(file);
  uint16_t f16[6], bf16[6];
  for (int i = 0; i < 6; i++) {
    f16[i] = het_f32_to_f16(k_f32[i]);
    bf16[i] = het_f32_to_bf16(k_f32[i]);
  }
  check_dtype_tensor(g, HET_DTYPE_FLOAT32, k_f32);
  check_dtype_tensor(g, HET_DTYPE_UINT8, k_u8);
  check_dtype_tensor(g, HET_DTYPE_INT8, k_i8);
  check_dtype_tensor(g, HET_DTYPE_UINT16, k_u16);
  check_dtype_tensor(g, HET_DTYPE_INT16, k_i16);
  check_dtype_tensor(g, HET_DTYPE_INT32, k_i32);
  check_dtype_tensor(g, HET_DTYPE_INT64, k_i64);
  check_dtype_tensor(g, HET_DTYPE_BOOL, k_bool);
  check_dtype_tensor(g, HET_DTYPE_FLOAT16, f16);
  check_dtype_tensor(g, HET_DTYPE_FLOAT64, k_f64);
  check_dtype_tensor(g, HET_DTYPE_UINT32, k_u32);
  check_dtype_tensor(g, HET_DTYPE_UINT64, k_u64);
  check_dtype_tensor(g, HET_DTYPE_BFLOAT16, bf16);
  ck_assert_int_eq(g->n_outputs, 13);
  het_graph_destroy(g);
}

START_TEST(test_typed_fields) { check_all_dtypes(DATA "typed.onnx"); }
END_TEST

START_TEST(test_raw_data) { check_all_dtypes(DATA "raw.onnx"); }
END_TEST

START_TEST(test_external_data) {
  het_graph *g = load_ok(DATA "ext_valid.onnx");
  const het_tensor *w = value(g, "w")->initializer;
  ck_assert_int_eq(w->dtype, HET_DTYPE_FLOAT32);
  ck_assert_uint_eq(w->nbytes, sizeof k_f32);
  ck_assert(memcmp(w->data, k_f32, sizeof k_f32) == 0);
  const het_tensor *v = value(g, "v")->initializer;
  ck_assert_int_eq(v->dtype, HET_DTYPE_INT64);
  ck_assert_int_eq(((const int64_t *)v->data)[0], 42);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_declared_types) {
  het_graph *g = load_ok(DATA "shapes.onnx");
  const het_value *x = value(g, "X");
  ck_assert_uint_eq(x->flags, HET_VALUE_GRAPH_INPUT);
  ck_assert_int_eq(x->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(x->shape.rank, 3);
  ck_assert_int_eq(x->shape.dims[0].value, -1);
  ck_assert_str_eq(x->shape.dims[0].symbol, "N");
  ck_assert_int_eq(x->shape.dims[1].value, 3);
  ck_assert_ptr_null(x->shape.dims[1].symbol);
  ck_assert_int_eq(x->shape.dims[2].value, -1);
  ck_assert_ptr_null(x->shape.dims[2].symbol);
  const het_value *y = value(g, "Y");
  ck_assert_int_eq(y->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(y->shape.rank, -1);
  const het_value *b = value(g, "B");
  ck_assert_uint_eq(b->flags, HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER);
  ck_assert_ptr_nonnull(b->initializer);
  ck_assert_float_eq(((const float *)b->initializer->data)[2], 3.0f);
  const het_value *m = value(g, "M");
  ck_assert_int_eq(m->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(m->shape.rank, 3);
  ck_assert_int_eq(m->shape.dims[2].value, 7);
  ck_assert_int_eq(m->producer, 0);
  const het_value *z = value(g, "Z");
  ck_assert(z->flags & HET_VALUE_GRAPH_OUTPUT);
  ck_assert_str_eq(z->shape.dims[0].symbol, "N");
  ck_assert_int_eq(g->n_inputs, 3);
  ck_assert_int_eq(g->inputs[2], het_graph_find_value(g, "B"));
  ck_assert_int_eq(g->n_outputs, 1);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_model_fields) {
  het_graph *g = load_ok(DATA "shapes.onnx");
  ck_assert_str_eq(g->name, "shapes");
  ck_assert_str_eq(g->producer_name, "hetrt-test");
  ck_assert_int_gt(g->ir_version, 0);
  ck_assert_int_eq(het_graph_opset(g, ""), 13);
  ck_assert_int_eq(het_graph_opset(g, "ai.onnx"), 13);
  ck_assert_int_eq(g->n_metadata, 2);
  int found = 0;
  for (int i = 0; i < g->n_metadata; i++)
    if (strcmp(g->metadata_keys[i], "purpose") == 0) {
      ck_assert_str_eq(g->metadata_values[i], "test");
      found++;
    }
  ck_assert_int_eq(found, 1);
  ck_assert_str_eq(g->nodes[0].name, "Add_0"); /* generated */
  ck_assert_str_eq(g->nodes[1].name, "mul");
  ck_assert_int_eq(g->nodes[0].opset, 13);
  ck_assert_str_eq(g->nodes[0].domain, "");
  ck_assert_ptr_nonnull(g->order);
  ck_assert_int_eq(g->order[0], 0);
  ck_assert_int_eq(g->order[1], 1);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_subgraphs) {
  het_graph *g = load_ok(DATA "subgraph.onnx");
  const het_node *n = node_named(g, "If_0");
  const het_attr *then_a = het_node_find_attr(n, "then_branch");
  const het_attr *else_a = het_node_find_attr(n, "else_branch");
  ck_assert_ptr_nonnull(then_a);
  ck_assert_ptr_nonnull(else_a);
  ck_assert_int_eq(then_a->type, HET_ATTR_GRAPH);
  ck_assert_int_eq(g->n_subgraphs, 2);
  het_graph *tg = then_a->g;
  ck_assert_str_eq(tg->name, "then_branch");
  ck_assert_int_eq(tg->n_subgraphs, 1);
  ck_assert_ptr_nonnull(tg->order);
  const het_node *loop = node_named(tg, "Loop_0");
  ck_assert_int_eq(loop->opset, 13);
  ck_assert_int_eq(het_node_input(loop, 1), -1); /* omitted input */
  ck_assert_int_eq(het_graph_opset(tg, ""), 13);
  const het_attr *body_a = het_node_find_attr(loop, "body");
  ck_assert_int_eq(body_a->type, HET_ATTR_GRAPH);
  het_graph *body = body_a->g;
  ck_assert_int_eq(body->n_inputs, 3);
  /* "A" is read from two scopes up: known in body, with no local source */
  const het_value *a = value(body, "A");
  ck_assert_uint_eq(a->flags, 0);
  ck_assert_int_eq(a->producer, -1);
  ck_assert_int_eq(value(body, "x_in")->shape.dims[0].value, 2);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_opset6_and_unknown_op) {
  het_graph *g = load_ok(DATA "opset6.onnx");
  ck_assert_int_eq(g->ir_version, 3);
  const het_node *add = &g->nodes[0];
  ck_assert_str_eq(add->op_type, "Add");
  ck_assert_int_eq(add->opset, 6);
  ck_assert_int_eq(het_node_attr_int(add, "broadcast", 0), 1);
  const het_node *fro = &g->nodes[1];
  ck_assert_str_eq(fro->domain, "com.example");
  ck_assert_int_eq(fro->opset, 2);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_attributes) {
  het_graph *g = load_ok(DATA "attrs.onnx");
  const het_node *n = &g->nodes[0];
  size_t cnt;
  ck_assert_int_eq(n->n_attrs, 10);
  ck_assert_float_eq(het_node_attr_float(n, "f", 0), 0.25f);
  ck_assert_int_eq(het_node_attr_int(n, "i", 0), -3);
  ck_assert_str_eq(het_node_attr_string(n, "s"), "hello");
  ck_assert_uint_eq(het_node_find_attr(n, "s")->s_len, 5);
  const het_attr *t = het_node_find_attr(n, "t");
  ck_assert_int_eq(t->type, HET_ATTR_TENSOR);
  ck_assert_int_eq(t->t->dtype, HET_DTYPE_INT32);
  ck_assert_int_eq(((const int32_t *)t->t->data)[1], -7);
  const het_attr *ga = het_node_find_attr(n, "g");
  ck_assert_int_eq(ga->type, HET_ATTR_GRAPH);
  ck_assert_str_eq(ga->g->name, "g_g_out");
  const float *fl = het_node_attr_floats(n, "floats", &cnt);
  ck_assert_uint_eq(cnt, 2);
  ck_assert_float_eq(fl[1], 2.5f);
  const int64_t *in = het_node_attr_ints(n, "ints", &cnt);
  ck_assert_uint_eq(cnt, 3);
  ck_assert_int_eq(in[2], 6);
  const het_attr *ss = het_node_find_attr(n, "strings");
  ck_assert_int_eq(ss->type, HET_ATTR_STRINGS);
  ck_assert_uint_eq(ss->n, 2);
  ck_assert_str_eq(ss->strings[1], "bc");
  const het_attr *ts = het_node_find_attr(n, "tensors");
  ck_assert_int_eq(ts->type, HET_ATTR_TENSORS);
  ck_assert_uint_eq(ts->n, 2);
  ck_assert_float_eq(((const float *)ts->tensors[0]->data)[0], 1.5f);
  ck_assert_int_eq(ts->tensors[1]->dtype, HET_DTYPE_INT32);
  const het_attr *gs = het_node_find_attr(n, "graphs");
  ck_assert_int_eq(gs->type, HET_ATTR_GRAPHS);
  ck_assert_uint_eq(gs->n, 2);
  ck_assert_str_eq(gs->g->name, "g_g0");
  ck_assert_str_eq(g->subgraphs[gs->i + 1]->name, "g_g1");
  ck_assert_int_eq(n->opset, 1);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_load_memory) {
  uint8_t *buf;
  size_t len;
  het_graph *g = NULL;
  ck_assert_int_eq(het_read_file(DATA "attrs.onnx", 1 << 20, &buf, &len),
                   HET_OK);
  ck_assert_int_eq(het_onnx_load_memory(buf, len, NULL, "mem", &g), HET_OK);
  ck_assert_int_eq(g->n_nodes, 1);
  het_graph_destroy(g);
  free(buf);
  ck_assert_int_eq(het_read_file(DATA "ext_valid.onnx", 1 << 20, &buf, &len),
                   HET_OK);
  g = NULL;
  ck_assert_int_eq(het_onnx_load_memory(buf, len, NULL, "mem", &g),
                   HET_ERR_UNSUPPORTED);
  ck_assert_ptr_null(g);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "external data"));
  ck_assert_int_eq(het_onnx_load_memory(buf, len, DATA, "mem", &g), HET_OK);
  het_graph_destroy(g);
  free(buf);
}
END_TEST

/* Whether the kernel offers transparent huge pages to advised memory. */
static bool thp_offered(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  char line[128] = "";
  if (!f)
    return false;
  bool ok = fgets(line, sizeof line, f) && !strstr(line, "[never]");
  fclose(f);
  return ok;
}

/* The THPeligible flag of the mapping holding p (/proc/self/smaps). */
static bool thp_eligible(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  ck_assert_ptr_nonnull(f);
  char line[512];
  bool inside = false, eligible = false;
  uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') &&
        strchr(line, '-') < strchr(line, ' '))
      inside = a >= lo && a < hi;
    else if (inside && strncmp(line, "THPeligible:", 12) == 0)
      eligible = atoi(line + 12) == 1;
  }
  fclose(f);
  return eligible;
}

/* Host memory: small blocks 64-byte aligned, an impossible size refused;
 * a weight of 2 MiB and more is decoded into a block on a 2 MiB boundary
 * advised as huge pages (copying a model's weights into 4 KiB pages cost
 * more than the rest of session creation), with the file's bytes. */
START_TEST(test_large_weight_huge_pages) {
  void *p = het_host_alloc(0), *q = het_host_alloc(100);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(q);
  ck_assert_uint_eq((uintptr_t)p % 64, 0);
  ck_assert_uint_eq((uintptr_t)q % 64, 0);
  free(p);
  free(q);
  ck_assert_ptr_null(het_host_alloc(SIZE_MAX - 10));
  int64_t n = (3 << 20) / 4 + 5;
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, &n, 1, &t),
                   HET_OK);
  for (int64_t i = 0; i < n; i++)
    ((float *)t->data)[i] = (float)i * 0.25f - 7.0f;
  het_graph *g;
  int v;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  ck_assert_int_eq(het_graph_intern_value(g, "w", &v), HET_OK);
  g->values[v].initializer = t;
  g->values[v].flags = HET_VALUE_INITIALIZER;
  uint8_t *buf;
  size_t len;
  ck_assert_int_eq(het_onnx_save_memory(g, &buf, &len), HET_OK);
  het_graph *b = NULL;
  ck_assert_int_eq(het_onnx_load_memory(buf, len, NULL, "mem", &b), HET_OK);
  const het_tensor *w = value(b, "w")->initializer;
  ck_assert_ptr_nonnull(w);
  ck_assert_uint_eq(w->nbytes, t->nbytes);
  ck_assert_uint_eq((uintptr_t)w->data % HET_HOSTMEM_HUGE_BYTES, 0);
  ck_assert_int_eq(memcmp(w->data, t->data, t->nbytes), 0);
  if (thp_offered())
    ck_assert_msg(thp_eligible(w->data), "weight not in huge-page memory");
  het_graph_destroy(b);
  free(buf);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_tensor_roundtrip) {
  static const het_dtype types[] = {
      HET_DTYPE_FLOAT32, HET_DTYPE_UINT8,   HET_DTYPE_INT8,    HET_DTYPE_UINT16,
      HET_DTYPE_INT16,   HET_DTYPE_INT32,   HET_DTYPE_INT64,   HET_DTYPE_BOOL,
      HET_DTYPE_FLOAT16, HET_DTYPE_FLOAT64, HET_DTYPE_UINT32,  HET_DTYPE_UINT64,
      HET_DTYPE_BFLOAT16};
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    int64_t dims[3] = {2, 0 + (int64_t)k % 3 + 1, 2};
    het_tensor *t, *back;
    ck_assert_int_eq(het_tensor_create_empty(types[k], dims, 3, &t), HET_OK);
    for (size_t i = 0; i < t->nbytes; i++)
      ((uint8_t *)t->data)[i] =
          types[k] == HET_DTYPE_BOOL ? (uint8_t)(i & 1) : (uint8_t)(i * 7 + k);
    uint8_t *buf;
    size_t len;
    char *name = NULL;
    ck_assert_int_eq(het_onnx_tensor_encode(t, "x_in", &buf, &len), HET_OK);
    ck_assert_int_eq(het_onnx_tensor_decode(buf, len, "pb", &back, &name),
                     HET_OK);
    ck_assert_str_eq(name, "x_in");
    ck_assert_int_eq(back->dtype, types[k]);
    ck_assert_int_eq(back->rank, 3);
    ck_assert_int_eq(back->dims[1], dims[1]);
    ck_assert_uint_eq(back->nbytes, t->nbytes);
    ck_assert(memcmp(back->data, t->data, t->nbytes) == 0);
    free(name);
    free(buf);
    het_tensor_destroy(back);
    het_tensor_destroy(t);
  }
  /* a scalar, and an empty tensor */
  het_tensor *s, *back;
  uint8_t *buf;
  size_t len;
  int64_t zero = 0;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_INT64, NULL, 0, &s), HET_OK);
  ck_assert_int_eq(het_onnx_tensor_encode(s, NULL, &buf, &len), HET_OK);
  ck_assert_int_eq(het_onnx_tensor_decode(buf, len, "pb", &back, NULL),
                   HET_OK);
  ck_assert_int_eq(back->rank, 0);
  ck_assert_uint_eq(back->nbytes, 8);
  free(buf);
  het_tensor_destroy(back);
  het_tensor_destroy(s);
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, &zero, 1, &s), HET_OK);
  ck_assert_int_eq(het_onnx_tensor_encode(s, "e", &buf, &len), HET_OK);
  ck_assert_int_eq(het_onnx_tensor_decode(buf, len, "pb", &back, NULL),
                   HET_OK);
  ck_assert_int_eq(back->dims[0], 0);
  free(buf);
  het_tensor_destroy(back);
  het_tensor_destroy(s);
}
END_TEST

/* A backend-suite .pb file decodes to what its model declares. */
START_TEST(test_tensor_decode_testdata) {
  const char *dir = "/usr/share/libonnx-testdata/data/node/"
                    "test_conv_with_strides_padding/test_data_set_0/";
  char path[512];
  snprintf(path, sizeof path, "%sinput_1.pb", dir);
  if (access(path, R_OK) != 0)
    return; /* suite not installed: the roundtrip test covers decoding */
  uint8_t *buf;
  size_t len;
  het_tensor *t;
  char *name;
  ck_assert_int_eq(het_read_file(path, 1 << 20, &buf, &len), HET_OK);
  ck_assert_int_eq(het_onnx_tensor_decode(buf, len, path, &t, &name), HET_OK);
  ck_assert_str_eq(name, "W");
  ck_assert_int_eq(t->dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(t->rank, 4);
  ck_assert_int_eq(t->dims[2], 3);
  ck_assert_float_eq(((const float *)t->data)[0], 1.0f);
  free(name);
  free(buf);
  het_tensor_destroy(t);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_rank_overflow_limits) {
  expect_fail(DATA "bad_rank9.onnx", HET_ERR_UNSUPPORTED, "'w'");
  expect_fail(DATA "bad_huge.onnx", HET_ERR_INVALID_MODEL, "overflow");
  expect_fail(DATA "ext_offset.onnx", HET_ERR_INVALID_MODEL, "beyond");
  expect_fail(DATA "ext_length.onnx", HET_ERR_INVALID_MODEL, "exceeds");
}
END_TEST

START_TEST(test_read_file_limit) {
  uint8_t *buf = NULL;
  size_t len;
  ck_assert_int_eq(het_read_file(DATA "raw.onnx", 100, &buf, &len),
                   HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "raw.onnx"));
  ck_assert_int_eq(het_read_file(DATA, 1 << 20, &buf, &len), HET_ERR_IO);
  ck_assert_ptr_null(buf);
}
END_TEST

/* Appends field `field` (length-delimited) holding in[0..n) to out. */
static size_t wrap_field(uint8_t *out, unsigned field, const uint8_t *in,
                         size_t n) {
  size_t k = 0;
  uint64_t vals[2] = {(uint64_t)field << 3 | 2, n};
  for (int v = 0; v < 2; v++) {
    uint64_t x = vals[v];
    do {
      out[k++] = (uint8_t)((x & 0x7f) | (x > 0x7f ? 0x80 : 0));
      x >>= 7;
    } while (x);
  }
  memcpy(out + k, in, n);
  return k + n;
}

/* Graph → node → attribute → graph ... nested `levels` times.  Field
 * numbers: ModelProto.graph 7, GraphProto.node 1, NodeProto.attribute 5,
 * AttributeProto.g 6. */
static uint8_t *nested_model(int levels, size_t *len) {
  size_t cap = 64 + (size_t)levels * 64;
  uint8_t *a = calloc(cap, 1), *b = calloc(cap, 1);
  size_t n = 0;
  for (int l = 0; l < levels; l++) {
    n = wrap_field(b, 6, a, n); /* attr.g = graph */
    n = wrap_field(a, 5, b, n); /* node.attribute = attr */
    n = wrap_field(b, 1, a, n); /* graph.node = node */
    memcpy(a, b, n);
  }
  n = wrap_field(b, 7, a, n);
  free(a);
  *len = n;
  return b;
}

START_TEST(test_nesting_depth) {
  size_t len;
  uint8_t *buf = nested_model(2000, &len);
  het_graph *g = NULL;
  ck_assert_int_eq(het_onnx_load_memory(buf, len, NULL, "deep", &g),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "nested"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "deep"));
  free(buf);
}
END_TEST

static void write_file(const char *path, const uint8_t *data, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

/* A symlink inside the model folder that points outside it is refused;
 * one that stays inside is followed. */
START_TEST(test_external_symlink) {
  char dir[] = "/tmp/hetrt_loader_XXXXXX";
  char model[128], weights[128], whole[128], real[128];
  uint8_t *buf;
  size_t len;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  snprintf(weights, sizeof weights, "%s/ext_weights.bin", dir);
  snprintf(whole, sizeof whole, "%s/ext_whole.bin", dir);
  snprintf(real, sizeof real, "%s/real.bin", dir);
  ck_assert_int_eq(het_read_file(DATA "ext_valid.onnx", 1 << 20, &buf, &len),
                   HET_OK);
  write_file(model, buf, len);
  free(buf);
  ck_assert_int_eq(het_read_file(DATA "ext_whole.bin", 1 << 20, &buf, &len),
                   HET_OK);
  write_file(whole, buf, len);
  free(buf);
  ck_assert_int_eq(symlink(DATA "ext_weights.bin", weights), 0);
  expect_fail(model, HET_ERR_INVALID_MODEL, "outside the model folder");
  ck_assert_int_eq(unlink(weights), 0);
  ck_assert_int_eq(het_read_file(DATA "ext_weights.bin", 1 << 20, &buf, &len),
                   HET_OK);
  write_file(real, buf, len);
  free(buf);
  ck_assert_int_eq(symlink("real.bin", weights), 0);
  het_graph *g = load_ok(model);
  het_graph_destroy(g);
  unlink(weights);
  unlink(real);
  unlink(whole);
  unlink(model);
  rmdir(dir);
}
END_TEST

/* ---- errors ---- */

typedef struct error_case {
  const char *file;
  het_status status;
  const char *needle;
} error_case;

static const error_case k_errors[] = {
    {"bad_rawsize.onnx", HET_ERR_INVALID_MODEL, "tensor 'w': raw_data holds 20"},
    {"bad_typedcount.onnx", HET_ERR_INVALID_MODEL, "float_data holds 5"},
    {"bad_negdim.onnx", HET_ERR_INVALID_MODEL, "tensor 'w': dim 0 is -2"},
    {"bad_string.onnx", HET_ERR_UNSUPPORTED, "tensor 'w': string"},
    {"bad_field.onnx", HET_ERR_INVALID_MODEL, "int64_data"},
    {"bad_dangling.onnx", HET_ERR_INVALID_MODEL, "'nowhere'"},
    {"bad_cycle.onnx", HET_ERR_INVALID_MODEL, "cycle"},
    {"bad_sparse.onnx", HET_ERR_UNSUPPORTED, "node 'sp' (Constant): attribute "
                                             "'sparse_value'"},
    {"ext_dotdot.onnx", HET_ERR_INVALID_MODEL, "leaves the model folder"},
    {"ext_absolute.onnx", HET_ERR_INVALID_MODEL, "'/etc/passwd' is absolute"},
    {"ext_missing.onnx", HET_ERR_IO, "no_such_file.bin"},
    {"ext_badoffset.onnx", HET_ERR_INVALID_MODEL, "offset '-16'"},
    {"no_such_model.onnx", HET_ERR_IO, "cannot open"},
};

START_TEST(test_error_case) {
  const error_case *c = &k_errors[_i];
  char path[512];
  snprintf(path, sizeof path, "%s%s", DATA, c->file);
  expect_fail(path, c->status, c->needle);
}
END_TEST

START_TEST(test_not_a_model) {
  het_graph *g = NULL;
  static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  ck_assert_int_eq(het_onnx_load_memory(junk, sizeof junk, NULL, "junk", &g),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "junk"));
  ck_assert_int_eq(het_onnx_load_memory("", 0, NULL, "empty", &g),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no graph"));
  het_tensor *t;
  ck_assert_int_eq(het_onnx_tensor_decode(junk, sizeof junk, "x.pb", &t, NULL),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "x.pb"));
  ck_assert_ptr_null(g);
}
END_TEST

/* ---- robustness: truncations and bit flips never crash ---- */

static int load_mutant(const uint8_t *buf, size_t len, const char *base) {
  het_graph *g = NULL;
  het_error_clear();
  het_status st = het_onnx_load_memory(buf, len, base, "fuzz", &g);
  if (st == HET_OK) {
    ck_assert_ptr_nonnull(g);
    het_graph_destroy(g);
    return 0;
  }
  ck_assert_msg(het_last_error()[0] != '\0', "%s with no message (len %zu)",
                het_status_str(st), len);
  ck_assert_ptr_null(g);
  return 1;
}

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void fuzz_file(const char *path, const char *base, int flips) {
  uint8_t *orig, *buf;
  size_t len;
  if (access(path, R_OK) != 0)
    return;
  ck_assert_int_eq(het_read_file(path, 1 << 20, &orig, &len), HET_OK);
  ck_assert_int_eq(load_mutant(orig, len, base), 0);
  buf = malloc(len);
  int failed = 0;
  for (size_t n = 0; n < len; n++)
    failed += load_mutant(orig, n, base);
  ck_assert_msg(failed > 0, "%s: no truncation was refused", path);
  uint64_t seed = 0x9e3779b97f4a7c15ull ^ len;
  for (int k = 0; k < flips; k++) {
    memcpy(buf, orig, len);
    int nbits = 1 + (int)(next_rand(&seed) % 3);
    for (int b = 0; b < nbits; b++) {
      uint64_t r = next_rand(&seed);
      buf[(r >> 8) % len] ^= (uint8_t)(1u << (r & 7));
    }
    load_mutant(buf, len, base);
  }
  free(buf);
  free(orig);
}

START_TEST(test_robust_mutations) {
  fuzz_file("/usr/share/libonnx-testdata/data/node/"
            "test_conv_with_strides_padding/model.onnx",
            NULL, 3000);
  fuzz_file(DATA "attrs.onnx", NULL, 3000);
  fuzz_file(DATA "subgraph.onnx", NULL, 2000);
  fuzz_file(DATA "shapes.onnx", NULL, 1000);
  fuzz_file(DATA "typed.onnx", NULL, 1000);
  fuzz_file(DATA "ext_valid.onnx", DATA, 1000);
}
END_TEST

static Suite *loader_suite(void) {
  Suite *s = suite_create("loader");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_typed_fields);
  tcase_add_test(core, test_raw_data);
  tcase_add_test(core, test_external_data);
  tcase_add_test(core, test_declared_types);
  tcase_add_test(core, test_model_fields);
  tcase_add_test(core, test_subgraphs);
  tcase_add_test(core, test_opset6_and_unknown_op);
  tcase_add_test(core, test_attributes);
  tcase_add_test(core, test_load_memory);
  tcase_add_test(core, test_large_weight_huge_pages);
  tcase_add_test(core, test_tensor_roundtrip);
  tcase_add_test(core, test_tensor_decode_testdata);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_rank_overflow_limits);
  tcase_add_test(limits, test_read_file_limit);
  tcase_add_test(limits, test_nesting_depth);
  tcase_add_test(limits, test_external_symlink);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_loop_test(errors, test_error_case, 0,
                      (int)(sizeof k_errors / sizeof k_errors[0]));
  tcase_add_test(errors, test_not_a_model);
  tcase_add_test(errors, test_robust_mutations);
  tcase_set_timeout(errors, 60);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(loader_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
