/* cache.h — hetrt's cache folder, for what is measured once per machine
 * (the CPU profile, timed kernel choices): $HETRT_CACHE_DIR, else
 * $XDG_CACHE_HOME/hetrt, else $HOME/.cache/hetrt. */
#ifndef HET_CORE_CACHE_H
#define HET_CORE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* The path of file in the cache folder into path (cap bytes), creating
 * the folders when make_dirs; false when there is no folder to use or the
 * path does not fit. */
bool het_cache_path(const char *file, char *path, size_t cap, bool make_dirs);

#endif
