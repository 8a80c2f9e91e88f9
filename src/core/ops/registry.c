/* registry.c — lookup of operator definitions across the op groups. */
#include <math.h>
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

typedef struct het_fused_parts {
  const char *op_type;
  const char *parts[8];
} het_fused_parts;

static const het_fused_parts het_fused[] = {
    {"FusedConv", {"Conv", "Add", NULL}},
    {"FusedConvDw", {"Conv", NULL}},
    {"FusedConvPool", {"Conv", "MaxPool", NULL}},
    {"FusedMatMul", {"MatMul", "Add", NULL}},
    {"Gelu", {"Div", "Erf", "Add", "Mul", NULL}},
    {"LayerNorm", {"ReduceMean", "Sub", "Pow", "Add", "Sqrt", "Div", "Mul",
                   NULL}},
    {"Attention", {"MatMul", "Softmax", "Mul", NULL}},
    {"QLinearAdd", {"DequantizeLinear", "Add", "QuantizeLinear", NULL}},
};

const char *const *het_op_fused_parts(const char *domain,
                                      const char *op_type) {
  if (!domain || strcmp(domain, "hetrt") != 0)
    return NULL;
  for (size_t i = 0; i < sizeof het_fused / sizeof *het_fused; i++)
    if (strcmp(het_fused[i].op_type, op_type) == 0)
      return het_fused[i].parts;
  return NULL;
}

/* The clamp of attributes lo/hi: Relu (0, +inf), Clip, or NULL. */
static const char *het_fused_clamp(const het_node *node, const char *lo_name,
                                   const char *hi_name) {
  const het_attr *lo = het_node_find_attr(node, lo_name);
  const het_attr *hi = het_node_find_attr(node, hi_name);
  if (!lo || !hi)
    return NULL;
  return lo->f == 0.0f && isinf(hi->f) && hi->f > 0 ? "Relu" : "Clip";
}

const char *het_node_fused_activation(const het_node *node) {
  const het_attr *op = het_node_find_attr(node, "hetrt_act");
  if (op && op->s)
    return op->s;
  return het_fused_clamp(node, "hetrt_act_min", "hetrt_act_max");
}

/* A fused activation's attributes (opt_activation.c) and their names on
 * hetrt.FusedConvDw's depthwise half. */
static const char *const het_act_attrs[HET_ACT_ATTRS][2] = {
    {"hetrt_act_min", "hetrt_dw_act_min"},
    {"hetrt_act_max", "hetrt_dw_act_max"},
    {"hetrt_act", "hetrt_dw_act"},
    {"hetrt_act_alpha", "hetrt_dw_act_alpha"},
    {"hetrt_act_beta", "hetrt_dw_act_beta"}};

int het_node_copy_act_attrs(const het_node *node, bool to_dw, het_attr *out) {
  int n = 0;
  for (int i = 0; i < HET_ACT_ATTRS; i++) {
    const het_attr *a = het_node_find_attr(node, het_act_attrs[i][!to_dw]);
    if (a) {
      out[n] = *a;
      out[n++].name = het_act_attrs[i][to_dw];
    }
  }
  return n;
}

const char *het_node_fused_dw_activation(const het_node *node) {
  const het_attr *op = het_node_find_attr(node, "hetrt_dw_act");
  if (op && op->s)
    return op->s;
  return het_fused_clamp(node, "hetrt_dw_act_min", "hetrt_dw_act_max");
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
