/* test_policy.c — YAML placement policies through the public API: every
 * match kind (op, name glob and regex, output, dtype, batch and element
 * predicates, ranges, repeated-block indices, body nodes) and action (pin,
 * forbid, prefer, precision), rule precedence and the C API over a policy,
 * strict mode and fallbacks, budgets, min_subgraph_nodes, shapes to plan
 * for, the malformed-policy corpus (tests/data/policy/bad, each file's
 * first line the expected "LINE:COLUMN: message"), and every policy in
 * configs/policies driving a session.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/emu_helpers.h"
#include "hetrt/hetrt.h"
#include "kernels/kernel.h"
#include "partitioner/policy.h"

#define DATA HETRT_TEST_DATA "/policy"
#define BLOCKS DATA "/blocks.onnx"
#define DET DATA "/dynamic_det.onnx"
#define RESNET HETRT_TEST_DATA "/emu/resnet_small.onnx"
#define QDQ_CHAIN HETRT_TEST_DATA "/optimizer/qdq_chain/model.onnx"
#define IF_CONV HETRT_TEST_DATA "/control/if_conv/model.onnx"
#define ENCODER HETRT_TEST_DATA "/nlp/encoder/model.onnx"
#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"
#define POLICIES HETRT_SOURCE_DIR "/configs/policies/"

static het_env *env;

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

/* Options with providers, a device profile (or NULL) and a policy text. */
static het_session_options *opts(const char *providers, const char *profile,
                                 const char *policy) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  if (policy)
    ck_assert_msg(het_session_options_set_policy(o, policy) == HET_OK, "%s",
                  het_last_error());
  if (providers)
    ck_assert_int_eq(het_session_options_set(o, "providers", providers),
                     HET_OK);
  if (profile)
    ck_assert_int_eq(het_session_options_set(o, "devices", profile), HET_OK);
  return o;
}

static het_session *session(const char *model, het_session_options *o) {
  het_session *s = NULL;
  het_status st = het_session_create(env, model, o, &s);
  ck_assert_msg(st == HET_OK, "%s: %s", model, het_last_error());
  het_session_options_destroy(o);
  return s;
}

static het_node_placement placement_of(het_session *s, const char *name) {
  het_node_placement p = {0};
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    if (strcmp(p.name, name) == 0)
      return p;
  }
  ck_abort_msg("no node %s", name);
  return p;
}

static const char *provider_of(het_session *s, const char *name) {
  return placement_of(s, name).provider;
}

/* The op type node name runs as in s. */
static const char *op_of(het_session *s, const char *name) {
  return placement_of(s, name).op_type;
}

/* noinline: GCC 12 mistakes the returned string for the local holding
 * it (-Wdangling-pointer) when this is inlined. */
__attribute__((noinline)) static char *explain(het_session *s,
                                               const char *format) {
  char *out = NULL;
  het_status st = het_session_explain(s, format, &out);
  ck_assert_msg(st == HET_OK && out, "explain %s: %s", format, het_last_error());
  return out;
}

/* The nodes rule `rule` (1-based) matched, as "a,b,c", from the "rules"
 * report (caller frees). */
static char *matched(het_session *s, int rule) {
  char *text = explain(s, "rules");
  char head[32];
  snprintf(head, sizeof head, "\n  rule %d ", rule);
  const char *at = strstr(text, head);
  ck_assert_msg(at, "rule %d not in:\n%s", rule, text);
  size_t len = strlen(text), used = 0;
  char *out = calloc(1, len + 1);
  size_t k = (size_t)(strchr(at + 1, '\n') - text);
  while (k < len && strncmp(text + k, "\n      ", 7) == 0) {
    size_t start = k + 7, end = start;
    while (end < len && text[end] != '\n')
      end++;
    if (used)
      out[used++] = ',';
    memcpy(out + used, text + start, end - start);
    used += end - start;
    k = end;
  }
  het_string_destroy(text);
  return out;
}

static bool has_warning(het_session *s, const char *part) {
  for (size_t i = 0; i < het_session_get_warning_count(s); i++)
    if (strstr(het_session_get_warning(s, i), part))
      return true;
  return false;
}

#define ASSERT_MATCHED(s, rule, want)                                       \
  do {                                                                      \
    char *got_ = matched(s, rule);                                          \
    ck_assert_msg(strcmp(got_, want) == 0, "rule %d matched '%s', not '%s'", \
                  rule, got_, want);                                        \
    free(got_);                                                             \
  } while (0)

/* ---- match kinds ---------------------------------------------------------- */

START_TEST(test_match_kinds) {
  /* optimization none: the names and ops of the file. */
  het_session_options *o = opts("cpu", NULL,
      "rules:\n"
      "  - match: {op: Relu}\n    pin: cpu\n"                          /* 1 */
      "  - match: {name: 'layer.[12]/conv'}\n    pin: cpu\n"          /* 2 */
      "  - match: {name_regex: '^half/cast_'}\n    pin: cpu\n"        /* 3 */
      "  - match: {output: logits}\n    pin: cpu\n"                   /* 4 */
      "  - match: {dtype: float16}\n    pin: cpu\n"                   /* 5 */
      "  - match: {from: layer.2/add, to: half/mul}\n    pin: cpu\n"  /* 6 */
      "  - match: {block: {pattern: 'layer.{i}/', first: 1, last: 2},\n"
      "            op: Add}\n    pin: cpu\n"                          /* 7 */
      "  - match: {op: [Flatten, Gemm], name: 'head/*'}\n    pin: cpu\n" /* 8 */
      "  - match: {op: ai.onnx.Gemm}\n    pin: cpu\n"                 /* 9 */
      "  - match: {op: Conv, name: 'stem/*', output: s0}\n"
      "    pin: cpu\n");                                              /* 10 */
  ck_assert_int_eq(het_session_options_set(o, "optimization", "none"), HET_OK);
  het_session *s = session(BLOCKS, o);
  ASSERT_MATCHED(s, 1, "layer.0/relu,layer.1/relu,layer.2/relu,layer.3/relu");
  ASSERT_MATCHED(s, 2, "layer.1/conv,layer.2/conv");
  ASSERT_MATCHED(s, 3, "half/cast_in,half/cast_out");
  ASSERT_MATCHED(s, 4, "head/fc");
  ASSERT_MATCHED(s, 5, "half/cast_in,half/mul");
  ASSERT_MATCHED(s, 6, "layer.2/add,layer.3/conv,layer.3/relu,layer.3/add,"
                       "half/cast_in,half/mul");
  ASSERT_MATCHED(s, 7, "layer.1/add,layer.2/add");
  ASSERT_MATCHED(s, 8, "head/flatten,head/fc");
  ASSERT_MATCHED(s, 9, ""); /* Gemm is in the default domain "" */
  ASSERT_MATCHED(s, 10, "stem/conv");
  ck_assert(has_warning(s, "rule 9 matches no node"));
  het_session_destroy(s);
}
END_TEST

