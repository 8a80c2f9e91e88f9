/* test_estimate.c — the CPU provider's calibrated estimate
 * (src/providers/cpu/estimate.c): the core's op classes, the row each node
 * uses (channels-last or NCHW as the layout pass plans the graph's own
 * shapes, kept when the cost model swaps in shapes to plan for), estimates
 * against values computed by hand from the table, monotone in work and in
 * threads, the plain roofline under cpu.estimate=roofline, and the
 * option's errors.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cost_graphs.h"
#include "common/opt_helpers.h"
#include "core/ir.h"
#include "core/roofline.h"
#include "hetrt/hetrt.h"
#include "kernels/kernel.h"
#include "providers/cpu/estimate.h"

#define RESNET_BLOCK HETRT_TEST_DATA "/optimizer/resnet_block/model.onnx"

/* ---- graph building ---- */

/* Adds attribute name (ints v, n of them; n == 0: the int v[0]) to the
 * node's. */
static void set_ints(het_graph *g, int node, const char *name, const int64_t *v,
                     size_t n) {
  het_node *nd = &g->nodes[node];
  het_attr *all = het_arena_calloc(&g->arena, (size_t)nd->n_attrs + 1,
                                   sizeof *all);
  if (nd->n_attrs)
    memcpy(all, nd->attrs, (size_t)nd->n_attrs * sizeof *all);
  het_attr *a = &all[nd->n_attrs];
  a->name = name;
  a->type = n ? HET_ATTR_INTS : HET_ATTR_INT;
  a->i = v[0];
  a->ints = het_arena_calloc(&g->arena, n + 1, sizeof(int64_t));
  memcpy(a->ints, v, n * sizeof(int64_t));
  a->n = n;
  nd->attrs = all;
  nd->n_attrs++;
}

/* A float32 initializer of dims (zeros). */
static int add_weight(het_graph *g, const char *name, const int64_t *dims,
                      int rank) {
  int v = cg_add_value(g, name, HET_VALUE_INITIALIZER, dims, rank);
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, rank, &t),
                   HET_OK);
  het_graph_set_constant(g, v, t);
  return v;
}

/* x[1,cin,h,h] -> op (Conv or ConvTranspose, k x k, group, stride s) ->
 * y[1,cout,h*s,h*s] (h < 0: H and W unknown); the node. */
static int add_conv(het_graph *g, const char *op, const char *tag, int64_t cin,
                    int64_t cout, int64_t k, int64_t group, int64_t h) {
  bool t = strcmp(op, "ConvTranspose") == 0;
  int64_t s = t ? k : 1, oh = h < 0 ? -1 : h * s;
  int64_t xd[] = {1, cin, h, h}, yd[] = {1, cout, oh, oh};
  int64_t wd[] = {t ? cin : cout, t ? cout / group : cin / group, k, k};
  char name[32];
  snprintf(name, sizeof name, "%s_x", tag);
  int in[2] = {cg_add_value(g, name, HET_VALUE_GRAPH_INPUT, xd, 4), -1};
  snprintf(name, sizeof name, "%s_w", tag);
  in[1] = add_weight(g, name, wd, 4);
  snprintf(name, sizeof name, "%s_y", tag);
  int n = cg_add_node(g, op, in, 2, cg_add_value(g, name, 0, yd, 4));
  if (group != 1)
    set_ints(g, n, "group", &group, 0);
  return n;
}

/* a[m,k] @ b[k,n] (b an initializer). */
static int add_matmul(het_graph *g, const char *tag, int64_t m, int64_t k,
                      int64_t n) {
  int64_t ad[] = {m, k}, bd[] = {k, n}, yd[] = {m, n};
  char name[32];
  snprintf(name, sizeof name, "%s_a", tag);
  int in[2] = {cg_add_value(g, name, HET_VALUE_GRAPH_INPUT, ad, 2), -1};
  snprintf(name, sizeof name, "%s_b", tag);
  in[1] = add_weight(g, name, bd, 2);
  snprintf(name, sizeof name, "%s_y", tag);
  return cg_add_node(g, "MatMul", in, 2, cg_add_value(g, name, 0, yd, 2));
}

