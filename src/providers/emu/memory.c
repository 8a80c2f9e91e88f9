/* memory.c — the emu's separate memory space.  Device addresses live in a
 * private address range: the tag 0xE4D0 in bits 63..48 (a non-canonical
 * address on x86-64 and AArch64, so dereferencing one by accident faults)
 * and below it a 48-bit address.  Each open memory space owns one of
 * 256 windows of 2^40 bytes (bits 47..40), so an address of one emu device
 * is never an address of another open one; inside its window a bump
 * pointer hands out addresses and never goes back, so an address of a
 * freed block stays dead.  As on a real
 * device, an address inside a block (base + k) is an address too; only
 * het_emu_memory_resolve turns a range into host storage.
 * Invariants: blocks[] is sorted by base and the ranges do not overlap;
 * used = sum of charged sizes of live blocks <= capacity (when > 0).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/emu/emu_internal.h"

#define HET_EMU_TAG 0xE4D0u
#define HET_EMU_GRAIN 256 /* allocation granularity charged to capacity */
#define HET_EMU_SPAN ((uint64_t)1 << 48)
#define HET_EMU_WINDOW_BITS 40
#define HET_EMU_WINDOWS 256 /* HET_EMU_SPAN >> HET_EMU_WINDOW_BITS */

typedef struct het_emu_block {
  uint64_t base;   /* device address without the tag */
  size_t nbytes;   /* requested size */
  size_t charged;  /* nbytes rounded up to the grain */
  void *data;
} het_emu_block;

struct het_emu_memory {
  pthread_mutex_t lock;
  char device[HET_EMU_NAME_CAP];
  size_t capacity, used, peak;
  het_emu_block *blocks;
  size_t n_blocks, cap_blocks;
  unsigned window; /* index of this space's address window */
  uint64_t next;   /* next free address (bump) */
  uint64_t end;    /* first address past the window */
};

/* Which address windows open memory spaces hold. */
static pthread_mutex_t het_emu_windows_lock = PTHREAD_MUTEX_INITIALIZER;
static bool het_emu_windows[HET_EMU_WINDOWS];

_Static_assert(sizeof(uintptr_t) >= 8, "emu addresses need 64-bit pointers");

bool het_emu_handle_is_tagged(const void *addr) {
  return ((uint64_t)(uintptr_t)addr >> 48) == HET_EMU_TAG;
}

