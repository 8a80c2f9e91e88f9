/* status.h — internal error reporting.
 * het_error() records a per-thread message and returns the status, so a
 * failing function reads `return het_error(HET_ERR_SHAPE, "node '%s': ...")`.
 */
#ifndef HET_CORE_STATUS_H
#define HET_CORE_STATUS_H

#include "hetrt/hetrt.h"

/* Records printf-style message for het_last_error() and returns status. */
het_status het_error(het_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with "prefix: " (context added by callers
 * as an error travels up) and returns status unchanged. */
het_status het_error_wrap(het_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears this thread's message. */
void het_error_clear(void);

#define HET_TRY(expr)                 \
  do {                                \
    het_status het_try_st_ = (expr);  \
    if (het_try_st_ != HET_OK)        \
      return het_try_st_;             \
  } while (0)

#endif
