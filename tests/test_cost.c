/* test_cost.c — the cost model and the assignment algorithms: work counts
 * of known shapes, the objective's transfer/launch/capacity rules, table
 * building with constraints and profile-guided times, scripted tables with
 * hand-computed optima, and the CPU's device profile.  The random-DAG gap
 * to the exact solver is in test_cost_gap.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ir.h"
#include "core/quantity.h"
#include "core/status.h"
#include "partitioner/cost.h"
#include "common/cost_graphs.h"
#include "partitioner/cost_internal.h"
#include "kernels/kernel.h"
#include "providers/cpu/profile.h"

#define MS 1e-3

/* ---- graph building ---- */

static void set_attr_int(het_graph *g, int node, const char *name,
                         int64_t v) {
  het_attr *a = het_arena_calloc(&g->arena, 1, sizeof *a);
  a->name = name;
  a->type = HET_ATTR_INT;
  a->i = v;
  g->nodes[node].attrs = a;
  g->nodes[node].n_attrs = 1;
}

static void set_attr_ints(het_graph *g, int node, const char *name,
                          const int64_t *v, size_t n) {
  het_attr *a = het_arena_calloc(&g->arena, 1, sizeof *a);
  a->name = name;
  a->type = HET_ATTR_INTS;
  a->ints = het_arena_calloc(&g->arena, n, sizeof(int64_t));
  memcpy(a->ints, v, n * sizeof(int64_t));
  a->n = n;
  g->nodes[node].attrs = a;
  g->nodes[node].n_attrs = 1;
}

/* ---- scripted tables ---- */

static void script_times(cg_script *s, int node, double d0, double d1) {
  s->t.node_time[(size_t)node * s->t.n_devices + 0] = d0;
  s->t.node_time[(size_t)node * s->t.n_devices + 1] = d1;
}

static void assert_assign(const int *got, const int *want, int n) {
  for (int i = 0; i < n; i++)
    ck_assert_msg(got[i] == want[i], "node %d on device %d, expected %d", i,
                  got[i], want[i]);
}

/* Runs cost (from prio) and exact; asserts both give want and cost. */
static void check_optimum(const het_cost_table *t, const int *prio,
                          const int *want, double want_cost) {
  int a[32], e[32];
  double best;
  ck_assert_int_eq(het_assign_cost(t, prio, a), HET_OK);
  assert_assign(a, want, t->n_nodes);
  ck_assert_double_eq_tol(cg_evaluate(t, a), want_cost, 1e-12);
  ck_assert_int_eq(het_assign_exact(t, 16, e, &best), HET_OK);
  assert_assign(e, want, t->n_nodes);
  ck_assert_double_eq_tol(best, want_cost, 1e-12);
}

/* ---- work counts ---- */

