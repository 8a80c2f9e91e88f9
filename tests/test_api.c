/* test_api.c — Check suites for the public C API (include/hetrt/hetrt.h):
 * status strings and messages, NULL arguments, options, model loading
 * from file and memory, input/output descriptions with symbolic dims, runs
 * with bad inputs (the session must stay usable), tensors over user memory
 * and concurrent runs.  The test model, Z = Relu(X + Y) with X, Y, Z of
 * shape [N, 3], is built in memory with the protobuf-c ONNX types.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetrt/hetrt.h"
#include "onnx.pb-c.h"

/* ---- the test model ---- */

static Onnx__ValueInfoProto *api_value_info(const char *name, Onnx__TypeProto *type,
                                            Onnx__TypeProto__Tensor *tt, Onnx__TensorShapeProto *sh,
                                            Onnx__TensorShapeProto__Dimension **dims,
                                            Onnx__ValueInfoProto *vi) {
  static Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
  static Onnx__TensorShapeProto__Dimension d1 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
  d0.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  d0.dim_param = "N";
  d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d1.dim_value = 3;
  dims[0] = &d0;
  dims[1] = &d1;
  sh->n_dim = 2;
  sh->dim = dims;
  tt->has_elem_type = 1;
  tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  tt->shape = sh;
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  vi->name = (char *)name;
  vi->type = type;
  return vi;
}

/* Serialized model; caller frees. */
static uint8_t *api_model_bytes(size_t *len) {
  Onnx__TypeProto types[3] = {ONNX__TYPE_PROTO__INIT, ONNX__TYPE_PROTO__INIT, ONNX__TYPE_PROTO__INIT};
  Onnx__TypeProto__Tensor tts[3] = {ONNX__TYPE_PROTO__TENSOR__INIT, ONNX__TYPE_PROTO__TENSOR__INIT,
                                    ONNX__TYPE_PROTO__TENSOR__INIT};
  Onnx__TensorShapeProto shapes[3] = {ONNX__TENSOR_SHAPE_PROTO__INIT, ONNX__TENSOR_SHAPE_PROTO__INIT,
                                      ONNX__TENSOR_SHAPE_PROTO__INIT};
  Onnx__TensorShapeProto__Dimension *dims[3][2];
  Onnx__ValueInfoProto vis[3] = {ONNX__VALUE_INFO_PROTO__INIT, ONNX__VALUE_INFO_PROTO__INIT,
                                 ONNX__VALUE_INFO_PROTO__INIT};
  const char *names[3] = {"X", "Y", "Z"};
  Onnx__ValueInfoProto *vp[3];
  for (int i = 0; i < 3; i++)
    vp[i] = api_value_info(names[i], &types[i], &tts[i], &shapes[i], dims[i], &vis[i]);
  char *add_in[] = {"X", "Y"}, *add_out[] = {"T"}, *relu_in[] = {"T"}, *relu_out[] = {"Z"};
  Onnx__NodeProto add = ONNX__NODE_PROTO__INIT, relu = ONNX__NODE_PROTO__INIT;
  add.name = "add0", add.op_type = "Add", add.n_input = 2, add.input = add_in;
  add.n_output = 1, add.output = add_out;
  relu.name = "relu0", relu.op_type = "Relu", relu.n_input = 1, relu.input = relu_in;
  relu.n_output = 1, relu.output = relu_out;
  Onnx__NodeProto *nodes[] = {&add, &relu};
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "api_model", g.n_node = 2, g.node = nodes;
  g.n_input = 2, g.input = vp, g.n_output = 1, g.output = &vp[2];
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *op = &opset;
  opset.domain = "", opset.has_version = 1, opset.version = 13;
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1, m.ir_version = 7, m.n_opset_import = 1, m.opset_import = &op;
  m.producer_name = "test_api", m.graph = &g;
  *len = onnx__model_proto__get_packed_size(&m);
  uint8_t *buf = malloc(*len);
  ck_assert_ptr_nonnull(buf);
  onnx__model_proto__pack(&m, buf);
  return buf;
}

