/* test_emu_run.c — graphs on the emulated accelerator: a small
 * MatMul/Add/Relu/Softmax graph compiled and run on the emu (hand-built run
 * contexts, inputs and initializers copied to the device) matches the CPU,
 * also from several threads at once; a host input is caught as a missing
 * copy; kernel fault injection; timed-mode kernel pacing; capability
 * reasons and roofline cost estimates.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ir.h"
#include "core/status.h"
#include "executor/run.h"
#include "partitioner/cost.h"
#include "providers/cpu/cpu.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"
#include "common/emu_helpers.h"

#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"

/* ---- graph building ---------------------------------------------------- */

static void append_id(het_graph *g, int **list, int *n, int v) {
  int *grown = het_arena_calloc(&g->arena, (size_t)*n + 1, sizeof(int));
  ck_assert_ptr_nonnull(grown);
  if (*n)
    memcpy(grown, *list, (size_t)*n * sizeof(int));
  grown[(*n)++] = v;
  *list = grown;
}

static int add_value(het_graph *g, const char *name, het_dtype dt,
                     const int64_t *dims, int rank) {
  int v;
  ck_assert_int_eq(het_graph_intern_value(g, name, &v), HET_OK);
  g->values[v].dtype = dt;
  g->values[v].shape.rank = rank;
  for (int i = 0; i < rank; i++)
    g->values[v].shape.dims[i] = (het_dim){dims[i], NULL};
  return v;
}

static void add_input(het_graph *g, const char *name, het_dtype dt,
                      const int64_t *dims, int rank) {
  int v = add_value(g, name, dt, dims, rank);
  g->values[v].flags |= HET_VALUE_GRAPH_INPUT;
  append_id(g, &g->inputs, &g->n_inputs, v);
}

static void add_init(het_graph *g, const char *name, const float *data,
                     const int64_t *dims, int rank) {
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, rank, &t),
                   HET_OK);
  memcpy(het_tensor_get_data(t), data, het_tensor_get_nbytes(t));
  int v = add_value(g, name, HET_DTYPE_FLOAT32, dims, rank);
  g->values[v].initializer = t;
  g->values[v].flags |= HET_VALUE_INITIALIZER;
}

/* A single-output node of the default domain at opset 13. */
static void add_node(het_graph *g, const char *name, const char *op,
                     const char *const *inputs, int n_in, const char *out) {
  int *io = het_arena_calloc(&g->arena, (size_t)n_in + 1, sizeof(int));
  for (int i = 0; i < n_in; i++)
    ck_assert_int_eq(het_graph_intern_value(g, inputs[i], &io[i]), HET_OK);
  ck_assert_int_eq(het_graph_intern_value(g, out, &io[n_in]), HET_OK);
  het_node node = {.name = het_arena_strdup(&g->arena, name),
                   .op_type = het_arena_strdup(&g->arena, op), .domain = "",
                   .opset = 13, .n_inputs = n_in, .inputs = io,
                   .n_outputs = 1, .outputs = &io[n_in]};
  ck_assert_int_eq(het_graph_add_node(g, &node, NULL), HET_OK);
}

static void finish_graph(het_graph *g, const char *out) {
  int v = het_graph_find_value(g, out);
  ck_assert_int_ge(v, 0);
  g->values[v].flags |= HET_VALUE_GRAPH_OUTPUT;
  append_id(g, &g->outputs, &g->n_outputs, v);
  ck_assert_int_eq(het_graph_validate(g, NULL), HET_OK);
  ck_assert_msg(het_graph_infer_shapes(g) == HET_OK, "%s", het_last_error());
}

/* Consumers per value; graph outputs are kept (-1).  Caller frees. */
static int *make_uses(const het_graph *g) {
  int *uses = calloc((size_t)g->n_values + 1, sizeof *uses);
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] >= 0)
        uses[g->nodes[n].inputs[i]]++;
  for (int o = 0; o < g->n_outputs; o++)
    uses[g->outputs[o]] = -1;
  return uses;
}

/* ---- graphs ------------------------------------------------------------------- */

