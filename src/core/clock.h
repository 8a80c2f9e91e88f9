/* clock.h — the monotonic clock that runs, traces and providers share. */
#ifndef HET_CORE_CLOCK_H
#define HET_CORE_CLOCK_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC. */
static inline double het_clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
