/* blob.h — the CPU provider's compiled-subgraph blob in an ahead-of-time
 * plan (blob.c): its kernel choices and its prepared weights. */
#ifndef HET_CPU_BLOB_H
#define HET_CPU_BLOB_H

#include <stddef.h>

#include "kernels/kernel.h"
#include "kernels/presets.h"

/* A parsed blob; everything borrows the blob's bytes except weights. */
typedef struct het_cpu_blob {
  const char *choices; /* "key<TAB>value" lines (tuning.h), not NUL-ended */
  size_t choices_len;
  int n_weights;
  het_kernel_preset *weights; /* malloc'd (het_cpu_blob_free) */
} het_cpu_blob;

/* The blob of a compiled subgraph of n_nodes: choices (NUL-terminated)
 * and each node's prepared weights (kernels[i]->state_weights on
 * states[i]).  *data is malloc'd (caller frees). */
het_status het_cpu_blob_write(const char *choices, int n_nodes,
                              const het_kernel *const *kernels,
                              void *const *states, void **data, size_t *size);
/* Parses size bytes at data; ERR_INVALID_MODEL naming what is malformed. */
het_status het_cpu_blob_parse(const void *data, size_t size,
                              het_cpu_blob *out);
void het_cpu_blob_free(het_cpu_blob *b);

#endif
