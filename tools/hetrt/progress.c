/* progress.c — the progress line of long `hetrt` work (a backend-test
 * suite, quantizer calibration): on a terminal one stderr line rewritten
 * in place, cut to the terminal's width so it never wraps; off a terminal
 * occasional plain lines or nothing, never carriage returns.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

void cli_progress_init(cli_progress *p, bool plain) {
  memset(p, 0, sizeof *p);
  p->tty = isatty(STDERR_FILENO) != 0;
  p->plain = plain;
  p->tenth = -1;
}

static int cli_terminal_width(void) {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
    return ws.ws_col;
  return 80;
}

void cli_progress_show(cli_progress *p, size_t done, size_t total, const char *what) {
  if (total == 0)
    return;
  if (p->tty) {
    char line[512];
    int n = snprintf(line, sizeof line, "[%zu/%zu] %s", done, total, what);
    int width = cli_terminal_width() - 1;
    if (n > width && width < (int)sizeof line)
      line[width] = '\0';
    /* \033[K erases what a longer previous line left */
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->shown = true;
    return;
  }
  int tenth = (int)(10 * done / total);
  if (!p->plain || (tenth == p->tenth && strncmp(p->what, what, sizeof p->what - 1) == 0))
    return;
  p->tenth = tenth;
  snprintf(p->what, sizeof p->what, "%s", what);
  fprintf(stderr, "%s: %zu/%zu\n", what, done, total);
}

void cli_progress_end(cli_progress *p, bool keep) {
  if (!p->tty || !p->shown)
    return;
  fputs(keep ? "\n" : "\r\033[K", stderr);
  fflush(stderr);
  p->shown = false;
}
