/* test_int8_provider.c — Check suites for the INT8 provider
 * (src/providers/int8): it claims the quantized operators and the 8-bit
 * data movement around them and nothing else; with `int8,cpu` in priority
 * order, or a policy pinning the islands to it, a fused QDQ chain
 * (qdq_chain, qdq_chain_s8 of tests/data/optimizer/gen_qdq.py) runs there
 * with the CPU provider's bytes; its options are the CPU's under its own
 * name.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"
#include "kernels/kernel.h"

#define QDQ_CHAIN HETRT_TEST_DATA "/optimizer/qdq_chain/model.onnx"
#define QDQ_CHAIN_S8 HETRT_TEST_DATA "/optimizer/qdq_chain_s8/model.onnx"

/* A session of model with providers (comma list), algorithm, and when
 * not NULL a policy (YAML) and one option; NULL when creation fails (the
 * message in het_last_error()). */
static het_session *open_session(het_env *env, const char *model,
                                 const char *providers, const char *algorithm,
                                 const char *policy, const char *opt_key,
                                 const char *opt_value) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "providers", providers),
                   HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "algorithm", algorithm),
                   HET_OK);
  if (policy)
    ck_assert_msg(het_session_options_set_policy(o, policy) == HET_OK, "%s",
                  het_last_error());
  if (opt_key)
    ck_assert_int_eq(het_session_options_set(o, opt_key, opt_value), HET_OK);
  het_session *s = NULL;
  het_status st = het_session_create(env, model, o, &s);
  het_session_options_destroy(o);
  ck_assert_msg(st == HET_OK || !s, "session without OK");
  return st == HET_OK ? s : NULL;
}

/* Output y of s on the chain's input x [2, 8, 10, 10] (a fixed pattern). */
static het_tensor *run_chain(het_session *s) {
  int64_t dims[4] = {2, 8, 10, 10};
  het_tensor *x, *y = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x), HET_OK);
  float *d = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    d[i] = (float)((i * 7919) % 2001 - 1000) / 330.0f;
  const char *name = "x";
  ck_assert_msg(het_session_run(s, &name, &x, 1, NULL, 1, &y) == HET_OK, "%s",
                het_last_error());
  het_tensor_destroy(x);
  return y;
}

static bool is_int8_op(const char *op) {
  return strncmp(op, "QLinear", 7) == 0 || strcmp(op, "QuantizeLinear") == 0 ||
         strcmp(op, "DequantizeLinear") == 0;
}

/* Counts s's nodes on provider and checks that every quantized operator
 * is there (int8_all) or none is. */
static int count_on(const het_session *s, const char *provider, bool int8_all) {
  int n = 0;
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    bool here = strcmp(p.provider, provider) == 0;
    n += here;
    if (is_int8_op(p.op_type))
      ck_assert_msg(here == int8_all, "%s (%s) on %s: %s", p.name, p.op_type,
                    p.provider, p.reason);
  }
  return n;
}

/* Sessions a and b give the same bytes on the chain's input. */
static void same_outputs(het_session *a, het_session *b) {
  het_tensor *want = run_chain(a), *got = run_chain(b);
  ck_assert_uint_eq(het_tensor_get_count(want), het_tensor_get_count(got));
  ck_assert_int_eq(memcmp(het_tensor_get_data(want), het_tensor_get_data(got),
                          (size_t)het_tensor_get_count(want) * sizeof(float)),
                   0);
  het_tensor_destroy(want);
  het_tensor_destroy(got);
}

/* A session of model on the CPU provider alone (priority), the reference
 * the INT8 provider's sessions must match. */
static het_session *open_cpu(het_env *env, const char *model) {
  het_session *s = open_session(env, model, "cpu", "priority", NULL, NULL,
                                NULL);
  ck_assert_msg(s != NULL, "%s", het_last_error());
  return s;
}

/* int8,cpu in priority order: every quantized operator (QLinearConv,
 * QLinearAdd, the Q and DQ at the ends) and the 8-bit MaxPool between
 * them on int8, the float nodes on cpu, the CPU-only session's bytes. */
