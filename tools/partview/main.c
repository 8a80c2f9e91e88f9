/* main.c — `partview`: loads a model into a session with the given
 * providers, device profiles and algorithm, and prints the placement report
 * (het_session_explain) as text, JSON, DOT or HTML to stdout or a file.
 * Options are parsed by the `hetrt` parser with its session option group
 * (hetrt_cli.c), so they mean what they mean in `hetrt`.  Exit status: 0
 * success, 1 the library failed (message from het_last_error()), 2 bad
 * command line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define PV_PROG "partview"

typedef struct pv_args {
  cli_common common;
  const char *model;
  const char *format;
  const char *output;
  bool version;
} pv_args;

enum { PV_FORMAT = 1, PV_OUTPUT, PV_VERSION };

static const cli_option pv_options[] = {
    {.id = PV_FORMAT, .name = "--format", .kind = CLI_ARG_TEXT, .metavar = "text|json|dot|html|rules",
     .choice = true, .help = "report format (default text)"},
    {.id = PV_OUTPUT, .name = "--output", .alias = "-o", .kind = CLI_ARG_TEXT, .metavar = "FILE",
     .help = "write the report to FILE instead of stdout"},
    {.id = PV_VERSION, .name = "--version", .kind = CLI_ARG_FLAG,
     .help = "print the library version and the providers built"},
    {0},
};

static int pv_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                     const cli_value *v) {
  pv_args *a = ctx;
  if (!opt) {
    if (a->model)
      return cli_usage_error(cmd->prog, "unexpected argument '%s' (MODEL is '%s')", v->text,
                             a->model);
    a->model = v->text;
    return 0;
  }
  switch (opt->id) {
  case PV_FORMAT: a->format = v->text; break;
  case PV_OUTPUT: a->output = v->text; break;
  case PV_VERSION: a->version = true; break;
  }
  return 0;
}

/* Returns CLI_CONTINUE or the exit status. */
static int pv_parse(int argc, char **argv, pv_args *a) {
  const cli_group groups[] = {
      {"report options", pv_options, pv_handle, a},
      {"session options", cli_session_options, cli_common_handle, &a->common},
  };
  const cli_command cmd = {
      .prog = PV_PROG,
      .synopsis = "MODEL [options]",
      .about = "Shows where each node of MODEL would run: provider and reason per node,\n"
               "subgraphs, boundary (copy/layout/cast) nodes with the bytes they move,\n"
               "estimated cost per subgraph and in total, planned peak memory per device\n"
               "and the estimated latency of the cost algorithm against priority.\n"
               "--optimization none shows every node of the file (docs/partview.md).",
      .examples = "  partview model.onnx --providers emu,cpu \\\n"
                  "      --devices configs/devices/npu.yaml --format dot -o p.dot\n"
                  "  dot -Tpng p.dot -o p.png\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  int rc = cli_parse(&cmd, argc, argv);
  if (rc == CLI_CONTINUE && !a->version && !a->model)
    rc = cli_usage_error(PV_PROG, "no MODEL given");
  return rc;
}

static int pv_version(void) {
  het_env *env = NULL;
  bool ok = het_env_create(&env) == HET_OK;
  printf("partview (hetrt %d.%d.%d, providers built: %s)\n", HET_VERSION_MAJOR,
         HET_VERSION_MINOR, HET_VERSION_PATCH, ok ? het_env_get_built_providers(env) : "?");
  het_env_destroy(env);
  return CLI_EXIT_OK;
}

static int pv_write(const pv_args *a, const char *text) {
  FILE *f = a->output ? fopen(a->output, "w") : stdout;
  if (!f) {
    fprintf(stderr, "partview: cannot open '%s' for writing\n", a->output);
    return CLI_EXIT_FAILURE;
  }
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = (a->output ? fclose(f) : fflush(f)) == 0 && ok;
  if (!ok) {
    fprintf(stderr, "partview: writing '%s' failed\n", a->output ? a->output : "stdout");
    return CLI_EXIT_FAILURE;
  }
  return CLI_EXIT_OK;
}

int main(int argc, char **argv) {
  pv_args a = {.format = "text"};
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *session = NULL;
  char *text = NULL;
  int rc = pv_parse(argc, argv, &a);
  if (rc == CLI_CONTINUE && a.version)
    rc = pv_version();
  if (rc != CLI_CONTINUE || (rc = cli_make_options(&a.common, PV_PROG, &opts)) != 0)
    goto done;
  rc = CLI_EXIT_FAILURE;
  if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "partview: %s\n", het_last_error());
  } else if (het_session_create(env, a.model, opts, &session) != HET_OK) {
    cli_print_load_error(PV_PROG, a.model);
  } else if (het_session_explain(session, a.format, &text) != HET_OK) {
    fprintf(stderr, "partview: explain: %s\n", het_last_error());
  } else {
    rc = pv_write(&a, text);
  }
done:
  het_string_destroy(text);
  het_session_destroy(session);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}
