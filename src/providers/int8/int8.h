/* int8.h — the INT8 provider's vtable, for the provider registry. */
#ifndef HET_INT8_INT8_H
#define HET_INT8_INT8_H

#include "hetrt/provider.h"

/* The INT8 provider (provider.c): the same pointer on every call. */
const het_provider_vtable *het_int8_provider(void);

#endif
