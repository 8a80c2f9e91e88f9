/* quantity.c — het_quantity_parse (quantity.h). */
#include "core/quantity.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Multiplier of a decimal (K M G T P) or binary (Ki Mi Gi Ti) prefix at
 * *s, advancing past it; 1 when there is none. */
static double het_quantity_prefix(const char **s) {
  static const char prefixes[] = "KMGTP";
  char c = (char)toupper((unsigned char)**s);
  const char *at = c ? strchr(prefixes, c) : NULL;
  if (!at)
    return 1;
  bool binary = ((*s)[1] == 'i' || (*s)[1] == 'I') && at - prefixes < 4;
  double m = 1;
  for (ptrdiff_t k = 0; k <= at - prefixes; k++)
    m *= binary ? 1024.0 : 1000.0;
  *s += binary ? 2 : 1;
  return m;
}

/* The index of rest among words (NULL-terminated), case-insensitively;
 * -1 when it is none of them. */
static int het_quantity_word(const char *rest, const char *const *words) {
  for (int k = 0; words[k]; k++)
    if (strcasecmp(rest, words[k]) == 0)
      return k;
  return -1;
}

bool het_quantity_parse(const char *text, het_quantity_kind kind,
                        double *out) {
  static const char *const seconds[] = {"", "s", "ms", "us", "\xc2\xb5s",
                                        "ns", NULL};
  static const double scale[] = {1, 1, 1e-3, 1e-6, 1e-6, 1e-9};
  static const char *const bytes[] = {"", "B", NULL};
  static const char *const rates[] = {"", "B", "/s", "B/s", "ps", "Bps",
                                      NULL};
  static const char *const flops[] = {"",    "FLOPS", "FLOP/s", "FLOP",
                                      "OPS", "OP/s",  "/s",     NULL};
  if (!text)
    return false;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || errno || !isfinite(v) || v < 0)
    return false;
  const char *rest = end;
  while (*rest == ' ' || *rest == '\t')
    rest++;
  if (kind == HET_QUANTITY_SECONDS) {
    int k = het_quantity_word(rest, seconds);
    if (k < 0)
      return false;
    *out = v * scale[k];
    return true;
  }
  v *= het_quantity_prefix(&rest);
  const char *const *words = kind == HET_QUANTITY_BYTES       ? bytes
                             : kind == HET_QUANTITY_BYTE_RATE ? rates
                                                              : flops;
  if (het_quantity_word(rest, words) < 0 || !isfinite(v))
    return false;
  *out = v;
  return true;
}