START_TEST(test_shape_predicates) {
  const char *policy =
      "rules:\n"
      "  - match: {op: Conv, batch: '>= 32'}\n    pin: cpu\n"
      "  - match: {op: Gemm, elements: '< 1000'}\n    pin: cpu\n"
      "  - match: {op: Conv, batch: 4}\n    pin: cpu\n";
  /* The batch is symbolic: nothing can be tested, and partview says so. */
  het_session *s = session(BLOCKS, opts("cpu", NULL, policy));
  ASSERT_MATCHED(s, 1, "");
  char *text = explain(s, "rules");
  ck_assert_msg(strstr(text, "5 not tested (shape unknown)"), "%s", text);
  het_string_destroy(text);
  ck_assert(has_warning(s, "some have shapes unknown at load time"));
  het_session_destroy(s);
  /* Planned for batch 32: the Convs qualify, the Gemm's 32x16 input too. */
  het_session_options *o = opts("cpu", NULL, policy);
  ck_assert_int_eq(het_session_options_set(o, "shape", "x=32x8x16x16"), HET_OK);
  s = session(BLOCKS, o);
  char *convs = matched(s, 1);
  ck_assert_msg(strstr(convs, "stem/conv") && strstr(convs, "layer.3/"),
                "%s", convs);
  free(convs);
  ASSERT_MATCHED(s, 2, "head/fc");
  ASSERT_MATCHED(s, 3, "");
  het_session_destroy(s);
  /* Batch 4: the == predicate holds, >= 32 does not, 64 < 1000. */
  o = opts("cpu", NULL, policy);
  ck_assert_int_eq(het_session_options_set(o, "shape", "x=4x8x16x16"), HET_OK);
  s = session(BLOCKS, o);
  ASSERT_MATCHED(s, 1, "");
  ASSERT_MATCHED(s, 2, "head/fc");
  convs = matched(s, 3);
  ck_assert_msg(strstr(convs, "stem/conv"), "%s", convs);
  free(convs);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_rules_reach_bodies) {
  het_session_options *o = opts("emu,cpu", DEVICES "npu.yaml",
      "rules:\n"
      "  - match: {name: 'If_0/then_branch/*'}\n    pin: emu\n"
      "  - match: {op: Conv}\n    forbid: emu\n"
      "  - match: {name: 'If_0/else_branch/else_conv'}\n    pin: emu\n");
  ck_assert_int_eq(het_session_options_set(o, "optimization", "none"), HET_OK);
  het_session *s = session(IF_CONV, o);
  ASSERT_MATCHED(s, 1, "If_0/then_branch/then_conv,If_0/then_branch/then_relu");
  ASSERT_MATCHED(s, 2, "If_0/then_branch/then_conv,If_0/else_branch/else_conv,"
                       "skip_conv");
  /* A later rule overrides an earlier one: rule 2's forbid takes then_conv
   * off emu, where rule 1 had pinned it; rule 3's pin puts else_conv back. */
  ck_assert_str_eq(provider_of(s, "If_0/then_branch/then_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "If_0/then_branch/then_relu"), "emu");
  ck_assert_str_eq(provider_of(s, "If_0/else_branch/else_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "skip_conv"), "cpu");
  het_session_destroy(s);
}
END_TEST

/* ---- actions and precedence ------------------------------------------------- */

START_TEST(test_pin_forbid_prefer) {
  /* Cost alone puts resnet_small on the cpu (the npu's launches and link
   * cost more than its speed saves on so small a model). */
  het_session *s = session(RESNET, opts("emu,cpu", DEVICES "npu.yaml", NULL));
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "cpu");
  het_session_destroy(s);
  s = session(RESNET, opts("emu,cpu", DEVICES "npu.yaml",
      "rules:\n"
      "  - name: convs-on-npu\n    match: {op: [Conv, FusedConv]}\n"
      "    pin: emu\n"
      "  - match: {name: b1c1_conv}\n    forbid: emu\n"));
  ck_assert_str_eq(provider_of(s, "stem_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b1c2_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "cpu");
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "rule 1 'convs-on-npu' (<string>:2:5)"), "%s",
                text);
  ck_assert_msg(strstr(text, "rule 2 (<string>:5:5)"), "%s", text);
  het_string_destroy(text);
  /* placed_by in JSON too */
  text = explain(s, "json");
  ck_assert_msg(strstr(text, "\"placed_by\":\"rule 1 'convs-on-npu' "
                             "(<string>:2:5)\""), "%s", text);
  het_string_destroy(text);
  het_session_destroy(s);
  /* prefer: a factor of 1000 on the cpu makes emu the cheaper choice for
   * the Convs, launches and copies included; the rest stays on the cpu
   * (emu refuses b2c1_conv). */
  s = session(RESNET, opts("emu,cpu", DEVICES "npu.yaml",
      "rules:\n  - match: {op: [Conv, FusedConv]}\n"
      "    prefer: {provider: cpu, factor: 1000}\n"));
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b2c1_conv"), "cpu");
  text = explain(s, "text");
  ck_assert_msg(strstr(text, "cost, biased by rule 1 (<string>:2:5)"), "%s",
                text);
  het_string_destroy(text);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_precision) {
  /* npu-fp16-nhwc computes float32 tensors in float16: precision fp16 may
   * go there, fp32 may not. */
  het_session *s = session(RESNET, opts("emu,cpu", DEVICES "npu-fp16-nhwc.yaml",
      "rules:\n"
      "  - match: {name: stem_conv}\n    precision: fp32\n"
      "  - match: {name: b1c1_conv}\n    precision: fp16\n"
      "  - match: {name: pool}\n    precision: bf16\n"));
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  /* Nobody computes bfloat16: the rule is reported, not silently lost. */
  ck_assert(has_warning(s, "rule 3 could not be followed for 1 of the 1"));
  ck_assert(has_warning(s, "that precision"));
  het_session_destroy(s);
}
END_TEST

/* qdq_chain's output y on a fixed 1x8x10x10 input (caller owns). */
static het_tensor *run_chain(het_session *s) {
  int64_t dims[4] = {1, 8, 10, 10};
  het_tensor *x, *y = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x), HET_OK);
  float *d = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    d[i] = (float)((i * 7919) % 2001 - 1000) / 330.0f;
  const char *in = "x", *out = "y";
  ck_assert_msg(het_session_run(s, &in, &x, 1, &out, 1, &y) == HET_OK, "%s",
                het_last_error());
  het_tensor_destroy(x);
  return y;
}

/* Largest |a - b| over two float32 tensors of one size. */
static double max_diff(het_tensor *a, het_tensor *b) {
  ck_assert_int_eq(het_tensor_get_count(a), het_tensor_get_count(b));
  const float *p = het_tensor_get_data(a), *q = het_tensor_get_data(b);
  double m = 0;
  for (int64_t i = 0; i < het_tensor_get_count(a); i++)
    m = fabs((double)p[i] - q[i]) > m ? fabs((double)p[i] - q[i]) : m;
  return m;
}

/* Sessions x and y of qdq_chain compute ref's function: each output
 * within one step of c4's output scale (at most 0.06) of ref's.  Destroys
 * the three sessions. */
static void chain_within_step(het_session *ref, het_session *x,
                              het_session *y) {
  het_tensor *r = run_chain(ref), *a = run_chain(x), *b = run_chain(y);
  ck_assert_double_le(max_diff(a, r), 0.0601);
  ck_assert_double_le(max_diff(b, r), 0.0601);
  het_tensor_destroy(r);
  het_tensor_destroy(a);
  het_tensor_destroy(b);
  het_session_destroy(ref);
  het_session_destroy(x);
  het_session_destroy(y);
}

START_TEST(test_int8_choices) {
  /* qdq_chain: four Conv islands c1..c4 and an Add island, fused into
   * QLinearConvs named after their Convs, reported as int8. */
  if (!het_kernels_int8_fast())
    return; /* no island becomes a QLinearConv on this CPU */
  het_session *fused = session(QDQ_CHAIN, opts(NULL, NULL, NULL));
  static const char *const convs[] = {"c1", "c2", "c3", "c4"};
  for (int i = 0; i < 4; i++)
    ck_assert_str_eq(op_of(fused, convs[i]), "QLinearConv");
  char *text = explain(fused, "json");
  ck_assert_msg(strstr(text, "\"name\":\"c2\",\"op_type\":\"QLinearConv\","
                             "\"provider\":\"cpu\",\"precision\":\"int8\""),
                "%s", text);
  het_string_destroy(text);
  /* int8=off: the islands as written, float */
  het_session_options *o = opts(NULL, NULL, NULL);
  ck_assert_int_eq(het_session_options_set(o, "int8", "off"), HET_OK);
  het_session *off = session(QDQ_CHAIN, o);
  for (int i = 0; i < 4; i++)
    ck_assert_str_eq(op_of(off, convs[i]), "Conv");
  text = explain(off, "json");
  ck_assert_msg(strstr(text, "\"name\":\"c2\",\"op_type\":\"Conv\","
                             "\"provider\":\"cpu\",\"precision\":\"fp32\""),
                "%s", text);
  ck_assert_ptr_null(strstr(text, "QLinear"));
  het_string_destroy(text);
  /* per node: a float precision keeps the Conv islands float, a later
   * int8 rule takes c2 back (no warning for the rule it overrides); an
   * int8 rule on a float op (a DequantizeLinear computes in float) cannot
   * be followed, and says so; the MaxPool between the Add island and c4
   * pools bytes, reported int8 */
  het_session *mixed = session(QDQ_CHAIN, opts(NULL, NULL,
      "rules:\n"
      "  - match: {op: Conv}\n    precision: fp32\n"
      "  - match: {name: c2}\n    precision: int8\n"
      "  - match: {op: DequantizeLinear}\n    precision: int8\n"));
  ck_assert_str_eq(op_of(mixed, "c1"), "Conv");
  ck_assert_str_eq(op_of(mixed, "c2"), "QLinearConv");
  ck_assert_str_eq(op_of(mixed, "c3"), "Conv");
  ck_assert_str_eq(op_of(mixed, "c4"), "Conv");
  ck_assert(!has_warning(mixed, "rule 1 could not be followed"));
  ck_assert(!has_warning(mixed, "rule 2 could not be followed"));
  ck_assert(has_warning(mixed, "rule 3 could not be followed"));
  text = explain(mixed, "json");
  ck_assert_msg(strstr(text, "\"op_type\":\"MaxPool\",\"provider\":\"cpu\","
                             "\"precision\":\"int8\""),
                "%s", text);
  het_string_destroy(text);
  /* the three compute the same function as the float graph */
  chain_within_step(off, fused, mixed);
  /* a bad value is an error naming the option */
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "int8", "maybe"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert(strstr(het_last_error(), "option 'int8'"));
  het_session_options_destroy(o);
}
END_TEST

/* The optimizer weighs each island on the CPU provider's estimates and
 * the report lists them: on this CPU every island pays in int8; on a
 * profile whose int8 products are 20x slower than its float ones (the
 * roofline estimate, which reads the profile's int8 rate) the Conv
 * islands stay float and compute exactly what int8=off computes. */
START_TEST(test_int8_weighed) {
  if (!het_kernels_int8_fast())
    return; /* the Conv islands are never candidates on this CPU */
  het_session *fused = session(QDQ_CHAIN, opts(NULL, NULL, NULL));
  char *text = explain(fused, "text");
  /* its input's batch dim is symbolic: weighed as 1, and marked */
  ck_assert_msg(strstr(text, "QDQ islands weighed (5): 5 int8 on cpu, 0 kept "
                             "float (float form estimated cheaper); 5 "
                             "weighed with unknown dims"),
                "%s", text);
  ck_assert_msg(strstr(text, " c2 ?\n"), "%s", text);
  het_string_destroy(text);
  het_session_options *o = opts(NULL, DATA "/cpu_slow_int8.yaml", NULL);
  ck_assert_int_eq(het_session_options_set(o, "cpu.estimate", "roofline"),
                   HET_OK);
  het_session *slow = session(QDQ_CHAIN, o);
  static const char *const convs[] = {"c1", "c2", "c3", "c4"};
  for (int i = 0; i < 4; i++)
    ck_assert_str_eq(op_of(slow, convs[i]), "Conv");
  text = explain(slow, "json");
  ck_assert_msg(strstr(text, "\"qdq_islands\": {\"int8_on\":\"cpu\""),
                "%s", text);
  ck_assert_msg(strstr(text, "\"name\":\"c2\",\"precision\":\"float\","
                             "\"int8_seconds\":"),
                "%s", text);
  het_string_destroy(text);
  text = explain(slow, "html");
  ck_assert(strstr(text, "<table class=\"sort\" id=\"islands\">"));
  het_string_destroy(text);
  o = opts(NULL, NULL, NULL);
  ck_assert_int_eq(het_session_options_set(o, "int8", "off"), HET_OK);
  het_session *off = session(QDQ_CHAIN, o);
  text = explain(off, "text");
  ck_assert_ptr_null(strstr(text, "QDQ islands"));
  het_string_destroy(text);
  het_tensor *a = run_chain(slow), *b = run_chain(off);
  ck_assert_double_eq(max_diff(a, b), 0);
  het_tensor_destroy(a);
  het_tensor_destroy(b);
  het_session_destroy(fused);
  het_session_destroy(slow);
  het_session_destroy(off);
}
END_TEST

/* Across providers: an island's float form is weighed on the provider
 * that would run it best, moves included.  An accelerator that runs float
 * Conv only (no quantized operator) and far faster, over a free link,
 * takes the Conv islands whose float form is estimated cheaper there than
 * the CPU's int8 operator (qdq_chain's dims are those of batch 1, so the
 * float form's DequantizeLinear and QuantizeLinear on the CPU outweigh the
 * smallest Convs); each island the report calls float runs as a float
 * Conv on it, each it calls int8 as a QLinearConv on the CPU.  Behind a
 * 1 ms link every island stays int8.  Either way the chain computes what
 * int8=off computes, within one step of c4's output scale. */
START_TEST(test_int8_weighed_across) {
  if (!het_kernels_int8_fast())
    return; /* the Conv islands are never candidates on this CPU */
  static const char *const convs[] = {"c1", "c2", "c3", "c4"};
  het_session *fast =
      session(QDQ_CHAIN, opts("emu,cpu", DATA "/emu_fast_conv.yaml", NULL));
  char *text = explain(fast, "json");
  int kept = 0;
  for (int i = 0; i < 4; i++) {
    char want[64];
    snprintf(want, sizeof want, "\"name\":\"%s\",\"precision\":\"float\"",
             convs[i]);
    bool float_form = strstr(text, want) != NULL;
    kept += float_form;
    ck_assert_str_eq(op_of(fast, convs[i]), float_form ? "Conv" : "QLinearConv");
    ck_assert_str_eq(provider_of(fast, convs[i]), float_form ? "emu" : "cpu");
  }
  ck_assert_msg(kept >= 1, "%s", text);
  ck_assert_msg(strstr(text, "\"float_on\":\"emu\""), "%s", text);
  het_string_destroy(text);
  het_session *far =
      session(QDQ_CHAIN, opts("emu,cpu", DATA "/emu_far_conv.yaml", NULL));
  for (int i = 0; i < 4; i++) {
    ck_assert_str_eq(op_of(far, convs[i]), "QLinearConv");
    ck_assert_str_eq(provider_of(far, convs[i]), "cpu");
  }
  het_session_options *o = opts(NULL, NULL, NULL);
  ck_assert_int_eq(het_session_options_set(o, "int8", "off"), HET_OK);
  het_session *off = session(QDQ_CHAIN, o);
  chain_within_step(off, fast, far);
}
END_TEST

START_TEST(test_c_api_overrides_policy) {
  het_session_options *o = opts("emu,cpu", DEVICES "npu.yaml",
      "rules:\n  - match: {op: [Conv, FusedConv]}\n    pin: emu\n");
  ck_assert_int_eq(het_session_options_pin(o, "stem_conv", "cpu"), HET_OK);
  het_session *s = session(RESNET, o);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "C API constraint"), "%s", text);
  het_session_destroy(s);
  het_string_destroy(text);
}
END_TEST

