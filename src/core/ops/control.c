/* control.c — shape inference for the control operator group (filled in by its owner). */
#include "core/infer.h"

const het_op_def het_ops_control[] = {
    {0},
};
