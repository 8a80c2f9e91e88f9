/* test_cuda_plugin.c — the CUDA provider as a plugin, on any machine: the
 * version rules (src/providers/cuda/versions.c), and, when this build made
 * libhetrt_cuda.so, loading it through the registry: without a usable GPU
 * a strict session fails with ERR_NO_DEVICE and the plugin's own message
 * ("no CUDA device: ..."), a non-strict one warns and gives the CPU-only
 * outputs bit for bit; a missing or foreign plugin file and a plugin-host
 * version mismatch are refused with messages naming them.  With a GPU the
 * strict session is created and places nodes on cuda (tests/gpu/ runs
 * them).  A cuda device profile without a GPU gives a session that places
 * and plans on the GPU it describes and refuses to run; a profile that
 * cannot describe one is refused.  Without the plugin in the build,
 * "cuda" is ERR_NOT_BUILT.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetrt/hetrt.h"
#include "common/cases.h"
#include "hetrt/provider.h"
#include "providers/cuda/versions.h"

#define MODEL HETRT_TEST_DATA "/emu/transformer_small.onnx"

/* ---- version rules ----------------------------------------------------------- */

START_TEST(test_versions) {
  char why[256];
  het_cuda_versions v = {.runtime_built = 13000, .runtime_found = 13020,
                         .driver = 13010, .cublaslt_built = 130100,
                         .cublaslt_found = 130205};
  ck_assert(het_cuda_libraries_ok(&v, why, sizeof why));
  ck_assert(het_cuda_driver_ok(&v, why, sizeof why));
  v.runtime_found = 12080;
  ck_assert(!het_cuda_libraries_ok(&v, why, sizeof why));
  ck_assert_str_eq(why, "CUDA runtime 12.8 found, the plugin was built for "
                        "13.0 (the major versions must match)");
  v.runtime_found = 13000;
  v.cublaslt_found = 120801;
  ck_assert(!het_cuda_libraries_ok(&v, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "cuBLASLt 12.8 found, the plugin was "
                                    "built for 13.1"));
  v.driver = 0;
  ck_assert(!het_cuda_driver_ok(&v, why, sizeof why));
  ck_assert_str_eq(why, "no NVIDIA driver is loaded");
  v.driver = 12040;
  ck_assert(!het_cuda_driver_ok(&v, why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "supports CUDA 12.4"));
  ck_assert_ptr_nonnull(strstr(why, "update the driver"));
  v.driver = 14000; /* a newer driver runs older runtimes */
  ck_assert(het_cuda_driver_ok(&v, why, sizeof why));
}
END_TEST

/* ---- sessions ------------------------------------------------------------------ */

static het_status open_session(het_env *env, const char *const *kv,
                               het_session **out) {
  return case_open_session(env, MODEL, kv, out);
}

static het_tensor *run_once(het_session *s) {
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d.dims, d.rank, &x),
                   HET_OK);
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    p[i] = (float)((i * 37) % 19) * 0.1f - 0.9f;
  const char *names[1] = {d.name};
  ck_assert_msg(het_session_run(s, names, &x, 1, NULL, 1, &y) == HET_OK,
                "%s", het_last_error());
  het_tensor_destroy(x);
  return y;
}

#ifdef HETRT_TEST_CUDA_PLUGIN

/* Whether this machine has a GPU the plugin can use. */
static bool have_gpu(het_env *env) {
  static const char *const kv[] = {"providers=cuda", NULL};
  het_session *s = NULL;
  het_status st = open_session(env, kv, &s);
  het_session_destroy(s);
  return st == HET_OK;
}

START_TEST(test_strict_without_device) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_ptr_nonnull(strstr(het_env_get_built_providers(env), "cuda"));
  static const char *const kv[] = {"providers=cuda,cpu", NULL};
  het_session *s = NULL;
  het_status st = open_session(env, kv, &s);
  if (st == HET_OK) { /* a GPU machine: the nodes are split */
    ck_assert_int_gt(case_placed_on(s, "cuda"), 0);
    het_session_destroy(s);
  } else {
    ck_assert_int_eq(st, HET_ERR_NO_DEVICE);
    ck_assert_msg(strstr(het_last_error(), "provider 'cuda'") &&
                      strstr(het_last_error(), "no CUDA device"),
                  "%s", het_last_error());
    ck_assert_ptr_null(s);
  }
  het_env_destroy(env);
}
END_TEST

