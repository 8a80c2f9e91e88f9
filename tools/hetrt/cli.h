/* cli.h — shared pieces of the `hetrt` command line: option parsing common
 * to the subcommands, session set-up through the public API, input loading
 * and generation, and the output/placement summaries.
 */
#ifndef HET_TOOLS_CLI_H
#define HET_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hetrt/hetrt.h"

#define CLI_MAX_ARGS 64

/* Options every model-running subcommand accepts. */
typedef struct cli_common {
  const char *providers;   /* comma-separated list or NULL (library default) */
  int threads;             /* 0 = library default */
  bool verbose;
  bool explain;            /* --explain: print the placement report */
  bool non_strict;         /* --non-strict: skip unavailable providers */
  const char *algorithm;   /* --algorithm cost|priority, or NULL */
  const char *node_times;  /* --node-times FILE: plan with measured times */
  const char *save_times;  /* --save-node-times FILE (bench) */
  size_t n_devices;        /* --devices PROFILE (repeatable) */
  const char *devices[CLI_MAX_ARGS];
  size_t n_opts;           /* --option KEY=VALUE (e.g. emu.mode=timed) */
  const char *opt_key[CLI_MAX_ARGS];
  const char *opt_value[CLI_MAX_ARGS];
  size_t n_named;          /* --input NAME=FILE */
  const char *named_name[CLI_MAX_ARGS];
  const char *named_file[CLI_MAX_ARGS];
  size_t n_dims;           /* --dim NAME=V (bench) */
  const char *dim_name[CLI_MAX_ARGS];
  int64_t dim_value[CLI_MAX_ARGS];
  uint64_t seed;           /* generated inputs' random seed (0: default) */
} cli_common;

/* Inputs bound for a run: names borrowed from the session, tensors owned. */
typedef struct cli_inputs {
  size_t n;
  const char *names[CLI_MAX_ARGS];
  het_tensor *tensors[CLI_MAX_ARGS];
} cli_inputs;

/* Tries to consume argv[*i] (and its value) as a common option.
 * Returns 1 if consumed (advancing *i past the value), 0 if not a common
 * option, -1 on a malformed value (message printed). */
int cli_parse_common(int argc, char **argv, int *i, cli_common *c);

/* Frees what cli_parse_common allocated. */
void cli_common_clear(cli_common *c);

/* Value of "--opt V" or "--opt=V" at argv[*i]; NULL when argv[*i] is not
 * opt.  Advances *i past a separate value.  *missing is set when the option
 * matched but had no value. */
const char *cli_opt_value(int argc, char **argv, int *i, const char *opt, bool *missing);

/* Parses a strictly positive int; false (message printed) otherwise. */
bool cli_parse_int(const char *opt, const char *s, long min, long *out);

/* Builds session options from c.  Prints the error and returns NULL on
 * failure. Caller destroys. */
het_session_options *cli_make_options(const cli_common *c);

/* Reads a TensorProto .pb file.  Prints the error and returns NULL. */
het_tensor *cli_read_pb(const char *path);

/* Writes t as TensorProto to path.  false (message printed) on error. */
bool cli_write_pb(const char *path, const het_tensor *t, const char *name);

/* Binds named and positional .pb files to the session's inputs; when
 * generate is true, inputs not given are generated (random normal floats,
 * zeros for integers; symbolic dims 1 unless --dim), otherwise a missing
 * input is an error naming it.  false (message printed) on error. */
bool cli_bind_inputs(het_session *s, const cli_common *c, const char *const *positional,
                     size_t n_positional, bool generate, cli_inputs *out);
void cli_inputs_clear(cli_inputs *in);

/* "[1,3,N]" style text of a description's shape / a tensor's shape. */
void cli_format_desc_shape(const het_value_desc *d, char *buf, size_t cap);
void cli_format_tensor_shape(const het_tensor *t, char *buf, size_t cap);

/* Prints name, dtype, shape, min/max/mean and the first values. */
void cli_print_tensor_summary(FILE *f, const char *label, const char *name,
                              const het_tensor *t);

/* Prints the placement report (het_session_explain, text form). */
void cli_print_explain(FILE *f, const het_session *s);
/* Prints the session's creation warnings to stderr ("hetrt CMD:
 * warning: ..."). */
void cli_print_warnings(const char *cmd, const het_session *s);

/* Prints per-provider node counts, and every node when verbose. */
void cli_print_placement(FILE *f, const het_session *s, bool verbose);

/* Monotonic time in milliseconds. */
double cli_now_ms(void);

int cli_cmd_run(int argc, char **argv);
int cli_cmd_test(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_profile(int argc, char **argv);
int cli_cmd_quantize(int argc, char **argv);

#endif