/* x[2,4] → MatMul(W[4,3]) → Add(b[3]) → Relu → Softmax → y[2,3]. */
static het_graph *small_graph(void) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  static const float W[12] = {0.5f, -1, 2, 1, 0.25f, -0.5f,
                              -2, 1, 0.75f, 0.1f, 0.2f, 0.3f};
  static const float B[3] = {0.1f, -0.2f, 0.3f};
  int64_t wd[2] = {4, 3}, bd[1] = {3};
  add_input(g, "x", HET_DTYPE_FLOAT32, (int64_t[]){2, 4}, 2);
  add_init(g, "W", W, wd, 2);
  add_init(g, "b", B, bd, 1);
  add_node(g, "mm", "MatMul", (const char *[]){"x", "W"}, 2, "m");
  add_node(g, "add", "Add", (const char *[]){"m", "b"}, 2, "a");
  add_node(g, "relu", "Relu", (const char *[]){"a"}, 1, "r");
  add_node(g, "softmax", "Softmax", (const char *[]){"r"}, 1, "y");
  finish_graph(g, "y");
  return g;
}

static const float small_x[8] = {1, 2, 3, 4, -1, 0.5f, 2, -3};

/* Runs g on the CPU provider; returns y (caller owns). */
static het_tensor *run_cpu(het_graph *g, const float *x) {
  void *cs, *comp;
  ck_assert_int_eq(het_cpu_provider.create(NULL, &cs), HET_OK);
  ck_assert_int_eq(het_cpu_provider.compile(cs, g, g->order, g->n_nodes, &comp),
                   HET_OK);
  int *uses = make_uses(g);
  het_run_ctx ctx;
  ck_assert_int_eq(het_run_ctx_init(&ctx, g, uses, NULL), HET_OK);
  het_tensor *xt;
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32,
                                          (int64_t[]){2, 4}, 2, (void *)x,
                                          8 * sizeof(float), &xt),
                   HET_OK);
  ctx.values[het_graph_find_value(g, "x")] = xt;
  ck_assert_int_eq(het_cpu_provider.run(cs, comp, &ctx), HET_OK);
  het_tensor *y;
  int yid = het_graph_find_value(g, "y");
  ck_assert_int_eq(het_run_take_outputs(&ctx, &yid, 1, &y), HET_OK);
  het_run_ctx_deinit(&ctx);
  het_tensor_destroy(xt);
  free(uses);
  het_cpu_provider.destroy_compiled(cs, comp);
  het_cpu_provider.destroy(cs);
  return y;
}

/* One emu run of a compiled graph with its own ctx; inputs and initializers
 * are copied to the device first (as the session's copy steps would). */
typedef struct emu_run {
  het_graph *g;
  het_device *dev;
  void *comp;
  const float *x;
  bool copy_x; /* false: leave x on the host (a missing copy) */
  het_status status;
  char message[512];
  float y[6];
} emu_run;

static het_tensor *to_device(het_device *dev, const het_tensor *host) {
  het_tensor *t = calloc(1, sizeof *t);
  ck_assert_int_eq(het_tensor_alloc_on(t, dev, host->dtype, host->dims,
                                       host->rank),
                   HET_OK);
  ck_assert_int_eq(dev->vt->copy_from_host(dev->state, t->data, host->data,
                                           host->nbytes),
                   HET_OK);
  return t;
}

static void *emu_run_main(void *arg) {
  emu_run *r = arg;
  het_graph *g = r->g;
  int *uses = make_uses(g);
  het_run_ctx ctx;
  ck_assert_int_eq(het_run_ctx_init(&ctx, g, uses, NULL), HET_OK);
  het_tensor *placed[8] = {0};
  int n_placed = 0;
  for (int v = 0; v < g->n_values; v++)
    if (g->values[v].initializer) {
      placed[n_placed] = to_device(r->dev, g->values[v].initializer);
      ctx.values[v] = placed[n_placed++];
    }
  het_tensor *xh;
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32,
                                          (int64_t[]){2, 4}, 2,
                                          (void *)r->x, 8 * sizeof(float),
                                          &xh),
                   HET_OK);
  het_tensor *xd = r->copy_x ? to_device(r->dev, xh) : xh;
  ctx.values[het_graph_find_value(g, "x")] = xd;
  r->status = r->dev->vt->run(r->dev->state, r->comp, &ctx);
  snprintf(r->message, sizeof r->message, "%s", het_last_error());
  if (r->status == HET_OK) {
    het_tensor *y = ctx.values[het_graph_find_value(g, "y")];
    ck_assert_ptr_nonnull(y);
    ck_assert(y->device == r->dev);
    ck_assert(het_emu_handle_is_tagged(y->data));
    ck_assert_int_eq(r->dev->vt->copy_to_host(r->dev->state, r->y, y->data,
                                              sizeof r->y),
                     HET_OK);
  }
  het_run_ctx_deinit(&ctx);
  for (int i = 0; i < n_placed; i++)
    het_tensor_destroy(placed[i]);
  if (xd != xh)
    het_tensor_destroy(xd);
  het_tensor_destroy(xh);
  free(uses);
  return NULL;
}

