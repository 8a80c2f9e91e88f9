/* opt_nlp.c — transformer fusions (level all). */
#include "optimizer/opt_internal.h"

het_status het_opt_fuse_nlp(het_opt *o) {
  (void)o;
  return HET_OK;
}