/* One-input op on x[elements] -> y[elements]. */
static int add_unary(het_graph *g, const char *op, const char *tag,
                     int64_t elements) {
  char name[32];
  snprintf(name, sizeof name, "%s_x", tag);
  int x = cg_add_value(g, name, HET_VALUE_GRAPH_INPUT, &elements, 1);
  snprintf(name, sizeof name, "%s_y", tag);
  return cg_add_node(g, op, &x, 1, cg_add_value(g, name, 0, &elements, 1));
}

/* An estimator on fixed rates: 100 GFLOP/s (the kernels' GEMM) and
 * 50 GFLOP/s (OpenBLAS) a thread, 20 GB/s, 2 cores. */
static void estimator_init(het_cpu_estimator *e, int threads) {
  het_cpu_estimator_init(e);
  e->info.peak_flops_f32 = 1e12;
  e->info.memory_bandwidth = 20e9;
  e->gemm_flops = 100e9;
  e->blas_flops = 50e9;
  e->threads = threads;
  e->cores = 2;
}

static double estimate(het_cpu_estimator *e, const het_graph *g, int node) {
  double s = -1;
  ck_assert_int_eq(het_cpu_estimate(e, g, node, &s), HET_OK);
  ck_assert(isfinite(s) && s >= 0);
  return s;
}

static het_cpu_row row_of(het_cpu_estimator *e, const het_graph *g, int node) {
  het_cpu_row row = HET_CPU_ROWS;
  ck_assert_int_eq(het_cpu_estimate_row(e, g, node, &row), HET_OK);
  return row;
}

/* The table's formula by hand: overhead + compute * flops / rate +
 * memory * bytes / 20 GB/s. */
static double by_hand(het_cpu_row row, double flops, double bytes,
                      double rate) {
  const het_cpu_row_cost *c = het_cpu_row_cost_get(row);
  return c->overhead + c->compute * flops / rate + c->memory * bytes / 20e9;
}

#define ASSERT_CLOSE(got, want)                                                \
  ck_assert_msg(fabs((got) - (want)) <= 1e-12 + 1e-9 * fabs(want),             \
                "%s = %.9g, expected %.9g", #got, (got), (want))

/* ---- core ---- */

START_TEST(test_op_classes) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int conv = add_conv(g, "Conv", "c", 8, 16, 3, 1, 8);
  int dw = add_conv(g, "Conv", "d", 8, 8, 3, 8, 8);
  int grouped = add_conv(g, "Conv", "g", 8, 8, 3, 4, 8); /* 2 a group */
  int convt = add_conv(g, "ConvTranspose", "t", 8, 8, 2, 1, 8);
  int mm = add_matmul(g, "m", 4, 8, 8);
  const char *ops[] = {"LSTM", "Reshape", "Shape",      "Transpose", "Concat",
                       "Relu", "Resize",  "ReduceMean", "Softmax"};
  const het_roofline_class want[] = {
      HET_ROOFLINE_RECURRENT,   HET_ROOFLINE_VIEW,
      HET_ROOFLINE_VIEW,        HET_ROOFLINE_MOVEMENT,
      HET_ROOFLINE_MOVEMENT,    HET_ROOFLINE_ELEMENTWISE,
      HET_ROOFLINE_ELEMENTWISE, HET_ROOFLINE_ELEMENTWISE,
      HET_ROOFLINE_ELEMENTWISE};
  ck_assert_int_eq(het_roofline_op_class(g, conv), HET_ROOFLINE_GEMM);
  ck_assert_int_eq(het_roofline_op_class(g, dw), HET_ROOFLINE_DEPTHWISE);
  ck_assert_int_eq(het_roofline_op_class(g, grouped), HET_ROOFLINE_GEMM);
  ck_assert_int_eq(het_roofline_op_class(g, convt), HET_ROOFLINE_GEMM);
  ck_assert_int_eq(het_roofline_op_class(g, mm), HET_ROOFLINE_GEMM);
  for (int i = 0; i < 9; i++) {
    char tag[16];
    snprintf(tag, sizeof tag, "o%d", i);
    int n = add_unary(g, ops[i], tag, 32);
    ck_assert_msg(het_roofline_op_class(g, n) == want[i],
                  "%s: class %d, expected %d", ops[i],
                  het_roofline_op_class(g, n), want[i]);
  }
  het_graph_destroy(g);
}
END_TEST