START_TEST(test_policy_globals_and_overrides) {
  /* The policy's providers and algorithm become options; a setter called
   * after the load overrides them. */
  het_session_options *o = opts(NULL, DEVICES "npu.yaml",
                                "providers: [emu, cpu]\nalgorithm: priority\n");
  het_session *s = session(RESNET, o);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "emu");
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "algorithm: priority"), "%s", text);
  het_string_destroy(text);
  het_session_destroy(s);
  o = opts("cpu", NULL, "providers: [emu, cpu]\nalgorithm: priority\n");
  s = session(RESNET, o);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  het_session_destroy(s);
}
END_TEST

/* ---- strict mode and fallbacks ---------------------------------------------- */

START_TEST(test_pin_refused_falls_back_or_fails) {
  /* b2c1_conv carries a fused LeakyRelu that the npu does not run. */
  const char *rules =
      "rules:\n  - name: all-convs\n    match: {op: [Conv, FusedConv]}\n"
      "    pin: emu\n";
  het_session *s = session(RESNET, opts("emu,cpu", DEVICES "npu.yaml", rules));
  ck_assert_str_eq(provider_of(s, "b2c1_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  ck_assert(has_warning(s, "<string>:2:5: rule 1 'all-convs' could not be "
                           "followed for 1 of the 6 nodes it matches (e.g. "
                           "'b2c1_conv': emu refuses it"));
  het_session_destroy(s);
  char strict[256];
  snprintf(strict, sizeof strict, "strict: true\n%s", rules);
  het_session_options *o = opts("emu,cpu", DEVICES "npu.yaml", strict);
  het_session *bad = NULL;
  ck_assert_int_eq(het_session_create(env, RESNET, o, &bad), HET_ERR_UNSUPPORTED);
  ck_assert_ptr_null(bad);
  ck_assert_msg(strstr(het_last_error(), "<string>:3:5: rule 1 'all-convs' "
                                         "cannot be followed for node "
                                         "'b2c1_conv': emu refuses it"),
                "%s", het_last_error());
  het_session_options_destroy(o);
}
END_TEST