START_TEST(test_work_conv) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  const int64_t xd[] = {1, 3, 32, 32}, wd[] = {16, 3, 3, 3},
                yd[] = {1, 16, 30, 30};
  int in[2] = {cg_add_value(g, "x", HET_VALUE_GRAPH_INPUT, xd, 4),
               cg_add_value(g, "w", HET_VALUE_INITIALIZER, wd, 4)};
  int y = cg_add_value(g, "y", 0, yd, 4);
  int n = cg_add_node(g, "Conv", in, 2, y);
  /* grouped: 8 -> 8 channels, group 4, 3x3, 10x10 -> 8x8 */
  const int64_t gx[] = {1, 8, 10, 10}, gw[] = {8, 2, 3, 3}, gy[] = {1, 8, 8, 8};
  int gin[2] = {cg_add_value(g, "gx", HET_VALUE_GRAPH_INPUT, gx, 4),
                cg_add_value(g, "gw", HET_VALUE_INITIALIZER, gw, 4)};
  int gn = cg_add_node(g, "Conv", gin, 2, cg_add_value(g, "gy", 0, gy, 4));
  /* ConvTranspose: X[1,4,5,5], W[4,2,3,3] */
  const int64_t tx[] = {1, 4, 5, 5}, tw[] = {4, 2, 3, 3}, ty[] = {1, 2, 7, 7};
  int tin[2] = {cg_add_value(g, "tx", HET_VALUE_GRAPH_INPUT, tx, 4),
                cg_add_value(g, "tw", HET_VALUE_INITIALIZER, tw, 4)};
  int tn = cg_add_node(g, "ConvTranspose", tin, 2, cg_add_value(g, "ty", 0, ty, 4));
  double flops, bytes;
  het_roofline_work(g, n, &flops, &bytes);
  ck_assert_double_eq(flops, 2.0 * 1 * 16 * 30 * 30 * 3 * 3 * 3);
  ck_assert_double_eq(bytes, 4.0 * (3 * 32 * 32 + 16 * 27 + 16 * 900));
  het_roofline_work(g, gn, &flops, &bytes);
  ck_assert_double_eq(flops, 2.0 * 1 * 8 * 8 * 8 * 2 * 3 * 3);
  het_roofline_work(g, tn, &flops, &bytes);
  ck_assert_double_eq(flops, 2.0 * 1 * 4 * 5 * 5 * 2 * 3 * 3);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_work_matmul_gemm) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  const int64_t ad[] = {2, 4, 8}, bd[] = {2, 8, 5}, yd[] = {2, 4, 5};
  int in[2] = {cg_add_value(g, "a", HET_VALUE_GRAPH_INPUT, ad, 3),
               cg_add_value(g, "b", HET_VALUE_GRAPH_INPUT, bd, 3)};
  int mm = cg_add_node(g, "MatMul", in, 2, cg_add_value(g, "y", 0, yd, 3));
  const int64_t ga[] = {16, 8}, gb[] = {16, 4}, gy[] = {8, 4};
  int gin[2] = {cg_add_value(g, "ga", HET_VALUE_GRAPH_INPUT, ga, 2),
                cg_add_value(g, "gb", HET_VALUE_INITIALIZER, gb, 2)};
  int gemm = cg_add_node(g, "Gemm", gin, 2, cg_add_value(g, "gy", 0, gy, 2));
  set_attr_int(g, gemm, "transA", 1); /* A^T: M = 8, K = 16 */
  const int64_t ua[] = {-1, 16}, uy[] = {-1, 4};
  int uin[2] = {cg_add_value(g, "ua", HET_VALUE_GRAPH_INPUT, ua, 2), gin[1]};
  int ug = cg_add_node(g, "Gemm", uin, 2, cg_add_value(g, "uy", 0, uy, 2));
  double flops, bytes;
  het_roofline_work(g, mm, &flops, &bytes);
  ck_assert_double_eq(flops, 2.0 * 2 * 4 * 5 * 8);
  ck_assert_double_eq(bytes, 4.0 * (64 + 80 + 40));
  het_roofline_work(g, gemm, &flops, &bytes);
  ck_assert_double_eq(flops, 2.0 * 8 * 4 * 16);
  het_roofline_work(g, ug, &flops, &bytes); /* unknown M counts as 1 */
  ck_assert_double_eq(flops, 2.0 * 1 * 4 * 16);
  ck_assert_double_eq(bytes, 4.0 * (16 + 64 + 4));
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_work_other_ops) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  const int64_t xd[] = {1, 2, 4, 4}, pd[] = {1, 2, 2, 2}, sd[] = {2, 3};
  int x = cg_add_value(g, "x", HET_VALUE_GRAPH_INPUT, xd, 4);
  int pool = cg_add_node(g, "MaxPool", &x, 1, cg_add_value(g, "p", 0, pd, 4));
  const int64_t ks[] = {2, 2};
  set_attr_ints(g, pool, "kernel_shape", ks, 2);
  int relu = cg_add_node(g, "Relu", &x, 1, cg_add_value(g, "r", 0, xd, 4));
  int resh = cg_add_node(g, "Reshape", &x, 1, cg_add_value(g, "s", 0, sd, 2));
  int red = cg_add_node(g, "ReduceMean", &x, 1, cg_add_value(g, "m", 0, NULL, 0));
  int sm = cg_add_node(g, "Softmax", &x, 1, cg_add_value(g, "q", 0, xd, 4));
  double flops, bytes;
  het_roofline_work(g, pool, &flops, &bytes);
  ck_assert_double_eq(flops, 8.0 * 4);
  het_roofline_work(g, relu, &flops, &bytes);
  ck_assert_double_eq(flops, 32.0);
  ck_assert_double_eq(bytes, 4.0 * 64);
  het_roofline_work(g, resh, &flops, &bytes);
  ck_assert_double_eq(flops, 0.0);
  het_roofline_work(g, red, &flops, &bytes);
  ck_assert_double_eq(flops, 32.0);
  het_roofline_work(g, sm, &flops, &bytes);
  ck_assert_double_eq(flops, 5.0 * 32);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_roofline_transfer) {
  het_device_info info = {.peak_flops_f32 = 1e12, .peak_flops_f16 = 4e12,
                          .memory_bandwidth = 1e11};
  ck_assert_double_eq_tol(het_roofline_time(&info, HET_DTYPE_FLOAT32, 2e9, 1e6),
                          2e-3, 1e-15);
  ck_assert_double_eq_tol(het_roofline_time(&info, HET_DTYPE_FLOAT16, 2e9, 1e6),
                          5e-4, 1e-15);
  ck_assert_double_eq_tol(het_roofline_time(&info, HET_DTYPE_FLOAT32, 1e3, 1e9),
                          1e-2, 1e-15); /* memory bound */
  ck_assert_double_eq_tol(het_roofline_time(&info, HET_DTYPE_INT8, 1e12, 0),
                          1.0, 1e-12); /* no i8 peak: f32 */
  het_graph *g = cg_chain(1, NULL);
  cg_script s;
  cg_script_init(&s, g, 3);
  ck_assert_double_eq(het_cost_transfer(&s.t, 0, 0, 1e6), 0);
  ck_assert_double_eq(het_cost_transfer(&s.t, HET_COST_HOST, 0, 1e6), 0);
  ck_assert_double_eq_tol(het_cost_transfer(&s.t, 0, 1, 1e6), 1.1e-3, 1e-15);
  ck_assert_double_eq_tol(het_cost_transfer(&s.t, 2, HET_COST_HOST, 1e6),
                          1.1e-3, 1e-15);
  ck_assert_double_eq_tol(het_cost_transfer(&s.t, 1, 2, 1e6), 2.2e-3, 1e-15);
  cg_script_deinit(&s, g);
}
END_TEST

