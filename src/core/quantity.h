/* quantity.h — the quantities of YAML device profiles (core/devprofile.c
 * and the emu provider's profiles): a number, then an optional unit.
 * Sizes and rates take a decimal prefix (K M G T P, 1000^n) or a binary
 * one (Ki Mi Gi Ti, 1024^n); units and prefixes are case-insensitive.
 */
#ifndef HET_CORE_QUANTITY_H
#define HET_CORE_QUANTITY_H

#include <stdbool.h>

typedef enum het_quantity_kind {
  HET_QUANTITY_BYTES,     /* 512MiB, 16 GB, 8e9 */
  HET_QUANTITY_BYTE_RATE, /* 60GB/s, 8 GBps, 8G, 8e9 */
  HET_QUANTITY_FLOPS,     /* 4T, 4TFLOPS, 4 TFLOP/s, 16TOPS, 2G/s */
  HET_QUANTITY_SECONDS,   /* 20us, 20 µs, 2ms, 1s, 1e-6 */
} het_quantity_kind;

/* *out = text read as a quantity of kind (in bytes, bytes/s, FLOP/s or
 * seconds); false when text is not one (a negative, infinite or NaN
 * number, an unknown unit, or a unit of another kind). */
bool het_quantity_parse(const char *text, het_quantity_kind kind,
                        double *out);

#endif
