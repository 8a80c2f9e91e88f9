/* test_emu_e2e.c — the emu inside sessions: a ResNet-style and a
 * transformer-style model (tests/data/emu/gen_models.py) split across
 * emu + cpu with configs/devices/npu.yaml give the CPU-only outputs within
 * 1e-5 under both assignment algorithms; injected allocation, kernel and
 * copy faults fail one step cleanly and leave the session usable; a copy
 * removed from a partitioned graph is caught by plan validation and, in a
 * plan made before the change, by the emu as a missing copy; a graph
 * output made on the emu and read there in the same run.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/plan.h"
#include "hetrt/hetrt.h"
#include "common/cases.h"
#include "session/session.h"
#include "transfer/boundary.h"

#define MODELS HETRT_TEST_DATA "/emu/"
#define DEVICES HETRT_SOURCE_DIR "/configs/devices/"

static het_env *env;

static const char *const models[] = {"resnet_small.onnx",
                                     "transformer_small.onnx"};

/* Creates a session; kv: NULL-terminated "key=value" session options. */
static het_status open_session(const char *model, const char *const *kv,
                               het_session **out) {
  char path[512];
  snprintf(path, sizeof path, MODELS "%s", model);
  return case_open_session(env, path, kv, out);
}

static het_status run_once(het_session *s, het_tensor *x, het_tensor **y) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  const char *names[1] = {d.name};
  return het_session_run(s, names, &x, 1, NULL, 1, y);
}

/* The CPU-only output of model for the fixed input.  Caller owns. */
static het_tensor *cpu_reference(const char *model) {
  static const char *const kv[] = {"providers=cpu", NULL};
  het_session *s;
  ck_assert_msg(open_session(model, kv, &s) == HET_OK, "%s", het_last_error());
  het_tensor *x = case_pattern_input(s), *y;
  ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
  het_tensor_destroy(x);
  het_session_destroy(s);
  return y;
}

/* _i: model (bit 0), algorithm (bit 1: priority), emu mode (bit 2: timed,
 * with jitter). */
START_TEST(test_split_matches_cpu) {
  const char *model = models[_i & 1];
  bool priority = _i & 2, timed = _i & 4;
  het_tensor *want = cpu_reference(model);
  const char *kv[] = {"providers=emu,cpu", "devices=" DEVICES "npu.yaml",
                      priority ? "algorithm=priority" : "algorithm=cost",
                      timed ? "emu.mode=timed" : "emu.mode=fast",
                      timed ? "emu.jitter_us=30" : "emu.jitter_us=0", NULL};
  het_session *s;
  ck_assert_msg(open_session(model, kv, &s) == HET_OK, "%s", het_last_error());
  if (priority) { /* the npu lacks some ops: a real split */
    ck_assert_int_gt(case_placed_on(s, "emu"), 0);
    ck_assert_int_gt(case_placed_on(s, "cpu"), 0);
  }
  het_tensor *x = case_pattern_input(s);
  for (int rep = 0; rep < 2; rep++) {
    het_tensor *y;
    ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
    case_assert_close(y, want, 1e-5, "emu+cpu vs cpu");
    het_tensor_destroy(y);
  }
  het_tensor_destroy(x);
  het_tensor_destroy(want);
  het_session_destroy(s);
}
END_TEST

START_TEST(test_fault_kernel_leaves_session_usable) {
  const char *model = models[_i];
  het_tensor *want = cpu_reference(model);
  static const char *const kv[] = {"providers=emu,cpu",
                                   "devices=" DEVICES "npu.yaml",
                                   "algorithm=priority", "emu.fail_kernel=2",
                                   NULL};
  het_session *s;
  ck_assert_msg(open_session(model, kv, &s) == HET_OK, "%s", het_last_error());
  het_tensor *x = case_pattern_input(s), *y = NULL;
  ck_assert_int_eq(run_once(s, x, &y), HET_ERR_KERNEL);
  ck_assert_ptr_null(y);
  ck_assert_msg(strstr(het_last_error(), "emu: injected fault: kernel #2"),
                "%s", het_last_error());
  ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
  case_assert_close(y, want, 1e-5, "emu+cpu vs cpu");
  het_tensor_destroy(y);
  het_tensor_destroy(x);
  het_tensor_destroy(want);
  het_session_destroy(s);
}
END_TEST

