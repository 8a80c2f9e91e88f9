/* tuning.h — kernel choices made by timing, remembered across processes:
 * kernel-choices.txt in the cache folder (core/cache.h), one "key<TAB>value"
 * line per choice, so only the first session on a machine pays for the
 * timing.  Keys carry the CPU (its model name and logical CPU count) and
 * what the caller adds (library version, shapes, fusions, layouts).
 * Unreadable, foreign or malformed lines are ignored; the last line for a
 * key wins.  HETRT_TUNING=off neither reads nor writes the file. */
#ifndef HET_KERNELS_TUNING_H
#define HET_KERNELS_TUNING_H

#include <stdbool.h>
#include <stddef.h>

#define HET_TUNING_KEY_CAP 400
#define HET_TUNING_VALUE_CAP 160

/* The remembered value for key into value (cap bytes); false if none. */
bool het_tuning_get(const char *key, char *value, size_t cap);
/* Remembers value for key, in this process and in the file (best
 * effort: a cache folder that cannot be written keeps it in memory). */
void het_tuning_put(const char *key, const char *value);
/* Reads the file again, dropping what this process holds (for tests and
 * tools that change the file or the environment). */
void het_tuning_reload(void);

#endif