START_TEST(test_provider_names) {
  /* A name no registry knows fails at its position. */
  het_session_options *o = opts("cpu", NULL,
                                "rules:\n  - match: {op: Conv}\n    pin: cdua\n");
  het_session *bad = NULL;
  ck_assert_int_eq(het_session_create(env, RESNET, o, &bad),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "<string>:3:10: unknown provider "
                                         "'cdua'"),
                "%s", het_last_error());
  het_session_options_destroy(o);
  /* A known provider the session lacks: a warning, or an error when
   * strict. */
  het_session *s = session(RESNET, opts("cpu", NULL,
      "rules:\n  - match: {op: Conv}\n    pin: emu\n"));
  ck_assert(has_warning(s, "none of its pin providers is in this session"));
  het_session_destroy(s);
  /* Long provider lists: the rule's description is cut, not overrun. */
  char *many = malloc(8192);
  size_t used = (size_t)snprintf(many, 8192, "rules:\n  - match: {op: Conv}\n    pin: [");
  for (int i = 0; i < 600; i++)
    used += (size_t)snprintf(many + used, 8192 - used, "%scpu", i ? "," : "");
  snprintf(many + used, 8192 - used, "]\n    forbid: [emu, emu, emu]\n    prefer: cpu\n");
  s = session(RESNET, opts("emu,cpu", DEVICES "npu.yaml", many));
  free(many);
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  char *text = explain(s, "rules");
  ck_assert_msg(strstr(text, "pin cpu, cpu"), "%.300s", text);
  het_string_destroy(text);
  het_session_destroy(s);
  o = opts("cpu", NULL,
           "strict: true\nrules:\n  - match: {op: Conv}\n    pin: emu\n");
  ck_assert_int_eq(het_session_create(env, RESNET, o, &bad),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "pins to emu, which is not in this "
                                         "session (strict: true)"),
                "%s", het_last_error());
  het_session_options_destroy(o);
}
END_TEST