/* ---- objective rules ---- */

/* x → n0 → v0; v0 feeds n1 and n2 (both may be on the accelerator); n1,
 * n2 → n3 (a two-input node) → y. */
static het_graph *diamond(void) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int x = cg_add_value(g, "x", HET_VALUE_GRAPH_INPUT, NULL, 0);
  int v0 = cg_add_value(g, "v0", 0, NULL, 0), v1 = cg_add_value(g, "v1", 0, NULL, 0),
      v2 = cg_add_value(g, "v2", 0, NULL, 0), y = cg_add_value(g, "y", 0, NULL, 0);
  cg_add_node(g, "A", &x, 1, v0);
  cg_add_node(g, "B", &v0, 1, v1);
  cg_add_node(g, "C", &v0, 1, v2);
  int ins[2] = {v1, v2};
  cg_add_node(g, "D", ins, 2, y);
  cg_finish(g, &y, 1);
  return g;
}

START_TEST(test_evaluate_rules) {
  het_graph *g = diamond();
  cg_script s;
  cg_script_init(&s, g, 3);
  for (int n = 0; n < 4; n++)
    for (int d = 0; d < 3; d++)
      s.t.node_time[n * 3 + d] = (n + 1) * MS;
  const double leg = 1.1 * MS, times = 10 * MS, launch = 1e-5;
  int all_cpu[4] = {0, 0, 0, 0};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, all_cpu), times, 1e-15);
  /* v0 copied once to device 1 for both consumers; v1, v2 come back. */
  int fan[4] = {0, 1, 1, 0};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, fan),
                          times + 3 * leg + launch, 1e-15);
  /* all on 1: x in, y out, one launch. */
  int all1[4] = {1, 1, 1, 1};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, all1),
                          times + 2 * leg + launch, 1e-15);
  /* n0 on 1, n1 on 2, n2 on 0: x H2D(1); v0 D2H once, H2D(2);
   * v1 D2H(2); runs 0|1|2|0 → launches of 1 and 2; y on host. */
  int mixed[4] = {1, 2, 0, 0};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, mixed),
                          times + 4 * leg + 2 * launch, 1e-15);
  /* a refused node makes it INFINITY; so does a device out of range */
  s.t.node_time[2 * 3 + 1] = INFINITY;
  ck_assert(isinf(cg_evaluate(&s.t, all1)));
  int bad[4] = {0, 0, 0, 3};
  ck_assert(isinf(cg_evaluate(&s.t, bad)));
  cg_script_deinit(&s, g);
}
END_TEST

/* The incremental forms agree with the full objective. */
START_TEST(test_step_and_moves_consistent) {
  het_graph *g = diamond();
  cg_script s;
  cg_script_init(&s, g, 3);
  for (int n = 0; n < 12; n++)
    s.t.node_time[n] = (1 + n % 5) * MS;
  het_cost_index ix;
  ck_assert_int_eq(het_cost_index_init(&ix, &s.t), HET_OK);
  het_cost_search srch;
  ck_assert_int_eq(het_search_init(&srch, &ix), HET_OK);
  for (int code = 0; code < 81; code++) {
    int a[4] = {code % 3, code / 3 % 3, code / 9 % 3, code / 27 % 3};
    double sum = 0;
    for (int p = 0; p < 4; p++)
      sum += het_cost_step(&ix, a, p, a[ix.order[p]], NULL);
    ck_assert_double_eq_tol(sum, cg_evaluate(&s.t, a), 1e-14);
    het_search_set(&srch, a, false);
    int n = code % 4, d = (code / 4) % 3;
    double delta = het_search_try(&srch, &n, 1, d);
    int b[4];
    memcpy(b, a, sizeof b);
    b[n] = d;
    ck_assert_double_eq_tol(cg_evaluate(&s.t, a) + delta,
                            cg_evaluate(&s.t, b), 1e-14);
  }
  het_search_deinit(&srch);
  het_cost_index_deinit(&ix);
  cg_script_deinit(&s, g);
}
END_TEST

