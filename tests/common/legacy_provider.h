/* legacy_provider.h — an out-of-tree provider written against ABI 2, for
 * the tests of the core's defaults for old providers (test_legacy.c): a
 * device with its own memory (opaque, non-canonical handles to host
 * blocks), the synchronous run slot over het_run_ctx, synchronous copies
 * and the four staging slots (copy_submit runs on a thread of its own).
 * It claims float32 elementwise ops, Softmax and MatMul and runs them with
 * the kernel library.  Options: fail_copy=N (the Nth copy, synchronous or
 * submitted, fails with ERR_IO), copy_delay_ms=N (each submitted copy
 * takes at least N ms).
 */
#ifndef HET_TESTS_LEGACY_PROVIDER_H
#define HET_TESTS_LEGACY_PROVIDER_H

#include <stdatomic.h>

#include "hetrt/provider.h"

/* ABI 2, registered as "legacy". */
extern const het_provider_vtable legacy_provider_v2;
/* The same slots in a table that says ABI 1, registered as "legacy1": the
 * core must not see its staging slots. */
extern const het_provider_vtable legacy_provider_v1;

/* What the provider did since the process started (tests fork per case). */
typedef struct legacy_stats {
  atomic_long live_blocks; /* device blocks allocated and not freed */
  atomic_long live_host;   /* staging buffers not freed */
  atomic_long nodes_run;   /* nodes run by the run slot */
  atomic_long sync_copies; /* copy_from_host + copy_to_host */
  atomic_long submits;     /* copy_submit calls that queued a copy */
} legacy_stats;
extern legacy_stats legacy_counts;

/* Whether addr is a handle of this provider (tagged). */
int legacy_is_handle(const void *addr);

#endif
