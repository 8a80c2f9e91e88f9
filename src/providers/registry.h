/* registry.h — the providers this build knows by name, and which provider
 * a device profile configures. */
#ifndef HET_PROVIDERS_REGISTRY_H
#define HET_PROVIDERS_REGISTRY_H

#include <stddef.h>

#include "hetrt/provider.h"

/* The vtable of a provider compiled into this build.  Unknown names give
 * ERR_NOT_FOUND, known providers missing from the build ERR_NOT_BUILT;
 * both with a message naming the provider. */
het_status het_registry_find(const char *name,
                             const het_provider_vtable **out);

/* The provider a device profile configures (its top-level `provider:`
 * key) into name (cap bytes).  Errors name the file and line. */
het_status het_profile_provider(const char *path, char *name, size_t cap);

/* Comma-separated names of the built providers (static string). */
const char *het_registry_built_names(void);

#endif