static het_env *env;
static het_session *sess;

static void api_setup(void) {
  size_t len;
  uint8_t *buf = api_model_bytes(&len);
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_msg(het_session_create_from_memory(env, buf, len, NULL, &sess) == HET_OK,
                "session: %s", het_last_error());
  free(buf);
}

static void api_teardown(void) {
  het_session_destroy(sess);
  het_env_destroy(env);
  sess = NULL;
  env = NULL;
}

static het_tensor *api_tensor(het_dtype dt, int64_t n, int64_t c, float base) {
  int64_t dims[2] = {n, c};
  het_tensor *t = NULL;
  ck_assert_int_eq(het_tensor_create(dt, dims, 2, &t), HET_OK);
  if (dt == HET_DTYPE_FLOAT32) {
    float *p = het_tensor_get_data(t);
    for (int64_t i = 0; i < n * c; i++)
      p[i] = base + (float)i;
  }
  return t;
}

/* Runs Z = Relu(X + Y) with X = -3 + i and Y = 1 and checks every value. */
static void api_check_good_run(het_session *s, int64_t n) {
  het_tensor *in[2] = {api_tensor(HET_DTYPE_FLOAT32, n, 3, -3.0f), NULL};
  het_tensor *out = NULL;
  in[1] = api_tensor(HET_DTYPE_FLOAT32, n, 3, 0.0f);
  float *y = het_tensor_get_data(in[1]);
  for (int64_t i = 0; i < n * 3; i++)
    y[i] = 1.0f;
  const char *names[2] = {"X", "Y"};
  ck_assert_msg(het_session_run(s, names, in, 2, NULL, 1, &out) == HET_OK, "run: %s",
                het_last_error());
  int64_t dims[HET_MAX_RANK];
  ck_assert_int_eq(het_tensor_get_dims(out, dims, HET_MAX_RANK), 2);
  ck_assert_int_eq(dims[0], n);
  ck_assert_int_eq(dims[1], 3);
  ck_assert_int_eq(het_tensor_get_dtype(out), HET_DTYPE_FLOAT32);
  const float *z = het_tensor_get_data(out);
  for (int64_t i = 0; i < n * 3; i++) {
    float want = -3.0f + (float)i + 1.0f;
    ck_assert_float_eq(z[i], want > 0 ? want : 0.0f);
  }
  het_tensor_destroy(out);
  het_tensor_destroy(in[0]);
  het_tensor_destroy(in[1]);
}

/* ---- core ---- */

START_TEST(test_status_strings) {
  ck_assert_str_eq(het_status_str(HET_OK), "ok");
  ck_assert_str_eq(het_status_str(HET_ERR_SHAPE), "shape mismatch");
  ck_assert_str_eq(het_status_str(HET_ERR_NOT_BUILT), "provider not built");
  ck_assert_ptr_nonnull(het_status_str((het_status)9999));
  ck_assert_str_eq(het_dtype_str(HET_DTYPE_FLOAT32), "float32");
  ck_assert_str_eq(het_dtype_str((het_dtype)99), "invalid");
  ck_assert_uint_eq(het_dtype_size(HET_DTYPE_INT64), 8);
  ck_assert_uint_eq(het_dtype_size(HET_DTYPE_STRING), 0);
}
END_TEST

START_TEST(test_descriptions_symbolic) {
  ck_assert_uint_eq(het_session_get_input_count(sess), 2);
  ck_assert_uint_eq(het_session_get_output_count(sess), 1);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(sess, 1, &d), HET_OK);
  ck_assert_str_eq(d.name, "Y");
  ck_assert_int_eq(d.dtype, HET_DTYPE_FLOAT32);
  ck_assert_int_eq(d.rank, 2);
  ck_assert_int_eq(d.dims[0], -1);
  ck_assert_ptr_nonnull(d.dim_names[0]);
  ck_assert_str_eq(d.dim_names[0], "N");
  ck_assert_int_eq(d.dims[1], 3);
  ck_assert_int_eq(het_session_get_output(sess, 0, &d), HET_OK);
  ck_assert_str_eq(d.name, "Z");
  ck_assert_int_eq(d.rank, 2);
  ck_assert_int_eq(d.dims[1], 3);
  ck_assert_int_eq(het_session_get_input(sess, 2, &d), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "2"));
}
END_TEST

