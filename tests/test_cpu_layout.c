/* test_cpu_layout.c — Check suites for the CPU provider's layout pass
 * (src/providers/cpu/layout.c) on tests/data/optimizer/resnet_block
 * (gen_resnet_block.py): which values go NHWC, which stay NCHW and why
 * (graph outputs, broadcasting readers, readers outside the subgraph,
 * nodes whose NHWC prepare failed), and that sessions with cpu.layout=auto
 * and cpu.layout=nchw compute the same outputs.  Also the Conv algorithm
 * choice (cpu.conv_algo): Winograd is what runs when asked for, agrees
 * with direct convolution, and every choice passes the reference.  And
 * int8 chains (qdq_chain, qdq_chain_s8 of gen_qdq.py, fused into
 * QLinearConv/QLinearAdd): uint8/int8 values between oneDNN QLinearConvs
 * go NHWC, and NHWC sessions give the NCHW ones' bytes for batches 1-11.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ir.h"
#include "hetrt/hetrt.h"
#include "testcase/testcase.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/kernel.h"
#include "kernels/linalg_dnnl_api.h"
#include "kernels/linalg_kern.h"
#include "kernels/tuning.h"
#include "providers/cpu/layout.h"
#include "providers/cpu/threadpool.h"

#include "common/opt_helpers.h"

#define DIR HETRT_TEST_DATA "/optimizer/resnet_block"
#define MODEL DIR "/model.onnx"

static het_graph *load_model(const char *path) {
  return opt_load_model(path, HET_OPT_ALL, NULL);
}

static het_graph *load_all(void) { return load_model(MODEL); }

static int node_named(const het_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0)
      return i;
  ck_abort_msg("no node %s", name);
  return -1;
}

/* Plans nodes (all of g when nodes is NULL); returns the layouts indexed
 * by node id (caller frees). */
static het_cpu_layout *plan(const het_graph *g, const int *nodes, int n,
                            const uint8_t *limit) {
  int *all = NULL;
  uint8_t *none = calloc((size_t)g->n_nodes, sizeof *none);
  if (!nodes) {
    all = malloc((size_t)g->n_nodes * sizeof *all);
    for (int i = 0; i < g->n_nodes; i++)
      all[i] = g->order[i];
    nodes = all;
    n = g->n_nodes;
  }
  het_cpu_layout *sub = calloc((size_t)(n > 0 ? n : 1), sizeof *sub);
  het_cpu_layout *by_id =
      calloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1), sizeof *by_id);
  ck_assert_int_eq(het_cpu_layout_plan(g, nodes, n,
                                       limit ? limit : none, sub),
                   HET_OK);
  for (int i = 0; i < n; i++)
    by_id[nodes[i]] = sub[i];
  free(sub);
  free(all);
  free(none);
  return by_id;
}

START_TEST(test_plan_whole_graph) {
  het_graph *g = load_all();
  het_cpu_layout *l = plan(g, NULL, 0, NULL);
  int conv1 = node_named(g, "conv1"), conv2 = node_named(g, "conv2");
  int skip = node_named(g, "skip"), conv3 = node_named(g, "conv3");
  int conv4 = node_named(g, "conv4"), pool = node_named(g, "pool");
  ck_assert_str_eq(g->nodes[conv2].op_type, "FusedConv");
  /* r1 (conv1 → conv2) lies between two oneDNN Convs: NHWC. */
  ck_assert_uint_eq(l[conv1].nhwc_in, 0); /* x: graph input */
  ck_assert_uint_eq(l[conv1].nhwc_out, 1);
  ck_assert_uint_eq(l[conv2].nhwc_in & 1, 1);
  /* r2 and the residual s go NHWC with the MaxPool that reads r2, and its
   * output p with them. */
  uint32_t pooled = 1;
  ck_assert_uint_eq(l[conv2].nhwc_out, pooled);
  ck_assert_uint_eq(l[conv2].nhwc_in >> 3 & 1, pooled); /* residual s */
  ck_assert_uint_eq(l[skip].nhwc_out, pooled);
  ck_assert_uint_eq(l[pool].nhwc_in, pooled);
  ck_assert_uint_eq(l[pool].nhwc_out, pooled);
  ck_assert_uint_eq(l[conv3].nhwc_in, pooled);
  /* c3, the per-channel Mul's output m and the Add's y1 share a group
   * (the Mul broadcasts a [1, C, 1, 1] scale, as in either layout): y1 is
   * a graph output, so all NCHW. */
  ck_assert_uint_eq(l[conv3].nhwc_out, 0);
  ck_assert_uint_eq(l[conv4].nhwc_in, 0);
  ck_assert_uint_eq(l[conv4].nhwc_out, 0);
  ck_assert_uint_eq(l[node_named(g, "mul")].nhwc_in, 0);
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* tests/data/emu/resnet_small.onnx: every activation from the stem Conv's
 * output to the GlobalAveragePool's input is NHWC (pool, Conv+LeakyRelu,
 * FusedConv residuals included); the pool's 1x1 output and what follows
 * are NCHW, the same bytes. */
