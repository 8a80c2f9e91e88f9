/* registry.c — the providers this build knows by name, built or not. */
#include <string.h>

#include "core/status.h"
#include "providers/registry.h"
#include "providers/cpu/cpu.h"
#include "providers/emu/emu.h"

typedef struct het_registry_entry {
  const char *name;
  const het_provider_vtable *vt; /* NULL when not built */
  const char *why_not;
} het_registry_entry;

static const het_registry_entry het_registry[] = {
    {"cpu", &het_cpu_provider, NULL},
    {"cuda", NULL, "the CUDA provider is not part of this build yet"},
    {"int8", NULL, "the INT8 provider is not part of this build yet"},
    {"emu", &het_emu_provider, NULL},
};

het_status het_registry_find(const char *name,
                             const het_provider_vtable **out) {
  for (size_t i = 0; i < sizeof het_registry / sizeof *het_registry; i++) {
    const het_registry_entry *e = &het_registry[i];
    if (strcmp(e->name, name) != 0)
      continue;
    if (!e->vt)
      return het_error(HET_ERR_NOT_BUILT, "provider '%s': %s", name,
                       e->why_not);
    *out = e->vt;
    return HET_OK;
  }
  return het_error(HET_ERR_NOT_FOUND,
                   "unknown provider '%s' (known: cpu, cuda, int8, emu)", name);
}

const char *het_registry_built_names(void) { return "cpu,emu"; }