/* ---- budgets, fragments, shapes --------------------------------------------- */

/* emu,cpu on the npu profile with the CPU's plain roofline
 * (cpu.estimate=roofline): which nodes a budget keeps depends on their
 * times per byte, so these cases rest on the roofline they were worked
 * out with, not on the CPU's calibration (docs/estimates.md). */
static het_session_options *budget_opts(const char *policy) {
  het_session_options *o = opts("emu,cpu", DEVICES "npu.yaml", policy);
  ck_assert_int_eq(het_session_options_set(o, "cpu.estimate", "roofline"),
                   HET_OK);
  return o;
}

START_TEST(test_budget_from_policy) {
  const char *rules = "rules:\n  - match: {op: [Conv, FusedConv]}\n"
                      "    prefer: {provider: cpu, factor: 1000}\n";
  het_session *s = session(RESNET, budget_opts(rules));
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  het_session_destroy(s);
  /* 100 bytes cannot hold any Conv's weights: nothing runs on emu. */
  char tight[256];
  snprintf(tight, sizeof tight, "memory: {emu: 100B}\n%s", rules);
  s = session(RESNET, budget_opts(tight));
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    ck_assert_msg(strcmp(p.provider, "emu") != 0, "%s on emu", p.name);
  }
  het_session_destroy(s);
  /* 16 KiB holds the weights and activations of the first three nodes
   * (stem_conv, pool, b1c1_conv: 3.2 KB of weights, at most 11 KB live),
   * not more; 64 KiB the rest emu runs. */
  snprintf(tight, sizeof tight, "memory: {emu: 16KiB}\n%s", rules);
  s = session(RESNET, budget_opts(tight));
  ck_assert_str_eq(provider_of(s, "stem_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b1c1_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b1c2_conv"), "cpu");
  ck_assert_str_eq(provider_of(s, "b2c2_conv"), "cpu");
  char *text = explain(s, "json");
  ck_assert_msg(strstr(text, "\"provider\":\"emu\",\"planned_peak\""), "%s", text);
  ck_assert_msg(strstr(text, "\"capacity\":16384"), "%s", text);
  het_string_destroy(text);
  het_session_destroy(s);
  snprintf(tight, sizeof tight, "memory: {emu: 64KiB}\n%s", rules);
  s = session(RESNET, budget_opts(tight));
  ck_assert_str_eq(provider_of(s, "b1c2_conv"), "emu");
  ck_assert_str_eq(provider_of(s, "b2c2_conv"), "emu");
  het_session_destroy(s);
  /* A budget for a provider this machine lacks is a warning when the
   * policy names its providers (not strict). */
  s = session(RESNET, opts(NULL, NULL,
      "providers: [cuda, cpu]\nmemory: {cuda: 6GiB}\n"));
  ck_assert(has_warning(s, "memory budget for 'cuda' not used"));
  ck_assert(has_warning(s, "provider 'cuda' skipped"));
  het_session_destroy(s);
}
END_TEST