START_TEST(test_plan_chain_to_global_pool) {
  het_graph *g = load_model(HETRT_TEST_DATA "/emu/resnet_small.onnx");
  het_cpu_layout *l = plan(g, NULL, 0, NULL);
  ck_assert_uint_eq(l[node_named(g, "stem_conv")].nhwc_in, 0);
  ck_assert_uint_eq(l[node_named(g, "stem_conv")].nhwc_out, 1);
  ck_assert_uint_eq(l[node_named(g, "pool")].nhwc_in, 1);
  ck_assert_uint_eq(l[node_named(g, "b2c1_conv")].nhwc_out, 1);
  ck_assert_uint_eq(l[node_named(g, "b2c2_conv")].nhwc_in, 9); /* X, Z */
  ck_assert_uint_eq(l[node_named(g, "gap")].nhwc_in, 1);
  ck_assert_uint_eq(l[node_named(g, "gap")].nhwc_out, 0);
  ck_assert_uint_eq(l[node_named(g, "flatten")].nhwc_in, 0);
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* conv2 outside the subgraph reads r1: r1 must stay NCHW. */
START_TEST(test_plan_reader_outside) {
  het_graph *g = load_all();
  int conv1 = node_named(g, "conv1"), conv2 = node_named(g, "conv2");
  int nodes[64], n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->order[i] != conv2)
      nodes[n++] = g->order[i];
  het_cpu_layout *l = plan(g, nodes, n, NULL);
  ck_assert_uint_eq(l[conv1].nhwc_out, 0);
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* A node whose NHWC prepare failed is planned NCHW, and so are the
 * values it shares with its neighbours. */
START_TEST(test_plan_plain_only) {
  het_graph *g = load_all();
  int conv1 = node_named(g, "conv1"), conv2 = node_named(g, "conv2");
  ck_assert_uint_eq(het_cpu_layout_back_off(g, &g->nodes[conv2],
                                            HET_CPU_LAYOUT_ANY),
                    HET_CPU_LAYOUT_NCHW);
  uint8_t plain[64] = {0};
  for (int i = 0; i < g->n_nodes; i++)
    plain[i] = g->order[i] == conv2 ? HET_CPU_LAYOUT_NCHW : 0;
  int nodes[64];
  for (int i = 0; i < g->n_nodes; i++)
    nodes[i] = g->order[i];
  het_cpu_layout *l = plan(g, nodes, g->n_nodes, plain);
  ck_assert_uint_eq(l[conv2].nhwc_in, 0);
  ck_assert_uint_eq(l[conv2].nhwc_out, 0);
  ck_assert_uint_eq(l[conv1].nhwc_out, 0);
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* tests/data/optimizer/dw_chain (gen_dw_chain.py): oneDNN takes the
 * depthwise Conv and the block is NHWC; if oneDNN refused it, the direct
 * kernel's NHWC path keeps the block NHWC (limit NO_STATE), and only a
 * second refusal makes it NCHW.  Optimized at level extended: at all the
 * pair would be one hetrt.FusedConvDw (opt_conv_dw.c). */
START_TEST(test_plan_depthwise_back_off) {
  het_graph *g = opt_load_model(HETRT_TEST_DATA "/optimizer/dw_chain/model.onnx",
                                HET_OPT_EXTENDED, NULL);
  int dw = node_named(g, "dw"), expand = node_named(g, "expand");
  uint8_t limit[8] = {0};
  int at = -1;
  for (int i = 0; i < g->n_nodes; i++)
    if (g->order[i] == dw)
      at = i;
  het_cpu_layout *l = plan(g, NULL, 0, limit);
  ck_assert_uint_eq(l[dw].nhwc_in, 1);
  ck_assert_uint_eq(l[dw].nhwc_out, 1);
  free(l);
  limit[at] = het_cpu_layout_back_off(g, &g->nodes[dw], HET_CPU_LAYOUT_ANY);
  ck_assert_uint_eq(limit[at], HET_CPU_LAYOUT_NO_STATE);
  l = plan(g, NULL, 0, limit);
  ck_assert_uint_eq(l[dw].nhwc_in, 1);
  ck_assert_uint_eq(l[dw].nhwc_out, 1);
  ck_assert_uint_eq(l[expand].nhwc_out, 1);
  free(l);
  limit[at] = het_cpu_layout_back_off(g, &g->nodes[dw], limit[at]);
  ck_assert_uint_eq(limit[at], HET_CPU_LAYOUT_NCHW);
  l = plan(g, NULL, 0, limit);
  ck_assert_uint_eq(l[dw].nhwc_in | l[dw].nhwc_out, 0);
  ck_assert_uint_eq(l[expand].nhwc_out, 0);
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* resnet_block_dyn (symbolic batch N): planned like the static model. */
START_TEST(test_plan_symbolic_batch) {
  het_graph *g = load_model(HETRT_TEST_DATA
                            "/optimizer/resnet_block_dyn/model.onnx");
  het_cpu_layout *l = plan(g, NULL, 0, NULL);
  ck_assert_str_eq(g->nodes[node_named(g, "conv2")].op_type, "FusedConv");
  ck_assert_uint_eq(l[node_named(g, "conv1")].nhwc_out, 1);
  ck_assert_uint_eq(l[node_named(g, "conv2")].nhwc_in, 9);
  ck_assert_uint_eq(l[node_named(g, "pool")].nhwc_out, 1);
  ck_assert_uint_eq(l[node_named(g, "conv3")].nhwc_in, 1);
  ck_assert_uint_eq(l[node_named(g, "conv4")].nhwc_out, 0); /* y1 */
  free(l);
  het_graph_destroy(g);
}
END_TEST

/* A session on dir/model.onnx with cpu.layout and optimization set. */
static het_session *open_case(het_env *env, const char *dir,
                              const char *layout, const char *level) {
  het_session_options *o;
  het_session *s = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "cpu.layout", layout), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "optimization", level), HET_OK);
  ck_assert_msg(het_session_create(env, path, o, &s) == HET_OK, "%s",
                het_last_error());
  het_session_options_destroy(o);
  return s;
}

/* Runs s on input "x" of dims [batch, c, hw, hw] holding a fixed pattern
 * divided by div; n_out outputs (caller owns). */
static void run_case(het_session *s, const int64_t *chw, int64_t batch,
                     float div, int n_out, het_tensor **out) {
  int64_t dims[4] = {batch, chw[0], chw[1], chw[2]};
  het_tensor *x;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, 4, &x),
                   HET_OK);
  float *d = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    d[i] = (float)((i * 7919) % 2001 - 1000) / div;
  const char *name = "x";
  ck_assert_msg(het_session_run(s, &name, &x, 1, NULL, n_out, out) == HET_OK,
                "batch %lld: %s", (long long)batch, het_last_error());
  het_tensor_destroy(x);
}

#define DYN HETRT_TEST_DATA "/optimizer/resnet_block_dyn"
static const int64_t dyn_chw[3] = {12, 13, 13};

/* Batches 1 to 11 on one session of a graph with a symbolic batch (more
 * shapes than a Conv caches primitives for): NHWC + fused (auto, all)
 * agrees with NCHW unfused (nchw, none). */
START_TEST(test_symbolic_batch_runs) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_session *ref = open_case(env, DYN, "nchw", "none");
  het_session *fast = open_case(env, DYN, "auto", "all");
  for (int64_t batch = 1; batch <= 11; batch++) {
    het_tensor *want[2], *got[2];
    run_case(ref, dyn_chw, batch, 400.0f, 2, want);
    run_case(fast, dyn_chw, batch, 400.0f, 2, got);
    for (int i = 0; i < 2; i++) {
      char msg[256];
      ck_assert_msg(het_testcase_compare(want[i], got[i], 1e-4, 1e-5, msg,
                                         sizeof msg),
                    "batch %lld output %d: %s", (long long)batch, i, msg);
      het_tensor_destroy(want[i]);
      het_tensor_destroy(got[i]);
    }
  }
  het_session_destroy(ref);
  het_session_destroy(fast);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_sessions_match_reference) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *levels[] = {"none", "extended", "all"};
  for (int i = 0; i < 3; i++) {
    opt_session_case(env, DIR, levels[i], "auto", NULL);
    opt_session_case(env, DIR, levels[i], "nchw", NULL);
  }
  het_env_destroy(env);
}
END_TEST

/* Session creation with option key=value fails, naming the key (and
 * the value when show_value). */
static void expect_bad_option(het_env *env, const char *key,
                              const char *value, bool show_value) {
  het_session_options *o;
  het_session *s = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, key, value), HET_OK);
  ck_assert_int_ne(het_session_create(env, MODEL, o, &s), HET_OK);
  ck_assert_msg(strstr(het_last_error(), key) &&
                    (!show_value || strstr(het_last_error(), value)),
                "%s", het_last_error());
  het_session_options_destroy(o);
}

START_TEST(test_bad_layout_option) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  expect_bad_option(env, "cpu.layout", "nhwc8", true);
  expect_bad_option(env, "cpu.blocking", "1", false);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_conv_algo_sessions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *algos[] = {"auto", "direct", "winograd"};
  for (int i = 0; i < 3; i++) {
    opt_session_case(env, DIR, "all", "auto", algos[i]);
    opt_session_case(env, DIR, "none", "nchw", algos[i]);
  }
  het_env_destroy(env);
}
END_TEST

#define STRIDED HETRT_TEST_DATA "/optimizer/strided_1x1"

/* gen_strided_1x1.py: 1x1 Convs with strides (2, 2), with a residual, and
 * (3, 2) on a channels-last activation agree with torch in both layouts
 * and at both ends of the optimization levels. */
START_TEST(test_strided_1x1_sessions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *levels[] = {"none", "all"};
  for (int i = 0; i < 2; i++) {
    opt_session_case(env, STRIDED, levels[i], "auto", NULL);
    opt_session_case(env, STRIDED, levels[i], "nchw", NULL);
  }
  het_env_destroy(env);
}
END_TEST