/* ---- hand-computed optima ---- */

/* n1 is a little faster on the accelerator, but its two 1.1 ms copies
 * cost more than the 0.5 ms it saves: the island is absorbed. */
START_TEST(test_island_absorbed) {
  het_graph *g = cg_chain(3, NULL);
  cg_script s;
  cg_script_init(&s, g, 2);
  script_times(&s, 0, 1 * MS, 2 * MS);
  script_times(&s, 1, 2 * MS, 1.5 * MS);
  script_times(&s, 2, 1 * MS, 2 * MS);
  int island[3] = {0, 1, 0}, want[3] = {0, 0, 0};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, island),
                          3.5 * MS + 2.2 * MS + 1e-5, 1e-15);
  check_optimum(&s.t, island, want, 4 * MS);
  cg_script_deinit(&s, g);
}
END_TEST

/* A heavy node (50 ms on the CPU, 2 ms on the accelerator) pays for the
 * copies: everything moves, and n2 follows because 0.8 < 1 ms. */
START_TEST(test_heavy_node_moves) {
  het_graph *g = cg_chain(3, NULL);
  cg_script s;
  cg_script_init(&s, g, 2);
  script_times(&s, 0, 1 * MS, 0.5 * MS);
  script_times(&s, 1, 50 * MS, 2 * MS);
  script_times(&s, 2, 1 * MS, 0.8 * MS);
  int cpu[3] = {0, 0, 0}, want[3] = {1, 1, 1};
  check_optimum(&s.t, cpu, want, 3.3 * MS + 2.2 * MS + 1e-5);
  /* without the heavy node the copies do not pay: all stay on the CPU */
  script_times(&s, 1, 1 * MS, 0.9 * MS);
  check_optimum(&s.t, cpu, cpu, 3 * MS);
  cg_script_deinit(&s, g);
}
END_TEST

/* Two weights of 4 MB, accelerator capacity 6 MB: only one fits (with the
 * 1 MB activations a node on the accelerator holds: its input and its
 * output, 2 MB). */
START_TEST(test_capacity_moves_weights) {
  const int w[2] = {1, 1};
  het_graph *g = cg_chain(2, w);
  cg_script s;
  cg_script_init(&s, g, 2);
  for (int v = 0; v < g->n_values; v++)
    if (s.t.value_const[v])
      s.t.value_bytes[v] = 4e6;
  script_times(&s, 0, 10 * MS, 1 * MS);
  script_times(&s, 1, 12 * MS, 1 * MS);
  int acc[2] = {1, 1}, want[2] = {0, 1};
  ck_assert_double_eq_tol(cg_evaluate(&s.t, acc), 4.21 * MS, 1e-15);
  s.t.capacity[1] = 6000000;
  ck_assert(isinf(cg_evaluate(&s.t, acc)));
  check_optimum(&s.t, acc, want, 11 * MS + 2.2 * MS + 1e-5);
  /* 5 MB: the weight fits but not with the activations */
  s.t.capacity[1] = 5000000;
  int cpu[2] = {0, 0};
  check_optimum(&s.t, acc, cpu, 22 * MS);
  /* a weight that fits nowhere it may go: ERR_CAPACITY */
  s.t.capacity[1] = 1000000;
  script_times(&s, 1, INFINITY, 1 * MS);
  int a[2];
  ck_assert_int_eq(het_assign_cost(&s.t, acc, a), HET_ERR_CAPACITY);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "capacity"));
  double best;
  ck_assert_int_eq(het_assign_exact(&s.t, 16, a, &best), HET_ERR_CAPACITY);
  cg_script_deinit(&s, g);
}
END_TEST

/* Activations count against a device's capacity: x -> n0 -> n1 -> n2 with
 * n1's output 4 MB and the others' 1 MB, no weights.  Unbounded, all three
 * go to the accelerator (6.21 ms).  With 3 MB, n1 cannot be there (its 1 MB
 * input and 4 MB output), nor n2 (n1's 4 MB output copied in): n0 alone
 * (x in, n0's output out: 43.21 ms), not n0 and n2 together. */
START_TEST(test_capacity_counts_activations) {
  het_graph *g = cg_chain(3, NULL);
  cg_script s;
  cg_script_init(&s, g, 2);
  int v1 = g->nodes[1].outputs[0];
  s.t.value_bytes[v1] = 4e6;
  script_times(&s, 0, 10 * MS, 1 * MS);
  script_times(&s, 1, 30 * MS, 1 * MS);
  script_times(&s, 2, 10 * MS, 1 * MS);
  int cpu[3] = {0, 0, 0}, all[3] = {1, 1, 1}, first[3] = {1, 0, 0};
  int ends[3] = {1, 0, 1};
  check_optimum(&s.t, cpu, all, 3 * MS + 2.2 * MS + 1e-5);
  s.t.capacity[1] = 3000000;
  ck_assert(isinf(cg_evaluate(&s.t, all)));
  ck_assert(isinf(cg_evaluate(&s.t, ends)));
  check_optimum(&s.t, cpu, first, 41 * MS + 2.2 * MS + 1e-5);
  cg_script_deinit(&s, g);
}
END_TEST

