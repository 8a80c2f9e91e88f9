/* plugin.c — providers that live in shared libraries of their own (the
 * CUDA provider), loaded on first use.  Where the library is looked for,
 * in order: the file named by the environment variable the caller gives
 * (HETRT_CUDA_PLUGIN; then nowhere else), the folder of the object holding
 * this code (libhetrt.so, or the executable that links hetrt statically),
 * and the dynamic loader's own search (LD_LIBRARY_PATH, the system).
 * A plugin is loaded once per process and never unloaded: its vtable must
 * outlive every env.
 */
#include "providers/plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static void het_plugin_set_error(const char *message) {
  het_error(HET_OK, "%s", message);
}

static const het_plugin_host het_plugin_host_table = {
    .version = HET_PLUGIN_HOST_VERSION,
    .provider_abi = HET_PROVIDER_ABI_VERSION,
    .set_error = het_plugin_set_error,
};

/* The folder of the object that holds this function (with a '/'), or "". */
static void het_plugin_own_dir(char *dir, size_t cap) {
  Dl_info info;
  dir[0] = '\0';
  if (!dladdr((void *)het_plugin_own_dir, &info) || !info.dli_fname)
    return;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash && (size_t)(slash - info.dli_fname) + 2 <= cap)
    snprintf(dir, cap, "%.*s/", (int)(slash - info.dli_fname),
             info.dli_fname);
}

/* Appends "; what" to tried (cap bytes). */
static void het_plugin_note(char *tried, size_t cap, const char *what) {
  size_t n = strlen(tried);
  if (n < cap)
    snprintf(tried + n, cap - n, "%s%s", n ? "; " : "", what);
}

static het_status het_plugin_open(const char *name, const char *file,
                                  const char *env_var,
                                  const het_provider_vtable **out) {
  char tried[1536] = "", path[1024];
  const char *forced = env_var ? getenv(env_var) : NULL;
  char dir[768];
  het_plugin_own_dir(dir, sizeof dir);
  const char *candidates[3];
  int n = 0;
  if (forced && *forced) {
    candidates[n++] = forced;
  } else {
    if (dir[0]) {
      snprintf(path, sizeof path, "%s%s", dir, file);
      candidates[n++] = path;
    }
    candidates[n++] = file; /* the dynamic loader's search */
  }
  for (int i = 0; i < n; i++) {
    void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror(); /* names the file */
      het_plugin_note(tried, sizeof tried, e ? e : candidates[i]);
      continue;
    }
    het_plugin_init_fn init;
    *(void **)&init = dlsym(lib, HET_PLUGIN_INIT_SYMBOL);
    if (!init) {
      char what[1100];
      snprintf(what, sizeof what, "%s: no %s", candidates[i],
               HET_PLUGIN_INIT_SYMBOL);
      het_plugin_note(tried, sizeof tried, what);
      dlclose(lib);
      continue;
    }
    char why[512] = "";
    const het_provider_vtable *vt = NULL;
    het_status st = init(&het_plugin_host_table, &vt, why, sizeof why);
    if (st == HET_OK && vt && strcmp(vt->name, name) == 0) {
      *out = vt; /* lib stays loaded for the process */
      return HET_OK;
    }
    /* The plugin was found but cannot run here: say why, and stop. */
    return het_error(HET_ERR_NOT_BUILT, "plugin %s: %s", candidates[i],
                     st == HET_OK ? "it gave another provider" : why);
  }
  if (forced && *forced)
    return het_error(HET_ERR_NOT_BUILT,
                     "its plugin cannot be loaded from %s=%s: %s", env_var,
                     forced, tried);
  return het_error(HET_ERR_NOT_BUILT,
                   "its plugin %s was not found (tried %s)", file, tried);
}

/* One loaded vtable per plugin name. */
typedef struct het_plugin_slot {
  char name[32]; /* a copy: the caller's string may not last */
  const het_provider_vtable *vt;
} het_plugin_slot;

static pthread_mutex_t het_plugin_lock = PTHREAD_MUTEX_INITIALIZER;
static het_plugin_slot het_plugin_loaded[4];

het_status het_plugin_find(const char *name, const char *file,
                           const char *env_var,
                           const het_provider_vtable **out) {
  pthread_mutex_lock(&het_plugin_lock);
  het_status st = HET_OK;
  size_t i = 0, cap = sizeof het_plugin_loaded / sizeof *het_plugin_loaded;
  while (i < cap && het_plugin_loaded[i].vt &&
         strcmp(het_plugin_loaded[i].name, name) != 0)
    i++;
  if (i < cap && het_plugin_loaded[i].vt) {
    *out = het_plugin_loaded[i].vt;
  } else {
    /* A failed load is tried again next time: the file may appear. */
    st = het_plugin_open(name, file, env_var, out);
    if (st == HET_OK && i < cap) {
      snprintf(het_plugin_loaded[i].name, sizeof het_plugin_loaded[i].name,
               "%s", name);
      het_plugin_loaded[i].vt = *out;
    }
  }
  pthread_mutex_unlock(&het_plugin_lock);
  return st;
}