/* Cases that pass against torch at levels none and all, with cpu.layout
 * auto and nchw, on one and two threads (test_sessions_every_way):
 * - gen_conv_dw.py's conv_dw: the 1x1 + depthwise pairs (fused at level
 *   all: strides, asymmetric pads, no biases, clamps);
 * - gen_conv_pool.py's conv_pool: Conv + MaxPool pairs (fused at level
 *   all: stems on the image input, pool pads and ceil_mode, a Clip
 *   between, grouped Convs; a Conv with a second reader, a MaxPool whose
 *   Indices are read and a pair too small to gain stay apart);
 * - gen_se_gates.py's gates (channels-last ones broadcast in the stored
 *   order). */
static const char *const every_way_cases[] = {
    HETRT_TEST_DATA "/optimizer/conv_dw",
    HETRT_TEST_DATA "/optimizer/conv_pool",
    HETRT_TEST_DATA "/optimizer/se_gates",
    HETRT_TEST_DATA "/optimizer/se_gates_nhwc"};
#define N_EVERY_WAY \
  ((int)(sizeof every_way_cases / sizeof *every_way_cases))

START_TEST(test_sessions_every_way) {
  const char *levels[] = {"none", "all"};
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  for (int i = 0; i < 2; i++)
    for (int t = 1; t <= 2; t++) {
      opt_session_case_threads(env, every_way_cases[_i], levels[i], "auto",
                               NULL, t);
      opt_session_case_threads(env, every_way_cases[_i], levels[i], "nchw",
                               NULL, t);
    }
  het_env_destroy(env);
}
END_TEST

/* gen_se_gates.py: an Add, Sub or Mul by one value per image and channel
 * (a squeeze-excitation gate [N, C, 1, 1], constants [C, 1, 1] and
 * [1, C, 1, 1]) between two Convs goes channels-last with them; an Add of
 * a [C, H, W] constant or a Mul by a [C, 1, W] one keeps its operands
 * NCHW, and with them the stem's output that all the gates read. */
START_TEST(test_plan_se_gates) {
  het_graph *g =
      load_model(HETRT_TEST_DATA "/optimizer/se_gates_nhwc/model.onnx");
  het_cpu_layout *l = plan(g, NULL, 0, NULL);
  ck_assert_uint_eq(l[node_named(g, "stem")].nhwc_out, 1);
  for (int i = 1; i <= 3; i++) {
    char name[8];
    snprintf(name, sizeof name, "g%d", i);
    int n = node_named(g, name);
    ck_assert_msg((l[n].nhwc_in & 1) && l[n].nhwc_out == 1,
                  "%s: in %u out %u", name, l[n].nhwc_in, l[n].nhwc_out);
  }
  ck_assert_uint_eq(l[node_named(g, "g1")].nhwc_in >> 1, 0); /* the gate */
  free(l);
  het_graph_destroy(g);
  g = load_model(HETRT_TEST_DATA "/optimizer/se_gates/model.onnx");
  l = plan(g, NULL, 0, NULL);
  ck_assert_uint_eq(l[node_named(g, "stem")].nhwc_out, 0);
  for (int i = 1; i <= 5; i++) {
    char name[8];
    snprintf(name, sizeof name, "g%d", i);
    int n = node_named(g, name);
    ck_assert_msg(l[n].nhwc_in == 0 && l[n].nhwc_out == 0, "%s: in %u out %u",
                  name, l[n].nhwc_in, l[n].nhwc_out);
  }
  free(l);
  het_graph_destroy(g);
}
END_TEST


#ifdef HETRT_HAVE_DNNL
/* conv1 (3x3, stride 1, 12 -> 20 channels, Relu fused) prepared with
 * prep, run on x into a new y (caller owns); *impl = oneDNN's
 * implementation name. */
static het_tensor *run_conv1(const het_graph *g, const het_kernel_prep *prep,
                             het_tensor *x, const char **impl) {
  const het_node *n = &g->nodes[node_named(g, "conv1")];
  void *state = NULL;
  ck_assert_msg(het_dnnl_conv_prepare_with(g, n, prep, &state) == HET_OK,
                "%s", het_last_error());
  *impl = het_dnnl_conv_impl(state);
  ck_assert_ptr_nonnull(*impl);
  het_tensor *w = g->values[het_node_input(n, 1)].initializer;
  het_tensor *b = g->values[het_node_input(n, 2)].initializer;
  het_tensor *y = NULL, *in[3] = {x, w, b};
  int64_t yd[4] = {1, 20, 13, 13};
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, yd, 4, &y),
                   HET_OK);
  het_kernel_ctx ctx = {.node = n, .opset = n->opset, .n_inputs = 3,
                            .inputs = in, .n_outputs = 1, .outputs = &y,
                            .state = state, .threads = 1};
  ck_assert_msg(het_lk_conv_run(&ctx) == HET_OK, "%s", het_last_error());
  het_dnnl_state_destroy(state);
  return y;
}

/* n values of a fixed pattern in [-2.5, 2.5]. */
static void fill_pattern(float *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)((i * 7919) % 2001 - 1000) / 400.0f;
}

/* conv1's input, [1, 12, 13, 13], a fixed pattern; caller owns. */
static het_tensor *conv1_input(void) {
  int64_t xd[4] = {1, 12, 13, 13};
  het_tensor *x = NULL;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, xd, 4, &x),
                   HET_OK);
  fill_pattern(x->data, het_tensor_count(x));
  return x;
}

/* cpu.conv_algo=winograd runs oneDNN's Winograd kernel (where the CPU
 * has one: AVX-512) and agrees with direct convolution to float32
 * rounding; direct never runs it. */
START_TEST(test_winograd_runs_and_agrees) {
  het_graph *g = load_all();
  het_tensor *x = conv1_input();
  het_kernel_prep direct = {.conv_algo = HET_CONV_ALGO_DIRECT};
  het_kernel_prep wino = {.conv_algo = HET_CONV_ALGO_WINOGRAD};
  const char *impl_d, *impl_w;
  het_tensor *yd = run_conv1(g, &direct, x, &impl_d);
  het_tensor *yw = run_conv1(g, &wino, x, &impl_w);
  ck_assert_msg(!strstr(impl_d, "wino"), "direct ran %s", impl_d);
  if (__builtin_cpu_supports("avx512f"))
    ck_assert_msg(strstr(impl_w, "wino"), "winograd ran %s", impl_w);
  char msg[256];
  ck_assert_msg(het_testcase_compare(yd, yw, 1e-4, 1e-5, msg, sizeof msg),
                "%s vs %s: %s", impl_d, impl_w, msg);
  het_tensor_destroy(x);
  het_tensor_destroy(yd);
  het_tensor_destroy(yw);
  het_graph_destroy(g);
}
END_TEST

/* How many primitives the Conv named name of g was chosen from under
 * algo (plain layouts); impl (may be NULL) receives oneDNN's name of the
 * one kept. */
static int conv_candidates_impl(const het_graph *g, const char *name,
                                het_conv_algo algo, char *impl, size_t cap) {
  const het_node *n = &g->nodes[node_named(g, name)];
  het_kernel_prep prep = {.conv_algo = algo};
  void *state = NULL;
  ck_assert_msg(het_dnnl_conv_prepare_with(g, n, &prep, &state) == HET_OK,
                "%s", het_last_error());
  int k = het_dnnl_conv_candidates(state);
  if (impl)
    snprintf(impl, cap, "%s", het_dnnl_conv_impl(state));
  het_dnnl_state_destroy(state);
  return k;
}

static int conv_candidates(const het_graph *g, const char *name,
                           het_conv_algo algo) {
  return conv_candidates_impl(g, name, algo, NULL, 0);
}

