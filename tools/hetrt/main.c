/* main.c — entry point of the `hetrt` command line: dispatches to the
 * commands (run, test, bench, profile, quantize, policy, compile, plan), each of which parses its
 * own options (args.h); prints the command list and the version.
 * Exit status everywhere: 0 ok, 1 failure, 2 usage error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} cli_commands[] = {
    {"run", cli_cmd_run, "run a model once; print its outputs and where each node ran"},
    {"test", cli_cmd_test, "run ONNX backend-test cases (PASS/FAIL/SKIP and a summary)"},
    {"bench", cli_cmd_bench, "time runs of a model on given or generated inputs"},
    {"profile", cli_cmd_profile, "trace runs of a model (Chrome trace, per-op time table)"},
    {"quantize", cli_cmd_quantize, "int8 post-training quantization into a QDQ model"},
    {"policy", cli_cmd_policy, "check a YAML placement policy; list the nodes its rules match"},
    {"compile", cli_cmd_compile, "write a model's session as an ahead-of-time plan (.hplan)"},
    {"plan", cli_cmd_plan, "describe a plan file and grade it against this machine"},
};

#define CLI_N_COMMANDS (sizeof cli_commands / sizeof cli_commands[0])

static void cli_usage(FILE *f) {
  fprintf(f, "usage: hetrt COMMAND [options]\n"
             "       hetrt COMMAND --help | hetrt --help | hetrt --version\n"
             "\ncommands:\n");
  for (size_t i = 0; i < CLI_N_COMMANDS; i++)
    fprintf(f, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
  fprintf(f, "\n'hetrt COMMAND --help' lists a command's options; options with the same\n"
             "name mean the same in every command and in partview (docs/cli.md).\n"
             "\nexit status: 0 ok, 1 failure (model, run, files), 2 usage error\n");
}

static int cli_version(void) {
  het_env *env = NULL;
  bool ok = het_env_create(&env) == HET_OK;
  printf("hetrt %d.%d.%d (providers built: %s)\n", HET_VERSION_MAJOR, HET_VERSION_MINOR,
         HET_VERSION_PATCH, ok ? het_env_get_built_providers(env) : "?");
  het_env_destroy(env);
  return CLI_EXIT_OK;
}

static int cli_dispatch(const char *name, int argc, char **argv) {
  for (size_t i = 0; i < CLI_N_COMMANDS; i++)
    if (strcmp(name, cli_commands[i].name) == 0)
      return cli_commands[i].run(argc, argv);
  return cli_usage_error("hetrt", "unknown command '%s'", name);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
      (strcmp(cmd, "help") == 0 && argc == 2)) {
    cli_usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(cmd, "help") == 0) { /* hetrt help COMMAND */
    char *help_argv[] = {argv[2], "--help", NULL};
    return cli_dispatch(argv[2], 2, help_argv);
  }
  if (strcmp(cmd, "--version") == 0)
    return cli_version();
  if (cmd[0] == '-')
    return cli_usage_error("hetrt", "unknown option '%s' (options follow the COMMAND)", cmd);
  return cli_dispatch(cmd, argc - 1, argv + 1);
}
