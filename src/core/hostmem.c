/* hostmem.c — het_host_alloc: posix_memalign, plus MADV_HUGEPAGE on blocks
 * of 2 MiB and more.  On a virtual machine a 4 KiB page fault is a trap
 * into the hypervisor: copying ResNet-50's 100 MB of weights into fresh
 * 4 KiB pages took 340-390 ms here, into huge pages 25-35 ms.  The advice
 * is a hint; where huge pages are off or unknown the block is ordinary.
 * Blocks of 64 KiB and more are then populated writable in one call
 * (MADV_POPULATE_WRITE, Linux 5.14+), so their first writes take no page
 * faults either: the weights a session copies and reorders at creation
 * are most of their bytes (ResNet-50's creation 500-890 -> 403-415 ms here).
 * Callers write (nearly) all of a block they ask for, so few pages become
 * resident that would not have: peak RSS of the six bench/perf models
 * moved by at most 2 MB.  A kernel without the advice ignores it.
 */
#include "core/hostmem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *het_host_alloc(size_t nbytes) {
  size_t size = nbytes ? (nbytes + 63) & ~(size_t)63 : 64;
  if (size < nbytes)
    return NULL; /* rounding overflowed */
  bool huge = size >= HET_HOSTMEM_HUGE_BYTES;
  void *p = NULL;
  if (posix_memalign(&p, huge ? HET_HOSTMEM_HUGE_BYTES : 64, size))
    return NULL;
#ifdef MADV_HUGEPAGE
  /* the whole 2 MiB pages inside the block; the tail keeps small pages */
  size_t whole = size & ~(HET_HOSTMEM_HUGE_BYTES - 1);
  if (huge)
    (void)madvise(p, whole, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
  /* the whole 4 KiB pages inside the block (madvise wants page bounds) */
  uintptr_t first = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
  uintptr_t end = ((uintptr_t)p + size) & ~(uintptr_t)4095;
  if (size >= HET_HOSTMEM_POPULATE_BYTES && end > first)
    (void)madvise((void *)first, end - first, MADV_POPULATE_WRITE);
#endif
  return p;
}
