/* test_emu_run.c — graphs on the emulated accelerator through the ABI 3
 * run path: a small MatMul/Add/Relu/Softmax graph compiled on the emu and
 * run with run_async over a hand-built kernel-I/O table (initializers and
 * inputs copied to the device, every other value placed there beforehand,
 * as the plan does) matches the reference interpreter, also from several
 * threads with their own streams at once; a run allocates no device
 * memory; a host input is caught as a missing copy; kernel fault
 * injection; timed-mode kernel pacing; an NHWC device reorders through the
 * run's scratch and refuses too little of it; capability reasons and
 * roofline cost estimates.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ep.h"
#include "core/infer.h"
#include "core/ir.h"
#include "core/roofline.h"
#include "core/status.h"
#include "core/tensor.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"
#include "common/emu_helpers.h"
#include "common/ref_run.h"

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

/* x[1,2,3,4] → Relu → Softmax (last axis) → y: rank-4 values, whose
 * last axis differs between NCHW and NHWC storage. */
static het_graph *rank4_graph(void) {
  het_graph *g;
  ck_assert_int_eq(het_graph_create(&g), HET_OK);
  add_input(g, "x", HET_DTYPE_FLOAT32, (int64_t[]){1, 2, 3, 4}, 4);
  add_node(g, "relu", "Relu", (const char *[]){"x"}, 1, "r");
  add_node(g, "softmax", "Softmax", (const char *[]){"r"}, 1, "y");
  finish_graph(g, "y");
  return g;
}

static const float rank4_x[24] = {1,  -2, 3,  0.5f, 2, 1,  -1, 4,
                                  0,  1,  2,  3,    -3, 2, 1, 0.25f,
                                  5,  -1, 2,  2,    1, 0,  3, -2};

/* The reference interpreter's y (n floats) for x (of g's input shape). */
static void run_ref(het_graph *g, const float *x, float *y, size_t n) {
  const het_value *xv = &g->values[g->inputs[0]];
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < xv->shape.rank; i++)
    dims[i] = xv->shape.dims[i].value;
  het_tensor *xt, *out;
  size_t nx = (size_t)het_dims_count(dims, xv->shape.rank);
  ck_assert_int_eq(het_tensor_create_over(HET_DTYPE_FLOAT32, dims,
                                          xv->shape.rank, (void *)x,
                                          nx * sizeof(float), &xt),
                   HET_OK);
  ck_assert_msg(ref_run_graph(g, &xt, (char *[]){"x"}, 1, &out) == HET_OK,
                "%s", het_last_error());
  ck_assert_uint_eq(het_tensor_get_nbytes(out), n * sizeof(float));
  memcpy(y, het_tensor_get_data(out), n * sizeof(float));
  het_tensor_destroy(out);
  het_tensor_destroy(xt);
}

/* One emu run of a compiled graph on its own stream and values: every
 * value is placed on the device first (initializers and x copied there,
 * as the plan's copy steps would; the rest allocated), then run_async
 * runs over them.  NHWC devices hold rank-4 values NHWC. */
typedef struct emu_run {
  het_graph *g;
  emu_ctx *e;
  void *comp;
  const float *x;
  size_t n;            /* floats in x and y */
  bool copy_x;         /* false: leave x on the host (a missing copy) */
  bool nhwc;           /* rank-4 values are stored NHWC */
  long scratch_short;  /* bytes less scratch than compiled_scratch asks */
  het_status status;
  char message[512];
  size_t used_before, used_after; /* device bytes around the run */
  size_t scratch;      /* what compiled_scratch asked for */
  int recorded;        /* nodes the run reported */
  float y[32];
} emu_run;

static void count_node(void *recorder, int node, double t0, double t1) {
  (void)node;
  ck_assert(t1 >= t0);
  ((emu_run *)recorder)->recorded++;
}

static void value_dims(const het_value *v, int64_t *dims) {
  for (int i = 0; i < v->shape.rank; i++)
    dims[i] = v->shape.dims[i].value;
}

