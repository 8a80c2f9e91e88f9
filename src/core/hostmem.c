/* hostmem.c — het_host_alloc: posix_memalign, plus MADV_HUGEPAGE on blocks
 * of 2 MiB and more.  On a virtual machine a 4 KiB page fault is a trap
 * into the hypervisor: copying ResNet-50's 100 MB of weights into fresh
 * 4 KiB pages took 340-390 ms here, into huge pages 25-35 ms.  The advice
 * is a hint; where huge pages are off or unknown the block is ordinary.
 */
#include "core/hostmem.h"

#include <stdbool.h>
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
  return p;
}