/* What stays on a device under a budget is chosen by value: weights of 2,
 * 1 and 1 MB save 5, 4 and 4 ms, and 2.1 MB holds either the first or the
 * other two.  Stopping at the first node over the budget (n0 in, n1 does
 * not fit) would keep 5 ms of savings; the last two keep 8. */
START_TEST(test_budget_keeps_most_valuable) {
  const int w[3] = {1, 1, 1};
  het_graph *g = cg_chain(3, w);
  cg_script s;
  cg_script_init(&s, g, 2);
  for (int v = 0; v < g->n_values; v++)
    s.t.value_bytes[v] = 1e3; /* activations small beside the weights */
  s.t.value_bytes[g->nodes[0].inputs[1]] = 2e6;
  s.t.value_bytes[g->nodes[1].inputs[1]] = 1e6;
  s.t.value_bytes[g->nodes[2].inputs[1]] = 1e6;
  script_times(&s, 0, 6 * MS, 1 * MS);
  script_times(&s, 1, 5 * MS, 1 * MS);
  script_times(&s, 2, 5 * MS, 1 * MS);
  s.t.capacity[1] = 2100000;
  int first[3] = {1, 0, 0}, want[3] = {0, 1, 1};
  double leg = 1e3 / 1e9 + 1e-4;
  ck_assert_double_eq_tol(cg_evaluate(&s.t, first),
                          11 * MS + 2 * leg + 1e-5, 1e-12);
  check_optimum(&s.t, first, want, 8 * MS + 2 * leg + 1e-5);
  cg_script_deinit(&s, g);
}
END_TEST

/* ---- table building: fake providers ---- */

typedef struct fake_dev {
  het_device_info info;
  const double *times; /* per node; NULL = no estimate_cost answer */
} fake_dev;

static het_status fake_estimate(void *state, const het_graph *g, int node,
                                double *seconds) {
  (void)g;
  const fake_dev *f = state;
  if (!f->times)
    return het_error(HET_ERR_UNSUPPORTED, "no estimate");
  *seconds = f->times[node];
  return HET_OK;
}

static const het_provider_vtable fake_cpu_vt = {
    .abi_version = HET_PROVIDER_ABI_VERSION, .name = "fcpu",
    .estimate_cost = fake_estimate};
static const het_provider_vtable fake_acc_vt = {
    .abi_version = HET_PROVIDER_ABI_VERSION, .name = "facc",
    .estimate_cost = fake_estimate};

typedef struct fake_setup {
  het_graph *g;
  fake_dev cpu, acc;
  het_device device[2]; /* their facts, as the cost table reads them */
  het_ep devs[2];
  het_claim claims_cpu[3], claims_acc[3];
  het_claim *claims[2];
  het_arena arena;
} fake_setup;

/* The heavy-node cg_chain of test_heavy_node_moves through providers. */
static void fake_init(fake_setup *f) {
  static const double cpu_t[3] = {1 * MS, 50 * MS, 1 * MS};
  static const double acc_t[3] = {0.5 * MS, 2 * MS, 0.8 * MS};
  memset(f, 0, sizeof *f);
  f->g = cg_chain(3, NULL);
  f->cpu.info = (het_device_info){.host_memory = true};
  f->cpu.times = cpu_t;
  f->acc.info = (het_device_info){.link_bandwidth = 1e9, .link_latency = 1e-4,
                                  .launch_overhead = 1e-5,
                                  .memory_capacity = 1 << 30};
  f->acc.times = acc_t;
  f->device[0] = (het_device){.vt = &fake_cpu_vt, .info = f->cpu.info};
  f->device[1] = (het_device){.vt = &fake_acc_vt, .info = f->acc.info};
  f->devs[0] = (het_ep){.vt = &fake_cpu_vt, .state = &f->cpu,
                        .device = &f->device[0], .index = 0};
  f->devs[1] = (het_ep){.vt = &fake_acc_vt, .state = &f->acc,
                        .device = &f->device[1], .index = 1};
  for (int n = 0; n < 3; n++) {
    f->claims_cpu[n].claimed = f->claims_acc[n].claimed = true;
    snprintf(f->claims_acc[n].reason, HET_CLAIM_REASON_CAP, "ok");
  }
  f->claims[0] = f->claims_cpu;
  f->claims[1] = f->claims_acc;
  het_arena_init(&f->arena);
  for (int v = 0; v < f->g->n_values; v++) { /* 250000 floats = 1 MB */
    f->g->values[v].shape.rank = 1;
    f->g->values[v].shape.dims[0].value = 250000;
    f->g->values[v].dtype = HET_DTYPE_FLOAT32;
  }
}

