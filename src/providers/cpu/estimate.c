/* estimate.c — the CPU provider's estimate_cost (estimate.h): the core's
 * roofline work of a node (FLOPs, bytes; core/roofline.h) on this
 * machine's measured rates, with a compute cost, a memory cost and a
 * per-node overhead per row (a class of op, split by how the CPU kernels
 * run it), fitted to measured node times on one thread.  The table below
 * is the only place those numbers live; docs/estimates.md says how they
 * were derived and the command that repeats it.
 */
#include "providers/cpu/estimate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/roofline.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "kernels/linalg_convt_tiles.h"
#include "providers/cpu/layout.h"

/* Fitted on 2026-12-05 by `bench/estimates.py --derive` (twice) and
 * `--fit` on both files (docs/estimates.md): 920 node times, each the
 * median over 10 runs on one thread pinned to a core, the lowest of 4
 * rounds, of the 18 cases bench/estimates.py runs, on an AMD EPYC (family 26,
 * AVX-512) whose one-thread probes gave 226 GFLOP/s (oneDNN sgemm),
 * 122 GFLOP/s (OpenBLAS) and 70 GB/s (memcpy).  compute is seconds per FLOP
 * in units of 1 / probe rate and memory seconds per byte in units of
 * 1 / memcpy bandwidth, so a machine whose kernels reach the same share of
 * its own probes gets its own times.  Each row minimises the
 * time-weighted squared log error of its nodes' estimates; a compute or
 * memory term worth under 1% of a row's time is 0. */
static const het_cpu_row_cost het_cpu_row_costs[HET_CPU_ROWS] = {
    [HET_CPU_ROW_GEMM] = {"gemm", false, 1.1, 2.0, 0.87e-6},
    [HET_CPU_ROW_CONV_NCHW] = {"conv_nchw", false, 0.8, 10, 0.045e-6},
    [HET_CPU_ROW_CONV_TRANSPOSE] = {"conv_transpose", true, 0.62, 15, 0},
    /* fitted apart, on the detector's 8 (2 shapes) */
    [HET_CPU_ROW_CONV_TRANSPOSE_TILES] = {"conv_transpose_tiles", false, 5.5,
                                          0, 0},
    [HET_CPU_ROW_RECURRENT] = {"recurrent", true, 2.2, 0, 0.41e-6},
    [HET_CPU_ROW_DEPTHWISE_NHWC] = {"depthwise_nhwc", false, 1.9, 0.8, 1.2e-6},
    [HET_CPU_ROW_DEPTHWISE_NCHW] = {"depthwise_nchw", false, 0, 8.3, 15e-6},
    [HET_CPU_ROW_ELEMENTWISE] = {"elementwise", false, 12, 0.79, 0.18e-6},
    [HET_CPU_ROW_RESIZE] = {"resize", false, 0, 9.3, 0},
    [HET_CPU_ROW_MOVEMENT] = {"movement", false, 0, 2.2, 0.58e-6},
    [HET_CPU_ROW_VIEW] = {"view", false, 0, 0.42, 0.31e-6},
    /* fitted apart, on the 7 int8 cases of bench/estimates.py (2 x 314
     * nodes; 2026-12-05): the QDQ models hetrt quantize writes from
     * resnet18, resnet50, mobilenet_v2 and bert4, bert4 --dynamic, and
     * qop_conv */
    [HET_CPU_ROW_INT8] = {"int8", false, 0.27, 2.4, 0},
    [HET_CPU_ROW_INT8_DEPTHWISE] = {"int8_depthwise", false, 2.2, 0.29,
                                    1.1e-6},
    /* one shape (qop_conv's 64x64 3x3 on 28x28, 6 node times: 18-22x the
     * float32 GEMM's time), so compute alone */
    [HET_CPU_ROW_INT8_REFERENCE] = {"int8_reference", false, 20, 0, 0},
};

const double het_cpu_winograd_gain = 1.48;
const double het_cpu_bf16_gain = 1.7;

