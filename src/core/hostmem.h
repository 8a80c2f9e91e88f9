/* hostmem.h — host memory for tensors, weights and kernel scratch: one
 * allocator whose blocks are 64-byte aligned and freed with free(), and
 * whose large blocks are backed by transparent huge pages where the kernel
 * offers them (one page fault and one TLB entry per 2 MiB, not 512), and
 * whose blocks of 64 KiB and more are handed out populated.
 */
#ifndef HET_CORE_HOSTMEM_H
#define HET_CORE_HOSTMEM_H

#include <stddef.h>

/* Blocks of this size and more start on a 2 MiB boundary and are advised
 * as huge pages (MADV_HUGEPAGE); smaller ones are plain 64-byte aligned. */
#define HET_HOSTMEM_HUGE_BYTES ((size_t)2 << 20)

/* Blocks of this size and more come back with their pages already
 * present (no page fault on first write). */
#define HET_HOSTMEM_POPULATE_BYTES ((size_t)64 << 10)

/* nbytes (0 counts as 64) of uninitialised host memory, 64-byte aligned,
 * rounded up to a multiple of 64; NULL when out of memory.  Caller owns
 * it and frees it with free().  Thread-safe. */
void *het_host_alloc(size_t nbytes);

#endif