/* A fresh, empty cache folder for this test (the tests fork per case, so
 * the tuning cache is reread). */
static void fresh_cache(char *dir, size_t cap) {
  snprintf(dir, cap, "/tmp/hetrt_tuning_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("HETRT_CACHE_DIR", dir, 1);
  unsetenv("HETRT_TUNING");
  het_tuning_reload();
}

/* Removes the cache folder fresh_cache made and what the test wrote in
 * it (the choices file, the CPU profile). */
static void drop_cache(const char *dir) {
  static const char *const files[] = {"kernel-choices.txt",
                                      "cpu-profile.txt"};
  char path[512];
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  ck_assert_int_eq(rmdir(dir), 0);
}

static int file_lines(const char *dir, char *last, size_t cap) {
  char path[512], line[1024];
  snprintf(path, sizeof path, "%s/kernel-choices.txt", dir);
  FILE *f = fopen(path, "r");
  int n = 0;
  while (f && fgets(line, sizeof line, f)) {
    n++;
    if (last)
      snprintf(last, cap, "%s", line);
  }
  if (f)
    fclose(f);
  return n;
}

static void append_file(const char *dir, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/kernel-choices.txt", dir);
  FILE *f = fopen(path, "a");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

/* auto chooses a 55x55 3x3 Conv's primitive from direct and every
 * Winograd kernel oneDNN has (F(2,3) and F(4,3) on AVX-512), a 13x13
 * one's from direct and oneDNN's first Winograd kernel; winograd and
 * direct build one.  The conv_wide session matches the torch reference
 * under each algorithm. */
START_TEST(test_winograd_candidates) {
  char dir[64];
  fresh_cache(dir, sizeof dir);
  het_graph *wide =
      load_model(HETRT_TEST_DATA "/optimizer/conv_wide/model.onnx");
  het_graph *small = load_all();
  bool avx512 = __builtin_cpu_supports("avx512f");
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_AUTO),
                   avx512 ? 3 : 1);
  ck_assert_int_eq(conv_candidates(small, "conv1", HET_CONV_ALGO_AUTO),
                   avx512 ? 2 : 1);
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_WINOGRAD), 1);
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_DIRECT), 1);
  /* a 4x40 output, one F(4,3) tile high: auto never tries F(4,3)
   * (HET_WINOGRAD_F43_MIN_OUT), so where it is oneDNN's first Winograd
   * kernel (the one winograd forces) auto builds direct alone */
  het_graph *shrt =
      load_model(HETRT_TEST_DATA "/optimizer/conv_short/model.onnx");
  char forced[256], impl[256];
  conv_candidates_impl(shrt, "conv", HET_CONV_ALGO_WINOGRAD, forced,
                       sizeof forced);
  ck_assert_msg(!avx512 || strstr(forced, "wino"), "winograd ran %s",
                forced);
  int k = conv_candidates_impl(shrt, "conv", HET_CONV_ALGO_AUTO, impl,
                               sizeof impl);
  ck_assert_msg(!strstr(impl, "4x3"), "auto ran %s", impl);
  if (strstr(forced, "4x3"))
    ck_assert_int_eq(k, 1);
  het_graph_destroy(shrt);
  het_graph_destroy(wide);
  het_graph_destroy(small);
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *algos[] = {"auto", "direct", "winograd"};
  for (int i = 0; i < 3; i++)
    opt_session_case(env, HETRT_TEST_DATA "/optimizer/conv_wide", "all",
                     "auto", algos[i]);
  het_env_destroy(env);
  drop_cache(dir);
}
END_TEST

/* auto's timed choice is remembered (kernels/tuning.h): the same Conv
 * prepared again, in this process or after the file is reread, builds
 * only the kept primitive, the same one.  Garbage lines in the file are
 * ignored; a remembered kernel oneDNN does not offer at that place any
 * more is timed again and the new choice appended; HETRT_TUNING=off
 * neither reads nor writes. */
START_TEST(test_conv_choice_remembered) {
  if (!__builtin_cpu_supports("avx512f"))
    return; /* one candidate: nothing is timed */
  char dir[64], impl0[256], impl[256], line[1024];
  fresh_cache(dir, sizeof dir);
  het_graph *wide =
      load_model(HETRT_TEST_DATA "/optimizer/conv_wide/model.onnx");
  ck_assert_int_eq(conv_candidates_impl(wide, "conv", HET_CONV_ALGO_AUTO,
                                        impl0, sizeof impl0),
                   3);
  ck_assert_int_eq(file_lines(dir, line, sizeof line), 1);
  ck_assert_ptr_nonnull(strstr(line, "conv dnnl="));
  ck_assert_int_eq(conv_candidates_impl(wide, "conv", HET_CONV_ALGO_AUTO,
                                        impl, sizeof impl),
                   1);
  ck_assert_str_eq(impl, impl0);
  /* another process: the file is read */
  het_tuning_reload();
  ck_assert_int_eq(conv_candidates_impl(wide, "conv", HET_CONV_ALGO_AUTO,
                                        impl, sizeof impl),
                   1);
  ck_assert_str_eq(impl, impl0);
  /* garbage around it is skipped */
  append_file(dir, "no tab here\n\t\nkey\t\nbinary \001\002\003\n"
                   "other_cpu conv dnnl=1.0 x=1\twinograd 1 x\n");
  char *tab = strchr(line, '	');
  ck_assert_ptr_nonnull(tab);
  het_tuning_reload();
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_AUTO), 1);
  /* a kernel oneDNN no longer offers there: timed again, re-remembered */
  char stale[1100];
  snprintf(stale, sizeof stale, "%.*s\twinograd 2 jit_gone:avx512_core\n",
           (int)(tab - line), line);
  append_file(dir, stale);
  het_tuning_reload();
  ck_assert_int_eq(conv_candidates_impl(wide, "conv", HET_CONV_ALGO_AUTO,
                                        impl, sizeof impl),
                   3);
  int lines = file_lines(dir, NULL, 0);
  het_tuning_reload();
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_AUTO), 1);
  /* off: nothing read, nothing written */
  setenv("HETRT_TUNING", "off", 1);
  het_tuning_reload();
  ck_assert_int_eq(conv_candidates(wide, "conv", HET_CONV_ALGO_AUTO), 3);
  ck_assert_int_eq(file_lines(dir, NULL, 0), lines);
  unsetenv("HETRT_TUNING");
  het_graph_destroy(wide);
  drop_cache(dir);
}
END_TEST

/* The Conv 'odd' (1x1, strides 3 and 2) of the strided case on x [2, 8,
 * 13, 11] (run_odd: caller owns the result): NHWC in and out (gathered:
 * unit stride on the picked pixels) and plain NCHW (oneDNN's own strided
 * kernel) agree. */
static het_tensor *run_odd(const het_graph *g, bool nhwc, const float *x,
                           bool *gathered) {
  const het_node *n = &g->nodes[node_named(g, "odd")];
  het_kernel_prep prep = {.nhwc_in = nhwc, .nhwc_out = nhwc,
                          .conv_algo = HET_CONV_ALGO_DIRECT};
  void *state = NULL;
  ck_assert_msg(het_dnnl_conv_prepare_with(g, n, &prep, &state) == HET_OK,
                "%s", het_last_error());
  int64_t xd[4] = {2, 8, 13, 11}, yd[4] = {2, 5, 5, 6};
  het_tensor *xt = NULL, *y = NULL;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, xd, 4, &xt),
                   HET_OK);
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, yd, 4, &y),
                   HET_OK);
  memcpy(xt->data, x, xt->nbytes);
  het_tensor *in[2] = {xt, g->values[het_node_input(n, 1)].initializer};
  het_kernel_ctx ctx = {.node = n, .opset = n->opset, .n_inputs = 2,
                        .inputs = in, .n_outputs = 1, .outputs = &y,
                        .state = state, .threads = 1, .nhwc_in = nhwc,
                        .nhwc_out = nhwc};
  ck_assert_msg(het_lk_conv_run(&ctx) == HET_OK, "%s", het_last_error());
  *gathered = het_dnnl_conv_gathered(state);
  het_dnnl_state_destroy(state);
  het_tensor_destroy(xt);
  return y;
}