/* Puts n floats of host data at t's device memory (reordered to NHWC for
 * a rank-4 value on an NHWC device). */
static void put_value(emu_run *r, het_tensor *t, const void *host) {
  const void *src = host;
  void *tmp = NULL;
  if (r->nhwc && t->rank == 4) {
    tmp = malloc(t->nbytes);
    het_layout_permute(host, tmp, t->dims, het_dtype_size(t->dtype), true);
    src = tmp;
  }
  ck_assert_int_eq(emu_put(r->e, t->data, src, t->nbytes), HET_OK);
  free(tmp);
}

static void *emu_run_main(void *arg) {
  emu_run *r = arg;
  het_graph *g = r->g;
  const het_device *dev = &r->e->dev;
  het_tensor *values = calloc((size_t)g->n_values, sizeof *values);
  het_tensor **table = calloc((size_t)g->n_values, sizeof *table);
  int xid = het_graph_find_value(g, "x"), yid = het_graph_find_value(g, "y");
  het_tensor xh = {0};
  for (int v = 0; v < g->n_values; v++) {
    const het_value *val = &g->values[v];
    int64_t dims[HET_MAX_RANK];
    value_dims(val, dims);
    if (v == xid && !r->copy_x) {
      ck_assert_int_eq(het_tensor_alloc(&xh, val->dtype, dims,
                                        val->shape.rank),
                       HET_OK);
      memcpy(xh.data, r->x, xh.nbytes);
      table[v] = &xh;
      continue;
    }
    ck_assert_int_eq(het_tensor_alloc_on(&values[v], dev, val->dtype, dims,
                                         val->shape.rank),
                     HET_OK);
    table[v] = &values[v];
    if (val->initializer)
      put_value(r, &values[v], het_tensor_get_data(val->initializer));
    else if (v == xid)
      put_value(r, &values[v], r->x);
  }
  het_kernel_io io = {.values = table, .n_values = g->n_values,
                      .record = count_node, .recorder = r};
  const het_ep *ep = &r->e->ep;
  ck_assert_int_eq(ep->vt->compiled_scratch(ep->state, r->comp, &io,
                                            &r->scratch),
                   HET_OK);
  io.scratch_bytes = r->scratch - (size_t)r->scratch_short;
  if (io.scratch_bytes)
    ck_assert_int_eq(het_device_alloc(dev, io.scratch_bytes, &io.scratch),
                     HET_OK);
  r->used_before = emu_used(r->e);
  het_stream s;
  ck_assert_int_eq(het_stream_init(&s, ep, 0, "test"), HET_OK);
  r->status = het_stream_run(&s, g, r->comp, &io);
  het_status done = het_stream_synchronize(&s);
  if (r->status == HET_OK)
    r->status = done;
  snprintf(r->message, sizeof r->message, "%s", het_last_error());
  het_stream_deinit(&s);
  r->used_after = emu_used(r->e);
  if (r->status == HET_OK) {
    het_tensor *y = table[yid];
    ck_assert(y->device == dev);
    ck_assert(het_emu_handle_is_tagged(y->data));
    ck_assert_uint_eq(y->nbytes, r->n * sizeof(float));
    ck_assert_int_eq(emu_get(r->e, r->y, y->data, y->nbytes), HET_OK);
    if (r->nhwc && y->rank == 4) {
      float tmp[32];
      memcpy(tmp, r->y, y->nbytes);
      het_layout_permute(tmp, r->y, y->dims, sizeof(float), false);
    }
  }
  if (io.scratch)
    het_device_free(dev, io.scratch);
  for (int v = 0; v < g->n_values; v++)
    het_tensor_reset(&values[v]);
  het_tensor_reset(&xh);
  free(values);
  free(table);
  return NULL;
}

static void emu_setup(emu_ctx *e, const char *profile,
                      const char *const *opts, het_graph *g, void **comp) {
  ck_assert_msg(emu_open(profile, opts, e) == HET_OK, "%s", het_last_error());
  ck_assert_int_eq(e->ep.vt->compile(e->ep.state, g, g->order, g->n_nodes,
                                     comp),
                   HET_OK);
}

