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
  if (strcmp(opt, "--option") == 0) {
    if (c->n_opts >= CLI_MAX_ARGS) {
      fprintf(stderr, "hetrt: too many --option options (max %d)\n", CLI_MAX_ARGS);
      free((char *)name);
      return -1;
    }
    c->opt_key[c->n_opts] = name;
    c->opt_value[c->n_opts++] = value;
    return 1;
  }
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
  if (strcmp(argv[*i], "--explain") == 0 || strcmp(argv[*i], "--non-strict") == 0) {
    *(argv[*i][2] == 'e' ? &c->explain : &c->non_strict) = true;
    return 1;
  }
  if ((v = cli_opt_value(argc, argv, i, "--algorithm", &missing))) {
    c->algorithm = v;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--node-times", &missing))) {
    c->node_times = v;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--save-node-times", &missing))) {
    c->save_times = v;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--devices", &missing))) {
    if (c->n_devices >= CLI_MAX_ARGS) {
      fprintf(stderr, "hetrt: too many --devices options (max %d)\n", CLI_MAX_ARGS);
      return -1;
    }
    c->devices[c->n_devices++] = v;
    return 1;
  }
  if (!missing && (v = cli_opt_value(argc, argv, i, "--option", &missing)))
    return cli_parse_pair_opt("--option", v, c);
  if (missing)
    return -1;
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

/* --devices, --algorithm, --non-strict and --option into options. */
static bool cli_set_extended(het_session_options *o, const cli_common *c) {
  char list[4096] = "";
  size_t used = 0;
  for (size_t k = 0; k < c->n_devices; k++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", k ? "," : "", c->devices[k]);
    if (w < 0 || (size_t)w >= sizeof list - used) {
      fprintf(stderr, "hetrt: --devices: paths too long\n");
      return false;
    }
    used += (size_t)w;
  }
  const char *keys[5] = {"devices", "algorithm", "strict", "node_times", "measure"};
  const char *vals[5] = {c->n_devices ? list : NULL, c->algorithm,
                         c->non_strict ? "false" : NULL, c->node_times,
                         c->save_times ? "true" : NULL};
  for (int k = 0; k < 5; k++)
    if (vals[k] && het_session_options_set(o, keys[k], vals[k]) != HET_OK) {
      fprintf(stderr, "hetrt: --%s: %s\n", keys[k], het_last_error());
      return false;
    }
  for (size_t k = 0; k < c->n_opts; k++)
    if (het_session_options_set(o, c->opt_key[k], c->opt_value[k]) != HET_OK) {
      fprintf(stderr, "hetrt: --option %s: %s\n", c->opt_key[k], het_last_error());
      return false;
    }
  return true;
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
  if (!cli_set_extended(o, c))
    goto fail;
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
  for (size_t j = 0; j < c->n_opts; j++)
    free((char *)c->opt_key[j]);
  c->n_named = c->n_dims = c->n_opts = 0;
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
