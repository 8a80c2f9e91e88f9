/* registry.c — lookup of kernels across the kernel groups, and what the
 * kernels share: the error helper and scratch (planned, or allocated). */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostmem.h"
#include "kernels/kernel.h"

static const het_kernel *const het_kernel_groups[] = {
    het_kernels_elementwise, het_kernels_linalg,
    het_kernels_tensor,      het_kernels_reduce,
    het_kernels_signal,      het_kernels_nlp,
};

static bool het_kernel_domain_is_onnx(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

const het_kernel *het_kernel_find(const char *domain,
                                          const char *op_type) {
  bool onnx = het_kernel_domain_is_onnx(domain);
  for (size_t g = 0; g < sizeof het_kernel_groups / sizeof *het_kernel_groups; g++)
    for (const het_kernel *k = het_kernel_groups[g]; k->op_type; k++) {
      bool same = onnx ? het_kernel_domain_is_onnx(k->domain)
                       : k->domain && strcmp(k->domain, domain) == 0;
      if (same && strcmp(k->op_type, op_type) == 0)
        return k;
    }
  return NULL;
}

het_status het_kernel_fail(const het_kernel_ctx *ctx, het_status st,
                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  het_status r = het_node_errorv(ctx->node, st, fmt, ap);
  va_end(ap);
  return r;
}

het_status het_kernel_take(het_kernel_ctx *ctx, size_t bytes, void **out) {
  size_t need = (bytes + 63) & ~(size_t)63;
  if (ctx->scratch && need <= ctx->scratch_size - ctx->scratch_used) {
    *out = (char *)ctx->scratch + ctx->scratch_used;
    ctx->scratch_used += need;
    return HET_OK;
  }
  *out = het_host_alloc(need);
  if (!*out)
    return het_kernel_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                           "cannot allocate %zu bytes of scratch", bytes);
  return HET_OK;
}

void het_kernel_give(het_kernel_ctx *ctx, void *p) {
  const char *c = p, *base = ctx->scratch;
  if (base && c >= base && c < base + ctx->scratch_size)
    return; /* the run's scratch: nothing to free */
  free(p);
}
