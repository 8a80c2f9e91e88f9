/* registry.c — lookup of CPU kernels across the kernel groups, and the
 * kernels' shared error helper. */
#include <stdarg.h>
#include <string.h>

#include "kernels/kernel.h"

static const het_kernel *const het_kernel_groups[] = {
    het_kernels_elementwise, het_kernels_linalg,
    het_kernels_tensor,      het_kernels_reduce,
    het_kernels_control,     het_kernels_signal,
    het_kernels_nlp,
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
