/* main.c — entry point of the `hetrt` command line: dispatches to the
 * run, test and bench subcommands and prints usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void cli_usage(FILE *f) {
  fprintf(f,
          "usage: hetrt COMMAND [options]\n"
          "\n"
          "commands:\n"
          "  run MODEL [FILE.pb ...] [--input NAME=FILE.pb ...] [--output-dir DIR]\n"
          "            runs the model once on the given inputs and prints each output\n"
          "            (dtype, shape, min/max/mean, first values) and the node placement\n"
          "  test DIR... [--fork] [--timeout S] [--list-passing FILE] [--expected FILE]\n"
          "            runs ONNX backend-test cases (model.onnx + test_data_set_*), or\n"
          "            every case under DIR; prints PASS/FAIL/SKIP per case and a summary\n"
          "  bench MODEL [--warmup N] [--runs N] [--input NAME=FILE.pb ...] [--dim NAME=V ...]\n"
          "            times runs on given or generated inputs; last line median_ms=X\n"
          "  profile MODEL [-o TRACE.json] [--runs N] [bench options]\n"
          "            traces the runs: Chrome trace (one lane per device stream)\n"
          "            and a per-op time table\n"
          "  quantize MODEL -o OUT.onnx (--data DIR | --random N | --dynamic)\n"
          "            [--eval-data DIR] [--method minmax|percentile|entropy] [--percentile P] [--per-tensor]\n"
          "            [--activation-type uint8|int8] [--exclude-op-types A,B] [--exclude-nodes G,..]\n"
          "            int8 quantization into a QDQ model, calibrated on the input sets in\n"
          "            DIR (--dynamic: MatMulInteger, no calibration), with an accuracy\n"
          "            report on inputs held apart\n"
          "\n"
          "common options:\n"
          "  --providers LIST   provider priority list, e.g. cpu or cuda,cpu\n"
          "  --threads N        CPU threads per run\n"
          "  --devices PROFILE  device profile (YAML, configs/devices/); repeatable\n"
          "  --algorithm A      cost (default: minimise estimated latency) or priority\n"
          "  --non-strict       skip providers that are not built or have no device\n"
          "  --option K=V       provider option, e.g. emu.mode=timed\n"
          "  --explain          (run, bench) print the placement report\n"
          "  --node-times FILE  plan with node times measured by --save-node-times\n"
          "  --save-node-times FILE  (bench) measure every node, write mean times\n"
          "  -v, --verbose      more detail (every node's placement)\n"
          "  -h, --help         this text;   --version   library version\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    cli_usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
    cli_usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0) {
    het_env *env = NULL;
    bool ok = het_env_create(&env) == HET_OK;
    printf("hetrt %d.%d.%d (providers built: %s)\n", HET_VERSION_MAJOR, HET_VERSION_MINOR,
           HET_VERSION_PATCH, ok ? het_env_get_built_providers(env) : "?");
    het_env_destroy(env);
    return 0;
  }
  if (strcmp(cmd, "run") == 0)
    return cli_cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "profile") == 0)
    return cli_cmd_profile(argc - 1, argv + 1);
  if (strcmp(cmd, "test") == 0)
    return cli_cmd_test(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0)
    return cli_cmd_bench(argc - 1, argv + 1);
  if (strcmp(cmd, "quantize") == 0)
    return cli_cmd_quantize(argc - 1, argv + 1);
  fprintf(stderr, "hetrt: unknown command '%s'\n\n", cmd);
  cli_usage(stderr);
  return 2;
}