static void check_priority(const char *model) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_session *cpu = open_cpu(env, model);
  het_session *mix = open_session(env, model, "int8,cpu", "priority", NULL,
                                  NULL, NULL);
  ck_assert_msg(mix != NULL, "%s", het_last_error());
  ck_assert_int_eq(count_on(cpu, "int8", false), 0);
  int on_int8 = count_on(mix, "int8", true);
  ck_assert_int_ge(on_int8, het_kernels_int8_fast() ? 7 : 3);
  bool pool = false;
  for (size_t i = 0; i < het_session_get_node_count(mix); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(mix, i, &p), HET_OK);
    if (strcmp(p.op_type, "MaxPool") == 0) {
      pool = true;
      ck_assert_str_eq(p.provider, "int8");
      ck_assert_msg(strstr(p.reason, "MaxPool on 8-bit integers"), "%s",
                    p.reason);
    }
    if (strcmp(p.op_type, "QLinearConv") == 0)
      ck_assert_msg(strstr(p.reason, "int8 QLinearConv (VNNI: oneDNN int8 or hetrt's kernel)"),
                    "%s", p.reason);
  }
  ck_assert(pool);
  same_outputs(cpu, mix);
  het_session_destroy(mix);
  het_session_destroy(cpu);
  het_env_destroy(env);
}

START_TEST(test_priority_places_islands) {
  check_priority(QDQ_CHAIN);
  check_priority(QDQ_CHAIN_S8);
}
END_TEST

/* A policy pins the quantized operators to int8 under the cost
 * algorithm (which, the estimates being the CPU's, would otherwise keep
 * the chain in one CPU subgraph); the same bytes again. */
START_TEST(test_policy_pins_islands) {
  static const char *const policy =
      "rules:\n"
      "  - match: {op: [QLinearConv, QLinearAdd, QuantizeLinear, "
      "DequantizeLinear]}\n"
      "    pin: int8\n";
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_session *cpu = open_cpu(env, QDQ_CHAIN);
  het_session *cost = open_session(env, QDQ_CHAIN, "cpu,int8", "cost", policy,
                                   NULL, NULL);
  ck_assert_msg(cost != NULL, "%s", het_last_error());
  count_on(cost, "int8", true);
  same_outputs(cpu, cost);
  het_session_destroy(cost);
  het_session_destroy(cpu);
  het_env_destroy(env);
}
END_TEST

/* A float node is not claimed: pinned to int8 by a strict policy,
 * creation fails naming the node and why int8 refused it. */
START_TEST(test_float_node_refused) {
  static const char *const policy = "strict: true\n"
                                    "rules:\n"
                                    "  - match: {op: MaxPool}\n"
                                    "    pin: int8\n";
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_session *s = open_session(env, HETRT_TEST_DATA
                                "/optimizer/resnet_block/model.onnx",
                                "int8,cpu", "cost", policy, NULL, NULL);
  ck_assert_ptr_null(s);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, "node 'pool'"), "%s", msg);
  ck_assert_msg(strstr(msg, "not int8: MaxPool on float32"), "%s", msg);
  het_env_destroy(env);
}
END_TEST

/* Options: int8.<key> takes the CPU's keys; a bad value or key is named
 * with the int8 prefix. */
START_TEST(test_options) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_session *s = open_session(env, QDQ_CHAIN, "int8,cpu", "priority", NULL,
                                "int8.layout", "nchw");
  ck_assert_msg(s != NULL, "%s", het_last_error());
  het_session_destroy(s);
  s = open_session(env, QDQ_CHAIN, "int8,cpu", "priority", NULL,
                   "int8.layout", "sideways");
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(het_last_error(),
                       "option 'int8.layout': 'sideways' is not auto or nchw"),
                "%s", het_last_error());
  s = open_session(env, QDQ_CHAIN, "int8,cpu", "priority", NULL, "int8.nope",
                   "1");
  ck_assert_ptr_null(s);
  ck_assert_msg(strstr(het_last_error(),
                       "provider 'int8': unknown option 'int8.nope'"),
                "%s", het_last_error());
  het_env_destroy(env);
}
END_TEST

static Suite *int8_suite(void) {
  Suite *s = suite_create("int8_provider");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_priority_places_islands);
  tcase_add_test(core, test_policy_pins_islands);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_float_node_refused);
  tcase_add_test(errors, test_options);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(int8_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
