/* test_hostile.c — models that ask for absurd tensors or are hostile in
 * meaning while well-formed on the wire (tests/data/hostile/
 * gen_hostile.py): each fails with a clean status whose message names
 * what asked (the node, tensor, output or opset) at session creation or
 * at the run, within a bounded time and memory, never crashes; a failed
 * run can be retried with the same answer, and the env goes on serving
 * other sessions.  External data that is a FIFO, a directory or a link
 * out of the folder is made here, in a fresh folder.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hetrt/hetrt.h"

#define DIR HETRT_TEST_DATA "/hostile/"
/* Bounds on each case (each runs in its own forked process): sanitizer
 * builds included, far below what thrashing or a hang would take. */
#define CASE_SECONDS 30.0
#define CASE_RSS_KB (1536L * 1024)

typedef struct hostile_case {
  const char *model;
  het_status status;  /* of creation or of the run; OK: it must run */
  const char *words[2];
  const char *option; /* KEY=VALUE set on the session, or NULL */
  int64_t shape[2];   /* values of an int64 input 'shape' */
} hostile_case;

#define CASE(m, st, w0, w1) {.model = m, .status = st, .words = {w0, w1}}

static const hostile_case k_cases[] = {
    /* sizes: refused by the plan (the default max_memory is the machine's
     * memory) or when the count overflows */
    CASE("constantofshape_2e40", HET_ERR_CAPACITY, "4398046511120 bytes of host memory", "max_memory"),
    CASE("expand_2e42", HET_ERR_CAPACITY, "host memory", "max_memory"),
    CASE("expand_empty_2e64", HET_ERR_OUT_OF_MEMORY, "output 'y'", "element count overflows"),
    CASE("expand_negative", HET_ERR_SHAPE, "Expand", "shape[1] is -9 (must be >= 0)"),
    CASE("tile_2e64", HET_ERR_OUT_OF_MEMORY, "output 'y'", "element count overflows"),
    CASE("range_1e30", HET_ERR_SHAPE, "node 'Range_0'", "would make 1e+30 elements (more than 2^48)"),
    CASE("conv_hetrt_act_maxunpool", HET_ERR_INVALID_MODEL, "node 'Conv_0'", "hetrt_act is not an activation"),
    /* a shape known only at the run: its output alone is over the cap */
    {.model = "expand_runtime_shape", .status = HET_ERR_CAPACITY,
     .words = {"output 'y'", "max_memory of 67108864"}, .option = "max_memory=64M",
     .shape = {4096, 8192}},
    /* meaning */
    CASE("opset_0", HET_ERR_INVALID_MODEL, "domain ''", "version 0"),
    CASE("opset_10000", HET_ERR_UNSUPPORTED, "opset 10000", "opsets 1 to"),
    CASE("cycle", HET_ERR_INVALID_MODEL, "cycle", "Add_0"),
    CASE("duplicate_output", HET_ERR_INVALID_MODEL, "output 't'", "Relu_0"),
    CASE("duplicate_initializer", HET_ERR_INVALID_MODEL, "initializer 'w'", "twice"),
    CASE("raw_data_short", HET_ERR_INVALID_MODEL, "tensor 'w'", "raw_data holds 8 bytes"),
    CASE("raw_data_long", HET_ERR_INVALID_MODEL, "tensor 'w'", "raw_data holds 100 bytes"),
    CASE("input_negative_dim", HET_ERR_INVALID_MODEL, "value 'x'", "dim 1 is -3"),
    CASE("if_nested_1000", HET_ERR_INVALID_MODEL, "nested", "deep"),
    {.model = "loop_2e62", .status = HET_ERR_CAPACITY,
     .words = {"node 'Loop_0'", "stopped after 100000 iterations"},
     .option = "max_loop_iterations=100000"},
    {.model = "loop_scan_16gib", .status = HET_ERR_CAPACITY,
     .words = {"node 'Loop_0' (Loop): its scan outputs reach",
               "max_memory of 67108864"},
     .option = "max_memory=64M"},
    /* a required input omitted where shape inference cannot run (an
     * input of unknown shape): refused before the optimizer reads it */
    CASE("dequantize_omitted_x", HET_ERR_INVALID_MODEL, "node 'dq'", "required input 0 is omitted"),
    CASE("attention_omitted_q", HET_ERR_INVALID_MODEL, "node 'attn'", "required input 0 is omitted"),
    CASE("external_outside", HET_ERR_INVALID_MODEL, "tensor 'w'", "leaves the model folder"),
    CASE("external_absolute", HET_ERR_INVALID_MODEL, "'/etc/passwd'", "absolute"),
    CASE("external_past_end", HET_ERR_INVALID_MODEL, "tensor 'w'", "beyond the end"),
    /* legal, if unusual: one node with 10,000 inputs runs */
    CASE("concat_10000_inputs", HET_OK, "", ""),
};