START_TEST(test_non_strict_falls_back) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  if (have_gpu(env)) {
    het_env_destroy(env);
    return; /* nothing to fall back from */
  }
  static const char *const cpu[] = {"providers=cpu", NULL};
  static const char *const kv[] = {"providers=cuda,cpu", "strict=false",
                                   NULL};
  het_session *ref_s, *s;
  ck_assert_int_eq(open_session(env, cpu, &ref_s), HET_OK);
  ck_assert_msg(open_session(env, kv, &s) == HET_OK, "%s", het_last_error());
  ck_assert_uint_eq(het_session_get_warning_count(s), 1);
  const char *w = het_session_get_warning(s, 0);
  ck_assert_msg(strstr(w, "provider 'cuda' skipped: no CUDA device"), "%s", w);
  ck_assert_ptr_null(het_session_get_warning(s, 1));
  ck_assert_uint_eq(het_session_get_warning_count(ref_s), 0);
  het_tensor *want = run_once(ref_s), *got = run_once(s);
  ck_assert_uint_eq(het_tensor_get_nbytes(got), het_tensor_get_nbytes(want));
  ck_assert_int_eq(memcmp(het_tensor_get_data(got), het_tensor_get_data(want),
                          het_tensor_get_nbytes(want)),
                   0);
  het_tensor_destroy(want);
  het_tensor_destroy(got);
  het_session_destroy(s);
  het_session_destroy(ref_s);
  het_env_destroy(env);
}
END_TEST

#define H200 "devices=" HETRT_SOURCE_DIR "/configs/devices/h200.yaml"
#define PLAN_MLP HETRT_TEST_DATA "/cuda/plan_mlp.onnx"

/* A cuda device profile (configs/devices/h200.yaml) without a GPU: the
 * session is created on the device the profile describes, the cost
 * partitioner puts plan_mlp's MatMuls there with their weights' copies,
 * the memory plan counts those weights on it, a warning says the session
 * only plans, and runs are refused with ERR_NO_DEVICE, the session staying
 * usable.  With a GPU the profile only sets the facts. */
START_TEST(test_profile_plans_without_device) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  static const char *const kv[] = {"providers=cuda,cpu", H200, NULL};
  het_session *s = NULL;
  ck_assert_msg(case_open_session(env, PLAN_MLP, kv, &s) == HET_OK, "%s",
                het_last_error());
  ck_assert_int_gt(case_placed_on(s, "cuda"), 0);
  if (have_gpu(env)) {
    ck_assert_uint_eq(het_session_get_warning_count(s), 0);
    het_session_destroy(s);
    het_env_destroy(env);
    return;
  }
  ck_assert_uint_eq(het_session_get_warning_count(s), 1);
  const char *w = het_session_get_warning(s, 0);
  ck_assert_msg(strstr(w, "provider 'cuda' places nodes on cuda:0") &&
                    strstr(w, "configs/devices/h200.yaml") &&
                    strstr(w, "cannot run"),
                "%s", w);
  char *text = NULL;
  ck_assert_int_eq(het_session_explain(s, "text", &text), HET_OK);
  ck_assert_msg(strstr(text, "copy host -> cuda (initializer, prepared once)") &&
                    strstr(text, "of 131.32 GiB capacity"),
                "%s", text);
  het_string_destroy(text);
  size_t peak = 0;
  ck_assert_int_eq(het_session_get_planned_peak(s, "cuda", &peak), HET_OK);
  ck_assert_uint_ge(peak, (size_t)1 << 20); /* both weights, at least */
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  het_tensor *x, *y = NULL;
  for (int i = 0; i < d.rank; i++)
    if (d.dims[i] < 0)
      d.dims[i] = 2;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, d.dims, d.rank, &x),
                   HET_OK);
  const char *names[1] = {d.name};
  for (int k = 0; k < 2; k++) { /* refused, and again: still usable */
    ck_assert_int_eq(het_session_run(s, names, &x, 1, NULL, 1, &y),
                     HET_ERR_NO_DEVICE);
    ck_assert_msg(strstr(het_last_error(), "cuda:0") &&
                      strstr(het_last_error(), "cannot run"),
                  "%s", het_last_error());
    ck_assert_ptr_null(y);
  }
  ck_assert_int_eq(het_session_explain(s, "json", &text), HET_OK);
  het_string_destroy(text);
  het_tensor_destroy(x);
  het_session_destroy(s);
  het_env_destroy(env);
}
END_TEST

/* A profile that cannot stand for a GPU: the facts the cost model needs
 * missing, or a key that is not one, fail creation naming the file. */