/* resnet_block after the optimizer: conv1's output is NHWC between two
 * oneDNN Convs, conv4 reads and writes NCHW (test_cpu_layout.c). */
START_TEST(test_rows_follow_layout) {
  het_graph *g = opt_load_model(RESNET_BLOCK, HET_OPT_ALL, NULL);
  int conv1 = -1, conv4 = -1;
  for (int i = 0; i < g->n_nodes; i++) {
    conv1 = strcmp(g->nodes[i].name, "conv1") == 0 ? i : conv1;
    conv4 = strcmp(g->nodes[i].name, "conv4") == 0 ? i : conv4;
  }
  ck_assert(conv1 >= 0 && conv4 >= 0);
  het_cpu_estimator e;
  estimator_init(&e, 1);
  ck_assert_int_eq(het_cpu_estimator_plan(&e, g, NULL), HET_OK);
#ifdef HETRT_HAVE_DNNL
  ck_assert_int_eq(row_of(&e, g, conv1), HET_CPU_ROW_GEMM);
#else
  ck_assert_int_eq(row_of(&e, g, conv1), HET_CPU_ROW_CONV_NCHW);
#endif
  ck_assert_int_eq(row_of(&e, g, conv4), HET_CPU_ROW_CONV_NCHW);
  het_cpu_estimator_deinit(&e);
  /* cpu.layout=nchw: every Conv NCHW */
  estimator_init(&e, 1);
  e.nchw_only = true;
  ck_assert_int_eq(het_cpu_estimator_plan(&e, g, NULL), HET_OK);
  ck_assert_int_eq(row_of(&e, g, conv1), HET_CPU_ROW_CONV_NCHW);
  het_cpu_estimator_deinit(&e);
  het_graph_destroy(g);
}
END_TEST

/* A graph planned on its own (symbolic) shapes keeps its rows when the
 * cost model swaps in concrete shapes to plan for; one never planned is
 * planned on first use. */
START_TEST(test_rows_keep_own_shapes) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int conv = add_conv(g, "Conv", "c", 32, 32, 3, 1, -1);
  int dw = add_conv(g, "Conv", "d", 32, 32, 3, 32, -1);
  het_cpu_estimator e;
  estimator_init(&e, 1);
  ck_assert_int_eq(het_cpu_estimator_plan(&e, g, NULL), HET_OK);
  for (int v = 0; v < g->n_values; v++) /* "shapes to plan for" */
    for (int i = 2; i < 4 && g->values[v].shape.rank == 4; i++)
      if (g->values[v].shape.dims[i].value < 0)
        g->values[v].shape.dims[i].value = 16;
  ck_assert_int_eq(row_of(&e, g, conv), HET_CPU_ROW_CONV_NCHW);
  ck_assert_int_eq(row_of(&e, g, dw), HET_CPU_ROW_DEPTHWISE_NCHW);
  het_cpu_estimator_deinit(&e);
  /* no plan yet: made from the graph as it is, whose dims are now known
   * (and the Conv's output, read by nothing, may go channels-last) */
  estimator_init(&e, 1);
#ifdef HETRT_HAVE_DNNL
  ck_assert_int_eq(row_of(&e, g, conv), HET_CPU_ROW_GEMM);
#else
  ck_assert_int_eq(row_of(&e, g, conv), HET_CPU_ROW_CONV_NCHW);