/* Every input zero, except an int64 input 'shape' from c->shape. */
static het_status run_once(het_session *s, const hostile_case *c) {
  size_t n_in = het_session_get_input_count(s);
  ck_assert_uint_le(n_in, 4);
  het_tensor *in[4] = {0}, *y = NULL;
  const char *names[4];
  for (size_t i = 0; i < n_in; i++) {
    het_value_desc d;
    ck_assert_int_eq(het_session_get_input(s, i, &d), HET_OK);
    ck_assert_int_eq(het_tensor_create(d.dtype, d.dims, d.rank, &in[i]), HET_OK);
    memset(het_tensor_get_data(in[i]), 0, het_tensor_get_nbytes(in[i]));
    if (strcmp(d.name, "shape") == 0)
      memcpy(het_tensor_get_data(in[i]), c->shape, sizeof c->shape);
    names[i] = d.name;
  }
  het_status st = het_session_run(s, names, in, n_in, NULL, 1, &y);
  if (st == HET_OK) {
    ck_assert_int_eq(het_tensor_get_count(y), 10000);
    const float *v = het_tensor_get_data(y);
    for (int i = 0; i < 10000; i++)
      ck_assert_float_eq(v[i], 1.0f);
  } else {
    ck_assert_ptr_null(y);
  }
  het_tensor_destroy(y);
  for (size_t i = 0; i < n_in; i++)
    het_tensor_destroy(in[i]);
  return st;
}

static void expect_words(const char *model, const char *const *words) {
  for (int w = 0; w < 2; w++)
    ck_assert_msg(strstr(het_last_error(), words[w]), "%s: wanted '%s' in: %s",
                  model, words[w], het_last_error());
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void env_still_serves(het_env *env) {
  het_session *s = NULL;
  ck_assert_int_eq(het_session_create(env, HETRT_TEST_DATA "/emu/transformer_small.onnx",
                                      NULL, &s),
                   HET_OK);
  het_session_destroy(s);
}

/* Creates path's session and runs it twice; both answers must be c's. */
static void check_model(het_env *env, const char *path, const hostile_case *c) {
  het_session_options *o = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  if (c->option) {
    char key[64];
    const char *eq = strchr(c->option, '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - c->option), c->option);
    ck_assert_int_eq(het_session_options_set(o, key, eq + 1), HET_OK);
  }
  het_session *s = NULL;
  het_status st = het_session_create(env, path, o, &s);
  het_session_options_destroy(o);
  if (st != HET_OK) { /* refused at load */
    ck_assert_msg(st == c->status, "%s: creation gave %s: %s", c->model, het_status_str(st),
                  het_last_error());
    expect_words(c->model, c->words);
    ck_assert_ptr_null(s);
    return;
  }
  for (int r = 0; r < 2; r++) { /* and again: the same answer */
    st = run_once(s, c);
    ck_assert_msg(st == c->status, "%s: run gave %s: %s", c->model, het_status_str(st),
                  het_last_error());
    if (st != HET_OK)
      expect_words(c->model, c->words);
  }
  het_session_destroy(s);
}

static void check_bounds(const char *model, double t0) {
  double took = now() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  ck_assert_msg(took < CASE_SECONDS, "%s took %.1f s", model, took);
  ck_assert_msg(ru.ru_maxrss < CASE_RSS_KB, "%s: peak RSS %ld KiB", model, ru.ru_maxrss);
}

START_TEST(test_hostile_models) {
  const hostile_case *c = &k_cases[_i];
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  char path[512];
  snprintf(path, sizeof path, DIR "%s.onnx", c->model);
  double t0 = now();
  check_model(env, path, c);
  check_bounds(c->model, t0);
  env_still_serves(env);
  het_env_destroy(env);
}
END_TEST

/* external_special.onnx names ext.bin: here it is a FIFO (whose open
 * would wait for a writer forever without O_NONBLOCK), a directory, and
 * links to a device and out of the folder. */
START_TEST(test_external_not_regular) {
  static const hostile_case c[] = {
      CASE("fifo", HET_ERR_IO, "external data 'ext.bin'", "not a regular file"),
      CASE("directory", HET_ERR_IO, "external data 'ext.bin'", "not a regular file"),
      CASE("dev_link", HET_ERR_INVALID_MODEL, "'ext.bin'", "outside the model folder"),
      CASE("outside_link", HET_ERR_INVALID_MODEL, "'ext.bin'", "outside the model folder"),
  };
  char dir[] = "/tmp/hetrt_hostile_XXXXXX", model[600], ext[600], cmd[2048];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(model, sizeof model, "%s/m/model.onnx", dir);
  snprintf(ext, sizeof ext, "%s/m/ext.bin", dir);
  snprintf(cmd, sizeof cmd, "mkdir %s/m && cp " DIR "external_special.onnx %s && echo x > %s/outside.bin",
           dir, model, dir);
  ck_assert_int_eq(system(cmd), 0);
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  switch (_i) {
  case 0: ck_assert_int_eq(mkfifo(ext, 0600), 0); break;
  case 1: ck_assert_int_eq(mkdir(ext, 0700), 0); break;
  case 2: ck_assert_int_eq(symlink("/dev/zero", ext), 0); break;
  default: ck_assert_int_eq(symlink("../outside.bin", ext), 0); break;
  }
  double t0 = now();
  check_model(env, model, &c[_i]);
  check_bounds(c[_i].model, t0);
  env_still_serves(env);
  het_env_destroy(env);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("hostile");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_hostile_models, 0, (int)(sizeof k_cases / sizeof *k_cases));
  tcase_add_loop_test(tc, test_external_not_regular, 0, 4);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