static void emu_teardown(emu_ctx *e, void *comp) {
  e->ep.vt->destroy_compiled(e->ep.state, comp);
  emu_close(e);
}

static emu_run small_run(het_graph *g, emu_ctx *e, void *comp) {
  return (emu_run){.g = g, .e = e, .comp = comp, .x = small_x, .n = 6,
                   .copy_x = true};
}

static void check_y(const emu_run *r, const float *want) {
  ck_assert_msg(r->status == HET_OK, "%s", r->message);
  for (size_t i = 0; i < r->n; i++)
    ck_assert_float_eq_tol(r->y[i], want[i], 1e-6f);
}

START_TEST(test_run_matches_reference) {
  het_graph *g = small_graph();
  float want[6];
  run_ref(g, small_x, want, 6);
  emu_ctx e;
  void *comp;
  emu_setup(&e, DEVICES "npu.yaml", NULL, g, &comp);
  emu_run r = small_run(g, &e, comp);
  emu_run_main(&r);
  check_y(&r, want);
  ck_assert_int_eq(r.recorded, 4); /* every node reported its times */
  ck_assert_uint_eq(r.scratch, 0); /* rank-2 values need none */
  /* the run placed nothing itself: device memory is what the test placed */
  ck_assert_uint_eq(r.used_after, r.used_before);
  ck_assert_uint_eq(emu_used(&e), 0); /* and the test freed all of it */
  emu_teardown(&e, comp);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_concurrent_runs) {
  het_graph *g = small_graph();
  float want[6];
  run_ref(g, small_x, want, 6);
  emu_ctx e;
  void *comp;
  emu_setup(&e, NULL, NULL, g, &comp);
  enum { T = 4 };
  emu_run r[T];
  pthread_t th[T];
  for (int i = 0; i < T; i++) {
    r[i] = small_run(g, &e, comp);
    ck_assert_int_eq(pthread_create(&th[i], NULL, emu_run_main, &r[i]), 0);
  }
  for (int i = 0; i < T; i++) {
    pthread_join(th[i], NULL);
    check_y(&r[i], want);
  }
  emu_teardown(&e, comp);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_missing_copy_is_caught) {
  het_graph *g = small_graph();
  emu_ctx e;
  void *comp;
  emu_setup(&e, NULL, NULL, g, &comp);
  emu_run r = small_run(g, &e, comp);
  r.copy_x = false;
  emu_run_main(&r);
  ck_assert_int_eq(r.status, HET_ERR_INTERNAL);
  ck_assert_msg(strstr(r.message, "missing copy") &&
                    strstr(r.message, "'x'") && strstr(r.message, "'mm'") &&
                    strstr(r.message, "host memory"),
                "message: %s", r.message);
  emu_teardown(&e, comp);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_fault_kernel) {
  het_graph *g = small_graph();
  float want[6];
  run_ref(g, small_x, want, 6);
  emu_ctx e;
  void *comp;
  static const char *const opts[] = {"fail_kernel=2", NULL};
  emu_setup(&e, NULL, opts, g, &comp);
  emu_run r = small_run(g, &e, comp);
  emu_run_main(&r);
  ck_assert_int_eq(r.status, HET_ERR_KERNEL);
  ck_assert_msg(strstr(r.message, "emu: injected fault: kernel #2") &&
                    strstr(r.message, "'add'"),
                "message: %s", r.message);
  ck_assert_int_eq(r.recorded, 1); /* the nodes after it did not run */
  r = small_run(g, &e, comp);
  emu_run_main(&r); /* a new stream on the same instance works again */
  check_y(&r, want);
  emu_teardown(&e, comp);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_timed_kernel_pacing) {
  char path[64];
  write_profile("provider: emu\nlaunch_overhead: 5ms\nlink_latency: 0\n",
                path, sizeof path);
  het_graph *g = small_graph();
  emu_ctx e;
  void *comp;
  static const char *const timed[] = {"mode=timed", NULL};
  emu_setup(&e, path, timed, g, &comp);
  emu_run r = small_run(g, &e, comp);
  double t0 = now_s();
  emu_run_main(&r);
  double dt = now_s() - t0;
  ck_assert_msg(r.status == HET_OK, "%s", r.message);
  ck_assert_msg(dt >= 4 * 5e-3, "4 kernels at 5 ms launch took %.2f ms",
                dt * 1e3);
  emu_teardown(&e, comp);
  het_graph_destroy(g);
  unlink(path);
}
END_TEST

