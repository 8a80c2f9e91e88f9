/* linalg.c — shape inference for the linalg operator group (filled in by its owner). */
#include "core/infer.h"

const het_op_def het_ops_linalg[] = {
    {0},
};