bool het_cpu_bf16_node(const het_graph *g, int node) {
  static const char *const ops[] = {"Conv", "FusedConv", "FusedConvPool",
                                    "MatMul", "FusedMatMul", "Gemm"};
  const het_node *n = &g->nodes[node];
  if (n->n_outputs < 1 || n->outputs[0] < 0 ||
      g->values[n->outputs[0]].dtype != HET_DTYPE_FLOAT32)
    return false;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (strcmp(n->op_type, ops[i]) == 0)
      return true;
  return false;
}

const het_cpu_row_cost *het_cpu_row_cost_get(het_cpu_row row) {
  return row >= 0 && row < HET_CPU_ROWS ? &het_cpu_row_costs[row] : NULL;
}

void het_cpu_estimator_init(het_cpu_estimator *e) {
  memset(e, 0, sizeof *e);
  e->threads = 1;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  e->cores = cores > 0 ? (int)cores : 1;
  e->winograd = true;
  pthread_mutex_init(&e->mu, NULL);
}

void het_cpu_estimator_deinit(het_cpu_estimator *e) {
  for (int i = 0; i < e->n_memos; i++)
    free(e->memos[i].nhwc);
  free(e->memos);
  pthread_mutex_destroy(&e->mu);
}

/* The row of a quantized product (QLinearConv, QLinearMatMul,
 * MatMulInteger, ConvInteger); false for any other node.  The fast
 * kernels are process-wide (oneDNN and a VNNI CPU); ConvInteger has
 * none. */
static bool het_cpu_int8_row(const het_graph *g, const het_node *n,
                             het_cpu_row *row) {
  bool conv = strcmp(n->op_type, "QLinearConv") == 0;
  if (!conv && strcmp(n->op_type, "QLinearMatMul") != 0 &&
      strcmp(n->op_type, "MatMulInteger") != 0 &&
      strcmp(n->op_type, "ConvInteger") != 0)
    return false;
  if (strcmp(n->op_type, "ConvInteger") == 0 || !het_kernels_int8_fast()) {
    *row = HET_CPU_ROW_INT8_REFERENCE;
    return true;
  }
  int w = het_node_input(n, 3);
  bool depthwise = conv && het_node_attr_int(n, "group", 1) > 1 && w >= 0 &&
                   g->values[w].shape.rank >= 3 &&
                   g->values[w].shape.dims[1].value == 1;
  *row = depthwise ? HET_CPU_ROW_INT8_DEPTHWISE : HET_CPU_ROW_INT8;
  return true;
}

static bool het_cpu_is_conv(const het_node *n) {
  return strcmp(n->op_type, "Conv") == 0 ||
         strcmp(n->op_type, "FusedConv") == 0 ||
         strcmp(n->op_type, "FusedConvDw") == 0 ||
         strcmp(n->op_type, "FusedConvPool") == 0;
}

/* Pass 1 of a plan: the layout pass over the claimed nodes as one
 * subgraph; nhwc[n] = 1 for a Conv whose input or output it stores
 * channels-last. */
static het_status het_cpu_plan_layout(const het_cpu_estimator *e,
                                      const het_graph *g,
                                      const het_claim *claims, uint8_t *nhwc) {
  int *nodes = malloc(((size_t)g->n_nodes + 1) * sizeof *nodes);
  uint8_t *limit = calloc((size_t)g->n_nodes + 1, sizeof *limit);
  het_cpu_layout *out = calloc((size_t)g->n_nodes + 1, sizeof *out);
  het_status st =
      nodes && limit && out
          ? HET_OK
          : het_error(HET_ERR_OUT_OF_MEMORY, "cpu estimate: out of memory");
  int n = 0;
  for (int i = 0; st == HET_OK && i < g->n_nodes; i++)
    if (!claims || claims[i].claimed)
      nodes[n++] = i;
  if (st == HET_OK && !e->nchw_only && n > 0)
    st = het_cpu_layout_plan(g, nodes, n, limit, out);
  for (int k = 0; st == HET_OK && k < n; k++)
    nhwc[nodes[k]] = het_cpu_is_conv(&g->nodes[nodes[k]]) &&
                     ((out[k].nhwc_in | out[k].nhwc_out) & 1u);
  free(nodes);
  free(limit);
  free(out);
  return st;
}

