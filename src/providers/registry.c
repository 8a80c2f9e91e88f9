/* registry.c — the providers this build knows by name, built or not.
 * The CUDA provider is a plugin (providers/plugin.c): when this build made
 * libhetrt_cuda.so, asking for "cuda" loads it.  The INT8 provider is
 * the CPU provider's slots with its own name and claim (providers/int8),
 * put together here on first use: providers do not include each other. */
#include <pthread.h>
#include <string.h>

#include "core/status.h"
#include "providers/plugin.h"
#include "providers/registry.h"
#include "providers/cpu/cpu.h"
#include "providers/emu/emu.h"
#include "providers/int8/int8.h"

static het_status het_int8_create(const het_provider_config *config,
                                  void **state) {
  return het_cpu_create_as(config, "int8", het_int8_claim, state);
}

/* The CPU provider's slots with the INT8 provider's name and create:
 * copied once, so a slot the CPU provider gains is the INT8 provider's
 * too. */
static het_provider_vtable het_int8_vt;
static pthread_once_t het_int8_once = PTHREAD_ONCE_INIT;

static void het_int8_init(void) {
  het_int8_vt = het_cpu_provider;
  het_int8_vt.name = "int8";
  het_int8_vt.create = het_int8_create;
}

static const het_provider_vtable *het_int8_provider(void) {
  pthread_once(&het_int8_once, het_int8_init);
  return &het_int8_vt;
}

typedef struct het_registry_entry {
  const char *name;
  const het_provider_vtable *vt; /* NULL when not built in */
  const het_provider_vtable *(*get)(void); /* or made by this */
  const char *plugin;            /* or the library it lives in */
  const char *why_not;
} het_registry_entry;

static const het_registry_entry het_registry[] = {
    {"cpu", &het_cpu_provider, NULL, NULL, NULL},
#ifdef HETRT_CUDA_PLUGIN
    {"cuda", NULL, NULL, "libhetrt_cuda.so", NULL},
#else
    {"cuda", NULL, NULL, NULL,
     "not built: this build has no CUDA plugin (configure with the CUDA "
     "toolkit and cuDNN present, or -DHETRT_CUDA=ON)"},
#endif
    {"int8", NULL, het_int8_provider, NULL, NULL},
    {"emu", &het_emu_provider, NULL, NULL, NULL},
};

het_status het_registry_find(const char *name,
                             const het_provider_vtable **out) {
  for (size_t i = 0; i < sizeof het_registry / sizeof *het_registry; i++) {
    const het_registry_entry *e = &het_registry[i];
    if (strcmp(e->name, name) != 0)
      continue;
    if (e->plugin)
      return het_plugin_find(name, e->plugin, "HETRT_CUDA_PLUGIN", out);
    if (e->get) {
      *out = e->get();
      return HET_OK;
    }
    if (!e->vt)
      return het_error(HET_ERR_NOT_BUILT, "provider '%s': %s", name,
                       e->why_not);
    *out = e->vt;
    return HET_OK;
  }
  return het_error(HET_ERR_NOT_FOUND,
                   "unknown provider '%s' (known: cpu, cuda, int8, emu)", name);
}

const char *het_registry_built_names(void) {
#ifdef HETRT_CUDA_PLUGIN
  return "cpu,int8,emu,cuda";
#else
  return "cpu,int8,emu";
#endif
}
