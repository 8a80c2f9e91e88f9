/* cache.c — the cache folder of cache.h. */
#include "core/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool het_cache_path(const char *file, char *path, size_t cap,
                    bool make_dirs) {
  const char *dir = getenv("HETRT_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char base[3072];
  int n;
  if (dir && *dir)
    n = snprintf(base, sizeof base, "%s", dir);
  else if (xdg && *xdg)
    n = snprintf(base, sizeof base, "%s/hetrt", xdg);
  else if (home && *home)
    n = snprintf(base, sizeof base, "%s/.cache/hetrt", home);
  else
    return false;
  if (n < 0 || (size_t)n >= sizeof base)
    return false;
  if (make_dirs) {
    char *slash = base;
    while ((slash = strchr(slash + 1, '/'))) {
      *slash = '\0';
      mkdir(base, 0755);
      *slash = '/';
    }
    mkdir(base, 0755);
  }
  n = snprintf(path, cap, "%s/%s", base, file);
  return n >= 0 && (size_t)n < cap;
}