START_TEST(test_strided_1x1_gathered) {
  het_graph *g = load_model(STRIDED "/model.onnx");
  enum { N = 2, C = 8, H = 13, W = 11, M = 5, OH = 5, OW = 6 };
  static float x[N * C * H * W], xl[N * C * H * W];
  fill_pattern(x, N * C * H * W);
  for (int n = 0; n < N; n++) /* NCHW -> NHWC */
    for (int c = 0; c < C; c++)
      for (int i = 0; i < H * W; i++)
        xl[(n * H * W + i) * C + c] = x[(n * C + c) * H * W + i];
  bool gathered_plain, gathered_nhwc;
  het_tensor *yp = run_odd(g, false, x, &gathered_plain);
  het_tensor *yl = run_odd(g, true, xl, &gathered_nhwc);
  ck_assert(!gathered_plain && gathered_nhwc);
  const float *p = yp->data, *l = yl->data;
  for (int n = 0; n < N; n++)
    for (int m = 0; m < M; m++)
      for (int i = 0; i < OH * OW; i++) {
        float a = p[(n * M + m) * OH * OW + i];
        float b = l[(n * OH * OW + i) * M + m];
        ck_assert_msg(fabsf(a - b) <= 1e-5f * (1 + fabsf(a)),
                      "n %d m %d pixel %d: %g vs %g", n, m, i, a, b);
      }
  het_tensor_destroy(yp);
  het_tensor_destroy(yl);
  het_graph_destroy(g);
}
END_TEST


#define CONV_DW_BANDS HETRT_TEST_DATA "/optimizer/conv_dw_bands"

/* NCHW data of nb images of c channels and hw pixels into t (NHWC when
 * nhwc), or back from t (to_nchw). */
static void relayout(float *nchw, float *t, int64_t nb, int64_t c, int64_t hw,
                     bool nhwc, bool to_nchw) {
  for (int64_t b = 0; b < nb; b++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t i = 0; i < hw; i++) {
        float *l = &t[nhwc ? (b * hw + i) * c + k : (b * c + k) * hw + i];
        float *p = &nchw[(b * c + k) * hw + i];
        if (to_nchw)
          *p = *l;
        else
          *l = *p;
      }
}

/* Node n (its weights g's initializers) on x (NCHW, dims xd) into a new y
 * of dims yd (caller owns, NCHW) by run, on state (oneDNN, X
 * channels-last when in, Y when out: converted here; NULL: the generic
 * plain path).  z: a FusedConv's residual (NCHW, dims yd) or NULL; with
 * z_in_place it is Y's own buffer, as the memory plan may make it. */
static het_tensor *node_once(const het_graph *g, const het_node *n,
                             het_status (*run)(het_kernel_ctx *),
                             void *state, const float *x, const int64_t *xd,
                             const int64_t *yd, const float *z,
                             bool z_in_place, bool in, bool out,
                             int threads) {
  het_tensor *xt = NULL, *y = NULL, *zt = NULL, *yp = NULL;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, xd, 4, &xt),
                   HET_OK);
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, yd, 4, &y),
                   HET_OK);
  relayout((float *)x, xt->data, xd[0], xd[1], xd[2] * xd[3], in, false);
  het_tensor *ins[5] = {NULL};
  for (int i = 0; i < n->n_inputs; i++) { /* an omitted bias: NULL */
    int v = het_node_input(n, i);
    ins[i] = i == 0 ? xt : v >= 0 ? g->values[v].initializer : NULL;
  }
  if (z) {
    if (!z_in_place)
      ck_assert_int_eq(
          het_tensor_create_empty(HET_DTYPE_FLOAT32, yd, 4, &zt), HET_OK);
    ins[3] = z_in_place ? y : zt;
    relayout((float *)z, ins[3]->data, yd[0], yd[1], yd[2] * yd[3], out,
             false);
  }
  het_threadpool *pool = NULL;
  het_parallel par;
  if (threads > 1) {
    ck_assert_int_eq(het_threadpool_create(threads, &pool), HET_OK);
    het_threadpool_parallel(pool, &par);
  }
  het_kernel_ctx ctx = {.node = n, .opset = n->opset, .n_inputs = n->n_inputs,
                        .inputs = ins, .n_outputs = 1, .outputs = &y,
                        .state = state, .threads = threads,
                        .par = pool ? &par : NULL,
                        .nhwc_in = in, .nhwc_out = out};
  ck_assert_msg(run(&ctx) == HET_OK, "%s", het_last_error());
  het_threadpool_destroy(pool);
  het_tensor_destroy(xt);
  het_tensor_destroy(zt);
  if (!out)
    return y;
  ck_assert_int_eq(het_tensor_create_empty(HET_DTYPE_FLOAT32, yd, 4, &yp),
                   HET_OK);
  relayout(yp->data, y->data, yd[0], yd[1], yd[2] * yd[3], true, true);
  het_tensor_destroy(y);
  return yp;
}

/* FusedConvDw node n of conv_dw_bands on x: node_once. */
static het_tensor *conv_dw_once(const het_graph *g, const het_node *n,
                                void *state, const float *x,
                                const int64_t *xd, const int64_t *yd,
                                bool in, bool out, int threads) {
  return node_once(g, n, het_lk_conv_dw_fused_run, state, x, xd, yd, NULL,
                   false, in, out, threads);
}

/* Conv-like node n (of op) prepared on oneDNN with X channels-last when
 * in, Y when out, and an L2 of l2 bytes for threads. */
static void *conv_prepare(const het_graph *g, const het_node *n,
                          const char *op, bool in, bool out, long l2,
                          int threads) {
  ck_assert_str_eq(n->op_type, op);
  het_kernel_prep prep = {.nhwc_in = in, .nhwc_out = out,
                          .conv_algo = HET_CONV_ALGO_DIRECT,
                          .threads = threads, .cache_l2 = l2};
  void *state = NULL;
  ck_assert_msg(het_dnnl_conv_prepare_with(g, n, &prep, &state) == HET_OK,
                "%s", het_last_error());
  return state;
}

/* conv_dw_once on x [2, 8, 37, 97]: on oneDNN (dnnl) prepared with l2 on
 * threads, X channels-last when in, Y when out, or the generic plain path;
 * prims: the primitives built for the 1x1 half, the depthwise half on
 * bands and on whole images. */
static het_tensor *run_conv_dw(const het_graph *g, const char *name,
                               const float *x, const int64_t *yd, bool dnnl,
                               bool in, bool out, long l2, int threads,
                               int prims[3]) {
  const het_node *n = &g->nodes[node_named(g, name)];
  const int64_t xd[4] = {2, 8, 37, 97};
  void *state = dnnl ? conv_prepare(g, n, "FusedConvDw", in, out, l2, threads) : NULL;
  het_tensor *y = conv_dw_once(g, n, state, x, xd, yd, in, out, threads);
  for (int i = 0; i < 3; i++)
    prims[i] = het_dnnl_conv_entries(state, i);
  het_dnnl_state_destroy(state);
  return y;
}