START_TEST(test_nhwc_device_scratch) {
  het_graph *g = rank4_graph();
  float want[24];
  run_ref(g, rank4_x, want, 24);
  emu_ctx e;
  void *comp;
  emu_setup(&e, DEVICES "big-gpu-like.yaml", NULL, g, &comp);
  emu_run r = {.g = g, .e = &e, .comp = comp, .x = rank4_x, .n = 24,
               .copy_x = true, .nhwc = true};
  emu_run_main(&r);
  check_y(&r, want);
  /* each node reorders its input and output: 2 × 96 bytes, 64-aligned */
  ck_assert_uint_eq(r.scratch, 2 * 128);
  /* the same values read as NCHW give another softmax: the reorder is
   * what makes it right */
  r.nhwc = false;
  emu_run_main(&r);
  ck_assert_msg(r.status == HET_OK, "%s", r.message);
  bool differs = false;
  for (int i = 0; i < 24; i++)
    differs |= fabsf(r.y[i] - want[i]) > 1e-4f;
  ck_assert(differs);
  /* one byte short of the scratch it asked for is refused */
  r = (emu_run){.g = g, .e = &e, .comp = comp, .x = rank4_x, .n = 24,
                .copy_x = true, .nhwc = true, .scratch_short = 1};
  emu_run_main(&r);
  ck_assert_int_eq(r.status, HET_ERR_INTERNAL);
  ck_assert_msg(strstr(r.message, "'relu'") &&
                    strstr(r.message, "255 bytes of scratch planned"),
                "message: %s", r.message);
  emu_teardown(&e, comp);
  het_graph_destroy(g);
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
  het_claim claims[4];
  /* a profile listing Relu, NonZero and Abs, refusing int16 */
  char path[64];
  write_profile("name: picky\nprovider: emu\n"
                "supported_ops: [Relu, NonZero, Abs]\n"
                "unsupported_dtypes: [int16]\n",
                path, sizeof path);
  emu_ctx e;
  ck_assert_int_eq(emu_open(path, NULL, &e), HET_OK);
  void *st = e.ep.state;
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
  emu_close(&e);
  unlink(path);
  het_graph_destroy(g);
}
END_TEST

START_TEST(test_estimate_cost) {
  het_graph *g = small_graph();
  emu_ctx e;
  ck_assert_int_eq(emu_open(DEVICES "npu.yaml", NULL, &e), HET_OK);
  void *st = e.ep.state;
  for (int n = 0; n < g->n_nodes; n++) {
    double s, flops, bytes;
    ck_assert_int_eq(het_emu_provider.estimate_cost(st, g, n, &s), HET_OK);
    het_roofline_work(g, n, &flops, &bytes);
    double want = fmax(flops / 4e12, bytes / 60e9) + 10e-6;
    ck_assert_double_eq_tol(s, want, 1e-12);
    ck_assert(s >= 10e-6);
  }
  emu_close(&e);
  het_graph_destroy(g);
}
END_TEST

static Suite *emu_run_suite(void) {
  Suite *s = suite_create("emu_run");
  TCase *core = tcase_create("core");
  tcase_add_test(core, test_run_matches_reference);
  tcase_add_test(core, test_concurrent_runs);
  tcase_add_test(core, test_capability_reasons);
  tcase_add_test(core, test_estimate_cost);
  tcase_add_test(core, test_timed_kernel_pacing);
  tcase_add_test(core, test_nhwc_device_scratch);
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
