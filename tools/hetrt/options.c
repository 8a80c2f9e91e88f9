/* options.c — the option groups every model-running command shares
 * (session placement, report, inputs: one table each, read by the parser,
 * by --help and by docs/cli.md) and the session options built from them
 * through the public API.  `partview` compiles this file too.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

enum {
  CLI_ID_PROVIDERS = 1000, /* above every command's own ids */
  CLI_ID_DEVICES,
  CLI_ID_ALGORITHM,
  CLI_ID_OPTIMIZATION,
  CLI_ID_NON_STRICT,
  CLI_ID_NODE_TIMES,
  CLI_ID_THREADS,
  CLI_ID_OPTION,
  CLI_ID_EXPLAIN,
  CLI_ID_VERBOSE,
  CLI_ID_INPUT,
  CLI_ID_DIM,
  CLI_ID_POLICY,
  CLI_ID_SHAPE,
};

const cli_option cli_session_options[] = {
    {.id = CLI_ID_PROVIDERS, .name = "--providers", .kind = CLI_ARG_TEXT, .metavar = "LIST",
     .help = "provider priority list, e.g. emu,cpu (default cpu)"},
    {.id = CLI_ID_DEVICES, .name = "--devices", .kind = CLI_ARG_TEXT, .metavar = "PROFILE",
     .flags = CLI_OPT_PROFILES,
     .help = "device profile (YAML, configs/devices/); repeat it,\n"
             "list several *.yaml after it or join them by commas"},
    {.id = CLI_ID_ALGORITHM, .name = "--algorithm", .kind = CLI_ARG_TEXT,
     .metavar = "cost|priority", .choice = true,
     .help = "cost (default: least estimated latency) or priority\n"
             "(first capable provider wins)"},
    {.id = CLI_ID_OPTIMIZATION, .name = "--optimization", .kind = CLI_ARG_TEXT,
     .metavar = "none|basic|extended|all", .choice = true,
     .help = "graph rewrites before partitioning (default all)"},
    {.id = CLI_ID_NON_STRICT, .name = "--non-strict", .kind = CLI_ARG_FLAG,
     .help = "skip unknown, unbuilt or absent providers (with a\nwarning) instead of failing"},
    {.id = CLI_ID_NODE_TIMES, .name = "--node-times", .kind = CLI_ARG_TEXT, .metavar = "FILE",
     .help = "plan with node times measured by\n'hetrt bench --save-node-times FILE'"},
    {.id = CLI_ID_POLICY, .name = "--policy", .kind = CLI_ARG_TEXT, .metavar = "FILE",
     .help = "YAML placement policy (docs/policy.md); the options\n"
             "given here override its global settings"},
    {.id = CLI_ID_SHAPE, .name = "--shape", .kind = CLI_ARG_TEXT, .metavar = "NAME=DIMS",
     .help = "plan for input NAME with DIMS, e.g. x=1x3x640x640\n"
             "(and generate it with them); repeatable"},
    {.id = CLI_ID_THREADS, .name = "--threads", .kind = CLI_ARG_INT, .metavar = "N", .min = 1,
     .help = "CPU threads per run (default 1)"},
    {.id = CLI_ID_OPTION, .name = "--option", .kind = CLI_ARG_PAIR, .metavar = "KEY=VALUE",
     .help = "session or provider option, e.g. executor=streams\n"
             "or emu.mode=timed; repeatable"},
    {0},
};

const cli_option cli_report_options[] = {
    {.id = CLI_ID_EXPLAIN, .name = "--explain", .kind = CLI_ARG_FLAG,
     .help = "print the placement report (as partview does)"},
    {.id = CLI_ID_VERBOSE, .name = "--verbose", .alias = "-v", .kind = CLI_ARG_FLAG,
     .help = "list every node's placement and its reason"},
    {0},
};

#define CLI_OPTION_INPUT                                                                    \
  {.id = CLI_ID_INPUT, .name = "--input", .kind = CLI_ARG_PAIR, .metavar = "NAME=FILE.pb", \
   .help = "bind input NAME to a TensorProto file; repeatable"}
#define CLI_OPTION_DIM                                                                    \
  {.id = CLI_ID_DIM, .name = "--dim", .kind = CLI_ARG_PAIR, .metavar = "NAME=V",          \
   .help = "value of symbolic dimension NAME in generated inputs\n(default 1); repeatable"}

const cli_option cli_input_options[] = {CLI_OPTION_INPUT, CLI_OPTION_DIM, {0}};
const cli_option cli_input_file_options[] = {CLI_OPTION_INPUT, {0}};
const cli_option cli_dim_options[] = {CLI_OPTION_DIM, {0}};

/* Stores a NAME=VALUE option: the name copied, the value borrowed. */
static int cli_store_pair(const cli_command *cmd, const cli_option *opt, const cli_value *v,
                          size_t *n, const char **names, const char **values) {
  if (*n >= CLI_MAX_ARGS)
    return cli_usage_error(cmd->prog, "more than %d %s options", CLI_MAX_ARGS, opt->name);
  char *name = strndup(v->text, v->name_len);
  if (!name) {
    fprintf(stderr, "%s: out of memory\n", cmd->prog);
    return CLI_EXIT_FAILURE;
  }
  names[*n] = name;
  values[(*n)++] = v->rest;
  return 0;
}

