/* cpu.h — the CPU provider's vtable, for the provider registry, and its
 * instance with a narrower claim, for providers that run on the same
 * kernels, threads, streams and device (the INT8 provider, which the
 * registry makes from these slots and providers/int8's claim). */
#ifndef HET_CPU_CPU_H
#define HET_CPU_CPU_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/provider.h"

extern const het_provider_vtable het_cpu_provider;

/* Whether an instance made by het_cpu_create_as claims node of graph
 * (one the CPU kernels support); writes why (claimed or not) into
 * why[cap]. */
typedef bool (*het_cpu_claim_fn)(const het_graph *graph, int node, char *why,
                                 size_t cap);

/* The CPU provider's create slot for a provider named name (its options
 * are "<name>.<key>" and its messages say name) that claims only the
 * nodes claim accepts.  config->device, when set, must have been opened by
 * het_cpu_provider's device_open slot.  Caller owns *state (destroyed by
 * het_cpu_provider's destroy slot). */
het_status het_cpu_create_as(const het_provider_config *config,
                             const char *name, het_cpu_claim_fn claim,
                             void **state);

#endif
