/* fuzz_plan.c — libFuzzer target: bytes as an ahead-of-time plan file
 * (docs/plan-format.md) → het_session_create_from_memory, then, when a
 * session comes out, one run on a generated input.  Every section is
 * hashed, so a mutation would almost never get past the container's
 * checks; for each input that has a readable header and table the
 * harness therefore also tries a copy whose hashes are made to match its
 * bytes, which sends the mutation on to the section parsers, the graph
 * loader, the placement and the kernels' blobs.
 * Invariant checked: no crash, hang, leak or sanitizer report on any
 * input; a clean error status is a pass.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "executor/plan_file.h"
#include "hetrt/hetrt.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=512:"
         "detect_leaks=1";
}

static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Makes every hash of the plan in buf (size bytes) match its contents,
 * as far as the table can be read; false when there is no table. */
static int fix_hashes(uint8_t *buf, size_t size) {
  if (size < 64 || memcmp(buf, HET_PLAN_MAGIC, 8) != 0)
    return 0;
  uint32_t n = rd32(buf + 12);
  if (n < 1 || n > HET_PLAN_MAX_SECTIONS || 64 + (size_t)n * 32 > size)
    return 0;
  for (uint32_t i = 0; i < n; i++) {
    uint8_t *e = buf + 64 + i * 32;
    uint64_t off = rd64(e + 8), len = rd64(e + 16);
    if (off <= size && len <= size - off) {
      uint64_t h = het_hash64(buf + off, (size_t)len, 0);
      memcpy(e + 24, &h, 8);
    }
  }
  uint64_t t = het_hash64(buf + 64, (size_t)n * 32, 0);
  memcpy(buf + 24, &t, 8);
  uint8_t head[64];
  memcpy(head, buf, 64);
  memset(head + 32, 0, 8);
  uint64_t h = het_hash64(head, 64, 0);
  memcpy(buf + 32, &h, 8);
  return 1;
}

static void try_plan(het_env *env, const uint8_t *data, size_t size) {
  het_session *s = NULL;
  if (het_session_create_from_memory(env, data, size, NULL, &s) != HET_OK)
    return;
  het_value_desc d;
  if (het_session_get_input(s, 0, &d) == HET_OK && d.rank >= 0 &&
      d.rank <= 8) {
    int64_t dims[8];
    int64_t count = 1;
    for (int k = 0; k < d.rank; k++) {
      dims[k] = d.dims[k] < 0 ? 1 : d.dims[k];
      count *= dims[k] < 4096 ? dims[k] : 4096;
    }
    het_tensor *x = NULL, *y = NULL;
    if (count <= (1 << 16) &&
        het_tensor_create(d.dtype, dims, d.rank, &x) == HET_OK) {
      memset(het_tensor_get_data(x), 0, het_tensor_get_nbytes(x));
      const char *names[1] = {d.name};
      if (het_session_run(s, names, &x, 1, NULL, 1, &y) == HET_OK)
        het_tensor_destroy(y);
      het_tensor_destroy(x);
    }
  }
  char *text = NULL;
  if (het_session_explain(s, "json", &text) == HET_OK)
    het_string_destroy(text);
  het_session_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static het_env *env;
  if (!env && het_env_create(&env) != HET_OK)
    __builtin_trap(); /* the harness itself is broken */
  try_plan(env, data, size);
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy)
    return 0;
  memcpy(copy, data, size);
  if (fix_hashes(copy, size))
    try_plan(env, copy, size);
  free(copy);
  return 0;
}
