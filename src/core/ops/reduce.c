/* reduce.c — shape inference for the reduce operator group (filled in by its owner). */
#include "core/infer.h"

const het_op_def het_ops_reduce[] = {
    {0},
};
