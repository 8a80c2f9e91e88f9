/* registry.c — the providers this build knows by name, built or not.
 * The CUDA provider is a plugin (providers/plugin.c): when this build made
 * libhetrt_cuda.so, asking for "cuda" loads it. */
#include <string.h>

#include "core/status.h"
#include "providers/plugin.h"
#include "providers/registry.h"
#include "providers/cpu/cpu.h"
#include "providers/emu/emu.h"

typedef struct het_registry_entry {
  const char *name;
  const het_provider_vtable *vt; /* NULL when not built in */
  const char *plugin;            /* or the library it lives in */
  const char *why_not;
} het_registry_entry;

static const het_registry_entry het_registry[] = {
    {"cpu", &het_cpu_provider, NULL, NULL},
#ifdef HETRT_CUDA_PLUGIN
    {"cuda", NULL, "libhetrt_cuda.so", NULL},
#else
    {"cuda", NULL, NULL,
     "not built: this build has no CUDA plugin (configure with the CUDA "
     "toolkit and cuDNN present, or -DHETRT_CUDA=ON)"},
#endif
    {"int8", NULL, NULL, "the INT8 provider is not part of this build yet"},
    {"emu", &het_emu_provider, NULL, NULL},
};

het_status het_registry_find(const char *name,
                             const het_provider_vtable **out) {
  for (size_t i = 0; i < sizeof het_registry / sizeof *het_registry; i++) {
    const het_registry_entry *e = &het_registry[i];
    if (strcmp(e->name, name) != 0)
      continue;
    if (e->plugin)
      return het_plugin_find(name, e->plugin, "HETRT_CUDA_PLUGIN", out);
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
  return "cpu,emu,cuda";
#else
  return "cpu,emu";
#endif
}