/* Shortest run of emu nodes in execution order (0 when none). */
static int shortest_emu_run(het_session *s) {
  int best = 0, run = 0;
  size_t n = het_session_get_node_count(s);
  for (size_t i = 0; i <= n; i++) {
    het_node_placement p = {0};
    bool emu = false;
    if (i < n) {
      ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
      if (strcmp(p.op_type, "Copy") == 0)
        continue;
      emu = strcmp(p.provider, "emu") == 0;
    }
    if (emu) {
      run++;
    } else if (run) {
      best = best == 0 || run < best ? run : best;
      run = 0;
    }
  }
  return best;
}

START_TEST(test_min_subgraph_nodes) {
  /* Priority splits resnet_small around b2c1_conv, which emu refuses:
   * an emu run of 4 (stem_conv to b1c2_conv) and one of 6 after it. */
  het_session_options *o = opts("emu,cpu", DEVICES "npu.yaml",
                                "algorithm: priority\n");
  het_session *s = session(RESNET, o);
  int before = shortest_emu_run(s);
  ck_assert_int_gt(before, 0);
  ck_assert_int_lt(before, 5);
  het_session_destroy(s);
  o = opts("emu,cpu", DEVICES "npu.yaml",
           "algorithm: priority\nmin_subgraph_nodes: 5\n");
  s = session(RESNET, o);
  int after = shortest_emu_run(s);
  ck_assert_msg(after == 0 || after >= 5, "an emu run of %d nodes", after);
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "min_subgraph_nodes 5: its run on emu was "
                             "shorter; moved to cpu"), "%s", text);
  het_string_destroy(text);
  het_session_destroy(s);
}
END_TEST

static double estimated_total(het_session *s) {
  char *text = explain(s, "json");
  const char *at = strstr(text, "\"total_seconds\":");
  ck_assert_msg(at, "%s", text);
  double v = atof(at + strlen("\"total_seconds\":"));
  het_string_destroy(text);
  return v;
}

START_TEST(test_shapes_to_plan_for) {
  /* Without shapes every node of the detector is costed blind. */
  het_session *s = session(DET, opts("cpu", NULL, NULL));
  char *text = explain(s, "text");
  ck_assert_msg(strstr(text, "estimated with unknown dims: 5 of 5 nodes"),
                "%s", text);
  het_string_destroy(text);
  double blind = estimated_total(s);
  het_session_destroy(s);
  /* 256x256 and 512x512: four times the pixels, about four times the
   * estimate, and no unknown-dims note. */
  het_session_options *o = opts("cpu", NULL, "shapes: {images: 1x3x256x256}\n");
  s = session(DET, o);
  text = explain(s, "text");
  ck_assert_msg(!strstr(text, "estimated with unknown dims"), "%s", text);
  het_string_destroy(text);
  double small = estimated_total(s);
  het_session_destroy(s);
  o = opts("cpu", NULL, NULL);
  ck_assert_int_eq(het_session_options_set(o, "shape", "images=1x3x512x512"),
                   HET_OK);
  s = session(DET, o);
  double large = estimated_total(s);
  /* Runs still take any shape: the plan hints did not fix the model's. */
  int64_t dims[4] = {1, 3, 64, 96};
  het_tensor *x, *y = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x), HET_OK);
  const char *name = "images";
  ck_assert_msg(het_session_run(s, &name, &x, 1, NULL, 1, &y) == HET_OK, "%s",
                het_last_error());
  int64_t out[4];
  ck_assert_int_eq(het_tensor_get_dims(y, out, 4), 4);
  ck_assert_int_eq(out[2], 32);
  ck_assert_int_eq(out[3], 48);
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_session_destroy(s);
  ck_assert_msg(small > 20 * blind, "blind %g, 256x256 %g", blind, small);
  ck_assert_msg(large > 3.5 * small && large < 4.5 * small,
                "256x256 %g, 512x512 %g", small, large);
}
END_TEST

START_TEST(test_shape_errors) {
  het_session_options *o = opts("cpu", NULL, NULL);
  ck_assert_int_eq(het_session_options_set(o, "shape", "images"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_options_set(o, "shape", "images=1x3xbig"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "shape of 'images'"), "%s",
                het_last_error());
  ck_assert_int_eq(het_session_options_set(o, "shape", "pixels=1x3x8x8"),
                   HET_OK);
  het_session *bad = NULL;
  ck_assert_int_eq(het_session_create(env, DET, o, &bad),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "the model has no input 'pixels'"),
                "%s", het_last_error());
  het_session_options_destroy(o);
  o = opts("cpu", NULL, "shapes: {images: 1x4x8x8}\n");
  ck_assert_int_eq(het_session_create(env, DET, o, &bad),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "dim 1 is 4, the model declares 3"),
                "%s", het_last_error());
  het_session_options_destroy(o);
  o = opts("cpu", NULL, "shapes: {images: 1x3x8}\n");
  ck_assert_int_eq(het_session_create(env, DET, o, &bad),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "rank 3, the model declares 4"),
                "%s", het_last_error());
  het_session_options_destroy(o);
}
END_TEST

