/* signal.c — shape inference for the signal operator group (filled in by its owner). */
#include "core/infer.h"

const het_op_def het_ops_signal[] = {
    {0},
};
