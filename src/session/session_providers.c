/* session_providers.c — creating a session's providers: names from the
 * options (default "cpu"), device profiles matched to providers by their
 * `provider:` key, the provider's device opened in the env (ABI 3) or made
 * for the session from the instance (ABI 1-2), "<provider>.<key>" options
 * handed through, and the strict / non-strict handling of providers that
 * cannot be created.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/registry.h"
#include "session/env.h"
#include "session/session.h"

/* The profile configuring provider name, or NULL. */
static het_status het_find_profile(const het_session_options *o,
                                   const char *name, const char **path) {
  *path = NULL;
  for (int i = 0; o && i < o->n_profiles; i++) {
    char prov[64];
    HET_TRY(het_profile_provider(o->profiles[i], prov, sizeof prov));
    if (strcmp(prov, name) == 0) {
      if (*path)
        return het_error(HET_ERR_INVALID_ARGUMENT,
                         "device profiles '%s' and '%s' both configure "
                         "provider '%s'",
                         *path, o->profiles[i], name);
      *path = o->profiles[i];
    }
  }
  return HET_OK;
}

/* The device of an ABI 1-2 instance: the session's own, whose state is
 * the instance's. */
static het_status het_legacy_device(het_session *s, int i) {
  het_ep *ep = &s->providers[i];
  het_device *d = &s->own_dev[i];
  memset(d, 0, sizeof *d);
  d->vt = ep->vt;
  d->state = ep->state;
  d->kind = ep->vt->device_kind;
  snprintf(d->name, sizeof d->name, "%s", ep->vt->name);
  d->info.host_memory = true;
  if (ep->vt->get_device_info)
    HET_TRY(ep->vt->get_device_info(ep->state, &d->info));
  d->info.host_memory = d->info.host_memory || !ep->vt->alloc;
  ep->device = d;
  return HET_OK;
}

static het_status het_create_one(het_session *s, const het_session_options *o,
                                  const char *name) {
  const het_provider_vtable *vt;
  HET_TRY(het_env_find_provider(s->env, name, &vt));
  if (vt->abi_version < 1 || vt->abi_version > HET_PROVIDER_ABI_VERSION)
    return het_error(HET_ERR_INTERNAL,
                     "provider '%s': ABI %u, this build takes 1 to %u", name,
                     vt->abi_version, HET_PROVIDER_ABI_VERSION);
  const char *keys[64], *values[64];
  int n_opts = 0;
  size_t len = strlen(name);
  for (int i = 0; o && i < o->n_kv; i++)
    if (strncmp(o->kv[i].key, name, len) == 0 && o->kv[i].key[len] == '.') {
      if (n_opts == 64)
        return het_error(HET_ERR_INVALID_ARGUMENT,
                         "provider '%s': too many options", name);
      keys[n_opts] = o->kv[i].key + len + 1;
      values[n_opts++] = o->kv[i].value;
    }
  het_provider_config cfg = {.threads = o ? o->threads : 1,
                             .n_options = n_opts,
                             .option_keys = keys,
                             .option_values = values,
                             .deterministic = o && o->deterministic};
  HET_TRY(het_find_profile(o, name, &cfg.profile_path));
  int i = s->n_providers;
  het_ep *ep = &s->providers[i];
  bool abi3 = HET_PROVIDER_HAS(vt, 3, device_open);
  if (abi3) {
    HET_TRY(het_env_open_device(s->env, vt, 0, cfg.profile_path,
                                &s->env_dev[i]));
    cfg.device = &s->env_dev[i]->dev;
  }
  het_status st = vt->create(&cfg, &ep->state);
  if (st != HET_OK) {
    if (abi3)
      het_env_release_device(s->env, s->env_dev[i]);
    s->env_dev[i] = NULL;
    return st;
  }
  ep->vt = vt;
  ep->index = i;
  ep->device = abi3 ? cfg.device : NULL;
  s->n_providers = i + 1;
  if (!abi3)
    HET_TRY(het_legacy_device(s, i));
  s->host_memory[i] = het_device_is_host(ep->device);
  return HET_OK;
}

void het_session_remove_providers(het_session *s) {
  for (int i = 0; i < s->n_providers; i++) {
    if (s->providers[i].vt->destroy)
      s->providers[i].vt->destroy(s->providers[i].state);
    if (s->env_dev[i])
      het_env_release_device(s->env, s->env_dev[i]);
  }
  s->n_providers = 0;
}

/* Options that name a provider not in the list are mistakes. */
static het_status het_check_option_targets(const het_session_options *o,
                                           const char *const *names, int n) {
  for (int i = 0; o && i < o->n_kv; i++) {
    const char *dot = strchr(o->kv[i].key, '.');
    bool found = false;
    for (int k = 0; k < n && !found; k++)
      found = strlen(names[k]) == (size_t)(dot - o->kv[i].key) &&
              strncmp(names[k], o->kv[i].key, (size_t)(dot - o->kv[i].key)) == 0;
    if (!found)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option '%s' is for a provider not in the provider "
                       "list",
                       o->kv[i].key);
  }
  return HET_OK;
}

het_status het_session_add_providers(het_session *s,
                                     const het_session_options *o) {
  static const char *const dflt[] = {"cpu"};
  bool given = o && o->n_providers;
  const char *const *names = given ? (const char *const *)o->providers : dflt;
  int n = given ? o->n_providers : 1;
  HET_TRY(het_check_option_targets(o, names, n));
  for (int i = 0; i < n; i++) {
    het_status st = het_create_one(s, o, names[i]);
    if (st == HET_OK)
      continue;
    bool skippable = st == HET_ERR_NOT_BUILT || st == HET_ERR_NO_DEVICE ||
                     st == HET_ERR_NOT_FOUND;
    if (!(o && o->non_strict) || !skippable)
      return het_error_wrap(st, "provider '%s'", names[i]);
    HET_TRY(het_session_warn(s, "provider '%s' skipped: %s", names[i],
                             het_last_error()));
  }
  if (s->n_providers == 0)
    return het_error(HET_ERR_NO_DEVICE, "no provider could be created (%s)",
                     s->n_warnings ? s->warnings[0] : "empty list");
  return HET_OK;
}