#endif
  int n = add_unary(g, "Relu", "r", 8);
  ck_assert_int_eq(row_of(&e, g, n), HET_CPU_ROW_ELEMENTWISE); /* re-planned */
  het_cpu_estimator_deinit(&e);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_estimates_by_hand) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int pw = add_conv(g, "Conv", "p", 32, 64, 1, 1, 8);
  int wino = add_conv(g, "Conv", "w", 32, 32, 3, 1, 8);
  int small = add_conv(g, "Conv", "s", 16, 16, 3, 1, 8); /* direct */
  int convt = add_conv(g, "ConvTranspose", "t", 16, 4, 2, 1, 8);
  int mm = add_matmul(g, "m", 64, 128, 256);
  int relu = add_unary(g, "Relu", "r", 1000);
  int sigmoid = add_unary(g, "Sigmoid", "g", 1000);
  int resize = add_unary(g, "Resize", "z", 1000);
  int reshape = add_unary(g, "Reshape", "v", 1000);
  const int64_t xd[] = {10, 1, 32}, wd[] = {1, 256, 32}, rd[] = {1, 256, 64},
                yd[] = {10, 1, 1, 64};
  int lin[3] = {cg_add_value(g, "l_x", HET_VALUE_GRAPH_INPUT, xd, 3),
                add_weight(g, "l_w", wd, 3), add_weight(g, "l_r", rd, 3)};
  int lstm = cg_add_node(g, "LSTM", lin, 3, cg_add_value(g, "l_y", 0, yd, 4));
  het_cpu_estimator e;
  estimator_init(&e, 1);
  e.nchw_only = true; /* every Conv in the NCHW row */
  ck_assert_int_eq(het_cpu_estimator_plan(&e, g, NULL), HET_OK);
  double gain = het_cpu_winograd_gain;
  ck_assert(gain > 1);
  /* 1x1 Conv: 2 * 64 * 8 * 8 * 32 FLOPs; x 2048, w 2048, y 4096 floats */
  ASSERT_CLOSE(estimate(&e, g, pw),
               by_hand(HET_CPU_ROW_CONV_NCHW, 2.0 * 64 * 64 * 32,
                       4.0 * (2048 + 2048 + 4096), 100e9));
  /* 3x3, 32 channels: Winograd divides the FLOPs */
  double wf = 2.0 * 32 * 64 * 32 * 9, wb = 4.0 * (2048 + 9216 + 2048);
  ASSERT_CLOSE(estimate(&e, g, wino),
               by_hand(HET_CPU_ROW_CONV_NCHW, wf / gain, wb, 100e9));
  ASSERT_CLOSE(estimate(&e, g, small),
               by_hand(HET_CPU_ROW_CONV_NCHW, 2.0 * 16 * 64 * 16 * 9,
                       4.0 * (1024 + 2304 + 1024), 100e9));
  /* cpu.precision=bf16: no Winograd, the FLOPs divided by bfloat16's
   * gain; a Relu as before */
  ck_assert(het_cpu_bf16_gain > 1);
  e.bf16 = true;
  ASSERT_CLOSE(estimate(&e, g, wino),
               by_hand(HET_CPU_ROW_CONV_NCHW, wf / het_cpu_bf16_gain, wb,
                       100e9));
  ck_assert(het_cpu_bf16_node(g, wino) && !het_cpu_bf16_node(g, relu));
  ASSERT_CLOSE(estimate(&e, g, relu),
               by_hand(HET_CPU_ROW_ELEMENTWISE, 1000, 8000, 100e9));
  e.bf16 = false;
  e.winograd = false; /* cpu.conv_algo=direct */
  ASSERT_CLOSE(estimate(&e, g, wino),
               by_hand(HET_CPU_ROW_CONV_NCHW, wf, wb, 100e9));
  /* ConvTranspose 16 -> 4, 2x2 stride 2 on 8x8: OpenBLAS's rate, and its
   * column buffer (FLOPs / (2 * 16) floats) written and read */
  double tf = 2.0 * 16 * 64 * 4 * 4;
  ASSERT_CLOSE(estimate(&e, g, convt),
               by_hand(HET_CPU_ROW_CONV_TRANSPOSE, tf, 2 * 4 * tf / 32, 50e9));
  /* the same with strides 2x2 (= the kernel): the tiled kernel's row and
   * the node's own bytes; with pads it is the GEMM + col2im row again */
  const int64_t s22[] = {2, 2}, p1[] = {1, 1, 1, 1};
  int tiles = add_conv(g, "ConvTranspose", "u", 16, 4, 2, 1, 8);
  set_ints(g, tiles, "strides", s22, 2);
  ck_assert_int_eq(row_of(&e, g, tiles), HET_CPU_ROW_CONV_TRANSPOSE_TILES);
  ASSERT_CLOSE(estimate(&e, g, tiles),
               by_hand(HET_CPU_ROW_CONV_TRANSPOSE_TILES, tf,
                       4.0 * (16 * 64 + 16 * 4 * 4 + 4 * 16 * 16), 100e9));
  set_ints(g, tiles, "pads", p1, 4);
  ck_assert_int_eq(row_of(&e, g, tiles), HET_CPU_ROW_CONV_TRANSPOSE);
  /* 4 threads on 2 cores: twice one thread's rate */
  e.threads = 4;
  ASSERT_CLOSE(estimate(&e, g, mm),
               by_hand(HET_CPU_ROW_GEMM, 2.0 * 64 * 256 * 128,
                       4.0 * (64 * 128 + 128 * 256 + 64 * 256), 200e9));
  /* LSTM: 2 * seq * batch * dirs * 4H * (in + H) on OpenBLAS, and the
   * overhead once per time step (10 of them) */
  const het_cpu_row_cost *rec = het_cpu_row_cost_get(HET_CPU_ROW_RECURRENT);
  ASSERT_CLOSE(estimate(&e, g, lstm),
               10 * rec->overhead + rec->compute * 2.0 * 10 * 256 * 96 / 100e9 +
                   rec->memory * 4.0 * (320 + 8192 + 16384 + 640) / 20e9);
  e.threads = 1;
  ASSERT_CLOSE(estimate(&e, g, relu),
               by_hand(HET_CPU_ROW_ELEMENTWISE, 1000, 8000, 100e9));
  /* Sigmoid: 8 operations an element; in float16: 2 + 2 bytes an element,
   * counted five times (computed through float32 copies) */
  ASSERT_CLOSE(estimate(&e, g, sigmoid),
               by_hand(HET_CPU_ROW_ELEMENTWISE, 8000, 8000, 100e9));
  g->values[g->nodes[sigmoid].inputs[0]].dtype = HET_DTYPE_FLOAT16;
  g->values[g->nodes[sigmoid].outputs[0]].dtype = HET_DTYPE_FLOAT16;
  ASSERT_CLOSE(estimate(&e, g, sigmoid),
               by_hand(HET_CPU_ROW_ELEMENTWISE, 8000, 5 * 4000, 100e9));
  ASSERT_CLOSE(estimate(&e, g, resize),
               by_hand(HET_CPU_ROW_RESIZE, 1000, 8000, 100e9));
  ASSERT_CLOSE(estimate(&e, g, reshape),
               by_hand(HET_CPU_ROW_VIEW, 0, 8000, 100e9));
  /* a YAML profile's peak is the rate, for any threads */
  e.gemm_flops = e.blas_flops = 0;
  e.threads = 8;
  ASSERT_CLOSE(estimate(&e, g, mm),
               by_hand(HET_CPU_ROW_GEMM, 2.0 * 64 * 256 * 128,
                       4.0 * (64 * 128 + 128 * 256 + 64 * 256), 1e12));
  het_cpu_estimator_deinit(&e);
  het_graph_destroy(g);
}
END_TEST

