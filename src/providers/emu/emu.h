/* emu.h — the emulated accelerator's vtable, for the provider registry. */
#ifndef HET_EMU_EMU_H
#define HET_EMU_EMU_H

#include "hetrt/provider.h"

extern const het_provider_vtable het_emu_provider;

#endif
