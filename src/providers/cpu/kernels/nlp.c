/* nlp.c — the CPU kernel table of the hetrt-domain transformer ops the
 * optimizer's fusions create. */
#include "providers/cpu/kernel.h"

const het_cpu_kernel het_cpu_kernels_nlp[] = {
    {0},
};
