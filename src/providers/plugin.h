/* plugin.h — loading providers that live in shared libraries of their own
 * (include/hetrt/provider.h, "provider plugins"). */
#ifndef HET_PROVIDERS_PLUGIN_H
#define HET_PROVIDERS_PLUGIN_H

#include "hetrt/provider.h"

/* The vtable of plugin `name` from library `file` (e.g. "cuda",
 * "libhetrt_cuda.so"); env_var, when set in the environment, names the one
 * file to load instead of searching.  ERR_NOT_BUILT with a message saying
 * where it looked, or why the plugin refused to load (versions of its
 * libraries), when there is none that works. */
het_status het_plugin_find(const char *name, const char *file,
                           const char *env_var,
                           const het_provider_vtable **out);

#endif