static void fake_deinit(fake_setup *f) {
  het_arena_deinit(&f->arena);
  het_graph_destroy(f->g);
}

static void fake_solve(fake_setup *f, const het_constraints *c,
                       const double *measured, const int *mdev, int *a) {
  het_cost_table t;
  ck_assert_int_eq(het_cost_table_build(f->g, f->devs, 2, f->claims, c,
                                        measured, mdev, &f->arena, &t),
                   HET_OK);
  ck_assert_int_eq(het_assign_cost(&t, NULL, a), HET_OK);
}

START_TEST(test_table_build) {
  fake_setup f;
  fake_init(&f);
  het_cost_table t;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, NULL, NULL,
                                        NULL, &f.arena, &t),
                   HET_OK);
  ck_assert(t.host_memory[0] && !t.host_memory[1]);
  ck_assert_double_eq(t.node_time[1 * 2 + 1], 2 * MS);
  ck_assert_double_eq(t.value_bytes[0], 1e6);
  ck_assert_double_eq(t.launch[1], 1e-5);
  int a[3], want[3] = {1, 1, 1};
  ck_assert_int_eq(het_assign_cost(&t, NULL, a), HET_OK);
  assert_assign(a, want, 3);
  /* a refused claim is INFINITY */
  f.claims_acc[1].claimed = false;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, NULL, NULL,
                                        NULL, &f.arena, &t),
                   HET_OK);
  ck_assert(isinf(t.node_time[1 * 2 + 1]));
  /* no estimate_cost answer: roofline of the device info (1 MB in + out
   * at the default 1e10 B/s) */
  f.claims_acc[1].claimed = true;
  f.acc.times = NULL;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, NULL, NULL,
                                        NULL, &f.arena, &t),
                   HET_OK);
  ck_assert_double_eq_tol(t.node_time[1 * 2 + 1], 2e6 / 1e10, 1e-15);
  fake_deinit(&f);
}
END_TEST

START_TEST(test_constraints) {
  fake_setup f;
  fake_init(&f);
  het_node_constraint nc[3];
  memset(nc, 0, sizeof nc);
  het_constraints c = {.nodes = nc};
  int a[3];
  /* pinned: n1 only on the CPU → the accelerator is not worth it */
  nc[1].pinned = 1u << 0;
  fake_solve(&f, &c, NULL, NULL, a);
  assert_assign(a, (int[]){0, 0, 0}, 3);
  /* forbidden: same through the other mask */
  nc[1].pinned = 0;
  nc[1].forbidden = 1u << 1;
  fake_solve(&f, &c, NULL, NULL, a);
  assert_assign(a, (int[]){0, 0, 0}, 3);
  /* bias: n2 at 3x on the accelerator (2.4 ms): [1,1,0] costs 5.71 ms
   * (its D2H moves from y to v1), [1,1,1] 7.11 ms */
  nc[1].forbidden = 0;
  nc[2].bias[1] = 3.0;
  het_cost_table t;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, &c, NULL,
                                        NULL, &f.arena, &t),
                   HET_OK);
  ck_assert_double_eq_tol(t.node_time[2 * 2 + 1], 2.4 * MS, 1e-15);
  ck_assert_int_eq(het_assign_cost(&t, NULL, a), HET_OK);
  assert_assign(a, (int[]){1, 1, 0}, 3);
  /* pinned to a device that refuses it: error naming the node */
  nc[2].bias[1] = 0;
  nc[0].pinned = 1u << 1;
  f.claims_acc[0].claimed = false;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, &c, NULL,
                                        NULL, &f.arena, &t),
                   HET_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'n0'"));
  /* budget lowers the capacity */
  f.claims_acc[0].claimed = true;
  nc[0].pinned = 0;
  c.budget[1] = 1000;
  ck_assert_int_eq(het_cost_table_build(f.g, f.devs, 2, f.claims, &c, NULL,
                                        NULL, &f.arena, &t),
                   HET_OK);
  ck_assert_uint_eq(t.capacity[1], 1000);
  fake_deinit(&f);
}
END_TEST

/* Measured times replace estimates: the heavy node really takes 60 ms on
 * the accelerator, so everything stays on the CPU. */
START_TEST(test_profile_guided) {
  fake_setup f;
  fake_init(&f);
  int a[3];
  fake_solve(&f, NULL, NULL, NULL, a);
  assert_assign(a, (int[]){1, 1, 1}, 3);
  double measured[3] = {-1, 60 * MS, -1};
  int mdev[3] = {-1, 1, -1};
  fake_solve(&f, NULL, measured, mdev, a);
  assert_assign(a, (int[]){0, 0, 0}, 3);
  fake_deinit(&f);
}
END_TEST

