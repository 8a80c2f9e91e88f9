/* fuzz_policy.c — libFuzzer target: bytes as a YAML placement policy
 * (docs/policy.md).  Each input is parsed into session options
 * (het_session_options_set_policy); one that parses is then applied to a
 * small model split across emu and cpu (tests/data/emu/resnet_small.onnx
 * with configs/devices/npu.yaml), so rule matching, precedence, fallbacks,
 * budgets, min_subgraph_nodes and shapes to plan for run on it too.
 * Invariant checked: no crash, hang, leak or sanitizer report on any
 * input; a clean error status is a pass.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=256:"
         "detect_leaks=1";
}

#define FUZZ_MODEL HETRT_SOURCE_DIR "/tests/data/emu/resnet_small.onnx"
#define FUZZ_NPU HETRT_SOURCE_DIR "/configs/devices/npu.yaml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static het_env *env;
  if (!env && het_env_create(&env) != HET_OK)
    __builtin_trap(); /* the harness itself is broken */
  char *text = malloc(size + 1);
  het_session_options *o = NULL;
  if (!text || het_session_options_create(&o) != HET_OK)
    __builtin_trap();
  memcpy(text, data, size);
  text[size] = 0;
  /* Defaults a policy may override: emu with a profile, then the CPU. */
  if (het_session_options_set(o, "providers", "emu,cpu") != HET_OK ||
      het_session_options_set(o, "devices", FUZZ_NPU) != HET_OK)
    __builtin_trap();
  if (het_session_options_set_policy(o, text) == HET_OK) {
    het_session *s = NULL;
    if (het_session_create(env, FUZZ_MODEL, o, &s) == HET_OK) {
      char *report = NULL;
      if (het_session_explain(s, "rules", &report) == HET_OK)
        het_string_destroy(report);
      het_session_destroy(s);
    }
  }
  het_session_options_destroy(o);
  free(text);
  return 0;
}