/* ---- malformed policies ----------------------------------------------------- */

START_TEST(test_malformed_corpus) {
  DIR *d = opendir(DATA "/bad");
  ck_assert_ptr_nonnull(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
      continue;
    char path[1024], expect[512];
    snprintf(path, sizeof path, "%s/bad/%s", DATA, e->d_name);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(expect, sizeof expect, f));
    fclose(f);
    ck_assert_msg(strncmp(expect, "# expect: ", 10) == 0, "%s", path);
    expect[strcspn(expect, "\n")] = 0;
    char want[1600];
    snprintf(want, sizeof want, "%s:%s", path, expect + 10);
    het_session_options *o;
    ck_assert_int_eq(het_session_options_create(&o), HET_OK);
    ck_assert_int_eq(het_session_options_set(o, "providers", "cpu"), HET_OK);
    het_status st = het_session_options_load_policy(o, path);
    ck_assert_msg(st == HET_ERR_INVALID_ARGUMENT, "%s: status %d", path, st);
    ck_assert_msg(strstr(het_last_error(), want), "%s:\n  want '%s'\n  got  '%s'",
                  e->d_name, want, het_last_error());
    /* The options are untouched and still usable. */
    het_session *s = NULL;
    ck_assert_int_eq(het_session_create(env, RESNET, o, &s), HET_OK);
    ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
    het_session_destroy(s);
    het_session_options_destroy(o);
    n++;
  }
  closedir(d);
  ck_assert_int_ge(n, 30);
}
END_TEST

START_TEST(test_policy_file_errors) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_ne(het_session_options_load_policy(o, DATA "/absent.yaml"),
                   HET_OK);
  ck_assert_msg(strstr(het_last_error(), "absent.yaml"), "%s", het_last_error());
  ck_assert_int_ne(het_session_options_load_policy(o, DATA), HET_OK);
  ck_assert_int_ne(het_session_options_set(o, "policy", DATA "/bad/unknown_action.yaml"),
                   HET_OK);
  ck_assert_msg(strstr(het_last_error(), "unknown_action.yaml:4:5: unknown "
                                         "action 'pinn'"),
                "%s", het_last_error());
  ck_assert_int_eq(het_session_options_load_policy(NULL, DATA), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_session_options_set_policy(o, NULL), HET_ERR_INVALID_ARGUMENT);
  /* Aliases cannot multiply the work without bound. */
  size_t cap = 64 << 20;
  char *big = malloc(cap);
  size_t used = (size_t)snprintf(big, cap, "rules:\n  - &r {match: {op: [");
  for (int i = 0; i < 2000; i++)
    used += (size_t)snprintf(big + used, cap - used, "%sOp%d", i ? "," : "", i);
  used += (size_t)snprintf(big + used, cap - used, "]}, pin: cpu}\n");
  for (int i = 0; i < 600; i++)
    used += (size_t)snprintf(big + used, cap - used, "  - *r\n");
  ck_assert_int_eq(het_session_options_set_policy(o, big), HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "more than 1000000"), "%s", het_last_error());
  free(big);
  het_session_options_destroy(o);
}
END_TEST

/* ---- the shipped policies ----------------------------------------------------- */

static het_session *config_session(const char *policy, const char *model,
                                   const char *profile) {
  het_session_options *o;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_msg(het_session_options_load_policy(o, policy) == HET_OK, "%s",
                het_last_error());
  if (profile)
    ck_assert_int_eq(het_session_options_set(o, "devices", profile), HET_OK);
  return session(model, o);
}

START_TEST(test_config_gpu_first) {
  het_session *s = config_session(POLICIES "gpu-first.yaml", RESNET, NULL);
  /* No GPU in this build or machine: the CPU runs it, and says why. */
  if (!strstr(het_env_get_built_providers(env), "cuda") ||
      het_session_get_warning_count(s) > 0)
    ck_assert(has_warning(s, "provider 'cuda' skipped"));
  if (has_warning(s, "provider 'cuda' skipped")) {
    ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
    ck_assert(has_warning(s, "rule 2 'lean-on-the-gpu': the provider it "
                             "prefers is not in this session"));
  }
  ck_assert(has_warning(s, "rule 1 'host-side-ops' matches no node"));
  het_session_destroy(s);
}
END_TEST

START_TEST(test_config_cpu_only) {
  het_session *s = config_session(POLICIES "cpu-only.yaml", RESNET, NULL);
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    ck_assert_int_eq(het_session_get_placement(s, i, &p), HET_OK);
    ck_assert_str_eq(p.provider, "cpu");
  }
  ck_assert_int_eq(het_session_get_warning_count(s), 0);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_config_edge_512mib) {
  het_session *s = config_session(POLICIES "edge-512mib.yaml", RESNET,
                                  DEVICES "npu.yaml");
  int shortest = shortest_emu_run(s);
  ck_assert_msg(shortest == 0 || shortest >= 3, "emu run of %d", shortest);
  size_t peak = 0;
  het_status st = het_session_get_planned_peak(s, "emu", &peak);
  ck_assert_msg(st == HET_OK, "%s", het_last_error());
  ck_assert_uint_le(peak, (size_t)512 << 20);
  ck_assert(has_warning(s, "rule 1 'wide-types-on-host' matches no node"));
  het_session_destroy(s);
  /* The same policy on the dynamic detector (int64 Resize inputs are
   * initializers, so still no match) plans with the budget too. */
  s = config_session(POLICIES "edge-512mib.yaml", BLOCKS, DEVICES "npu.yaml");
  shortest = shortest_emu_run(s);
  ck_assert_msg(shortest == 0 || shortest >= 3, "emu run of %d", shortest);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_config_int8) {
  /* a float model: nothing computes in int8, and the rule says so */
  het_session *s = config_session(POLICIES "int8-where-possible.yaml", RESNET,
                                  NULL);
  ck_assert(has_warning(s, "rule 1 'int8-compute' could not be followed for "
                           "4 of the 5 nodes"));
  ck_assert_str_eq(provider_of(s, "stem_conv"), "cpu");
  het_session_destroy(s);
  /* a QDQ model: its Convs in int8, followed (the only warning: no node
   * of this model has the names rule 2 keeps float) */
  if (!het_kernels_int8_fast())
    return;
  s = config_session(POLICIES "int8-where-possible.yaml", QDQ_CHAIN, NULL);
  ck_assert_str_eq(op_of(s, "c1"), "QLinearConv");
  ck_assert_uint_eq(het_session_get_warning_count(s), 1);
  ck_assert(has_warning(s, "rule 2 'float-ends' matches no node"));
  het_session_destroy(s);
}
END_TEST

