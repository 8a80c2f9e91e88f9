/* cpu.h — the CPU provider's vtable, for the provider registry. */
#ifndef HET_CPU_CPU_H
#define HET_CPU_CPU_H

#include "hetrt/provider.h"

extern const het_provider_vtable het_cpu_provider;

#endif