/* The memo of g (mu held); NULL when there is none. */
static het_cpu_layout_memo *het_cpu_memo_find(het_cpu_estimator *e,
                                              const het_graph *g) {
  for (int i = 0; i < e->n_memos; i++)
    if (e->memos[i].graph == g && e->memos[i].n_nodes == g->n_nodes &&
        e->memos[i].n_values == g->n_values)
      return &e->memos[i];
  return NULL;
}

/* Pass 2 of a plan: the record, replacing an earlier one of g (mu held). */
static het_status het_cpu_memo_store(het_cpu_estimator *e, const het_graph *g,
                                     uint8_t *nhwc) {
  het_cpu_layout_memo *m = het_cpu_memo_find(e, g);
  if (!m) {
    het_cpu_layout_memo *grown =
        realloc(e->memos, (size_t)(e->n_memos + 1) * sizeof *grown);
    if (!grown) {
      free(nhwc);
      return het_error(HET_ERR_OUT_OF_MEMORY, "cpu estimate: out of memory");
    }
    e->memos = grown;
    m = &e->memos[e->n_memos++];
    m->nhwc = NULL;
  }
  free(m->nhwc);
  *m = (het_cpu_layout_memo){
      .graph = g, .n_nodes = g->n_nodes, .n_values = g->n_values, .nhwc = nhwc};
  return HET_OK;
}

het_status het_cpu_estimator_plan(het_cpu_estimator *e, const het_graph *g,
                                  const het_claim *claims) {
  uint8_t *nhwc = calloc((size_t)g->n_nodes + 1, sizeof *nhwc);
  if (!nhwc)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu estimate: out of memory");
  het_status st = het_cpu_plan_layout(e, g, claims, nhwc);
  if (st != HET_OK) {
    free(nhwc);
    return st;
  }
  pthread_mutex_lock(&e->mu);
  st = het_cpu_memo_store(e, g, nhwc);
  pthread_mutex_unlock(&e->mu);
  return st;
}

/* *nhwc = whether Conv node of g is planned channels-last. */
static het_status het_cpu_channels_last(het_cpu_estimator *e,
                                        const het_graph *g, int node,
                                        bool *nhwc) {
  pthread_mutex_lock(&e->mu);
  het_cpu_layout_memo *m = het_cpu_memo_find(e, g);
  if (m)
    *nhwc = m->nhwc[node] != 0;
  pthread_mutex_unlock(&e->mu);
  if (m)
    return HET_OK;
  HET_TRY(het_cpu_estimator_plan(e, g, NULL));
  return het_cpu_channels_last(e, g, node, nhwc);
}

het_status het_cpu_estimate_row(het_cpu_estimator *e, const het_graph *g,
                                int node, het_cpu_row *row) {
  const het_node *n = &g->nodes[node];
  bool nhwc = false;
  if (het_cpu_int8_row(g, n, row))
    return HET_OK;
  switch (het_roofline_op_class(g, node)) {
  case HET_ROOFLINE_GEMM:
    if (strcmp(n->op_type, "ConvTranspose") == 0) {
      *row = het_cpu_convt_tiles(g, node) ? HET_CPU_ROW_CONV_TRANSPOSE_TILES
                                          : HET_CPU_ROW_CONV_TRANSPOSE;
      return HET_OK;
    }
    if (het_cpu_is_conv(n))
      HET_TRY(het_cpu_channels_last(e, g, node, &nhwc));
    *row =
        het_cpu_is_conv(n) && !nhwc ? HET_CPU_ROW_CONV_NCHW : HET_CPU_ROW_GEMM;
    return HET_OK;
  case HET_ROOFLINE_DEPTHWISE:
    HET_TRY(het_cpu_channels_last(e, g, node, &nhwc));
    *row = nhwc ? HET_CPU_ROW_DEPTHWISE_NHWC : HET_CPU_ROW_DEPTHWISE_NCHW;
    return HET_OK;
  case HET_ROOFLINE_RECURRENT:
    *row = HET_CPU_ROW_RECURRENT;
    return HET_OK;
  case HET_ROOFLINE_MOVEMENT:
    *row = HET_CPU_ROW_MOVEMENT;
    return HET_OK;
  case HET_ROOFLINE_VIEW:
    *row = HET_CPU_ROW_VIEW;
    return HET_OK;
  default:
    *row =
        strcmp(n->op_type, "Resize") == 0 || strcmp(n->op_type, "Upsample") == 0
            ? HET_CPU_ROW_RESIZE
            : HET_CPU_ROW_ELEMENTWISE;
    return HET_OK;
  }
}

