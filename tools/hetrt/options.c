/* options.c — option parsing shared by the `hetrt` subcommands and the
 * construction of session options from them (public API only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const char *cli_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing) {
  size_t len = strlen(opt);
  const char *a = argv[*i];
  *missing = false;
  if (strncmp(a, opt, len) != 0)
    return NULL;
  if (a[len] == '=')
    return a + len + 1;
  if (a[len] != '\0')
    return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    fprintf(stderr, "hetrt: %s needs a value\n", opt);
    return NULL;
  }
  *i += 1;
  return argv[*i];
}

bool cli_parse_int(const char *opt, const char *s, long min, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || !end || *end || end == s || v < min || v > 1000000000L) {
    fprintf(stderr, "hetrt: %s: '%s' is not an integer >= %ld\n", opt, s, min);
    return false;
  }
  *out = v;
  return true;
}

/* Splits "NAME=VALUE"; false when there is no '=' or either side is empty. */
static bool cli_split_pair(const char *opt, const char *v, const char **name, const char **value) {
  const char *eq = strrchr(v, '=');
  if (!eq || eq == v || eq[1] == '\0') {
    fprintf(stderr, "hetrt: %s expects NAME=VALUE, got '%s'\n", opt, v);
    return false;
  }
  /* The name part is a copy: argv strings are not modified. */
  char *n = strndup(v, (size_t)(eq - v));
  if (!n) {
    fprintf(stderr, "hetrt: out of memory\n");
    return false;
  }
  *name = n;
  *value = eq + 1;
  return true;
}

static int cli_parse_pair_opt(const char *opt, const char *v, cli_common *c) {
  const char *name, *value;
  if (!cli_split_pair(opt, v, &name, &value))
    return -1;
  if (strcmp(opt, "--input") == 0) {
    if (c->n_named >= CLI_MAX_ARGS) {
      fprintf(stderr, "hetrt: too many --input options (max %d)\n", CLI_MAX_ARGS);
      return -1;
    }
    c->named_name[c->n_named] = name;
    c->named_file[c->n_named++] = value;
    return 1;
  }
  long d;
  if (c->n_dims >= CLI_MAX_ARGS || !cli_parse_int("--dim", value, 0, &d)) {
    if (c->n_dims >= CLI_MAX_ARGS)
      fprintf(stderr, "hetrt: too many --dim options (max %d)\n", CLI_MAX_ARGS);
    free((char *)name);
    return -1;
  }
  c->dim_name[c->n_dims] = name;
  c->dim_value[c->n_dims++] = d;
  return 1;
}

int cli_parse_common(int argc, char **argv, int *i, cli_common *c) {
  bool missing = false;
  const char *v;
  if (strcmp(argv[*i], "-v") == 0 || strcmp(argv[*i], "--verbose") == 0) {
    c->verbose = true;
    return 1;
  }
  if ((v = cli_opt_value(argc, argv, i, "--providers", &missing))) {
    c->providers = v;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--threads", &missing))) {
    long t;
    if (!cli_parse_int("--threads", v, 1, &t))
      return -1;
    c->threads = (int)t;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--input", &missing)))
    return cli_parse_pair_opt("--input", v, c);
  if (!missing && (v = cli_opt_value(argc, argv, i, "--dim", &missing)))
    return cli_parse_pair_opt("--dim", v, c);
  return missing ? -1 : 0;
}

het_session_options *cli_make_options(const cli_common *c) {
  het_session_options *o = NULL;
  if (het_session_options_create(&o) != HET_OK) {
    fprintf(stderr, "hetrt: session options: %s\n", het_last_error());
    return NULL;
  }
  if (c->providers && het_session_options_set(o, "providers", c->providers) != HET_OK) {
    fprintf(stderr, "hetrt: --providers %s: %s\n", c->providers, het_last_error());
    goto fail;
  }
  if (c->threads > 0 && het_session_options_set_threads(o, c->threads) != HET_OK) {
    fprintf(stderr, "hetrt: --threads %d: %s\n", c->threads, het_last_error());
    goto fail;
  }
  return o;
fail:
  het_session_options_destroy(o);
  return NULL;
}

void cli_common_clear(cli_common *c) {
  for (size_t j = 0; j < c->n_named; j++)
    free((char *)c->named_name[j]);
  for (size_t j = 0; j < c->n_dims; j++)
    free((char *)c->dim_name[j]);
  c->n_named = c->n_dims = 0;
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
