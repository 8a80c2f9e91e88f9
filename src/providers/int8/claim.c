/* claim.c — what the INT8 execution provider claims: the quantized
 * operators (QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger,
 * QLinearAdd and the other QLinear* operators, QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear) and the data-movement and
 * pooling operators whose data are 8-bit integers, so that an island the
 * optimizer fused (a chain of QLinearConvs with residual adds, pooling and
 * reshapes between them) is one subgraph of its own.  The provider itself
 * is the CPU provider with this claim (its kernels, threads, streams,
 * host-memory device and int8 cost rows), put together by the registry
 * (providers/registry.c), since providers do not include each other.
 * Invariant: claims nothing the CPU provider would not claim.
 */
#include "providers/int8/int8.h"

#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/kernel.h"

/* Operators that compute on quantized values, by name in any domain. */
static const char *const het_int8_ops[] = {
    "QLinearConv",         "QLinearMatMul",  "MatMulInteger",
    "ConvInteger",         "QuantizeLinear", "DequantizeLinear",
    "DynamicQuantizeLinear",
};

/* Operators that only move, select or pool values: int8 when their data
 * (the first input and every output) are 8-bit integers. */
static const char *const het_int8_movers[] = {
    "Reshape", "Flatten",  "Transpose", "Squeeze", "Unsqueeze", "Slice",
    "Gather",  "Concat",   "Split",     "MaxPool", "Identity",  "Pad",
    "Expand",  "Tile",     "DepthToSpace", "SpaceToDepth",
};

static bool het_int8_in(const char *op, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(op, list[i]) == 0)
      return true;
  return false;
}

static bool het_int8_byte_value(const het_graph *g, int v) {
  het_value_desc d;
  if (v < 0 || het_graph_get_value(g, v, &d) != HET_OK)
    return false;
  return d.dtype == HET_DTYPE_UINT8 || d.dtype == HET_DTYPE_INT8;
}

bool het_int8_claim(const het_graph *g, int node, char *why, size_t cap) {
  het_node_desc n;
  if (het_graph_get_node(g, node, &n) != HET_OK)
    return false;
  if (het_int8_in(n.op_type, het_int8_ops,
                  sizeof het_int8_ops / sizeof *het_int8_ops) ||
      strncmp(n.op_type, "QLinear", 7) == 0) {
    bool gemm = strcmp(n.op_type, "QLinearConv") == 0 ||
                strcmp(n.op_type, "QLinearMatMul") == 0 ||
                strcmp(n.op_type, "MatMulInteger") == 0 ||
                strcmp(n.op_type, "ConvInteger") == 0;
    snprintf(why, cap, "int8 %s (%s)", n.op_type,
             !gemm                    ? "vectorised loops"
             : het_kernels_int8_fast() ? "VNNI: oneDNN int8 or hetrt's kernel"
                                       : "exact reference kernel, no VNNI");
    return true;
  }
  bool data = n.n_inputs > 0 && n.n_outputs > 0 &&
              het_int8_in(n.op_type, het_int8_movers,
                          sizeof het_int8_movers / sizeof *het_int8_movers) &&
              het_int8_byte_value(g, n.inputs[0]);
  for (int o = 0; data && o < n.n_outputs; o++)
    data = n.outputs[o] < 0 || het_int8_byte_value(g, n.outputs[o]);
  if (data) {
    snprintf(why, cap, "%s on 8-bit integers", n.op_type);
    return true;
  }
  het_value_desc in = {.dtype = HET_DTYPE_UNDEFINED};
  if (n.n_inputs > 0 && n.inputs[0] >= 0)
    (void)het_graph_get_value(g, n.inputs[0], &in);
  snprintf(why, cap, "not int8: %s on %s", n.op_type,
           in.dtype == HET_DTYPE_UNDEFINED ? "data of unknown type"
                                           : het_dtype_str(in.dtype));
  return false;
}