/* A graph output made on the NPU and read there by the next node of the
 * same run (tapped_convs.onnx: "tap" feeds the last Conv): the reader takes
 * the device copy, the output still comes home, and both outputs match the
 * CPU.  Before, the reader was given the host name and the plan check
 * refused it ("reads 'tap' in host memory"). */
START_TEST(test_graph_output_read_on_device) {
  static const char *const names[2] = {"tap", "y"};
  het_tensor *want[2], *got[2], *x;
  for (int pass = 0; pass < 2; pass++) {
    const char *kv[] = {pass ? "providers=emu,cpu" : "providers=cpu",
                        "devices=" DEVICES "npu.yaml", "algorithm=priority",
                        NULL};
    het_session *s;
    ck_assert_msg(open_session("tapped_convs.onnx", kv, &s) == HET_OK, "%s",
                  het_last_error());
    if (pass)
      ck_assert_int_eq(case_placed_on(s, "emu"), 2); /* Conv+Relu, Conv */
    x = case_pattern_input(s);
    const char *in[1] = {"x"};
    het_tensor **out = pass ? got : want;
    for (int rep = 0; rep < 1 + pass; rep++) {
      if (rep) {
        het_tensor_destroy(out[0]);
        het_tensor_destroy(out[1]);
      }
      ck_assert_msg(het_session_run(s, in, &x, 1, names, 2, out) == HET_OK,
                    "%s", het_last_error());
    }
    het_tensor_destroy(x);
    het_session_destroy(s);
  }
  case_assert_close(got[0], want[0], 1e-5, "tap: emu vs cpu");
  case_assert_close(got[1], want[1], 1e-5, "y: emu vs cpu");
  for (int k = 0; k < 2; k++) {
    het_tensor_destroy(got[k]);
    het_tensor_destroy(want[k]);
  }
}
END_TEST

/* fail_<what>=N for N = 1, 2, ...: while N falls on session creation
 * (initializer placement) creation fails cleanly; the first N that falls on
 * a run fails that run, and the next run gives the CPU result. */
static void fault_sweep(const char *model, const char *what, het_status want) {
  het_tensor *ref = cpu_reference(model);
  for (int n = 1; n < 400; n++) {
    char opt[64];
    snprintf(opt, sizeof opt, "emu.fail_%s=%d", what, n);
    const char *kv[] = {"providers=emu,cpu", "devices=" DEVICES "npu.yaml",
                        "algorithm=priority", opt, NULL};
    het_session *s = NULL;
    het_status st = open_session(model, kv, &s);
    if (st != HET_OK) {
      ck_assert_msg(st == want && strstr(het_last_error(), "emu: injected fault"),
                    "%s: creation failed with %s: %s", opt, het_status_str(st),
                    het_last_error());
      continue;
    }
    het_tensor *x = case_pattern_input(s), *y = NULL;
    st = run_once(s, x, &y);
    ck_assert_msg(st == want && strstr(het_last_error(), "emu: injected fault"),
                  "%s: run gave %s: %s", opt, het_status_str(st),
                  het_last_error());
    ck_assert_ptr_null(y);
    ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
    case_assert_close(y, ref, 1e-5, "emu+cpu vs cpu");
    het_tensor_destroy(y);
    het_tensor_destroy(x);
    het_session_destroy(s);
    het_tensor_destroy(ref);
    return;
  }
  ck_abort_msg("fail_%s never reached a run", what);
}

START_TEST(test_fault_alloc_leaves_session_usable) {
  fault_sweep(models[_i], "alloc", HET_ERR_OUT_OF_MEMORY);
}
END_TEST

START_TEST(test_fault_copy_leaves_session_usable) {
  fault_sweep(models[_i], "copy", HET_ERR_IO);
}
END_TEST

