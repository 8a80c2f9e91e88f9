/* fuzz_model.c — libFuzzer target: bytes as a serialized ModelProto →
 * het_session_create_from_memory (threads 1) → when it loads, one
 * het_session_run on generated inputs → destroy.  Built twice: fuzz_model
 * (provider "cpu") and fuzz_model_emu (HETRT_FUZZ_EMU: providers
 * "emu,cpu" with configs/devices/npu.yaml, so partitioning, boundary
 * copies and the emulated device run too).
 * Invariant checked: no crash, hang, leak or sanitizer report on any
 * input; a clean error status is a pass.  Memory is capped at the
 * allocator (__asan_default_options below: one allocation over 128 MiB
 * fails like malloc does) and by libFuzzer's -rss_limit_mb.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hetrt/hetrt.h"

/* Generated inputs stay small: a symbolic or unknown dim becomes 1 and no
 * tensor holds more than this many elements; a model whose fixed input
 * dims ask for more is loaded but not run (its compute, e.g. a
 * ConvTranspose over 43x66x66 pixels, is honest work that would pass the
 * per-input time limit in a sanitizer build, not a finding). */
#define FUZZ_MAX_ELEMENTS ((int64_t)1 << 16)
/* ... and the two largest inputs together no more than this product of
 * their counts: a ConvTranspose of 5,676 pixels by a 23,100-element kernel
 * (131 M multiply-adds, 19 s in the emu's reference kernel under the
 * sanitizers) is honest work too. */
#define FUZZ_MAX_PAIR ((int64_t)1 << 24)
#define FUZZ_MAX_INPUTS 16

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=128:"
         "detect_leaks=1";
}

static het_env *g_env;
static het_session_options *g_options;

static int fuzz_setup(void) {
  if (het_env_create(&g_env) != HET_OK ||
      het_session_options_create(&g_options) != HET_OK ||
      het_session_options_set_threads(g_options, 1) != HET_OK)
    return -1;
#ifdef HETRT_FUZZ_EMU
  if (het_session_options_set(g_options, "providers", "emu,cpu") != HET_OK ||
      het_session_options_set(g_options, "devices",
                              HETRT_SOURCE_DIR "/configs/devices/npu.yaml") !=
          HET_OK)
    return -1;
#endif
  return 0;
}

/* A tensor for input desc d, or NULL when its dtype cannot be generated
 * or it would hold over FUZZ_MAX_ELEMENTS elements.
 * Floats get a fixed byte pattern (varied values: huge, tiny, NaN, Inf);
 * integers the small values -1..3, since they are mostly shapes, indices,
 * axes and trip counts (a Loop of 2^60 iterations is a model's right, not a
 * finding; huge integers reach the library through initializers). */
static het_tensor *fuzz_make_input(const het_value_desc *d) {
  size_t esize = het_dtype_size(d->dtype);
  if (esize == 0 || d->rank < 0 || d->rank > HET_MAX_RANK)
    return NULL;
  int64_t dims[HET_MAX_RANK];
  int64_t count = 1;
  for (int i = 0; i < d->rank; i++) {
    int64_t v = d->dims[i] < 0 ? 1 : d->dims[i];
    if (v > 0 && count * v > FUZZ_MAX_ELEMENTS)
      return NULL;
    dims[i] = v;
    count *= v ? v : 1;
  }
  het_tensor *t = NULL;
  if (het_tensor_create(d->dtype, dims, d->rank, &t) != HET_OK)
    return NULL;
  uint8_t *p = het_tensor_get_data(t);
  size_t n = het_tensor_get_nbytes(t);
  switch (d->dtype) {
  case HET_DTYPE_FLOAT32: case HET_DTYPE_FLOAT64: case HET_DTYPE_FLOAT16:
  case HET_DTYPE_BFLOAT16:
    for (size_t i = 0; i < n; i++)
      p[i] = (uint8_t)(i * 37u + 11u);
    break;
  case HET_DTYPE_BOOL:
    for (size_t i = 0; i < n; i++)
      p[i] = (uint8_t)(i & 1u);
    break;
  default: /* integers, little-endian: -1, 0, 1, 2, 3, -1, ... */
    for (size_t i = 0; i < n; i += esize) {
      int v = (int)((i / esize) % 5) - 1;
      memset(p + i, v < 0 ? 0xff : 0, esize);
      p[i] = (uint8_t)v;
    }
  }
  return t;
}

static void fuzz_run(het_session *s) {
  size_t n_in = het_session_get_input_count(s);
  size_t n_out = het_session_get_output_count(s);
  if (n_in > FUZZ_MAX_INPUTS || n_out == 0 || n_out > FUZZ_MAX_INPUTS)
    return;
  const char *names[FUZZ_MAX_INPUTS];
  het_tensor *in[FUZZ_MAX_INPUTS] = {0}, *out[FUZZ_MAX_INPUTS] = {0};
  size_t made = 0;
  for (; made < n_in; made++) {
    het_value_desc d;
    if (het_session_get_input(s, made, &d) != HET_OK)
      break;
    names[made] = d.name;
    if (!(in[made] = fuzz_make_input(&d)))
      break;
  }
  int64_t big[2] = {0, 0}; /* the two largest counts */
  for (size_t i = 0; i < made; i++) {
    int64_t c = het_tensor_get_count(in[i]);
    if (c > big[0]) {
      big[1] = big[0];
      big[0] = c;
    } else if (c > big[1]) {
      big[1] = c;
    }
  }
  if (made == n_in && big[0] * big[1] <= FUZZ_MAX_PAIR &&
      het_session_run(s, names, in, n_in, NULL, n_out, out) == HET_OK)
    for (size_t i = 0; i < n_out; i++)
      het_tensor_destroy(out[i]);
  for (size_t i = 0; i < made; i++)
    het_tensor_destroy(in[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_env && fuzz_setup() != 0)
    __builtin_trap(); /* the harness itself is broken */
  het_session *s = NULL;
  if (het_session_create_from_memory(g_env, data, size, g_options, &s) !=
      HET_OK)
    return 0;
  fuzz_run(s);
  het_session_destroy(s);
  return 0;
}