het_status het_emu_memory_create(const char *device, size_t capacity,
                                 het_emu_memory **out) {
  het_emu_memory *m = calloc(1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  if (pthread_mutex_init(&m->lock, NULL) != 0) {
    free(m);
    return het_error(HET_ERR_INTERNAL, "emu: cannot create a mutex");
  }
  snprintf(m->device, sizeof m->device, "%s", device);
  m->capacity = capacity;
  pthread_mutex_lock(&het_emu_windows_lock);
  unsigned w = 0;
  while (w < HET_EMU_WINDOWS && het_emu_windows[w])
    w++;
  if (w < HET_EMU_WINDOWS)
    het_emu_windows[w] = true;
  pthread_mutex_unlock(&het_emu_windows_lock);
  if (w == HET_EMU_WINDOWS) {
    pthread_mutex_destroy(&m->lock);
    free(m);
    return het_error(HET_ERR_CAPACITY,
                     "emu device '%s': %d emu devices are open already, the "
                     "most one process can hold",
                     device, HET_EMU_WINDOWS);
  }
  m->window = w;
  uint64_t base = (uint64_t)w << HET_EMU_WINDOW_BITS;
  /* The first MiB stays unused: NULL never resolves. */
  m->next = base + ((uint64_t)1 << 20);
  m->end = base + ((uint64_t)1 << HET_EMU_WINDOW_BITS);
  *out = m;
  return HET_OK;
}

void het_emu_memory_destroy(het_emu_memory *m) {
  if (!m)
    return;
  for (size_t i = 0; i < m->n_blocks; i++)
    free(m->blocks[i].data);
  free(m->blocks);
  pthread_mutex_destroy(&m->lock);
  pthread_mutex_lock(&het_emu_windows_lock);
  het_emu_windows[m->window] = false;
  pthread_mutex_unlock(&het_emu_windows_lock);
  free(m);
}

/* Index of the block containing address a, or of the first block above
 * it (lock held). */
static size_t het_emu_lower(const het_emu_memory *m, uint64_t a) {
  size_t lo = 0, hi = m->n_blocks;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const het_emu_block *b = &m->blocks[mid];
    if (b->base + b->charged <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

het_status het_emu_memory_alloc(het_emu_memory *m, size_t nbytes,
                                void **addr) {
  if (nbytes > ((size_t)1 << 40))
    return het_error(HET_ERR_CAPACITY,
                     "emu device '%s': cannot allocate %zu bytes", m->device,
                     nbytes);
  size_t charged = (nbytes + HET_EMU_GRAIN - 1) / HET_EMU_GRAIN * HET_EMU_GRAIN;
  if (charged == 0)
    charged = HET_EMU_GRAIN;
  pthread_mutex_lock(&m->lock);
  het_status st = HET_OK;
  if (m->capacity && charged > m->capacity - m->used)
    st = het_error(HET_ERR_CAPACITY,
                   "emu device '%s': cannot allocate %zu bytes: %zu of %zu "
                   "bytes in use",
                   m->device, nbytes, m->used, m->capacity);
  else if (charged > m->end - m->next)
    st = het_error(HET_ERR_CAPACITY,
                   "emu device '%s': its address space is used up",
                   m->device);
  if (st == HET_OK && m->n_blocks == m->cap_blocks) {
    size_t cap = m->cap_blocks ? 2 * m->cap_blocks : 64;
    het_emu_block *b = realloc(m->blocks, cap * sizeof *b);
    if (b) {
      m->blocks = b;
      m->cap_blocks = cap;
    } else {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
    }
  }
  void *data = st == HET_OK ? aligned_alloc(64, charged) : NULL;
  if (st == HET_OK && !data)
    st = het_error(HET_ERR_OUT_OF_MEMORY,
                   "emu device '%s': host memory for %zu bytes exhausted",
                   m->device, nbytes);
  if (st == HET_OK) {
    /* Addresses grow, so the new block goes last. */
    m->blocks[m->n_blocks++] =
        (het_emu_block){m->next, nbytes, charged, data};
    *addr = (void *)(uintptr_t)(((uint64_t)HET_EMU_TAG << 48) | m->next);
    m->next += (charged + 4095) & ~(uint64_t)4095;
    m->used += charged;
    if (m->used > m->peak)
      m->peak = m->used;
  }
  pthread_mutex_unlock(&m->lock);
  return st;
}

void het_emu_memory_free(het_emu_memory *m, const void *addr) {
  if (!het_emu_handle_is_tagged(addr))
    return;
  uint64_t a = (uint64_t)(uintptr_t)addr & (HET_EMU_SPAN - 1);
  pthread_mutex_lock(&m->lock);
  size_t i = het_emu_lower(m, a);
  if (i < m->n_blocks && m->blocks[i].base == a) {
    free(m->blocks[i].data);
    m->used -= m->blocks[i].charged;
    memmove(&m->blocks[i], &m->blocks[i + 1],
            (m->n_blocks - i - 1) * sizeof *m->blocks);
    m->n_blocks--;
  }
  pthread_mutex_unlock(&m->lock);
}

het_status het_emu_memory_resolve(het_emu_memory *m, const void *addr,
                                  size_t nbytes, void **ptr) {
  bool tagged = het_emu_handle_is_tagged(addr);
  uint64_t a = (uint64_t)(uintptr_t)addr & (HET_EMU_SPAN - 1);
  void *data = NULL;
  size_t left = 0;
  pthread_mutex_lock(&m->lock);
  size_t i = tagged ? het_emu_lower(m, a) : m->n_blocks;
  if (i < m->n_blocks && m->blocks[i].base <= a &&
      a < m->blocks[i].base + m->blocks[i].nbytes + (m->blocks[i].nbytes == 0)) {
    data = (char *)m->blocks[i].data + (a - m->blocks[i].base);
    left = m->blocks[i].nbytes - (size_t)(a - m->blocks[i].base);
  }
  pthread_mutex_unlock(&m->lock);
  if (!data)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu device '%s': %p is not an address of a live block "
                     "of this device%s",
                     m->device, addr, tagged ? "" : " (a host pointer?)");
  if (nbytes > left)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu device '%s': access of %zu bytes at %p runs past "
                     "its block (%zu bytes left)",
                     m->device, nbytes, addr, left);
  *ptr = data;
  return HET_OK;
}

void het_emu_memory_usage(het_emu_memory *m, size_t *used, size_t *peak) {
  pthread_mutex_lock(&m->lock);
  if (used)
    *used = m->used;
  if (peak)
    *peak = m->peak;
  pthread_mutex_unlock(&m->lock);
}