/* Dim i of value v, or -1 when unknown. */
static int64_t het_cpu_dim(const het_graph *g, int v, int i) {
  if (v < 0 || v >= g->n_values || i >= g->values[v].shape.rank)
    return -1;
  return g->values[v].shape.dims[i].value;
}

bool het_cpu_convt_tiles(const het_graph *g, int node) {
  const het_node *n = &g->nodes[node];
  int w = het_node_input(n, 1);
  size_t nk = 0, ns = 0;
  const int64_t *k = het_node_attr_ints(n, "kernel_shape", &nk);
  const int64_t *st = het_node_attr_ints(n, "strides", &ns);
  const het_attr *pad = het_node_find_attr(n, "auto_pad");
  if (strcmp(n->op_type, "ConvTranspose") != 0 || w < 0 ||
      g->values[w].shape.rank != 4 || het_node_attr_int(n, "group", 1) != 1 ||
      het_roofline_dtype(g, n) != HET_DTYPE_FLOAT32 ||
      het_node_find_attr(n, "output_shape") || !st || ns != 2 ||
      (pad && pad->type == HET_ATTR_STRING && strcmp(pad->s, "NOTSET")) ||
      !het_node_attr_ints_all(n, "pads", 0) ||
      !het_node_attr_ints_all(n, "dilations", 1) ||
      !het_node_attr_ints_all(n, "output_padding", 0))
    return false;
  for (int d = 0; d < 2; d++) {
    int64_t kd = k && nk == 2 ? k[d] : het_cpu_dim(g, w, 2 + d);
    if (kd != st[d] || (d == 1 && kd > HET_CONVT_TILES_MAX_W))
      return false;
  }
  return true;
}

/* A Conv oneDNN runs as Winograd F(4x4, 3x3): float32 (or float16, which
 * runs on the float32 primitive), group 1, a 3x3 kernel at stride and
 * dilation 1, and at least 32 input channels, input and output channels a
 * multiple of 16 (fewer channels time faster direct), an output of at
 * least HET_WINOGRAD_MIN_OUT each way where known (the estimate does not
 * tell F(2,3) from F(4,3)). */
static bool het_cpu_winograd(const het_cpu_estimator *e, const het_graph *g,
                             const het_node *n) {
  int w = het_node_input(n, 1);
  het_dtype t = het_roofline_dtype(g, n);
  if (!e->winograd || !het_cpu_is_conv(n) || w < 0 ||
      het_node_attr_int(n, "group", 1) != 1 || g->values[w].shape.rank != 4 ||
      (t != HET_DTYPE_FLOAT32 && t != HET_DTYPE_FLOAT16) ||
      !het_node_attr_ints_all(n, "strides", 1) ||
      !het_node_attr_ints_all(n, "dilations", 1))
    return false;
  int64_t m = het_cpu_dim(g, w, 0), c = het_cpu_dim(g, w, 1);
  int y = n->n_outputs > 0 ? n->outputs[0] : -1;
  int64_t oh = het_cpu_dim(g, y, 2), ow = het_cpu_dim(g, y, 3);
  return het_cpu_dim(g, w, 2) == 3 && het_cpu_dim(g, w, 3) == 3 && c >= 32 &&
         c % 16 == 0 && m > 0 && m % 16 == 0 &&
         (oh < 0 || oh >= HET_WINOGRAD_MIN_OUT) &&
         (ow < 0 || ow >= HET_WINOGRAD_MIN_OUT);
}

/* A ConvTranspose's column buffer, written by the GEMM and read by
 * col2im: 4-byte elements, flops / (2 * input channels per group) of them;
 * the op's own bytes when its channels are unknown. */
