/* fuzz_tensor.c — libFuzzer target: bytes as a serialized TensorProto →
 * het_onnx_tensor_decode (src/onnx) → when it decodes, encoded again
 * (het_onnx_tensor_encode) and decoded once more, which must give the same
 * dtype, shape and bytes → destroy.
 * Invariant checked: no crash, hang, leak or sanitizer report on any
 * input, and a decoded tensor survives the round trip unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"
#include "onnx/loader.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=128:"
         "detect_leaks=1";
}

static int fuzz_same(het_tensor *a, het_tensor *b) {
  int64_t da[HET_MAX_RANK], db[HET_MAX_RANK];
  int ra = het_tensor_get_rank(a), rb = het_tensor_get_rank(b);
  if (het_tensor_get_dtype(a) != het_tensor_get_dtype(b) || ra != rb ||
      het_tensor_get_nbytes(a) != het_tensor_get_nbytes(b))
    return 0;
  het_tensor_get_dims(a, da, HET_MAX_RANK);
  het_tensor_get_dims(b, db, HET_MAX_RANK);
  if (ra > 0 && memcmp(da, db, (size_t)ra * sizeof *da) != 0)
    return 0;
  size_t n = het_tensor_get_nbytes(a);
  return n == 0 ||
         memcmp(het_tensor_get_data(a), het_tensor_get_data(b), n) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  het_tensor *t = NULL, *back = NULL;
  char *name = NULL;
  uint8_t *buf = NULL;
  size_t len = 0;
  if (het_onnx_tensor_decode(data, size, "fuzz", &t, &name) != HET_OK)
    return 0;
  /* Strings are pointers in memory: compare only fixed-size dtypes. */
  if (het_tensor_get_dtype(t) != HET_DTYPE_STRING &&
      het_onnx_tensor_encode(t, name, &buf, &len) == HET_OK) {
    if (het_onnx_tensor_decode(buf, len, "fuzz (re-encoded)", &back, NULL) !=
            HET_OK ||
        !fuzz_same(t, back))
      __builtin_trap(); /* what we wrote we cannot read back */
  }
  het_tensor_destroy(back);
  free(buf);
  free(name);
  het_tensor_destroy(t);
  return 0;
}