/* Every row's estimate grows with the work (a view's may stay) and never
 * with the threads. */
/* x[1,cin,8,8] (uint8) -> op -> y[1,cout,8,8], a 3x3 weight of cin /
 * group input channels at input w_at (3: QLinearConv's; 1: ConvInteger's
 * and Conv's), its other inputs scalars; the node. */
static int add_qconv(het_graph *g, const char *op, const char *tag,
                     int64_t cin, int64_t cout, int64_t group, int w_at) {
  int64_t xd[] = {1, cin, 8, 8}, yd[] = {1, cout, 8, 8},
          wd[] = {cout, cin / group, 3, 3};
  int in[8];
  char name[32];
  for (int i = 0; i < 8; i++) {
    snprintf(name, sizeof name, "%s_%d", tag, i);
    in[i] = i == 0   ? cg_add_value(g, name, HET_VALUE_GRAPH_INPUT, xd, 4)
            : i == w_at ? cg_add_value(g, name, HET_VALUE_INITIALIZER, wd, 4)
                      : cg_add_value(g, name, HET_VALUE_INITIALIZER, NULL, 0);
  }
  snprintf(name, sizeof name, "%s_y", tag);
  bool qlinear = strcmp(op, "QLinearConv") == 0, fl = strcmp(op, "Conv") == 0;
  int y = cg_add_value(g, name, 0, yd, 4);
  if (!fl) {
    g->values[in[0]].dtype = HET_DTYPE_UINT8;
    g->values[in[w_at]].dtype = HET_DTYPE_INT8;
    g->values[y].dtype = qlinear ? HET_DTYPE_UINT8 : HET_DTYPE_INT32;
  }
  int n = cg_add_node(g, op, in, qlinear ? 8 : fl ? 2 : 3, y);
  if (group != 1)
    set_ints(g, n, "group", &group, 0);
  return n;
}

