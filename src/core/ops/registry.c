/* registry.c — lookup of operator definitions across the op groups. */
#include <string.h>

#include "core/infer.h"

static const het_op_def *const het_op_groups[] = {
    het_ops_elementwise, het_ops_linalg, het_ops_tensor,
    het_ops_reduce,      het_ops_control,   het_ops_signal,
    het_ops_nlp,
};

static bool het_domain_is_onnx(const char *d) {
  return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

const het_op_def *het_op_find(const char *domain, const char *op_type) {
  bool onnx = het_domain_is_onnx(domain);
  for (size_t g = 0; g < sizeof het_op_groups / sizeof *het_op_groups; g++)
    for (const het_op_def *d = het_op_groups[g]; d->op_type; d++) {
      bool same_domain =
          onnx ? het_domain_is_onnx(d->domain) : strcmp(d->domain, domain) == 0;
      if (same_domain && strcmp(d->op_type, op_type) == 0)
        return d;
    }
  return NULL;
}
