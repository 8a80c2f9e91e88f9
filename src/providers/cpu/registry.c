/* registry.c — lookup of CPU kernels across the kernel groups, and the
 * kernels' shared error helper. */
#include <stdarg.h>
#include <string.h>

#include "providers/cpu/kernel.h"

static const het_cpu_kernel *const het_cpu_groups[] = {
    het_cpu_kernels_elementwise, het_cpu_kernels_linalg,
    het_cpu_kernels_tensor,      het_cpu_kernels_reduce,
    het_cpu_kernels_control,     het_cpu_kernels_signal,
    het_cpu_kernels_nlp,
};

static bool het_cpu_domain_is_onnx(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

const het_cpu_kernel *het_cpu_kernel_find(const char *domain,
                                          const char *op_type) {
  bool onnx = het_cpu_domain_is_onnx(domain);
  for (size_t g = 0; g < sizeof het_cpu_groups / sizeof *het_cpu_groups; g++)
    for (const het_cpu_kernel *k = het_cpu_groups[g]; k->op_type; k++) {
      bool same = onnx ? het_cpu_domain_is_onnx(k->domain)
                       : k->domain && strcmp(k->domain, domain) == 0;
      if (same && strcmp(k->op_type, op_type) == 0)
        return k;
    }
  return NULL;
}

het_status het_cpu_kernel_fail(const het_cpu_kernel_ctx *ctx, het_status st,
                               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  het_status r = het_node_errorv(ctx->node, st, fmt, ap);
  va_end(ap);
  return r;
}