static void emu_setup(het_device *dev, const char *profile,
                      const char *const *opts, het_graph *g, void **comp) {
  dev->vt = &het_emu_provider;
  dev->index = 1;
  ck_assert_int_eq(emu_create(profile, opts, &dev->state), HET_OK);
  ck_assert_int_eq(het_emu_provider.compile(dev->state, g, g->order,
                                            g->n_nodes, comp),
                   HET_OK);
}

static void emu_teardown(het_device *dev, void *comp) {
  het_emu_provider.destroy_compiled(dev->state, comp);
  het_emu_provider.destroy(dev->state);
}

START_TEST(test_run_matches_cpu) {
  het_graph *g = small_graph();
  het_tensor *ref = run_cpu(g, small_x);
  het_device dev;
  void *comp;
  emu_setup(&dev, DEVICES "npu.yaml", NULL, g, &comp);
  emu_run r = {.g = g, .dev = &dev, .comp = comp, .x = small_x,
               .copy_x = true};
  emu_run_main(&r);
  ck_assert_msg(r.status == HET_OK, "%s", r.message);
  const float *want = het_tensor_get_data(ref);
  for (int i = 0; i < 6; i++)
    ck_assert_float_eq_tol(r.y[i], want[i], 1e-6f);
  /* every intermediate was released: only nothing is left allocated */
  size_t used;
  het_emu_memory_usage(((het_emu_state *)dev.state)->mem, &used, NULL);
  ck_assert_uint_eq(used, 0);
  emu_teardown(&dev, comp);
  het_tensor_destroy(ref);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_concurrent_runs) {
  het_graph *g = small_graph();
  het_tensor *ref = run_cpu(g, small_x);
  het_device dev;
  void *comp;
  emu_setup(&dev, NULL, NULL, g, &comp);
  enum { T = 4 };
  emu_run r[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    r[i] = (emu_run){.g = g, .dev = &dev, .comp = comp, .x = small_x,
                     .copy_x = true};
    ck_assert_int_eq(pthread_create(&th[i], NULL, emu_run_main, &r[i]), 0);
  }
  const float *want = het_tensor_get_data(ref);
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    ck_assert_msg(r[i].status == HET_OK, "%s", r[i].message);
    for (int k = 0; k < 6; k++)
      ck_assert_float_eq_tol(r[i].y[k], want[k], 1e-6f);
  }
  emu_teardown(&dev, comp);
  het_tensor_destroy(ref);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_missing_copy_is_caught) {
  het_graph *g = small_graph();
  het_device dev;
  void *comp;
  emu_setup(&dev, NULL, NULL, g, &comp);
  emu_run r = {.g = g, .dev = &dev, .comp = comp, .x = small_x,
               .copy_x = false};
  emu_run_main(&r);
  ck_assert_int_eq(r.status, HET_ERR_INTERNAL);
  ck_assert_msg(strstr(r.message, "missing copy") &&
                    strstr(r.message, "'x'") && strstr(r.message, "'mm'"),
                "message: %s", r.message);
  emu_teardown(&dev, comp);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_fault_kernel) {
  het_graph *g = small_graph();
  het_tensor *ref = run_cpu(g, small_x);
  het_device dev;
  void *comp;
  static const char *const opts[] = {"fail_kernel=2", NULL};
  emu_setup(&dev, NULL, opts, g, &comp);
  emu_run r = {.g = g, .dev = &dev, .comp = comp, .x = small_x,
               .copy_x = true};
  emu_run_main(&r);
  ck_assert_int_eq(r.status, HET_ERR_KERNEL);
  ck_assert_msg(strstr(r.message, "emu: injected fault: kernel #2") &&
                    strstr(r.message, "'add'"),
                "message: %s", r.message);
  size_t used;
  het_emu_memory_usage(((het_emu_state *)dev.state)->mem, &used, NULL);
  ck_assert_uint_eq(used, 0); /* the failed run freed what it allocated */
  emu_run_main(&r); /* the device works again */
  ck_assert_msg(r.status == HET_OK, "%s", r.message);
  const float *want = het_tensor_get_data(ref);
  for (int i = 0; i < 6; i++)
    ck_assert_float_eq_tol(r.y[i], want[i], 1e-6f);
  emu_teardown(&dev, comp);
  het_tensor_destroy(ref);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_timed_kernel_pacing) {
  char path[64];
  write_profile("provider: emu\nlaunch_overhead: 5ms\nlink_latency: 0\n",
                path, sizeof path);
  het_graph *g = small_graph();
  het_device dev;
  void *comp;
  static const char *const timed[] = {"mode=timed", NULL};
  emu_setup(&dev, path, timed, g, &comp);
  emu_run r = {.g = g, .dev = &dev, .comp = comp, .x = small_x,
               .copy_x = true};
  double t0 = now_s();
  emu_run_main(&r);
  double dt = now_s() - t0;
  ck_assert_msg(r.status == HET_OK, "%s", r.message);
  ck_assert_msg(dt >= 4 * 5e-3, "4 kernels at 5 ms launch took %.2f ms",
                dt * 1e3);
  emu_teardown(&dev, comp);
  het_graph_destroy(g);
  unlink(path);
}
END_TEST

