/* cli.h — shared pieces of the `hetrt` command line: the option groups
 * common to the commands (parsed by args.h), session set-up through the
 * public API, input loading and generation, the output/placement summaries
 * and the progress line of long work.
 */
#ifndef HET_TOOLS_CLI_H
#define HET_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hetrt/hetrt.h"

#include "args.h"

#define CLI_MAX_ARGS 64

/* What the shared option groups (below) set.  Strings are borrowed from
 * argv except the NAME parts of --option, --input and --dim, which are
 * owned (cli_common_clear frees them). */
typedef struct cli_common {
  const char *providers;   /* comma-separated list or NULL (library default) */
  int threads;             /* 0 = library default */
  bool verbose;            /* -v, --verbose: every node's placement */
  bool explain;            /* --explain: print the placement report */
  bool non_strict;         /* --non-strict: skip unavailable providers */
  const char *algorithm;   /* --algorithm cost|priority, or NULL */
  const char *optimization; /* --optimization none|basic|extended|all, or NULL */
  const char *node_times;  /* --node-times FILE: plan with measured times */
  const char *policy;      /* --policy FILE: a YAML placement policy */
  size_t n_shapes;         /* --shape NAME=DIMS: shapes to plan for */
  const char *shapes[CLI_MAX_ARGS];
  size_t n_devices;        /* --devices PROFILE (repeatable) */
  const char *devices[CLI_MAX_ARGS];
  size_t n_opts;           /* --option KEY=VALUE (e.g. emu.mode=timed) */
  const char *opt_key[CLI_MAX_ARGS];
  const char *opt_value[CLI_MAX_ARGS];
  size_t n_named;          /* --input NAME=FILE */
  const char *named_name[CLI_MAX_ARGS];
  const char *named_file[CLI_MAX_ARGS];
  size_t n_dims;           /* --dim NAME=V */
  const char *dim_name[CLI_MAX_ARGS];
  int64_t dim_value[CLI_MAX_ARGS];
  uint64_t seed;           /* generated inputs' random seed (0: default) */
} cli_common;

/* Option groups shared by the commands; each is taken by
 * cli_common_handle with a cli_common * as its context:
 *   cli_session_options  --providers --devices --algorithm --optimization
 *                        --non-strict --node-times --policy --shape
 *                        --threads --option
 *   cli_report_options   --explain, -v/--verbose
 *   cli_input_options    --input NAME=FILE.pb, --dim NAME=V
 *   cli_input_file_options  --input only (commands that generate nothing)
 *   cli_dim_options      --dim only (commands that read no .pb inputs) */
extern const cli_option cli_session_options[];
extern const cli_option cli_report_options[];
extern const cli_option cli_input_options[];
extern const cli_option cli_input_file_options[];
extern const cli_option cli_dim_options[];
int cli_common_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                      const cli_value *v);

/* Frees what cli_common_handle allocated. */
void cli_common_clear(cli_common *c);

/* Builds session options from c into *out (caller destroys).  Returns 0,
 * CLI_EXIT_USAGE when the library rejects a value (message naming the
 * option), or CLI_EXIT_FAILURE.  prog ("hetrt run") prefixes messages. */
int cli_make_options(const cli_common *c, const char *prog, het_session_options **out);

/* Prints "PROG: message" after het_last_error() for a model that did not
 * load, naming path once. */
void cli_print_load_error(const char *prog, const char *path);

/* Inputs bound for a run: names borrowed from the session, tensors owned. */
typedef struct cli_inputs {
  size_t n;
  const char *names[CLI_MAX_ARGS];
  het_tensor *tensors[CLI_MAX_ARGS];
} cli_inputs;

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
/* Prints the session's creation warnings to stderr ("PROG: warning: ..."). */
void cli_print_warnings(const char *prog, const het_session *s);

/* Prints per-provider node counts, and every node when verbose. */
void cli_print_placement(FILE *f, const het_session *s, bool verbose);

/* Monotonic time in milliseconds. */
double cli_now_ms(void);

/* The progress line of long work, on stderr.  On a terminal one line that
 * rewrites itself ("[123/915] test_xyz"); elsewhere, with plain set, a
 * line "WHAT: DONE/TOTAL" at each tenth of the work (and when WHAT
 * changes), without plain nothing.  Never carriage returns off a terminal. */
typedef struct cli_progress {
  bool tty;       /* stderr is a terminal */
  bool plain;     /* off a terminal: print the tenths */
  bool shown;     /* a terminal line is up */
  int tenth;      /* last tenth printed (plain) */
  char what[64];  /* last WHAT printed (plain) */
} cli_progress;

void cli_progress_init(cli_progress *p, bool plain);
/* done of total steps, what names the current one. */
void cli_progress_show(cli_progress *p, size_t done, size_t total, const char *what);
/* Ends a terminal line: keep leaves it (with a newline), else it is
 * erased, e.g. before other output.  Does nothing off a terminal. */
void cli_progress_end(cli_progress *p, bool keep);

int cli_cmd_run(int argc, char **argv);
int cli_cmd_test(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_profile(int argc, char **argv);
int cli_cmd_quantize(int argc, char **argv);
int cli_cmd_policy(int argc, char **argv);
int cli_cmd_compile(int argc, char **argv);
int cli_cmd_plan(int argc, char **argv);

#endif