START_TEST(test_bad_profile) {
  static const struct {
    const char *yaml, *want;
  } bad[] = {
      {"provider: cuda\nname: x\npeak_flops: 10T\n",
       "needs peak_flops (float32) and memory_bandwidth"},
      {"provider: cuda\npeak_flops: 10T\nmemory_bandwidth: 1TB/s\n"
       "warp_size: 32\n",
       ":4: unknown key 'warp_size'"},
      {"provider: cuda\npeak_flops: fast\nmemory_bandwidth: 1TB/s\n",
       "'fast' is not a valid quantity"},
  };
  char path[] = "/tmp/het_cuda_profile_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  char devices[64];
  snprintf(devices, sizeof devices, "devices=%s", path);
  const char *kv[] = {"providers=cuda,cpu", devices, NULL};
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  bool gpu = have_gpu(env);
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    FILE *f = fopen(path, "w");
    fputs(bad[k].yaml, f);
    fclose(f);
    het_session *s = NULL;
    het_status st = open_session(env, kv, &s);
    if (gpu && k == 0) { /* a present GPU keeps its own facts */
      ck_assert_int_eq(st, HET_OK);
      het_session_destroy(s);
      continue;
    }
    ck_assert_int_eq(st, HET_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(het_last_error(), bad[k].want) &&
                      strstr(het_last_error(), path),
                  "%s", het_last_error());
    ck_assert_ptr_null(s);
  }
  unlink(path);
  het_env_destroy(env);
}
END_TEST

static void expect_not_built(const char *plugin_path, const char *want) {
  setenv("HETRT_CUDA_PLUGIN", plugin_path, 1);
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  static const char *const kv[] = {"providers=cuda,cpu", NULL};
  het_session *s = NULL;
  ck_assert_int_eq(open_session(env, kv, &s), HET_ERR_NOT_BUILT);
  ck_assert_msg(strstr(het_last_error(), want), "wanted '%s' in: %s", want,
                het_last_error());
  het_env_destroy(env);
}

START_TEST(test_missing_plugin) {
  expect_not_built("/nonexistent/libhetrt_cuda.so",
                   "cannot be loaded from HETRT_CUDA_PLUGIN="
                   "/nonexistent/libhetrt_cuda.so");
}
END_TEST

START_TEST(test_foreign_library) {
  /* a shared library that is not a hetrt plugin */
  expect_not_built("libm.so.6", "no hetrt_plugin_init");
}
END_TEST

START_TEST(test_host_version_mismatch) {
  void *lib = dlopen(HETRT_TEST_CUDA_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(lib, "%s", dlerror());
  het_plugin_init_fn init;
  *(void **)&init = dlsym(lib, HET_PLUGIN_INIT_SYMBOL);
  ck_assert_ptr_nonnull(init);
  het_plugin_host host = {.version = HET_PLUGIN_HOST_VERSION + 1,
                          .provider_abi = HET_PROVIDER_ABI_VERSION};
  const het_provider_vtable *vt = NULL;
  char why[512];
  ck_assert_int_eq(init(&host, &vt, why, sizeof why), HET_ERR_NOT_BUILT);
  ck_assert_ptr_nonnull(strstr(why, "plugin host"));
  ck_assert_ptr_null(vt);
  host.version = HET_PLUGIN_HOST_VERSION;
  host.provider_abi = HET_PROVIDER_ABI_VERSION - 1;
  ck_assert_int_eq(init(&host, &vt, why, sizeof why), HET_ERR_NOT_BUILT);
  ck_assert_ptr_nonnull(strstr(why, "provider ABI"));
  ck_assert_int_eq(init(NULL, &vt, why, sizeof why), HET_ERR_NOT_BUILT);
  /* not dlclose'd: plugins are never unloaded (the CUDA runtime leaves
   * exit handlers behind) */
}
END_TEST

#else

START_TEST(test_not_built) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  ck_assert_ptr_null(strstr(het_env_get_built_providers(env), "cuda"));
  static const char *const kv[] = {"providers=cuda,cpu", NULL};
  het_session *s = NULL;
  ck_assert_int_eq(open_session(env, kv, &s), HET_ERR_NOT_BUILT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "not built"));
  het_env_destroy(env);
}
END_TEST

#endif

static Suite *cuda_plugin_suite(void) {
  Suite *s = suite_create("cuda_plugin");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_versions);
#ifdef HETRT_TEST_CUDA_PLUGIN
  tcase_add_test(tc, test_strict_without_device);
  tcase_add_test(tc, test_non_strict_falls_back);
  tcase_add_test(tc, test_profile_plans_without_device);
  tcase_add_test(tc, test_bad_profile);
  tcase_add_test(tc, test_missing_plugin);
  tcase_add_test(tc, test_foreign_library);
  tcase_add_test(tc, test_host_version_mismatch);
#else
  tcase_add_test(tc, test_not_built);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
#ifdef HETRT_TEST_CUDA_PLUGIN
  /* Test executables live in tests/, the plugin next to libhetrt. */
  setenv("HETRT_CUDA_PLUGIN", HETRT_TEST_CUDA_PLUGIN, 0);
#endif
  SRunner *sr = srunner_create(cuda_plugin_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