/* The quantized products have rows of their own: on oneDNN's int8
 * kernels (a VNNI CPU) a QLinearConv costs a fraction of the float Conv
 * of its shape, a depthwise one its own row; ConvInteger, and any of them
 * without those kernels, the reference row, which costs more than
 * float. */
START_TEST(test_int8_rows) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int q = add_qconv(g, "QLinearConv", "q", 64, 64, 1, 3);
  int dw = add_qconv(g, "QLinearConv", "d", 64, 64, 64, 3);
  int ci = add_qconv(g, "ConvInteger", "i", 64, 64, 1, 1);
  int f = add_qconv(g, "Conv", "f", 64, 64, 1, 1);
  het_cpu_estimator e;
  estimator_init(&e, 1);
  e.winograd = false;
  ck_assert_int_eq(het_cpu_estimator_plan(&e, g, NULL), HET_OK);
  bool fast = het_kernels_int8_fast();
  ck_assert_int_eq(row_of(&e, g, q),
                   fast ? HET_CPU_ROW_INT8 : HET_CPU_ROW_INT8_REFERENCE);
  ck_assert_int_eq(row_of(&e, g, dw), fast ? HET_CPU_ROW_INT8_DEPTHWISE
                                           : HET_CPU_ROW_INT8_REFERENCE);
  ck_assert_int_eq(row_of(&e, g, ci), HET_CPU_ROW_INT8_REFERENCE);
  /* 2 * 64 * 64 * 9 * 64 FLOPs each (the depthwise 64 times fewer) */
  double fl = 2.0 * 64 * 64 * 9 * 64;
  const het_cpu_row_cost *ref = het_cpu_row_cost_get(HET_CPU_ROW_INT8_REFERENCE);
  ASSERT_CLOSE(estimate(&e, g, ci), ref->compute * fl / 100e9);
  ck_assert(estimate(&e, g, ci) > estimate(&e, g, f));
  if (fast)
    ck_assert(estimate(&e, g, q) < 0.5 * estimate(&e, g, f));
  else
    ASSERT_CLOSE(estimate(&e, g, q), ref->compute * fl / 100e9);
  ck_assert(estimate(&e, g, dw) < estimate(&e, g, q));
  het_cpu_estimator_deinit(&e);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_monotone) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  const char *ops[] = {"Conv", "Conv", "ConvTranspose"};
  const int64_t groups[] = {1, 64, 1};
  int nodes[3][6], unary[4][6];
  const char *unary_ops[] = {"Relu", "Resize", "Transpose", "Reshape"};
  for (int s = 0; s < 6; s++) {
    char tag[16];
    for (int k = 0; k < 3; k++) {
      snprintf(tag, sizeof tag, "c%d_%d", k, s);
      nodes[k][s] =
          add_conv(g, ops[k], tag, 64, 64, k == 2 ? 2 : 3, groups[k], 4 << s);
    }
    for (int k = 0; k < 4; k++) {
      snprintf(tag, sizeof tag, "u%d_%d", k, s);
      unary[k][s] = add_unary(g, unary_ops[k], tag, 1000 << (2 * s));
    }
  }
  for (int layout = 0; layout < 2; layout++) {
    het_cpu_estimator e;
    estimator_init(&e, 1);
    e.nchw_only = layout == 1;
    for (int k = 0; k < 7; k++) {
      const int *n = k < 3 ? nodes[k] : unary[k - 3];
      for (int s = 1; s < 6; s++) {
        double a = estimate(&e, g, n[s - 1]), b = estimate(&e, g, n[s]);
        bool view = k == 6; /* a view may cost the same at any size */
        ck_assert_msg(view ? b >= a : b > a, "%s: %.9g at size %d, %.9g at %d",
                      g->nodes[n[s]].op_type, b, s, a, s - 1);
      }
      double one = estimate(&e, g, n[5]);
      e.threads = 2;
      double two = estimate(&e, g, n[5]);
      e.threads = 3; /* past the 2 cores */
      double three = estimate(&e, g, n[5]);
      e.threads = 1;
      ck_assert(two <= one && three == two);
    }
    het_cpu_estimator_deinit(&e);
  }
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_roofline_option) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int conv = add_conv(g, "Conv", "c", 32, 32, 3, 1, 16);
  het_cpu_estimator e;
  estimator_init(&e, 1);
  e.roofline = true;
  ASSERT_CLOSE(estimate(&e, g, conv), het_roofline_node(g, conv, &e.info));
  e.roofline = false;
  ck_assert(estimate(&e, g, conv) != het_roofline_node(g, conv, &e.info));
  het_cpu_estimator_deinit(&e);
  het_graph_destroy(g);
}
END_TEST