/* The fused 1x1 + depthwise pairs of conv_dw_bands (depthwise 3x3 stride
 * 1 and 2, pads 1; 5x5 strides (2, 1), asymmetric pads) on batch 2: band
 * by band (an L2 of 64 KiB: several bands of 512 KiB and a shorter last
 * one; on two and three threads of a pool, each taking its own run of
 * bands), and whole with a large L2 or an L2 that holds each of two
 * threads' share, agree with the
 * generic plain path (the two halves as im2col and direct depthwise
 * Convs).  So do they with X or Y (or both) left NCHW by the layout pass,
 * as a squeeze-excitation block's broadcasting Mul could leave a
 * MobileNetV3 pair's Y: on oneDNN too (the 1x1 half from X's layout into
 * the channels-last buffer, the depthwise half from it into Y's), whole
 * images only (a band is a run of channels-last rows). */
START_TEST(test_conv_dw_bands) {
  het_graph *g = load_model(CONV_DW_BANDS "/model.onnx");
  static float x[2 * 8 * 37 * 97];
  fill_pattern(x, 2 * 8 * 37 * 97);
  const char *names[3] = {"p1_expand", "p2_expand", "p3_expand"};
  const int64_t yd[3][4] = {
      {2, 64, 37, 97}, {2, 64, 19, 49}, {2, 64, 18, 96}};
  const struct {
    long l2;
    int threads;
    bool in, out, bands; /* X, Y channels-last; bands expected */
  } modes[8] = {{64 << 10, 1, true, true, true},
                {64 << 10, 2, true, true, true},
                {64 << 20, 1, true, true, false},
                {64 << 10, 1, true, false, false},
                {64 << 10, 1, false, true, false},
                {64 << 10, 1, false, false, false},
                {64 << 10, 3, true, true, true},
                {512 << 10, 2, true, true, false}};
  for (int k = 0; k < 3; k++) {
    int p[3];
    het_tensor *ref =
        run_conv_dw(g, names[k], x, yd[k], false, false, false, 0, 1, p);
    for (int i = 0; i < 8; i++) {
      het_tensor *y =
          run_conv_dw(g, names[k], x, yd[k], true, modes[i].in, modes[i].out,
                      modes[i].l2, modes[i].threads, p);
      /* bands: several 1x1 row counts (the first band's, the next ones') */
      ck_assert_msg(modes[i].bands ? p[0] >= 2 && p[1] >= 1 && p[2] == 0
                                   : p[0] >= 1 && p[1] == 0 && p[2] >= 1,
                    "%s mode %d: %d 1x1, %d band and %d whole primitives",
                    names[k], i, p[0], p[1], p[2]);
      char msg[256];
      ck_assert_msg(het_testcase_compare(ref, y, 1e-5, 1e-5, msg, sizeof msg),
                    "%s mode %d: %s", names[k], i, msg);
      het_tensor_destroy(y);
    }
    het_tensor_destroy(ref);
  }
  het_graph_destroy(g);
}
END_TEST

/* One FusedConvDw state (p1_expand, bands on an L2 of 64 KiB) on images
 * of 14 heights: more shapes than it caches primitives for (it falls back
 * to whole images, then to primitives built per call); each result
 * agrees with the generic plain path. */
START_TEST(test_conv_dw_band_shapes) {
  het_graph *g = load_model(CONV_DW_BANDS "/model.onnx");
  const het_node *n = &g->nodes[node_named(g, "p1_expand")];
  void *state = conv_prepare(g, n, "FusedConvDw", true, true, 64 << 10, 1);
  static float x[8 * 37 * 97];
  fill_pattern(x, 8 * 37 * 97);
  for (int64_t h = 37; h >= 11; h -= 2) {
    const int64_t xd[4] = {1, 8, h, 97}, yd[4] = {1, 64, h, 97};
    het_tensor *ref = conv_dw_once(g, n, NULL, x, xd, yd, false, false, 1);
    het_tensor *y = conv_dw_once(g, n, state, x, xd, yd, true, true, 1);
    char msg[256];
    ck_assert_msg(het_testcase_compare(ref, y, 1e-5, 1e-5, msg, sizeof msg),
                  "height %lld: %s", (long long)h, msg);
    het_tensor_destroy(ref);
    het_tensor_destroy(y);
  }
  ck_assert_int_eq(het_dnnl_conv_entries(state, 0), 8); /* cache full */
  het_dnnl_state_destroy(state);
  het_graph_destroy(g);
}
END_TEST

#define CONV_POOL_BANDS HETRT_TEST_DATA "/optimizer/conv_pool_bands"

/* The FusedConvPool nodes of conv_pool_bands (ResNet's and SqueezeNet's
 * stems on a 3-channel image input, a 3x3 Conv with asymmetric pool pads
 * on a channels-last activation) on batch 2: band by band (an L2 of 64
 * KiB: bands of 32 KiB, one or two Conv rows each; of 256 KiB: several
 * pooled rows a band; with X channels-last or left
 * NCHW, then made so whole; on two and three threads of a pool, each
 * taking its own run of bands), and whole with a large L2 (or one that
 * holds each of two threads' share) or Y left NCHW, agree with the
 * generic plain path (the Conv, then the MaxPool). */
START_TEST(test_conv_pool_bands) {
  het_graph *g = load_model(CONV_POOL_BANDS "/model.onnx");
  const char *names[3] = {"b1_conv", "b2_conv", "b3_conv"};
  const int64_t xd[3][4] = {
      {2, 3, 99, 115}, {2, 3, 99, 115}, {2, 16, 45, 71}};
  const int64_t yd[3][4] = {
      {2, 64, 25, 29}, {2, 64, 24, 28}, {2, 64, 23, 35}};
  const struct {
    long l2;
    int threads;
    bool in, out, bands; /* X, Y channels-last; bands expected */
  } modes[10] = {{64 << 10, 1, true, true, true},
                 {64 << 10, 1, false, true, true},
                 {256 << 10, 1, true, true, true},
                 {64 << 10, 2, true, true, true},
                 {64 << 20, 1, true, true, false},
                 {64 << 10, 1, true, false, false},
                 {64 << 10, 1, false, false, false},
                 {256 << 10, 2, false, true, true},
                 {64 << 10, 3, true, true, true},
                 {512 << 10, 2, true, true, false}};
  static float x[2 * 16 * 45 * 71];
  fill_pattern(x, 2 * 16 * 45 * 71);
  for (int k = 0; k < 3; k++) {
    const het_node *n = &g->nodes[node_named(g, names[k])];
    het_tensor *ref = node_once(g, n, het_lk_conv_pool_run, NULL, x, xd[k],
                                yd[k], NULL, false, false, false, 1);
    for (int i = 0; i < 10; i++) {
      void *state = conv_prepare(g, n, "FusedConvPool", modes[i].in,
                                 modes[i].out, modes[i].l2, modes[i].threads);
      het_tensor *y = node_once(g, n, het_lk_conv_pool_run, state, x, xd[k],
                                yd[k], NULL, false, modes[i].in,
                                modes[i].out, modes[i].threads);
      int band = het_dnnl_conv_entries(state, 1);
      ck_assert_msg(modes[i].bands ? band >= 1 : band == 0,
                    "%s mode %d: %d band primitives", names[k], i, band);
      char msg[256];
      ck_assert_msg(het_testcase_compare(ref, y, 1e-5, 1e-5, msg, sizeof msg),
                    "%s mode %d: %s", names[k], i, msg);
      het_tensor_destroy(y);
      het_dnnl_state_destroy(state);
    }
    het_tensor_destroy(ref);
  }
  het_graph_destroy(g);
}
END_TEST