START_TEST(test_run_batches) {
  api_check_good_run(sess, 2);
  api_check_good_run(sess, 5); /* symbolic N takes another value */
  api_check_good_run(sess, 0); /* empty batch */
}
END_TEST

START_TEST(test_placement) {
  ck_assert_uint_eq(het_session_get_node_count(sess), 2);
  het_node_placement p;
  ck_assert_int_eq(het_session_get_placement(sess, 0, &p), HET_OK);
  ck_assert_str_eq(p.op_type, "Add");
  ck_assert_str_eq(p.name, "add0");
  ck_assert_str_eq(p.provider, "cpu");
  ck_assert_int_eq(het_session_get_placement(sess, 1, &p), HET_OK);
  ck_assert_str_eq(p.op_type, "Relu");
  ck_assert_int_eq(het_session_get_placement(sess, 2, &p), HET_ERR_INVALID_ARGUMENT);
}
END_TEST

START_TEST(test_session_from_file) {
  char path[] = "/tmp/hetrt_api_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  size_t len;
  uint8_t *buf = api_model_bytes(&len);
  ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
  close(fd);
  free(buf);
  het_session *s = NULL;
  het_session_options *o = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "threads", "2"), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", "cpu"), HET_OK);
  ck_assert_msg(het_session_create(env, path, o, &s) == HET_OK, "%s", het_last_error());
  het_session_options_destroy(o); /* options are not referenced after create */
  unlink(path);
  api_check_good_run(s, 3);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_tensor_over_user_memory) {
  float xs[6] = {-5, -1, 0, 1, 2, 3}, ys[6] = {1, 1, 1, 1, 1, 1};
  int64_t dims[2] = {2, 3};
  het_tensor *x = NULL, *y = NULL, *z = NULL;
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32, dims, 2, xs, sizeof xs, &x), HET_OK);
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32, dims, 2, ys, sizeof ys, &y), HET_OK);
  ck_assert_ptr_eq(het_tensor_get_data(x), xs);
  ck_assert_int_eq(het_tensor_get_count(x), 6);
  ck_assert_uint_eq(het_tensor_get_nbytes(x), sizeof xs);
  const char *names[2] = {"X", "Y"};
  het_tensor *in[2] = {x, y};
  ck_assert_msg(het_session_run(sess, names, in, 2, NULL, 1, &z) == HET_OK, "%s", het_last_error());
  const float *zp = het_tensor_get_data(z);
  const float want[6] = {0, 0, 1, 2, 3, 4};
  for (int i = 0; i < 6; i++)
    ck_assert_float_eq(zp[i], want[i]);
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_tensor_destroy(z);
  ck_assert_float_eq(xs[0], -5.0f); /* user memory untouched and still ours */
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32, dims, 2, xs, 8, &x),
                   HET_ERR_INVALID_ARGUMENT);
}
END_TEST

static void *api_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 20; i++)
    api_check_good_run(sess, 1 + i % 4);
  return NULL;
}

START_TEST(test_concurrent_runs) {
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(pthread_create(&th[i], NULL, api_thread, NULL), 0);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
}
END_TEST

/* ---- errors ---- */

