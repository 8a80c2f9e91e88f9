/* capability.c — which nodes the emu claims and what they cost on it.
 * A node is claimed when its op is in the profile (for a hetrt-domain
 * fusion: every op it stands for, het_op_fused_parts; an activation fused
 * into it, too), has a CPU kernel (the
 * emu computes with CPU kernel code), has no data-dependent output shape
 * (outputs must be allocated on the device before the kernel runs) and
 * uses no dtype the profile refuses.  Cost: roofline from the profile plus
 * one kernel launch; timed mode paces kernels to the same figure.
 */
#include <stdio.h>
#include <string.h>

#include "core/roofline.h"
#include "kernels/kernel.h"
#include "providers/emu/emu_internal.h"

/* Ops whose output shape depends on input values, or that run subgraphs. */
static const char *const het_emu_dynamic_ops[] = {
    "NonZero", "Unique", "NonMaxSuppression", "Compress", "Loop", "If",
    "Scan", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
    "SequenceErase", "SequenceInsert", "SequenceLength", "SplitToSequence",
    "ConcatFromSequence", "Optional", "OptionalGetElement",
    "OptionalHasElement", "StringNormalizer", "TfIdfVectorizer", NULL};

static bool het_emu_is_dynamic(const het_node *node) {
  for (const char *const *op = het_emu_dynamic_ops; *op; op++)
    if (strcmp(node->op_type, *op) == 0)
      return true;
  for (int a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == HET_ATTR_GRAPH ||
        node->attrs[a].type == HET_ATTR_GRAPHS)
      return true;
  return false;
}

/* Ops whose output type is fixed by an attribute: they would break the
 * "float32 is kept as float32_as" rule. */
static const char *const het_emu_typed_ops[] = {
    "Cast", "CastLike", "Constant", "ConstantOfShape", "EyeLike",
    "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
    "Bernoulli", "Multinomial", NULL};

/* Checks the dtype of value v; names it in why when refused.  A device
 * that converts at its boundary (float32_as, NHWC) must know every
 * value's type and rank at load time, since the boundary is placed then. */
static bool het_emu_value_ok(const het_emu_state *s, const het_graph *g,
                             int v, char *why, size_t why_cap) {
  if (v < 0)
    return true;
  het_dtype t = g->values[v].dtype;
  bool converts_type = s->dev->profile.float32_as != HET_DTYPE_UNDEFINED;
  if (converts_type && t == HET_DTYPE_UNDEFINED) {
    snprintf(why, why_cap,
             "emu: type of '%s' unknown at load time (float32_as needs it)",
             g->values[v].name);
    return false;
  }
  if (s->dev->profile.preferred_layout == HET_LAYOUT_NHWC &&
      g->values[v].shape.rank < 0) {
    snprintf(why, why_cap,
             "emu: rank of '%s' unknown at load time (NHWC needs it)",
             g->values[v].name);
    return false;
  }
  if (t == HET_DTYPE_UNDEFINED)
    return true;
  if (t == HET_DTYPE_STRING || !het_emu_profile_dtype_ok(&s->dev->profile, t)) {
    snprintf(why, why_cap, "emu: %s not supported (value '%s')",
             het_dtype_str(t), g->values[v].name);
    return false;
  }
  return true;
}

/* The op is in the profile, or is a fusion of ops that all are. */
static bool het_emu_has_op(const het_emu_state *s, const char *dom,
                           const char *op) {
  if (het_emu_profile_has_op(&s->dev->profile, dom, op))
    return true;
  const char *const *parts = het_op_fused_parts(dom, op);
  for (; parts && *parts; parts++)
    if (!het_emu_profile_has_op(&s->dev->profile, "", *parts))
      return false;
  return parts != NULL;
}

bool het_emu_node_check(const het_emu_state *s, const het_graph *g,
                        const het_node *node, char *why, size_t why_cap) {
  const char *dom = node->domain && *node->domain ? node->domain : "";
  if (!het_emu_has_op(s, dom, node->op_type)) {
    snprintf(why, why_cap, "emu: op %s%s%s not in profile '%s'", dom,
             *dom ? "." : "", node->op_type, s->dev->profile.name);
    return false;
  }
  const char *acts[2] = {het_node_fused_activation(node),
                         het_node_fused_dw_activation(node)};
  for (int i = 0; i < 2; i++)
    if (acts[i] && !het_emu_profile_has_op(&s->dev->profile, "", acts[i])) {
      snprintf(why, why_cap, "emu: fused %s not in profile '%s'", acts[i],
               s->dev->profile.name);
      return false;
    }
  for (const char *const *op = het_emu_typed_ops;
       s->dev->profile.float32_as != HET_DTYPE_UNDEFINED && *op; op++)
    if (strcmp(node->op_type, *op) == 0) {
      snprintf(why, why_cap, "emu: %s fixes its output type, but '%s' keeps "
               "float32 as %s", node->op_type, s->dev->profile.name,
               het_dtype_str(s->dev->profile.float32_as));
      return false;
    }
  if (het_emu_is_dynamic(node)) {
    snprintf(why, why_cap,
             "emu: %s has a data-dependent output shape or a subgraph",
             node->op_type);
    return false;
  }
  const het_kernel *k = het_kernel_find(dom, node->op_type);
  if (!k) {
    snprintf(why, why_cap, "emu: no kernel for %s%s%s", dom, *dom ? "." : "",
             node->op_type);
    return false;
  }
  for (int i = 0; i < node->n_inputs; i++)
    if (!het_emu_value_ok(s, g, node->inputs[i], why, why_cap))
      return false;
  for (int o = 0; o < node->n_outputs; o++)
    if (!het_emu_value_ok(s, g, node->outputs[o], why, why_cap))
      return false;
  if (k->supports) {
    char inner[HET_CLAIM_REASON_CAP];
    inner[0] = '\0';
    if (!k->supports(g, node, inner, sizeof inner)) {
      snprintf(why, why_cap, "emu: %s", inner);
      return false;
    }
  }
  snprintf(why, why_cap, "emu '%s' runs %s", s->dev->profile.name, node->op_type);
  return true;
}

het_status het_emu_get_capability(void *state, const het_graph *graph,
                                  het_claim *claims) {
  const het_emu_state *s = state;
  for (int n = 0; n < graph->n_nodes; n++)
    claims[n].claimed = het_emu_node_check(s, graph, &graph->nodes[n],
                                           claims[n].reason,
                                           sizeof claims[n].reason);
  return HET_OK;
}

het_status het_emu_estimate_cost(void *state, const het_graph *graph,
                                 int node, double *seconds) {
  const het_emu_state *s = state;
  het_device_info info;
  het_emu_profile_device_info(&s->dev->profile, &info);
  *seconds = het_roofline_node(graph, node, &info) + s->dev->profile.launch_overhead;
  return HET_OK;
}