static int cli_store_dim(cli_common *c, const cli_command *cmd, const cli_value *v) {
  long d;
  if (c->n_dims >= CLI_MAX_ARGS)
    return cli_usage_error(cmd->prog, "more than %d --dim options", CLI_MAX_ARGS);
  if (!cli_parse_long(cmd->prog, "--dim", v->rest, 0, &d))
    return CLI_EXIT_USAGE;
  char *name = strndup(v->text, v->name_len);
  if (!name) {
    fprintf(stderr, "%s: out of memory\n", cmd->prog);
    return CLI_EXIT_FAILURE;
  }
  c->dim_name[c->n_dims] = name;
  c->dim_value[c->n_dims++] = d;
  return 0;
}

int cli_common_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                      const cli_value *v) {
  cli_common *c = ctx;
  switch (opt->id) {
  case CLI_ID_PROVIDERS: c->providers = v->text; return 0;
  case CLI_ID_ALGORITHM: c->algorithm = v->text; return 0;
  case CLI_ID_OPTIMIZATION: c->optimization = v->text; return 0;
  case CLI_ID_NON_STRICT: c->non_strict = true; return 0;
  case CLI_ID_NODE_TIMES: c->node_times = v->text; return 0;
  case CLI_ID_POLICY: c->policy = v->text; return 0;
  case CLI_ID_SHAPE:
    if (c->n_shapes >= CLI_MAX_ARGS)
      return cli_usage_error(cmd->prog, "more than %d --shape options", CLI_MAX_ARGS);
    c->shapes[c->n_shapes++] = v->text;
    return 0;
  case CLI_ID_THREADS: c->threads = (int)v->number; return 0;
  case CLI_ID_EXPLAIN: c->explain = true; return 0;
  case CLI_ID_VERBOSE: c->verbose = true; return 0;
  case CLI_ID_DEVICES:
    if (c->n_devices >= CLI_MAX_ARGS)
      return cli_usage_error(cmd->prog, "more than %d --devices profiles", CLI_MAX_ARGS);
    c->devices[c->n_devices++] = v->text;
    return 0;
  case CLI_ID_OPTION: return cli_store_pair(cmd, opt, v, &c->n_opts, c->opt_key, c->opt_value);
  case CLI_ID_INPUT:
    return cli_store_pair(cmd, opt, v, &c->n_named, c->named_name, c->named_file);
  case CLI_ID_DIM: return cli_store_dim(c, cmd, v);
  default: return cli_usage_error(cmd->prog, "%s is not handled here", opt->name);
  }
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

/* ---- session options ---- */

/* Sets key (from option opt) when value is given; a rejected value is a
 * usage error naming opt. */
static int cli_set(het_session_options *o, const char *prog, const char *opt, const char *key,
                   const char *value) {
  if (!value || het_session_options_set(o, key, value) == HET_OK)
    return 0;
  return cli_usage_error(prog, "%s: %s", opt, het_last_error());
}

int cli_make_options(const cli_common *c, const char *prog, het_session_options **out) {
  het_session_options *o = NULL;
  char list[4096] = "", threads[16] = "";
  size_t used = 0;
  int rc = 0;
  for (size_t k = 0; k < c->n_devices; k++) {
    int w = snprintf(list + used, sizeof list - used, "%s%s", k ? "," : "", c->devices[k]);
    if (w < 0 || (size_t)w >= sizeof list - used)
      return cli_usage_error(prog, "--devices: the paths are longer than %zu bytes", sizeof list);
    used += (size_t)w;
  }
  if (c->threads > 0)
    snprintf(threads, sizeof threads, "%d", c->threads);
  if (het_session_options_create(&o) != HET_OK) {
    fprintf(stderr, "%s: session options: %s\n", prog, het_last_error());
    return CLI_EXIT_FAILURE;
  }
  /* The policy first: the options given beside it override its settings. */
  rc = cli_set(o, prog, "--policy", "policy", c->policy);
  for (size_t k = 0; rc == 0 && k < c->n_shapes; k++)
    rc = cli_set(o, prog, "--shape", "shape", c->shapes[k]);
  const char *opt[] = {"--providers", "--threads", "--devices", "--algorithm",
                       "--optimization", "--non-strict", "--node-times"};
  const char *key[] = {"providers", "threads", "devices", "algorithm",
                       "optimization", "strict", "node_times"};
  const char *val[] = {c->providers, threads[0] ? threads : NULL, used ? list : NULL,
                       c->algorithm, c->optimization, c->non_strict ? "false" : NULL,
                       c->node_times};
  for (size_t k = 0; rc == 0 && k < sizeof key / sizeof key[0]; k++)
    rc = cli_set(o, prog, opt[k], key[k], val[k]);
  for (size_t k = 0; rc == 0 && k < c->n_opts; k++)
    rc = cli_set(o, prog, "--option", c->opt_key[k], c->opt_value[k]);
  if (rc != 0) {
    het_session_options_destroy(o);
    return rc;
  }
  *out = o;
  return 0;
}

void cli_print_load_error(const char *prog, const char *path) {
  const char *msg = het_last_error();
  /* the library's message usually names the file already */
  if (strstr(msg, path))
    fprintf(stderr, "%s: %s\n", prog, msg);
  else
    fprintf(stderr, "%s: %s: %s\n", prog, path, msg);
}

double cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
