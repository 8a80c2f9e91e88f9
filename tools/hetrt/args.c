/* args.c — the table-driven command-line parser of args.h: matching argv
 * against option tables, checking values (integers, choices, NAME=VALUE)
 * before any handler sees them, one-line usage errors, and --help text
 * printed from the same tables.  Uses only the C library.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

#define CLI_HELP_COLUMN 28

int cli_usage_error(const char *prog, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "; see '%s --help'\n", prog);
  return CLI_EXIT_USAGE;
}

bool cli_parse_long(const char *prog, const char *opt, const char *s, long min, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > 1000000000L) {
    cli_usage_error(prog, "%s: '%s' is not an integer >= %ld", opt, s, min);
    return false;
  }
  *out = v;
  return true;
}

/* ---- matching ---- */

/* Whether arg is opt's spelling s, alone or as "s=VALUE"; *inline_value
 * is then the text after '=' or NULL. */
static bool cli_spelled(const char *arg, const char *s, const char **inline_value) {
  size_t n = s ? strlen(s) : 0;
  if (!s || strncmp(arg, s, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
    return false;
  *inline_value = arg[n] == '=' ? arg + n + 1 : NULL;
  return true;
}

static const cli_option *cli_find(const cli_command *cmd, const char *arg, size_t *group,
                                  const char **inline_value) {
  for (size_t g = 0; g < cmd->n_groups; g++)
    for (const cli_option *o = cmd->groups[g].options; o && o->name; o++)
      if (cli_spelled(arg, o->name, inline_value) || cli_spelled(arg, o->alias, inline_value)) {
        *group = g;
        return o;
      }
  return NULL;
}

/* Whether word is one of the '|'-separated words of list. */
static bool cli_in_choices(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; p && *p;) {
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len == n && strncmp(p, word, n) == 0)
      return true;
    p = bar ? bar + 1 : NULL;
  }
  return false;
}

/* "a|b|c" as "a, b or c" in an error message. */
static int cli_choice_error(const cli_command *cmd, const cli_option *o, const char *v) {
  char words[256] = "";
  size_t used = 0;
  for (const char *p = o->metavar; p && *p && used < sizeof words;) {
    const char *bar = strchr(p, '|');
    int len = bar ? (int)(bar - p) : (int)strlen(p);
    const char *sep = p == o->metavar ? "" : bar ? ", " : " or ";
    used += (size_t)snprintf(words + used, sizeof words - used, "%s%.*s", sep, len, p);
    p = bar ? bar + 1 : NULL;
  }
  return cli_usage_error(cmd->prog, "%s: '%s' is not %s", o->name, v, words);
}

/* Checks v against o's kind and fills out. */
static int cli_check_value(const cli_command *cmd, const cli_option *o, const char *v,
                           cli_value *out) {
  *out = (cli_value){.text = v};
  if (o->choice && !cli_in_choices(o->metavar, v))
    return cli_choice_error(cmd, o, v);
  if (o->kind == CLI_ARG_INT && !cli_parse_long(cmd->prog, o->name, v, o->min, &out->number))
    return CLI_EXIT_USAGE;
  if (o->kind == CLI_ARG_PAIR) {
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || eq[1] == '\0')
      return cli_usage_error(cmd->prog, "%s expects %s, got '%s'", o->name, o->metavar, v);
    out->name_len = (size_t)(eq - v);
    out->rest = eq + 1;
  }
  return 0;
}

static bool cli_is_profile(const char *s) {
  size_t n = strlen(s);
  return s[0] != '-' && ((n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
                         (n > 4 && strcmp(s + n - 4, ".yml") == 0));
}

/* ---- parsing ---- */

/* Takes the option at argv[*i] (and its value), advancing *i. */
static int cli_take_option(const cli_command *cmd, int argc, char **argv, int *i) {
  const char *arg = argv[*i], *v = NULL;
  size_t g = 0;
  const cli_option *o = cli_find(cmd, arg, &g, &v);
  if (!o)
    return cli_usage_error(cmd->prog, "unknown option '%s'", arg);
  const cli_group *grp = &cmd->groups[g];
  const char *ignored, *typed = cli_spelled(arg, o->name, &ignored) ? o->name : o->alias;
  cli_value val = {0};
  if (o->kind == CLI_ARG_FLAG) {
    if (v)
      return cli_usage_error(cmd->prog, "%s takes no value", typed);
    return grp->handle(grp->ctx, cmd, o, &val);
  }
  if (!v) {
    /* a following "--x" is the next option, not this one's value */
    if (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0)
      return cli_usage_error(cmd->prog, "%s needs a value (%s)", typed, o->metavar);
    v = argv[++*i];
  }
  int rc = cli_check_value(cmd, o, v, &val);
  if (rc == 0)
    rc = grp->handle(grp->ctx, cmd, o, &val);
  while (rc == 0 && (o->flags & CLI_OPT_PROFILES) && *i + 1 < argc && cli_is_profile(argv[*i + 1])) {
    val = (cli_value){.text = argv[++*i]};
    rc = grp->handle(grp->ctx, cmd, o, &val);
  }
  return rc;
}

int cli_parse(const cli_command *cmd, int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      cli_print_help(cmd, stdout);
      return CLI_EXIT_OK;
    }
  bool options_done = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    int rc;
    if (!options_done && strcmp(arg, "--") == 0) {
      options_done = true;
      continue;
    }
    if (!options_done && arg[0] == '-' && arg[1] != '\0') {
      rc = cli_take_option(cmd, argc, argv, &i);
    } else {
      cli_value v = {.text = arg};
      rc = cmd->groups[0].handle(cmd->groups[0].ctx, cmd, NULL, &v);
    }
    if (rc != 0)
      return rc;
  }
  return CLI_CONTINUE;
}

/* ---- help ---- */

static void cli_print_option(FILE *f, const char *spelling, const char *help) {
  int w = fprintf(f, "  %s", spelling);
  if (!help)
    fputc('\n', f);
  for (const char *line = help; line;) {
    const char *nl = strchr(line, '\n');
    if (w > CLI_HELP_COLUMN - 2) { /* keep two spaces before the help */
      fputc('\n', f);
      w = 0;
    }
    fprintf(f, "%*s%.*s\n", CLI_HELP_COLUMN - w, "", nl ? (int)(nl - line) : (int)strlen(line),
            line);
    w = 0;
    line = nl ? nl + 1 : NULL;
  }
}

void cli_print_help(const cli_command *cmd, FILE *f) {
  fprintf(f, "usage: %s %s\n", cmd->prog, cmd->synopsis);
  if (cmd->about)
    fprintf(f, "\n%s\n", cmd->about);
  for (size_t g = 0; g < cmd->n_groups; g++) {
    const cli_group *grp = &cmd->groups[g];
    if (!grp->options || !grp->options->name)
      continue;
    fprintf(f, "\n%s:\n", grp->title);
    for (const cli_option *o = grp->options; o->name; o++) {
      char spelling[96];
      snprintf(spelling, sizeof spelling, "%s%s%s%s%s", o->alias ? o->alias : "",
               o->alias ? ", " : "", o->name, o->kind == CLI_ARG_FLAG ? "" : " ",
               o->kind == CLI_ARG_FLAG ? "" : o->metavar);
      cli_print_option(f, spelling, o->help);
    }
  }
  fprintf(f, "\n");
  cli_print_option(f, "-h, --help", "print this help and exit");
  if (cmd->examples)
    fprintf(f, "\nexamples:\n%s", cmd->examples);
  fprintf(f, "\nexit status: 0 ok, 1 failure (model, run, files), 2 usage error\n");
}
