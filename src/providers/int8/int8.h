/* int8.h — the INT8 provider's claim, for the registry, which makes the
 * provider from the CPU provider's slots with it (providers/registry.c). */
#ifndef HET_INT8_INT8_H
#define HET_INT8_INT8_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/provider.h"

/* Whether the INT8 provider claims node of graph (one the CPU kernels
 * support): a quantized operator, or data movement or pooling on 8-bit
 * integers; writes why, claimed or not, into why[cap] ("int8 QLinearConv
 * (VNNI: oneDNN int8 or hetrt's kernel)", "not int8: Conv on float32").  Thread-safe. */
bool het_int8_claim(const het_graph *graph, int node, char *why, size_t cap);

#endif
