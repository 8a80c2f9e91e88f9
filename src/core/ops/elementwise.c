/* elementwise.c — shape inference for the elementwise operator group (filled in by its owner). */
#include "core/infer.h"

const het_op_def het_ops_elementwise[] = {
    {0},
};