/* Rewires an emu node to read the host value a boundary copy reads. */
START_TEST(test_missing_copy_is_caught) {
  static const char *const kv[] = {"providers=emu,cpu",
                                   "devices=" DEVICES "npu.yaml",
                                   "algorithm=priority", NULL};
  het_session *s;
  ck_assert_msg(open_session(models[_i], kv, &s) == HET_OK, "%s",
                het_last_error());
  het_graph *g = s->graph;
  const het_partition *part = &s->top.partition;
  const char *victim = NULL, *value = NULL;
  for (int n = 0; n < g->n_nodes && !victim; n++) {
    het_node *node = &g->nodes[n];
    int prov = part->provider[n];
    if (prov < 0 || strcmp(node->op_type, HET_COPY_OP) == 0 ||
        strcmp(s->providers[prov].vt->name, "emu") != 0)
      continue;
    for (int k = 0; k < node->n_inputs && !victim; k++) {
      int v = node->inputs[k];
      int p = v >= 0 ? g->values[v].producer : -1;
      if (p < 0 || strcmp(g->nodes[p].op_type, HET_COPY_OP) != 0 ||
          part->kind[p] != HET_STEP_COPY)
        continue;
      node->inputs[k] = g->nodes[p].inputs[0]; /* skip the copy */
      victim = node->name;
      value = g->values[node->inputs[k]].name;
    }
  }
  ck_assert_msg(victim != NULL, "no emu node reads a run-time copy");
  /* the plan made at creation still runs the node: the emu refuses */
  het_tensor *x = case_pattern_input(s), *y = NULL;
  ck_assert_int_eq(run_once(s, x, &y), HET_ERR_INTERNAL);
  const char *msg = het_last_error();
  ck_assert_msg(strstr(msg, "missing copy") && strstr(msg, victim) &&
                    strstr(msg, value),
                "message: %s", msg);
  /* a plan made now fails validation, naming the step and the value */
  int64_t key[HET_PLAN_KEY_PER_PARAM];
  het_plan_key(&s->top.prog, &x, key);
  het_plan *plan = NULL;
  ck_assert_int_eq(het_plan_build(&s->top.prog, key, &plan), HET_ERR_INTERNAL);
  msg = het_last_error();
  ck_assert_msg(strstr(msg, "plan check") && strstr(msg, victim) &&
                    strstr(msg, value) && strstr(msg, "host memory"),
                "message: %s", msg);
  het_tensor_destroy(x);
  het_session_destroy(s);
}
END_TEST

/* A device too small for the weights (configs/devices/tiny.yaml, 16 KiB).
 * `priority` ignores capacity: resnet_small's weights do not fit, and
 * session creation fails cleanly with a capacity error naming the device.
 * transformer_small at level extended fits: its plan reuses the emu
 * arena's bytes (planned peak 11.3 KiB), and the run matches the CPU. */
START_TEST(test_tiny_device_priority_fails_cleanly) {
  static const char *const kv[] = {
      "providers=emu,cpu", "devices=" DEVICES "tiny.yaml",
      "algorithm=priority", "optimization=extended", NULL};
  het_session *s = NULL;
  het_status st = open_session(models[_i], kv, &s);
  if (_i == 0) {
    ck_assert_ptr_null(s);
    ck_assert_int_eq(st, HET_ERR_CAPACITY);
    ck_assert_msg(strstr(het_last_error(), "emu device 'tiny': cannot "
                                           "allocate"),
                  "%s", het_last_error());
    return;
  }
  ck_assert_msg(st == HET_OK, "%s", het_last_error());
  size_t peak = 0;
  ck_assert_int_eq(het_session_get_planned_peak(s, "emu", &peak), HET_OK);
  ck_assert_uint_le(peak, 16384);
  het_tensor *want = cpu_reference(models[_i]);
  het_tensor *x = case_pattern_input(s), *y = NULL;
  ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
  case_assert_close(y, want, 1e-5, "emu+cpu vs cpu");
  het_tensor_destroy(y);
  het_tensor_destroy(x);
  het_tensor_destroy(want);
  het_session_destroy(s);
}
END_TEST