static double het_cpu_col_bytes(const het_graph *g, const het_node *n,
                                double flops, double bytes) {
  int64_t c = het_cpu_dim(g, het_node_input(n, 0), 1);
  int64_t group = het_node_attr_int(n, "group", 1);
  if (c <= 0 || group <= 0 || c < group)
    return bytes;
  return 2 * 4 * flops / (2.0 * (double)(c / group));
}

/* The work of node as the CPU kernels of its row do it: the core's, with
 * a bfloat16 product's (cpu.precision=bf16) or else a Winograd
 * convolution's FLOPs divided by its gain, a ConvTranspose's
 * bytes those of its column buffer, and a 16-bit float elementwise op's
 * bytes five times its own: it is computed through float32 copies of its
 * operands (kernels/elementwise.c), 2 + 4 + 4 bytes an element for each
 * input (read, widened, read again) and 4 + 4 + 2 for the output, where
 * it would move 2. */
static void het_cpu_work(const het_cpu_estimator *e, const het_graph *g,
                         int node, het_cpu_row row, double *flops,
                         double *bytes) {
  const het_node *n = &g->nodes[node];
  het_roofline_work(g, node, flops, bytes);
  if (e->bf16 && het_cpu_bf16_node(g, node))
    *flops /= het_cpu_bf16_gain;
  else if (het_cpu_winograd(e, g, n))
    *flops /= het_cpu_winograd_gain;
  het_dtype t = het_roofline_dtype(g, n);
  if (row == HET_CPU_ROW_CONV_TRANSPOSE)
    *bytes = het_cpu_col_bytes(g, n, *flops, *bytes);
  else if (row == HET_CPU_ROW_ELEMENTWISE &&
           (t == HET_DTYPE_FLOAT16 || t == HET_DTYPE_BFLOAT16))
    *bytes *= 5;
}

/* The time steps of a recurrent node: sequence length times directions
 * (unknown dims count as 1). */
static double het_cpu_steps(const het_graph *g, const het_node *n) {
  int seq_axis = het_node_attr_int(n, "layout", 0) == 1 ? 1 : 0;
  int64_t seq = het_cpu_dim(g, het_node_input(n, 0), seq_axis);
  int64_t dirs = het_cpu_dim(g, het_node_input(n, 1), 0);
  return (double)(seq > 0 ? seq : 1) * (double)(dirs > 0 ? dirs : 1);
}

/* One thread's FLOP/s for row r, times the threads that add to it; a
 * profile's peak as given. */
static double het_cpu_rate(const het_cpu_estimator *e,
                           const het_cpu_row_cost *r) {
  double one = r->blas ? e->blas_flops : e->gemm_flops;
  if (!(one > 0))
    return e->info.peak_flops_f32 > 0 ? e->info.peak_flops_f32
                                      : HET_ROOFLINE_DEFAULT_PEAK;
  return one * (double)(e->threads < e->cores ? e->threads : e->cores);
}

het_status het_cpu_estimate(het_cpu_estimator *e, const het_graph *g, int node,
                            double *seconds) {
  if (e->roofline) {
    double t = het_roofline_node(g, node, &e->info);
    *seconds = isfinite(t) && t > 0 ? t : 0;
    return HET_OK;
  }
  het_cpu_row row;
  HET_TRY(het_cpu_estimate_row(e, g, node, &row));
  const het_cpu_row_cost *r = &het_cpu_row_costs[row];
  double flops, bytes;
  het_cpu_work(e, g, node, row, &flops, &bytes);
  double bw = e->info.memory_bandwidth > 0 ? e->info.memory_bandwidth
                                           : HET_ROOFLINE_DEFAULT_BANDWIDTH;
  double per =
      row == HET_CPU_ROW_RECURRENT ? het_cpu_steps(g, &g->nodes[node]) : 1;
  double t = r->overhead * per + r->compute * flops / het_cpu_rate(e, r) +
             r->memory * bytes / bw;
  *seconds = isfinite(t) && t > 0 ? t : r->overhead;
  return HET_OK;
}
