/* status.c — the status table's strings and the per-thread error message. */
#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HET_ERROR_CAP 1024
static _Thread_local char het_error_msg[HET_ERROR_CAP];
static void (*het_error_sink)(const char *message);

void het_error_set_sink(void (*sink)(const char *message)) {
  het_error_sink = sink;
}

static void het_error_forward(void) {
  if (het_error_sink)
    het_error_sink(het_error_msg);
}

const char *het_status_str(het_status status) {
  switch (status) {
#define HET_STATUS_CASE_(name, desc) \
  case HET_##name:                   \
    return desc;
    HET_STATUS_TABLE(HET_STATUS_CASE_)
#undef HET_STATUS_CASE_
  default:
    return "unknown status";
  }
}

const char *het_last_error(void) { return het_error_msg; }

void het_error_clear(void) { het_error_msg[0] = '\0'; }

het_status het_error(het_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(het_error_msg, sizeof het_error_msg, fmt, ap);
  va_end(ap);
  het_error_forward();
  return status;
}

het_status het_error_wrap(het_status status, const char *fmt, ...) {
  char prefix[512];
  char old[HET_ERROR_CAP];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, het_error_msg, sizeof old);
  size_t n = strlen(prefix);
  if (n > HET_ERROR_CAP - 3)
    n = HET_ERROR_CAP - 3;
  memcpy(het_error_msg, prefix, n);
  memcpy(het_error_msg + n, ": ", 2);
  size_t rest = HET_ERROR_CAP - n - 3;
  size_t m = strnlen(old, rest);
  memcpy(het_error_msg + n + 2, old, m);
  het_error_msg[n + 2 + m] = '\0';
  het_error_forward();
  return status;
}