/* `cost` keeps within the capacity and the result is still right. */
START_TEST(test_tiny_device_cost_fits) {
  const char *model = models[_i];
  het_tensor *want = cpu_reference(model);
  static const char *const kv[] = {"providers=emu,cpu",
                                   "devices=" DEVICES "tiny.yaml",
                                   "algorithm=cost", NULL};
  het_session *s;
  ck_assert_msg(open_session(model, kv, &s) == HET_OK, "%s", het_last_error());
  het_tensor *x = case_pattern_input(s), *y;
  ck_assert_msg(run_once(s, x, &y) == HET_OK, "%s", het_last_error());
  case_assert_close(y, want, 1e-5, "emu+cpu vs cpu");
  het_tensor_destroy(y);
  het_tensor_destroy(x);
  het_tensor_destroy(want);
  het_session_destroy(s);
}
END_TEST

static void setup(void) { ck_assert_int_eq(het_env_create(&env), HET_OK); }
static void teardown(void) { het_env_destroy(env); }

/* Soak: 1000 runs of a cpu+emu split in timed mode with random per-op
 * delays, from four threads at once, on the sequential and on the streams
 * plan (each run its own streams, arenas reused across streams only after
 * an event); every output is bit-identical to the first and within 1e-5
 * of the CPU-only result. */
typedef struct soak_worker {
  het_session *s;
  het_tensor *x;
  const het_tensor *first;
  int runs, bad;
  het_status st;
} soak_worker;

static void *soak_runs(void *arg) {
  soak_worker *w = arg;
  for (int r = 0; r < w->runs && w->st == HET_OK; r++) {
    het_tensor *y = NULL;
    w->st = run_once(w->s, w->x, &y);
    if (w->st == HET_OK &&
        memcmp(het_tensor_get_data(y), het_tensor_get_data((het_tensor *)w->first),
               het_tensor_get_nbytes(y)) != 0)
      w->bad++;
    het_tensor_destroy(y);
  }
  return NULL;
}

START_TEST(test_jittered_soak) {
  const char *model = models[_i & 1];
  het_tensor *want = cpu_reference(model);
  const char *kv[] = {"providers=emu,cpu", "devices=" DEVICES "npu.yaml",
                      "algorithm=priority", "emu.mode=timed",
                      "emu.jitter_us=20",
                      _i & 2 ? "executor=streams" : "executor=sequential",
                      NULL};
  het_session *s;
  ck_assert_msg(open_session(model, kv, &s) == HET_OK, "%s", het_last_error());
  ck_assert_int_gt(case_placed_on(s, "emu"), 0);
  ck_assert_int_gt(case_placed_on(s, "cpu"), 0);
  het_tensor *x = case_pattern_input(s), *first;
  ck_assert_msg(run_once(s, x, &first) == HET_OK, "%s", het_last_error());
  case_assert_close(first, want, 1e-5, "emu+cpu vs cpu");
  soak_worker w[4];
  pthread_t th[4];
  for (int t = 0; t < 4; t++) {
    w[t] = (soak_worker){.s = s, .x = x, .first = first, .runs = 250};
    pthread_create(&th[t], NULL, soak_runs, &w[t]);
  }
  for (int t = 0; t < 4; t++) {
    pthread_join(th[t], NULL);
    ck_assert_msg(w[t].st == HET_OK, "%s", het_last_error());
    ck_assert_int_eq(w[t].bad, 0);
  }
  het_tensor_destroy(first);
  het_tensor_destroy(x);
  het_tensor_destroy(want);
  het_session_destroy(s);
}
END_TEST

static Suite *emu_e2e_suite(void) {
  Suite *s = suite_create("emu_e2e");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_add_loop_test(core, test_split_matches_cpu, 0, 8);
  tcase_add_loop_test(core, test_jittered_soak, 0, 4);
  tcase_add_test(core, test_graph_output_read_on_device);
  tcase_set_timeout(core, 300);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, setup, teardown);
  tcase_add_loop_test(limits, test_tiny_device_priority_fails_cleanly, 0, 2);
  tcase_add_loop_test(limits, test_tiny_device_cost_fits, 0, 2);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_set_timeout(errors, 300);
  tcase_add_loop_test(errors, test_fault_kernel_leaves_session_usable, 0, 2);
  tcase_add_loop_test(errors, test_fault_alloc_leaves_session_usable, 0, 2);
  tcase_add_loop_test(errors, test_fault_copy_leaves_session_usable, 0, 2);
  tcase_add_loop_test(errors, test_missing_copy_is_caught, 0, 2);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_e2e_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