/* ---- errors and limits ---- */

START_TEST(test_errors) {
  het_graph *g = cg_chain(3, NULL);
  cg_script s;
  cg_script_init(&s, g, 2);
  for (int n = 0; n < 3; n++)
    script_times(&s, n, MS, MS);
  int a[3];
  double best;
  ck_assert_int_eq(het_assign_exact(&s.t, 2, a, &best), HET_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "3 nodes"));
  /* an invalid priority assignment is ignored, not trusted */
  int bad[3] = {0, 7, 0};
  ck_assert_int_eq(het_assign_cost(&s.t, bad, a), HET_OK);
  assert_assign(a, (int[]){0, 0, 0}, 3);
  het_cost_table t;
  het_claim c0[3], *claims[1] = {c0};
  het_device device = {.vt = &fake_cpu_vt};
  het_ep dev = {.vt = &fake_cpu_vt, .device = &device};
  ck_assert_int_eq(het_cost_table_build(g, &dev, 0, claims, NULL, NULL, NULL,
                                        &s.arena, &t),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_cost_table_build(g, &dev, HET_COST_MAX_DEVICES + 1,
                                        claims, NULL, NULL, NULL, &s.arena, &t),
                   HET_ERR_INVALID_ARGUMENT);
  cg_script_deinit(&s, g);
}
END_TEST

/* A long cg_chain (2000 nodes, 3 devices) stays fast and beats priority. */
/* An empty graph: nothing to place, cost 0. */
START_TEST(test_limits_zero_nodes) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  int x = cg_add_value(g, "x", HET_VALUE_GRAPH_INPUT | HET_VALUE_GRAPH_OUTPUT,
                    NULL, 0);
  cg_finish(g, &x, 1);
  cg_script s;
  cg_script_init(&s, g, 2);
  int a[1] = {-1};
  double best = -1;
  ck_assert_int_eq(het_assign_cost(&s.t, NULL, a), HET_OK);
  ck_assert_double_eq(cg_evaluate(&s.t, a), 0);
  ck_assert_int_eq(het_assign_exact(&s.t, 16, a, &best), HET_OK);
  ck_assert_double_eq(best, 0);
  cg_script_deinit(&s, g);
}
END_TEST

/* ---- CPU device profile ---- */

/* Profile quantities (core/quantity.h), as the CPU, CUDA and emu
 * profiles read them. */
START_TEST(test_quantities) {
  static const struct {
    const char *text;
    het_quantity_kind kind;
    double want; /* < 0: refused */
  } k[] = {
      {"512MiB", HET_QUANTITY_BYTES, 512.0 * 1048576},
      {"16 GB", HET_QUANTITY_BYTES, 16e9},
      {"2kib", HET_QUANTITY_BYTES, 2048},
      {"8e9", HET_QUANTITY_BYTES, 8e9},
      {"0", HET_QUANTITY_BYTES, 0},
      {"8GB/s", HET_QUANTITY_BYTES, -1},
      {"8GB/s", HET_QUANTITY_BYTE_RATE, 8e9},
      {"8 GBps", HET_QUANTITY_BYTE_RATE, 8e9},
      {"4.8TB/s", HET_QUANTITY_BYTE_RATE, 4.8e12},
      {"25G", HET_QUANTITY_BYTE_RATE, 25e9},
      {"4T", HET_QUANTITY_FLOPS, 4e12},
      {"4 TFLOP/s", HET_QUANTITY_FLOPS, 4e12},
      {"16TOPS", HET_QUANTITY_FLOPS, 16e12},
      {"989 tflops", HET_QUANTITY_FLOPS, 989e12},
      {"2G/s", HET_QUANTITY_FLOPS, 2e9},
      {"4TB", HET_QUANTITY_FLOPS, -1},
      {"20us", HET_QUANTITY_SECONDS, 20e-6},
      {"20 \xc2\xb5s", HET_QUANTITY_SECONDS, 20e-6},
      {"2ms", HET_QUANTITY_SECONDS, 2e-3},
      {"1e-6", HET_QUANTITY_SECONDS, 1e-6},
      {"3 ks", HET_QUANTITY_SECONDS, -1},
      {"-1", HET_QUANTITY_BYTES, -1},
      {"inf", HET_QUANTITY_FLOPS, -1},
      {"nan", HET_QUANTITY_SECONDS, -1},
      {"", HET_QUANTITY_BYTES, -1},
      {"GB", HET_QUANTITY_BYTES, -1},
      {"1e308T", HET_QUANTITY_FLOPS, -1},
  };
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    double v = -7;
    bool ok = het_quantity_parse(k[i].text, k[i].kind, &v);
    ck_assert_msg(ok == (k[i].want >= 0), "'%s' kind %d: %s", k[i].text,
                  k[i].kind, ok ? "read" : "refused");
    if (ok)
      ck_assert_msg(fabs(v - k[i].want) <= 1e-9 * k[i].want, "'%s': %g",
                    k[i].text, v);
  }
  ck_assert(!het_quantity_parse(NULL, HET_QUANTITY_BYTES, &(double){0}));
}
END_TEST

