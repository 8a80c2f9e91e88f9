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

/* Also hands every message recorded from now on to sink (NULL: none).  A
 * provider plugin, which links a private copy of the core, points its
 * copy's messages at the loading core's this way (het_plugin_host). */
void het_error_set_sink(void (*sink)(const char *message));

#define HET_TRY(expr)                 \
  do {                                \
    het_status het_try_st_ = (expr);  \
    if (het_try_st_ != HET_OK)        \
      return het_try_st_;             \
  } while (0)

#endif
