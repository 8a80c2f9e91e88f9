/* args.h — the command-line parser shared by the `hetrt` commands and
 * `partview`.  Options are described once, in tables (spelling, value,
 * help line); argv is parsed against those tables and --help is printed
 * from them, so an option name means one thing in every tool.  Usage
 * errors are one line on stderr ending "see 'PROG --help'".
 */
#ifndef HET_TOOLS_ARGS_H
#define HET_TOOLS_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Exit statuses of every tool (docs/cli.md). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_USAGE = 2 };

/* cli_parse's answer when the command should go on. */
#define CLI_CONTINUE (-1)

typedef enum cli_arg_kind {
  CLI_ARG_FLAG, /* no value */
  CLI_ARG_TEXT, /* one value: --opt V or --opt=V */
  CLI_ARG_INT,  /* an integer >= min */
  CLI_ARG_PAIR, /* NAME=VALUE, neither side empty */
} cli_arg_kind;

/* cli_option.flags */
#define CLI_OPT_PROFILES 1u /* also takes the *.yaml / *.yml arguments after it */

/* One option.  Tables end with an entry whose name is NULL. */
typedef struct cli_option {
  int id;              /* for the handler; unique within a command */
  const char *name;    /* long spelling, "--threads" */
  const char *alias;   /* the other spelling ("-o", "-v") or NULL */
  cli_arg_kind kind;
  const char *metavar; /* placeholder in help ("N", "FILE"); with choice,
                          the accepted words separated by '|' */
  bool choice;         /* the value must be one of metavar's words */
  long min;            /* CLI_ARG_INT: smallest value accepted */
  unsigned flags;      /* CLI_OPT_* */
  const char *help;    /* help text; '\n' starts a continuation line */
} cli_option;

/* A parsed value.  Strings point into argv. */
typedef struct cli_value {
  const char *text; /* the value as given; for a positional, the argument */
  long number;      /* CLI_ARG_INT */
  size_t name_len;  /* CLI_ARG_PAIR: text[0, name_len) is NAME ... */
  const char *rest; /* ... and this, after the '=', is VALUE */
} cli_value;

struct cli_command;

/* Takes one option (opt) or, when opt is NULL, one positional argument
 * (v->text).  Returns 0, or an exit status after printing why
 * (CLI_EXIT_USAGE through cli_usage_error). */
typedef int (*cli_handler)(void *ctx, const struct cli_command *cmd,
                           const cli_option *opt, const cli_value *v);

/* Options under one heading of --help, and what takes them. */
typedef struct cli_group {
  const char *title;
  const cli_option *options;
  cli_handler handle;
  void *ctx;
} cli_group;

typedef struct cli_command {
  const char *prog;     /* "hetrt run", "partview": names it in messages */
  const char *synopsis; /* what follows prog on the usage line */
  const char *about;    /* paragraph of --help, or NULL */
  const char *examples; /* lines of --help's examples, or NULL */
  const cli_group *groups;
  size_t n_groups;      /* groups[0]'s handler also takes positionals */
} cli_command;

/* Parses argv[1..argc) against cmd's groups, calling their handlers in
 * argument order.  -h/--help anywhere prints cli_print_help to stdout and
 * returns 0; "--" ends the options.  Returns CLI_CONTINUE when the command
 * should go on, else its exit status (0 after help, CLI_EXIT_USAGE after
 * a message naming the option at fault). */
int cli_parse(const cli_command *cmd, int argc, char **argv);

/* Prints "PROG: MESSAGE; see 'PROG --help'" to stderr and returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prints usage, the about text, every group's options and the examples. */
void cli_print_help(const cli_command *cmd, FILE *f);

/* Parses s as an integer >= min for opt ("--dim"); false after a usage
 * error message. */
bool cli_parse_long(const char *prog, const char *opt, const char *s, long min, long *out);

#endif
