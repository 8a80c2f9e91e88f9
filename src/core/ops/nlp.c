/* nlp.c — shape inference for the hetrt-domain ops the optimizer's
 * transformer fusions create (Gelu, LayerNorm, Attention, ...). */
#include "core/infer.h"

const het_op_def het_ops_nlp[] = {
    {0},
};
