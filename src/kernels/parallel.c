/* parallel.c — dispatch of kernel loops to a het_parallel (parallel.h). */
#include "kernels/parallel.h"

#include <stddef.h>

void het_parallel_for(const het_parallel *p, int64_t n, int64_t grain,
                      het_parallel_fn fn, void *ctx) {
  if (n <= 0)
    return;
  if (!p || !p->run || p->threads <= 1) {
    fn(ctx, 0, n);
    return;
  }
  p->run(p->impl, n, grain, fn, ctx);
}

int het_parallel_threads(const het_parallel *p) {
  return p && p->threads > 1 ? p->threads : 1;
}