START_TEST(test_cpu_profile) {
  het_device_info a, b;
  ck_assert_int_eq(het_cpu_device_info(&a), HET_OK);
  ck_assert(a.host_memory);
  ck_assert(a.peak_flops_f32 > 1e6); /* also under valgrind */
  ck_assert(a.memory_bandwidth > 1e6);
  ck_assert_int_eq(het_cpu_device_info(&b), HET_OK); /* cached */
  ck_assert_double_eq(a.peak_flops_f32, b.peak_flops_f32);
  /* int8: four products per lane on VNNI, else the float32 rate */
  double i8 = het_kernels_int8_fast() ? 4.0 : 1.0;
  ck_assert_double_eq(a.peak_flops_i8, a.peak_flops_f32 * i8);
  char path[] = "/tmp/het_cpu_profile_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs("provider: cpu\nname: test\npeak_flops: {float32: 2G, int8: 8TOPS}\n"
        "memory_bandwidth: 15GB/s\nmemory_capacity: 16GiB\n"
        "launch_overhead: 2us\npreferred_layout: NHWC\n", f);
  fclose(f);
  ck_assert_int_eq(het_cpu_device_info_load(path, &a), HET_OK);
  ck_assert(a.host_memory);
  ck_assert_double_eq(a.peak_flops_f32, 2e9);
  ck_assert_double_eq(a.peak_flops_f16, 2e9);
  ck_assert_double_eq(a.peak_flops_i8, 8e12);
  ck_assert_double_eq(a.memory_bandwidth, 1.5e10);
  ck_assert_double_eq_tol(a.launch_overhead, 2e-6, 1e-18);
  ck_assert_uint_eq(a.memory_capacity, (size_t)16 << 30);
  ck_assert_int_eq(a.preferred_layout, HET_LAYOUT_NHWC);
  /* a profile that gives float32 only: int8 from it as measured */
  f = fopen(path, "w");
  fputs("provider: cpu\npeak_flops: {float32: 3G}\nmemory_bandwidth: 15GB/s\n", f);
  fclose(f);
  ck_assert_int_eq(het_cpu_device_info_load(path, &a), HET_OK);
  ck_assert_double_eq(a.peak_flops_i8, 3e9 * i8);
  static const char *const bad[][2] = {
      {"provider: cpu\npeak_flops_f32: 2G\n", "peak_flops_f32"},
      {"provider: emu\n", "emu"},
      {"memory_bandwidth: fast\n", "memory_bandwidth"},
      {"link_latency: 3 parsecs\n", "link_latency"},
      {"memory_capacity: 1G\nmemory_capacity: 2G\n", "repeated"},
      {"peak_flops: {bfloat8: 1T}\n", "bfloat8"},
      {"supported_ops: [Conv]\n", "supported_ops"},
      {"name: [", ":"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    f = fopen(path, "w");
    fputs(bad[k][0], f);
    fclose(f);
    ck_assert_int_eq(het_cpu_device_info_load(path, &a),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(het_last_error(), bad[k][1]), "%s: %s", bad[k][0],
                  het_last_error());
  }
  /* the example profile in the tree loads */
  ck_assert_int_eq(het_cpu_device_info_load(
                       HETRT_SOURCE_DIR "/configs/devices/cpu.yaml", &a),
                   HET_OK);
  ck_assert_double_eq(a.peak_flops_f32, 200e9);
  unlink(path);
  ck_assert_int_eq(het_cpu_device_info_load(path, &a), HET_ERR_IO);
}
END_TEST

static Suite *cost_suite(void) {
  Suite *s = suite_create("cost");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_work_conv);
  tcase_add_test(core, test_work_matmul_gemm);
  tcase_add_test(core, test_work_other_ops);
  tcase_add_test(core, test_roofline_transfer);
  tcase_add_test(core, test_evaluate_rules);
  tcase_add_test(core, test_step_and_moves_consistent);
  tcase_add_test(core, test_island_absorbed);
  tcase_add_test(core, test_heavy_node_moves);
  tcase_add_test(core, test_capacity_moves_weights);
  tcase_add_test(core, test_capacity_counts_activations);
  tcase_add_test(core, test_budget_keeps_most_valuable);
  tcase_add_test(core, test_table_build);
  tcase_add_test(core, test_constraints);
  tcase_add_test(core, test_profile_guided);
  tcase_add_test(core, test_cpu_profile);
  tcase_add_test(core, test_quantities);
  tcase_set_timeout(core, 300);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_test(limits, test_limits_zero_nodes);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_errors);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(cost_suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