START_TEST(test_config_attention) {
  het_session *s = config_session(POLICIES "attention-on-device.yaml", ENCODER,
                                  DEVICES "big-gpu-like.yaml");
  char *attn = matched(s, 1);
  ck_assert_msg(strstr(attn, "/self_attn/Gemm"), "%s", attn);
  free(attn);
  ck_assert_str_eq(provider_of(s, "/self_attn/Gemm"), "emu");
  ck_assert_str_eq(provider_of(s, "/self_attn/Transpose_4"), "emu");
  ck_assert_str_eq(provider_of(s, "/norm1/Add_1"), "cpu");
  het_session_destroy(s);
}
END_TEST

START_TEST(test_config_dynamic_shapes) {
  het_session *s = config_session(POLICIES "dynamic-shapes.yaml", DET,
                                  DEVICES "npu.yaml");
  /* down1 reads the 1x3x640x640 image (1.2 M elements); down2 and head read
   * 8x320x320 (0.8 M) and 24x320x320 (2.5 M) features. */
  ASSERT_MATCHED(s, 1, "down1,head");
  ck_assert_str_eq(provider_of(s, "down1"), "cpu");
  ck_assert_str_eq(provider_of(s, "head"), "cpu");
  char *text = explain(s, "text");
  ck_assert_msg(!strstr(text, "estimated with unknown dims"), "%s", text);
  het_string_destroy(text);
  het_session_destroy(s);
}
END_TEST

/* The bound on name_regex (partitioner/policy_regex.c) against glibc's
 * compile time: patterns it lets through compile fast (measured here),
 * and those that would take seconds are refused with why.  Items that can
 * match nothing under stacked repeats: "^()+++++x" took 12 s to compile
 * (CI's fuzz_policy, 2026-12-07). */
START_TEST(test_regex_bound) {
  static const char *const fine[] = {
      "^/encoder/layer\\.[0-3]/", "(conv|gemm)_[0-9]+", "a*b*c*", "(a|b)*x",
      "(a*)+x", "()++x", "((a)*)+x", "(^x)?y", "[()+*]+", "x(a?){2}", NULL};
  static const char *const refused[] = {
      "^()+++++x", "()+++x", "^a*+++++x", "(a*)+++x", "^(a|)+++x",
      "^(a|b*)+++++x", "(()+)+++x", "x(a?){2}{3}+", "(^()+++++++)tion", NULL};
  char why[256];
  for (int i = 0; fine[i]; i++) {
    double t0 = now_s();
    ck_assert_msg(het_policy_regex_bounded(fine[i], why, sizeof why), "%s: %s",
                  fine[i], why);
    regex_t re;
    ck_assert_int_eq(regcomp(&re, fine[i], REG_EXTENDED | REG_NOSUB), 0);
    regfree(&re);
    ck_assert_msg(now_s() - t0 < 1.0, "%s compiled slowly", fine[i]);
  }
  for (int i = 0; refused[i]; i++) {
    ck_assert_msg(!het_policy_regex_bounded(refused[i], why, sizeof why), "%s",
                  refused[i]);
    ck_assert_msg(strstr(why, "repeats"), "%s: %s", refused[i], why);
  }
}
END_TEST

static Suite *policy_suite(void) {
  Suite *s = suite_create("policy");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_match_kinds);
  tcase_add_test(core, test_shape_predicates);
  tcase_add_test(core, test_rules_reach_bodies);
  tcase_add_test(core, test_pin_forbid_prefer);
  tcase_add_test(core, test_precision);
  tcase_add_test(core, test_int8_choices);
  tcase_add_test(core, test_int8_weighed);
  tcase_add_test(core, test_int8_weighed_across);
  tcase_add_test(core, test_c_api_overrides_policy);
  tcase_add_test(core, test_policy_globals_and_overrides);
  tcase_add_test(core, test_budget_from_policy);
  tcase_add_test(core, test_min_subgraph_nodes);
  tcase_add_test(core, test_shapes_to_plan_for);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_set_timeout(errors, 120);
  tcase_add_test(errors, test_pin_refused_falls_back_or_fails);
  tcase_add_test(errors, test_provider_names);
  tcase_add_test(errors, test_shape_errors);
  tcase_add_test(errors, test_malformed_corpus);
  tcase_add_test(errors, test_policy_file_errors);
  tcase_add_test(errors, test_regex_bound);
  suite_add_tcase(s, errors);
  TCase *configs = tcase_create("configs");
  tcase_add_checked_fixture(configs, setup, teardown);
  tcase_set_timeout(configs, 120);
  tcase_add_test(configs, test_config_gpu_first);
  tcase_add_test(configs, test_config_cpu_only);
  tcase_add_test(configs, test_config_edge_512mib);
  tcase_add_test(configs, test_config_int8);
  tcase_add_test(configs, test_config_attention);
  tcase_add_test(configs, test_config_dynamic_shapes);
  suite_add_tcase(s, configs);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(policy_suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