START_TEST(test_null_arguments) {
  het_session *s = (het_session *)0x1;
  ck_assert_int_eq(het_env_create(NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_create(env, NULL, NULL, &s), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_create(NULL, "model.onnx", NULL, &s), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_create_from_memory(env, NULL, 10, NULL, &s),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_eq(s, (het_session *)0x1); /* out-parameter untouched on failure */
  ck_assert_str_ne(het_last_error(), "");
  ck_assert_int_eq(het_session_run(NULL, NULL, NULL, 0, NULL, 0, NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, NULL, 0, NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_uint_eq(het_session_get_input_count(NULL), 0);
  het_tensor_destroy(NULL);
  het_session_destroy(NULL);
  het_session_options_destroy(NULL);
  het_env_destroy(NULL);
}
END_TEST

START_TEST(test_bad_options) {
  het_session_options *o = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "no_such_key", "1"), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no_such_key"));
  ck_assert_int_eq(het_session_options_set(o, "threads", "many"), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "many"));
  ck_assert_int_eq(het_session_options_set_threads(o, 0), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_options_set(o, "providers", "nosuchprov"), HET_OK);
  size_t len;
  uint8_t *buf = api_model_bytes(&len);
  het_session *s = NULL;
  het_status st = het_session_create_from_memory(env, buf, len, o, &s);
  free(buf);
  ck_assert_int_ne(st, HET_OK);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(het_last_error(), "nosuchprov") != NULL, "message: %s", het_last_error());
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_provider_not_built) {
  const char *built = het_env_get_built_providers(env);
  ck_assert_ptr_nonnull(strstr(built, "cpu"));
  if (strstr(built, "cuda"))
    return; /* a CUDA build answers differently (NO_DEVICE or OK) */
  het_session_options *o = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", "cuda,cpu"), HET_OK);
  size_t len;
  uint8_t *buf = api_model_bytes(&len);
  het_session *s = NULL;
  het_status st = het_session_create_from_memory(env, buf, len, o, &s);
  free(buf);
  het_session_options_destroy(o);
  ck_assert_msg(st == HET_ERR_NOT_BUILT, "status %s: %s", het_status_str(st), het_last_error());
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cuda"));
  ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_missing_model_file) {
  het_session *s = NULL;
  het_status st = het_session_create(env, "/nonexistent/dir/model.onnx", NULL, &s);
  ck_assert_int_eq(st, HET_ERR_IO);
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(het_last_error(), "/nonexistent/dir/model.onnx") != NULL, "message: %s",
                het_last_error());
}
END_TEST

START_TEST(test_garbage_model) {
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof junk; i++)
    junk[i] = (uint8_t)(i * 37 + 11);
  het_session *s = NULL;
  ck_assert_int_eq(het_session_create_from_memory(env, junk, sizeof junk, NULL, &s),
                   HET_ERR_INVALID_MODEL);
  ck_assert_ptr_null(s);
  ck_assert_str_ne(het_last_error(), "");
}
END_TEST

/* Runs with one bad input and checks status, the message naming the
 * input, that *out stays untouched, and that the session still works. */
static void api_bad_run(const char *const *names, het_tensor *const *in, size_t n,
                        het_status want, const char *needle) {
  het_tensor *out = (het_tensor *)0x1;
  het_status st = het_session_run(sess, names, in, n, NULL, 1, &out);
  ck_assert_msg(st == want, "status %s (%s), wanted %s", het_status_str(st), het_last_error(),
                het_status_str(want));
  ck_assert_msg(strstr(het_last_error(), needle) != NULL, "message '%s' lacks '%s'",
                het_last_error(), needle);
  ck_assert_ptr_eq(out, (het_tensor *)0x1);
  api_check_good_run(sess, 2);
}

