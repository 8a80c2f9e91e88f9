/* opt_conv_add.c — Conv + Add (+ Relu/Clip) into hetrt.FusedConv. */
#include "optimizer/opt_internal.h"

het_status het_opt_fuse_conv_add(het_opt *o) {
  (void)o;
  return HET_OK;
}
