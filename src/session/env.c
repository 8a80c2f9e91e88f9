/* env.c — het_env: the providers a process can use (built in, or
 * registered out of tree) and the devices opened for its sessions.  A
 * device of an ABI 3 provider is opened once per (provider, index,
 * profile) and shared by every session of the env; it is closed when the
 * env is destroyed.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/registry.h"
#include "session/env.h"

het_status het_env_create_impl(het_env **out) {
  het_env *env = calloc(1, sizeof *env);
  if (!env)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate env");
  pthread_mutex_init(&env->lock, NULL);
  *out = env;
  return HET_OK;
}

void het_env_destroy_impl(het_env *env) {
  if (!env)
    return;
  for (int i = 0; i < env->n_devices; i++) {
    het_env_device *d = &env->devices[i];
    if (d->dev.vt->device_close)
      d->dev.vt->device_close(d->dev.state);
    free(d->profile);
  }
  pthread_mutex_destroy(&env->lock);
  free(env);
}

const char *het_env_get_built_providers_impl(const het_env *env) {
  (void)env;
  return het_registry_built_names();
}

het_status het_env_register_provider_impl(het_env *env,
                                     const het_provider_vtable *vt) {
  if (vt->abi_version < 1 || vt->abi_version > HET_PROVIDER_ABI_VERSION)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "provider '%s': ABI %u, this build takes 1 to %u",
                     vt->name, vt->abi_version, HET_PROVIDER_ABI_VERSION);
  bool runs = vt->run || HET_PROVIDER_HAS(vt, 3, run_async);
  if (!vt->create || !vt->get_capability || !vt->compile || !runs)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "provider '%s': create, get_capability, compile and a "
                     "run slot are required",
                     vt->name);
  pthread_mutex_lock(&env->lock);
  het_status st = HET_OK;
  if (env->n_registered == HET_ENV_MAX_REGISTERED)
    st = het_error(HET_ERR_INVALID_ARGUMENT,
                   "het_env_register_provider: %d providers already",
                   HET_ENV_MAX_REGISTERED);
  else
    env->registered[env->n_registered++] = vt;
  pthread_mutex_unlock(&env->lock);
  return st;
}

het_status het_env_find_provider(het_env *env, const char *name,
                                 const het_provider_vtable **out) {
  const het_provider_vtable *vt = NULL;
  pthread_mutex_lock(&env->lock);
  for (int i = env->n_registered - 1; i >= 0 && !vt; i--)
    if (strcmp(env->registered[i]->name, name) == 0)
      vt = env->registered[i];
  pthread_mutex_unlock(&env->lock);
  if (vt) {
    *out = vt;
    return HET_OK;
  }
  return het_registry_find(name, out);
}

static bool het_same_profile(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

het_status het_env_open_device(het_env *env, const het_provider_vtable *vt,
                               int index, const char *profile,
                               het_env_device **out) {
  pthread_mutex_lock(&env->lock);
  het_status st = HET_OK;
  het_env_device *d = NULL;
  for (int i = 0; i < env->n_devices && !d; i++)
    if (env->devices[i].dev.vt == vt && env->devices[i].dev.index == index &&
        het_same_profile(env->devices[i].profile, profile))
      d = &env->devices[i];
  int count = 0;
  if (!d && vt->device_count)
    st = vt->device_count(profile, &count);
  if (st == HET_OK && !d && index >= count)
    st = het_error(HET_ERR_NO_DEVICE, "provider '%s': %s", vt->name,
                   count ? "no such device" : "no device present");
  if (st == HET_OK && !d && env->n_devices == HET_ENV_MAX_DEVICES)
    st = het_error(HET_ERR_INTERNAL, "env: more than %d devices",
                   HET_ENV_MAX_DEVICES);
  if (st == HET_OK && !d) {
    het_env_device *n = &env->devices[env->n_devices];
    memset(n, 0, sizeof *n);
    n->dev.vt = vt;
    n->dev.index = index;
    n->dev.kind = vt->device_kind;
    n->profile = profile ? strdup(profile) : NULL;
    if (profile && !n->profile)
      st = het_error(HET_ERR_OUT_OF_MEMORY, "env: out of memory");
    if (st == HET_OK)
      st = vt->device_open(index, profile, &n->dev.state, &n->dev.info,
                           n->dev.name, sizeof n->dev.name);
    if (st == HET_OK)
      n->dev.plans_only = HET_PROVIDER_HAS(vt, 5, device_plans_only) &&
                          vt->device_plans_only(n->dev.state);
    if (st == HET_OK) {
      d = n;
      env->n_devices++;
    } else {
      free(n->profile);
    }
  }
  if (d)
    d->sessions++;
  pthread_mutex_unlock(&env->lock);
  if (st == HET_OK)
    *out = d;
  return st;
}

void het_env_release_device(het_env *env, het_env_device *d) {
  pthread_mutex_lock(&env->lock);
  d->sessions--;
  pthread_mutex_unlock(&env->lock);
}
