/* signal.c — CPU kernels for the signal operator group (filled in by its owner). */
#include "providers/cpu/kernel.h"

const het_cpu_kernel het_cpu_kernels_signal[] = {
    {0},
};