/* ---- errors ---- */

static het_status session_with(het_env *env, const char *key,
                               const char *value) {
  het_session_options *o;
  het_session *s = NULL;
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, key, value), HET_OK);
  het_status st = het_session_create(env, RESNET_BLOCK, o, &s);
  het_session_destroy(s);
  het_session_options_destroy(o);
  return st;
}

START_TEST(test_estimate_option) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_int_eq(session_with(env, "cpu.estimate", "roofline"), HET_OK);
  ck_assert_int_eq(session_with(env, "cpu.estimate", "calibrated"), HET_OK);
  ck_assert_int_eq(session_with(env, "cpu.estimate", "fast"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "'cpu.estimate'") &&
                    strstr(het_last_error(), "'fast'"),
                "%s", het_last_error());
  ck_assert_int_eq(session_with(env, "cpu.estimates", "roofline"),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_msg(strstr(het_last_error(), "cpu.estimates") &&
                    strstr(het_last_error(), "cpu.estimate,"),
                "%s", het_last_error());
  het_env_destroy(env);
}
END_TEST

/* A row outside the table has no costs. */
START_TEST(test_row_cost_bounds) {
  ck_assert_ptr_null(het_cpu_row_cost_get(HET_CPU_ROWS));
  ck_assert_ptr_null(het_cpu_row_cost_get((het_cpu_row)-1));
  for (int r = 0; r < HET_CPU_ROWS; r++) {
    const het_cpu_row_cost *c = het_cpu_row_cost_get((het_cpu_row)r);
    ck_assert(c && c->name && c->compute >= 0 && c->memory >= 0 &&
              c->overhead >= 0);
  }
}
END_TEST

static Suite *estimate_suite(void) {
  Suite *s = suite_create("estimate");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_op_classes);
  tcase_add_test(core, test_rows_follow_layout);
  tcase_add_test(core, test_rows_keep_own_shapes);
  tcase_add_test(core, test_estimates_by_hand);
  tcase_add_test(core, test_int8_rows);
  tcase_add_test(core, test_monotone);
  tcase_add_test(core, test_roofline_option);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_row_cost_bounds);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_estimate_option);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(estimate_suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
