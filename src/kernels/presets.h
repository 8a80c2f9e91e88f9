/* presets.h — prepared weights a compile reuses from an ahead-of-time plan
 * (docs/plan-format.md), so that loading a plan reorders nothing: a
 * kernel that prepares a weight into a library's own layout reports it
 * (het_kernel.state_weights) when the plan is saved, and looks it up
 * here when the plan is loaded.  Per thread, like the kernel choices'
 * replay (tuning.h): a compile prepares its kernels on the thread that
 * calls it.  An entry is matched by the node's position in the compiled
 * subgraph (het_kernel_presets_node) and by the layout descriptor's
 * bytes, which the kernel compares its own way.
 */
#ifndef HET_KERNELS_PRESETS_H
#define HET_KERNELS_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

/* One prepared weight: node position, the library's layout descriptor
 * (opaque bytes), the weight's bytes (borrowed, 64-byte aligned, valid
 * as long as what the kernel builds with it). */
typedef struct het_kernel_preset {
  int node;
  const void *layout;
  size_t layout_size;
  const void *data;
  size_t size;
} het_kernel_preset;

/* Between _begin and _end this thread's compile may take the n entries
 * (borrowed until _end; the data they point to longer).  No nesting. */
void het_kernel_presets_begin(const het_kernel_preset *entries, int n);
void het_kernel_presets_end(void);
/* The node whose prepare runs next (its position in the subgraph). */
void het_kernel_presets_node(int node);
/* The entries of the current node, for the kernel to match against its
 * layout; *n = 0 when none (or outside a replay). */
const het_kernel_preset *het_kernel_presets_find(int *n);
/* The current node's entry holding a weight of size bytes, 64-byte
 * aligned, whose layout descriptor (layout_size bytes) is want: compared
 * by same(saved, want), or byte for byte when same is NULL.  NULL when
 * none; taking it is het_kernel_presets_take's. */
const void *het_kernel_presets_match(const void *want, size_t layout_size,
                                     size_t size,
                                     bool (*same)(const void *saved,
                                                  const void *want));
/* A kernel took one of them instead of preparing its own (counted for the
 * process; tests read it with het_kernel_presets_taken). */
void het_kernel_presets_take(void);
long het_kernel_presets_taken(void);

#endif
