/* env.h — the env's providers and devices (env.c), for the session layer. */
#ifndef HET_SESSION_ENV_H
#define HET_SESSION_ENV_H

#include "session/session.h"

/* The provider named name: one registered in env (the latest), else a
 * built-in one.  Errors as het_registry_find. */
het_status het_env_find_provider(het_env *env, const char *name,
                                 const het_provider_vtable **out);

/* The env's device (vt, index, profile), opened on first use (ABI 3
 * providers).  ERR_NO_DEVICE when the provider has no such device.
 * Thread-safe. */
het_status het_env_open_device(het_env *env, const het_provider_vtable *vt,
                               int index, const char *profile,
                               het_env_device **out);
/* A session stops using d (it stays open until the env is destroyed). */
void het_env_release_device(het_env *env, het_env_device *d);

#endif