/* conv_add_bands' FusedConv (a 1x1 Conv, Y [2, 64, 37, 97] with a
 * residual and Relu): in residual bands (an L2 of 512 KiB: 5 rows of
 * 24.8 KB a band and a last one of 2, so two band primitives next to the
 * whole-image one), with the residual in a buffer of its own or in Y's
 * (as the memory plan makes it), and whole on two threads or with a
 * large L2, agrees with the generic plain path. */
START_TEST(test_conv_add_bands) {
  het_graph *g =
      load_model(HETRT_TEST_DATA "/optimizer/conv_add_bands/model.onnx");
  const het_node *n = &g->nodes[node_named(g, "main")];
  const int64_t xd[4] = {2, 64, 37, 97}, yd[4] = {2, 64, 37, 97};
  static float x[2 * 64 * 37 * 97], z[2 * 64 * 37 * 97];
  fill_pattern(x, 2 * 64 * 37 * 97);
  for (int64_t i = 0; i < 2 * 64 * 37 * 97; i++)
    z[i] = x[(i * 31) % (2 * 64 * 37 * 97)] - 0.5f;
  het_tensor *ref = node_once(g, n, het_lk_conv_run, NULL, x, xd, yd, z,
                              false, false, false, 1);
  const struct {
    long l2;
    int threads;
    bool in_place;
    int prims; /* primitives expected */
  } modes[4] = {{512 << 10, 1, false, 3},
                {512 << 10, 1, true, 3},
                {512 << 10, 2, true, 2},
                {64 << 20, 1, true, 2}};
  for (int i = 0; i < 4; i++) {
    void *state = conv_prepare(g, n, "FusedConv", true, true, modes[i].l2,
                               modes[i].threads);
    het_tensor *y = node_once(g, n, het_lk_conv_run, state, x, xd, yd, z,
                              modes[i].in_place, true, true,
                              modes[i].threads);
    ck_assert_int_eq(het_dnnl_conv_entries(state, 0), modes[i].prims);
    char msg[256];
    ck_assert_msg(het_testcase_compare(ref, y, 1e-5, 1e-5, msg, sizeof msg),
                  "mode %d: %s", i, msg);
    het_tensor_destroy(y);
    het_dnnl_state_destroy(state);
  }
  het_tensor_destroy(ref);
  het_graph_destroy(g);
}
END_TEST

#endif

/* A 3-channel NCHW graph input read by an NHWC Conv primitive: the
 * provider's own plane interleave (vector body and tail, batch 2) under
 * either layout and conv algorithm matches the torch reference. */
START_TEST(test_rgb_input_sessions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  const char *dir = HETRT_TEST_DATA "/optimizer/rgb_input";
  opt_session_case(env, dir, "all", "auto", "direct");
  opt_session_case(env, dir, "all", "auto", "auto");
  opt_session_case(env, dir, "none", "nchw", "direct");
  het_env_destroy(env);
}
END_TEST

START_TEST(test_bad_conv_algo_option) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  expect_bad_option(env, "cpu.conv_algo", "fft", true);
  expect_bad_option(env, "cpu.precision", "fp8", true);
  het_env_destroy(env);
}
END_TEST

/* The first output of model (input x filled with a pattern) on a cpu session
 * with option cpu.precision=precision; caller owns. */
static het_tensor *precision_run(het_env *env, const char *model,
                                 const char *precision) {
  het_session_options *o;
  het_session *s = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "cpu.precision", precision),
                   HET_OK);
  ck_assert_msg(het_session_create(env, model, o, &s) == HET_OK, "%s: %s",
                model, het_last_error());
  het_session_options_destroy(o);
  /* the report shows the Convs and MatMuls computing in bfloat16 */
  char *report = NULL;
  ck_assert_int_eq(het_session_explain(s, "json", &report), HET_OK);
  bool bf16 = strstr(report, "\"precision\":\"bf16\"") != NULL;
  ck_assert_msg(bf16 == (strcmp(precision, "bf16") == 0), "%s: %s", model,
                report);
  het_string_destroy(report);
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < d.rank; i++)
    dims[i] = d.dims[i] > 0 ? d.dims[i] : 1;
  het_tensor *x = NULL, *y = NULL;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, d.rank, &x),
                   HET_OK);
  fill_pattern(het_tensor_get_data(x), het_tensor_get_count(x));
  het_value_desc out;
  ck_assert_int_eq(het_session_get_output(s, 0, &out), HET_OK);
  const char *names[1] = {d.name}, *outs[1] = {out.name};
  ck_assert_msg(het_session_run(s, names, &x, 1, outs, 1, &y) == HET_OK, "%s",
                het_last_error());
  het_tensor_destroy(x);
  het_session_destroy(s);
  return y;
}

/* b against float32 a: bfloat16's contract (docs/architecture.md):
 * cosine >= 0.9999 and every element within 2% of a's largest
 * magnitude; and not a's bytes (bfloat16 did run). */
static void assert_bf16_close(const het_tensor *b, const het_tensor *a,
                              const char *what) {
  const float *x = het_tensor_get_data((het_tensor *)a);
  const float *y = het_tensor_get_data((het_tensor *)b);
  int64_t n = het_tensor_get_count(a);
  ck_assert_int_eq(het_tensor_get_count(b), n);
  double dot = 0, xx = 0, yy = 0, big = 0, err = 0;
  for (int64_t i = 0; i < n; i++) {
    dot += (double)x[i] * y[i];
    xx += (double)x[i] * x[i];
    yy += (double)y[i] * y[i];
    big = fmax(big, fabs(x[i]));
    err = fmax(err, fabs((double)x[i] - y[i]));
  }
  double cosine = dot / sqrt(xx * yy);
  ck_assert_msg(cosine >= 0.9999 && err <= 0.02 * big,
                "%s: cosine %.6f, max error %.4g of %.4g", what, cosine, err,
                big);
  ck_assert_msg(memcmp(x, y, sizeof(float) * (size_t)n) != 0,
                "%s: bfloat16 gave float32's bytes", what);
}

/* cpu.precision=bf16 (on a CPU with AVX-512 BF16): conv1 runs oneDNN's
 * bfloat16 kernel; the reports say bf16; a residual block (Convs,
 * FusedConvs), a MatMul, an encoder layer (hetrt.FusedMatMuls) and a small
 * ResNet with a Gemm head give
 * outputs within bfloat16's rounding of float32 ones, and not the same
 * bytes (bfloat16 did run).  Without AVX-512 BF16 the option is refused. */
START_TEST(test_bf16_precision) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  if (!__builtin_cpu_supports("avx512bf16")) {
    expect_bad_option(env, "cpu.precision", "bf16", true);
    het_env_destroy(env);
    return;
  }
  het_graph *g = load_all();
  het_tensor *x = conv1_input();
  het_kernel_prep f32 = {.conv_algo = HET_CONV_ALGO_DIRECT};
  het_kernel_prep bf16 = {.conv_algo = HET_CONV_ALGO_DIRECT, .bf16 = true};
  const char *impl_f, *impl_b;
  het_tensor *yf = run_conv1(g, &f32, x, &impl_f);
  het_tensor *yb = run_conv1(g, &bf16, x, &impl_b);
  ck_assert_msg(strstr(impl_b, "bf16") && !strstr(impl_f, "bf16"),
                "float32 ran %s, bfloat16 %s", impl_f, impl_b);
  assert_bf16_close(yb, yf, "conv1");
  het_tensor_destroy(x);
  het_tensor_destroy(yf);
  het_tensor_destroy(yb);
  het_graph_destroy(g);
  static const char *const models[] = {
      MODEL, HETRT_TEST_DATA "/quant/matmul.onnx",
      HETRT_TEST_DATA "/nlp/encoder/model.onnx", /* FusedMatMuls */
      HETRT_TEST_DATA "/emu/resnet_small.onnx"}; /* a Gemm head */
  for (int m = 0; m < 4; m++) {
    het_tensor *a = precision_run(env, models[m], "fp32");
    het_tensor *b = precision_run(env, models[m], "bf16");
    assert_bf16_close(b, a, models[m]);
    het_tensor_destroy(a);
    het_tensor_destroy(b);
  }
  het_env_destroy(env);
}
END_TEST