START_TEST(test_run_bad_inputs) {
  het_tensor *x = api_tensor(HET_DTYPE_FLOAT32, 2, 3, 0), *y = api_tensor(HET_DTYPE_FLOAT32, 2, 3, 0);
  het_tensor *xi = api_tensor(HET_DTYPE_INT64, 2, 3, 0), *xw = api_tensor(HET_DTYPE_FLOAT32, 2, 4, 0);
  het_tensor *x3 = NULL;
  int64_t d3[3] = {2, 3, 1};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d3, 3, &x3), HET_OK);
  const char *xy[2] = {"X", "Y"}, *xonly[1] = {"X"}, *wy[2] = {"W", "Y"};
  het_tensor *ok_in[2] = {x, y}, *int_in[2] = {xi, y}, *rank_in[2] = {x3, y}, *wide_in[2] = {xw, y};
  api_bad_run(xonly, ok_in, 1, HET_ERR_INVALID_ARGUMENT, "Y");    /* missing input */
  api_bad_run(xy, int_in, 2, HET_ERR_TYPE, "X");                  /* wrong dtype */
  api_bad_run(xy, rank_in, 2, HET_ERR_SHAPE, "X");                /* wrong rank */
  api_bad_run(xy, wide_in, 2, HET_ERR_SHAPE, "X");                /* fixed dim differs */
  api_bad_run(wy, ok_in, 2, HET_ERR_INVALID_ARGUMENT, "W");       /* unknown name */
  const char *xx[2] = {"X", "X"};
  het_tensor *null_in[2] = {x, NULL};
  api_bad_run(xx, ok_in, 2, HET_ERR_INVALID_ARGUMENT, "X");       /* given twice */
  api_bad_run(xy, null_in, 2, HET_ERR_INVALID_ARGUMENT, "Y");     /* NULL tensor */
  /* NULL data is refused when the tensor is made, naming the call */
  int64_t d23[2] = {2, 3};
  het_tensor *nd = (het_tensor *)0x1;
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32, d23, 2, NULL, 24, &nd),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_eq(nd, (het_tensor *)0x1);
  /* a zero-size batch is a valid run with an empty output */
  het_tensor *x0 = api_tensor(HET_DTYPE_FLOAT32, 0, 3, 0), *y0 = api_tensor(HET_DTYPE_FLOAT32, 0, 3, 0);
  het_tensor *zero_in[2] = {x0, y0}, *z0 = NULL;
  ck_assert_msg(het_session_run(sess, xy, zero_in, 2, NULL, 1, &z0) == HET_OK, "%s", het_last_error());
  ck_assert_int_eq(het_tensor_get_count(z0), 0);
  het_tensor_destroy(z0);
  het_tensor_destroy(x0);
  het_tensor_destroy(y0);
  api_check_good_run(sess, 2);
  het_tensor *out = NULL;
  const char *bad_out[1] = {"nope"};
  ck_assert_int_eq(het_session_run(sess, xy, ok_in, 2, bad_out, 1, &out), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "nope"));
  ck_assert_ptr_null(out);
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_tensor_destroy(xi);
  het_tensor_destroy(xw);
  het_tensor_destroy(x3);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_tensor_limits) {
  het_tensor *t = (het_tensor *)0x1;
  int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  /* hetrt.h: ranks over HET_MAX_RANK are refused with HET_ERR_UNSUPPORTED. */
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d9, 9, &t), HET_ERR_UNSUPPORTED);
  int64_t neg[2] = {2, -1};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, neg, 2, &t), HET_ERR_INVALID_ARGUMENT);
  int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 16};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, huge, 3, &t), HET_ERR_OUT_OF_MEMORY);
  ck_assert_int_eq(het_tensor_create((het_dtype)77, neg, 1, &t), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_eq(t, (het_tensor *)0x1);
  int64_t zero[2] = {0, 5};
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, zero, 2, &t), HET_OK);
  ck_assert_int_eq(het_tensor_get_count(t), 0);
  het_tensor_destroy(t);
}
END_TEST

static Suite *api_suite(void) {
  Suite *s = suite_create("api");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, api_setup, api_teardown);
  tcase_add_test(core, test_status_strings);
  tcase_add_test(core, test_descriptions_symbolic);
  tcase_add_test(core, test_run_batches);
  tcase_add_test(core, test_placement);
  tcase_add_test(core, test_session_from_file);
  tcase_add_test(core, test_tensor_over_user_memory);
  tcase_add_test(core, test_concurrent_runs);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, api_setup, api_teardown);
  tcase_add_test(errors, test_null_arguments);
  tcase_add_test(errors, test_bad_options);
  tcase_add_test(errors, test_provider_not_built);
  tcase_add_test(errors, test_missing_model_file);
  tcase_add_test(errors, test_garbage_model);
  tcase_add_test(errors, test_run_bad_inputs);
  suite_add_tcase(s, errors);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_tensor_limits);
  suite_add_tcase(s, limits);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(api_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
