/* provider.c — the emulated accelerator (placeholder until its owner lands
 * the real device model: creating it reports that it is not ready). */
#include "core/status.h"
#include "providers/emu/emu.h"

static het_status het_emu_create(const het_provider_config *config,
                                 void **state) {
  (void)config;
  (void)state;
  return het_error(HET_ERR_NOT_BUILT, "provider 'emu': not implemented yet");
}

const het_provider_vtable het_emu_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "emu",
    .device_kind = HET_DEVICE_EMU,
    .create = het_emu_create,
};