#define QDQ_CHAIN HETRT_TEST_DATA "/optimizer/qdq_chain"
#define QDQ_CHAIN_S8 HETRT_TEST_DATA "/optimizer/qdq_chain_s8"

/* The fused chain: Q(x) feeds c1 and c3 (NCHW: x is a graph input), c2
 * reads c1 and QLinearAdd reads c2 and c3 (all NHWC), then a MaxPool of
 * QLinearAdd's 8-bit output (its DQ moved below it), the requantization
 * to the pool's scale (DQ, Q) and c4 (all NHWC), whose output feeds the
 * graph output (NCHW). */
static void check_chain_plan(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  het_graph *g = load_model(path);
  ck_assert_int_eq(opt_count_op(g, "QLinearAdd"), 1);
  if (!het_kernels_int8_fast()) { /* the Convs stay float QDQ islands */
    ck_assert_int_eq(opt_count_op(g, "QLinearConv"), 0);
    het_graph_destroy(g);
    return;
  }
  ck_assert_int_eq(opt_count_op(g, "QLinearConv"), 4);
  het_cpu_layout *l = plan(g, NULL, 0, NULL);
  int c[4], add = -1, pool = -1, nc = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    int id = g->order[i];
    if (strcmp(g->nodes[id].op_type, "QLinearConv") == 0)
      c[nc++] = id;
    else if (strcmp(g->nodes[id].op_type, "QLinearAdd") == 0)
      add = id;
    else if (strcmp(g->nodes[id].op_type, "MaxPool") == 0)
      pool = id;
  }
  ck_assert_int_ge(pool, 0);
  ck_assert_int_eq(g->nodes[pool].inputs[0], g->nodes[add].outputs[0]);
  ck_assert_uint_eq(l[pool].nhwc_in, 1u);
  ck_assert_uint_eq(l[pool].nhwc_out, 1u);
  ck_assert_int_eq(nc, 4);
#ifdef HETRT_HAVE_DNNL
  /* fused only where the oneDNN path takes them */
  ck_assert(het_dnnl_qconv_takes(g, &g->nodes[c[0]]));
#endif
  /* order: c1 and c3 (either first), c2, c4 */
  int last = c[3];
  for (int i = 0; i < 3; i++) {
    const het_node *n = &g->nodes[c[i]];
    bool reads_q = strcmp(g->values[het_node_input(n, 0)].name, "in_q") == 0;
    ck_assert_uint_eq(l[c[i]].nhwc_in, reads_q ? 0u : 1u);
    ck_assert_uint_eq(l[c[i]].nhwc_out, 1u);
  }
  ck_assert_uint_eq(l[last].nhwc_in, 1u);
  ck_assert_uint_eq(l[last].nhwc_out, 0u); /* feeds the graph output */
  ck_assert_uint_eq(l[add].nhwc_in, 1u | 1u << 3);
  ck_assert_uint_eq(l[add].nhwc_out, 1u);
  free(l);
  het_graph_destroy(g);
}

START_TEST(test_plan_qdq_chain) {
  check_chain_plan(QDQ_CHAIN);
  check_chain_plan(QDQ_CHAIN_S8);
}
END_TEST

/* The chain on a batch of `batch`: output y (caller owns). */
static het_tensor *run_chain(het_session *s, int64_t batch) {
  static const int64_t chw[3] = {8, 10, 10};
  het_tensor *y = NULL;
  run_case(s, chw, batch, 330.0f, 1, &y);
  return y;
}

/* Batches 1 to 11 (more shapes than a QLinearConv caches primitives
 * for): fused NHWC gives the fused NCHW bytes, and both stay within one
 * output step (c4's scale is at most 0.06) of the float QDQ graph. */
static void check_chain_sessions(het_env *env, const char *dir) {
  het_session *nhwc = open_case(env, dir, "auto", "all");
  het_session *nchw = open_case(env, dir, "nchw", "all");
  het_session *flt = open_case(env, dir, "nchw", "none");
  for (int64_t batch = 1; batch <= 11; batch++) {
    het_tensor *a = run_chain(nhwc, batch), *b = run_chain(nchw, batch);
    het_tensor *f = run_chain(flt, batch);
    char msg[256];
    ck_assert_int_eq(het_tensor_get_count(a), batch * 4 * 5 * 5);
    ck_assert_msg(het_testcase_compare(b, a, 0, 0, msg, sizeof msg),
                  "%s batch %lld: NHWC vs NCHW: %s", dir, (long long)batch,
                  msg);
    ck_assert_msg(het_testcase_compare(f, a, 0, 0.0601, msg, sizeof msg),
                  "%s batch %lld: vs float QDQ: %s", dir, (long long)batch,
                  msg);
    het_tensor_destroy(a);
    het_tensor_destroy(b);
    het_tensor_destroy(f);
  }
  het_session_destroy(nhwc);
  het_session_destroy(nchw);
  het_session_destroy(flt);
}

START_TEST(test_qdq_chain_sessions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  check_chain_sessions(env, QDQ_CHAIN);
  check_chain_sessions(env, QDQ_CHAIN_S8);
  het_env_destroy(env);
}
END_TEST

static Suite *layout_suite(void) {
  Suite *s = suite_create("cpu_layout");
  TCase *core = tcase_create("core");
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_plan_whole_graph);
  tcase_add_test(core, test_plan_chain_to_global_pool);
  tcase_add_test(core, test_plan_reader_outside);
  tcase_add_test(core, test_plan_plain_only);
  tcase_add_test(core, test_plan_depthwise_back_off);
  tcase_add_test(core, test_plan_symbolic_batch);
  tcase_add_test(core, test_symbolic_batch_runs);
  tcase_add_test(core, test_sessions_match_reference);
  tcase_add_test(core, test_bad_layout_option);
  tcase_add_test(core, test_conv_algo_sessions);
#ifdef HETRT_HAVE_DNNL
  tcase_add_test(core, test_winograd_runs_and_agrees);
  tcase_add_test(core, test_winograd_candidates);
  tcase_add_test(core, test_bf16_precision);
  tcase_add_test(core, test_conv_choice_remembered);
  tcase_add_test(core, test_strided_1x1_gathered);
  tcase_add_test(core, test_conv_dw_bands);
  tcase_add_test(core, test_conv_dw_band_shapes);
  tcase_add_test(core, test_conv_pool_bands);
  tcase_add_test(core, test_conv_add_bands);
#endif
  tcase_add_test(core, test_strided_1x1_sessions);
  tcase_add_loop_test(core, test_sessions_every_way, 0, N_EVERY_WAY);
  tcase_add_test(core, test_plan_se_gates);
  tcase_add_test(core, test_rgb_input_sessions);
  tcase_add_test(core, test_bad_conv_algo_option);
  tcase_add_test(core, test_plan_qdq_chain);
  tcase_add_test(core, test_qdq_chain_sessions);
  suite_add_tcase(s, core);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(layout_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
