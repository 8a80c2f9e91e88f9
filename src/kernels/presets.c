/* presets.c — the per-thread table of presets.h: the prepared weights of
 * the compile this thread runs, and the node it is at.
 */
#include "kernels/presets.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static _Thread_local const het_kernel_preset *het_presets;
static _Thread_local int het_n_presets;
static _Thread_local int het_preset_node = -1;
static long het_presets_used; /* atomic */

void het_kernel_presets_begin(const het_kernel_preset *entries, int n) {
  het_presets = entries;
  het_n_presets = entries ? n : 0;
  het_preset_node = -1;
}

void het_kernel_presets_end(void) {
  het_presets = NULL;
  het_n_presets = 0;
  het_preset_node = -1;
}

void het_kernel_presets_node(int node) { het_preset_node = node; }

const het_kernel_preset *het_kernel_presets_find(int *n) {
  /* entries are grouped by node, in node order */
  int first = -1, count = 0;
  for (int i = 0; i < het_n_presets; i++)
    if (het_presets[i].node == het_preset_node) {
      if (first < 0)
        first = i;
      count++;
    }
  *n = count;
  return count ? &het_presets[first] : NULL;
}

const void *het_kernel_presets_match(const void *want, size_t layout_size,
                                     size_t size,
                                     bool (*same)(const void *saved,
                                                  const void *want)) {
  int n = 0;
  const het_kernel_preset *p = het_kernel_presets_find(&n);
  for (int i = 0; i < n; i++)
    if (p[i].layout_size == layout_size && p[i].size == size &&
        (uintptr_t)p[i].data % 64 == 0 &&
        (same ? same(p[i].layout, want)
              : memcmp(p[i].layout, want, layout_size) == 0))
      return p[i].data;
  return NULL;
}

void het_kernel_presets_take(void) {
  __atomic_add_fetch(&het_presets_used, 1, __ATOMIC_RELAXED);
}

long het_kernel_presets_taken(void) {
  return __atomic_load_n(&het_presets_used, __ATOMIC_RELAXED);
}