START_TEST(test_capability_reasons) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  add_input(g, "x", HET_DTYPE_FLOAT32, (int64_t[]){1, 3, 4, 4}, 4);
  add_input(g, "i", HET_DTYPE_INT16, (int64_t[]){4}, 1);
  add_node(g, "relu", "Relu", (const char *[]){"x"}, 1, "r");
  add_node(g, "nz", "NonZero", (const char *[]){"r"}, 1, "n");
  add_node(g, "neg", "Neg", (const char *[]){"r"}, 1, "ng");
  add_node(g, "abs16", "Abs", (const char *[]){"i"}, 1, "a16");
  finish_graph(g, "n");
  void *st;
  het_claim claims[4];
  /* a profile listing Relu, NonZero and Abs, refusing int16 */
  char path[64];
  write_profile("name: picky\nprovider: emu\n"
                "supported_ops: [Relu, NonZero, Abs]\n"
                "unsupported_dtypes: [int16]\n",
                path, sizeof path);
  ck_assert_int_eq(emu_create(path, NULL, &st), HET_OK);
  ck_assert_int_eq(het_emu_provider.get_capability(st, g, claims), HET_OK);
  ck_assert(claims[0].claimed);
  ck_assert(!claims[1].claimed);
  ck_assert_ptr_nonnull(strstr(claims[1].reason, "data-dependent"));
  ck_assert(!claims[2].claimed);
  ck_assert_str_eq(claims[2].reason, "emu: op Neg not in profile 'picky'");
  ck_assert(!claims[3].claimed);
  ck_assert_ptr_nonnull(strstr(claims[3].reason, "emu: int16 not supported"));
  /* compile refuses what capability refused, naming the node */
  void *comp;
  int nodes[1] = {2};
  ck_assert_int_eq(het_emu_provider.compile(st, g, nodes, 1, &comp),
                   HET_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'neg'"));
  het_emu_provider.destroy(st);
  unlink(path);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_estimate_cost) {
  het_graph *g = small_graph();
  void *st;
  ck_assert_int_eq(emu_create(DEVICES "npu.yaml", NULL, &st), HET_OK);
  het_device_info info;
  het_emu_provider.get_device_info(st, &info);
  for (int n = 0; n < g->n_nodes; n++) {
    double s, flops, bytes;
    ck_assert_int_eq(het_emu_provider.estimate_cost(st, g, n, &s), HET_OK);
    het_roofline_work(g, n, &flops, &bytes);
    double want = fmax(flops / 4e12, bytes / 60e9) + 10e-6;
    ck_assert_double_eq_tol(s, want, 1e-12);
    ck_assert(s >= 10e-6);
  }
  het_emu_provider.destroy(st);
  het_graph_destroy(g);
}
END_TEST

static Suite *emu_run_suite(void) {
  Suite *s = suite_create("emu_run");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_run_matches_cpu);
  tcase_add_test(core, test_concurrent_runs);
  tcase_add_test(core, test_capability_reasons);
  tcase_add_test(core, test_estimate_cost);
  tcase_add_test(core, test_timed_kernel_pacing);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_fault_kernel);
  tcase_add_test(errors, test_missing_copy_is_caught);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_run_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
