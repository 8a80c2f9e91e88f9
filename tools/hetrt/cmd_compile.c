/* cmd_compile.c — ahead-of-time plans on the command line
 * (docs/plan-format.md):
 *   hetrt compile MODEL -o FILE.hplan [session options]  makes the session
 *       the options describe (optimization, placement, kernel timing) and
 *       writes it as a plan file, with a progress line on a terminal;
 *   hetrt plan info FILE  prints what made a plan, its fingerprint, its
 *       sections and its grade on this machine.
 * Exit status: 0 ok, 1 failure, 2 usage error.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define COMPILE_PROG "hetrt compile"
#define PLAN_PROG "hetrt plan"

enum { COMPILE_OUTPUT = 1, COMPILE_REGIME };

#define COMPILE_MAX_REGIMES 16

typedef struct compile_args {
  cli_common common;
  const char *model;
  const char *output;
  int n_regimes;
  const char *regimes[COMPILE_MAX_REGIMES];
} compile_args;

static const cli_option compile_options[] = {
    {.id = COMPILE_OUTPUT, .name = "--output", .alias = "-o", .kind = CLI_ARG_TEXT,
     .metavar = "FILE", .help = "the plan file to write (required; by convention *.hplan)"},
    {.id = COMPILE_REGIME, .name = "--regime", .kind = CLI_ARG_PAIR,
     .metavar = "NAME=DIMS[,NAME=DIMS...]",
     .help = "also plan for these input shapes (a shape regime: a placement of\n"
             "its own when estimated faster by replan_gain); repeatable, up to 16"},
    {0},
};

static int compile_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                          const cli_value *v) {
  compile_args *a = ctx;
  if (opt && opt->id == COMPILE_REGIME) {
    if (a->n_regimes == COMPILE_MAX_REGIMES)
      return cli_usage_error(cmd->prog, "more than %d --regime options",
                             COMPILE_MAX_REGIMES);
    a->regimes[a->n_regimes++] = v->text;
    return 0;
  }
  if (opt) {
    a->output = v->text;
    return 0;
  }
  if (a->model)
    return cli_usage_error(cmd->prog, "unexpected argument '%s'", v->text);
  a->model = v->text;
  return 0;
}

static double compile_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cli_cmd_compile(int argc, char **argv) {
  compile_args a = {0};
  const cli_group groups[] = {
      {"compile", compile_options, compile_handle, &a},
      {"session options", cli_session_options, cli_common_handle, &a.common},
  };
  const cli_command cmd = {
      .prog = COMPILE_PROG,
      .synopsis = "MODEL -o FILE.hplan [options]",
      .about = "Makes the session the options describe (graph rewrites, placement with\n"
               "--shape, --policy and the rest, kernel timing) and writes it as an\n"
               "ahead-of-time plan (docs/plan-format.md).  Loading the plan (hetrt run,\n"
               "partview, het_session_create, hetrt.InferenceSession) does none of\n"
               "that work again; it is graded against the machine that loads it.",
      .examples = "  hetrt compile resnet50.onnx -o resnet50.hplan\n"
                  "  hetrt compile det.onnx -o det.hplan --providers emu,cpu \\\n"
                  "      --devices configs/devices/npu.yaml --shape images=1x3x640x640 \\\n"
                  "      --regime images=1x3x1280x1280\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  int rc = cli_parse(&cmd, argc, argv);
  if (rc != CLI_CONTINUE)
    goto done;
  rc = CLI_EXIT_USAGE;
  if (!a.model) {
    cli_usage_error(COMPILE_PROG, "no MODEL given");
    goto done;
  }
  if (!a.output) {
    cli_usage_error(COMPILE_PROG, "no output given (-o FILE.hplan)");
    goto done;
  }
  if ((rc = cli_make_options(&a.common, COMPILE_PROG, &opts)) != 0)
    goto done;
  rc = CLI_EXIT_FAILURE;
  double t0 = compile_now();
  cli_progress progress;
  cli_progress_init(&progress, false);
  cli_progress_show(&progress, 0, 2,
                    "making the session (rewrites, placement, kernel timing)");
  bool made = het_env_create(&env) == HET_OK &&
              het_session_create(env, a.model, opts, &s) == HET_OK;
  int regime[COMPILE_MAX_REGIMES];
  bool planned = true;
  for (int i = 0; made && planned && i < a.n_regimes; i++) {
    char what[320];
    snprintf(what, sizeof what, "planning for %s", a.regimes[i]);
    cli_progress_show(&progress, 0, 2, what);
    planned = het_session_plan_shapes(s, a.regimes[i], &regime[i]) == HET_OK;
  }
  made = made && planned;
  if (made)
    cli_progress_show(&progress, 1, 2, "writing the plan");
  bool saved = made && het_session_save_plan(s, a.output) == HET_OK;
  cli_progress_end(&progress, false);
  if (!env) {
    fprintf(stderr, "%s: %s\n", COMPILE_PROG, het_last_error());
  } else if (!planned) {
    fprintf(stderr, "%s: %s\n", COMPILE_PROG, het_last_error());
  } else if (!made) {
    cli_print_load_error(COMPILE_PROG, a.model);
  } else if (!saved) {
    fprintf(stderr, "%s: %s\n", COMPILE_PROG, het_last_error());
  } else {
    printf("%s: wrote %s in %.0f ms\n", a.model, a.output,
           (compile_now() - t0) * 1e3);
    for (int i = 0; i < a.n_regimes; i++)
      printf("  %s: shape regime %d%s\n", a.regimes[i], regime[i],
             regime[i] ? "" : " (the session's own placement)");
    cli_print_placement(stdout, s, a.common.verbose);
    rc = CLI_EXIT_OK;
  }
done:
  het_session_destroy(s);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}

typedef struct plan_args {
  const char *verb;
  const char *file;
} plan_args;

static int plan_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                       const cli_value *v) {
  plan_args *a = ctx;
  (void)opt;
  if (!a->verb)
    a->verb = v->text;
  else if (!a->file)
    a->file = v->text;
  else
    return cli_usage_error(cmd->prog, "unexpected argument '%s'", v->text);
  return 0;
}

static const cli_option plan_options[] = {{0}};

int cli_cmd_plan(int argc, char **argv) {
  plan_args a = {0};
  const cli_group groups[] = {{"plan", plan_options, plan_handle, &a}};
  const cli_command cmd = {
      .prog = PLAN_PROG,
      .synopsis = "info FILE",
      .about = "Prints what made a plan file (hetrt version, date, model, options),\n"
               "its fingerprint (CPU, instruction sets, caches, the providers'\n"
               "libraries), its sections, and its grade on this machine: optimal,\n"
               "suboptimal or unusable, with the reasons.  Exit status 1 for a file\n"
               "that is not an intact plan; an unusable plan is still described.",
      .examples = "  hetrt plan info resnet50.hplan\n",
      .groups = groups,
      .n_groups = 1,
  };
  int rc = cli_parse(&cmd, argc, argv);
  if (rc != CLI_CONTINUE)
    return rc;
  if (!a.verb || strcmp(a.verb, "info") != 0)
    return cli_usage_error(PLAN_PROG, "%s%s%s (the verb is 'info')",
                           a.verb ? "unknown verb '" : "no verb given",
                           a.verb ? a.verb : "", a.verb ? "'" : "");
  if (!a.file)
    return cli_usage_error(PLAN_PROG, "no plan FILE given");
  het_env *env = NULL;
  char *text = NULL;
  rc = CLI_EXIT_FAILURE;
  if (het_env_create(&env) != HET_OK || het_plan_get_info(env, a.file, &text) != HET_OK) {
    fprintf(stderr, "%s: %s\n", PLAN_PROG, het_last_error());
  } else {
    fputs(text, stdout);
    rc = CLI_EXIT_OK;
  }
  het_string_destroy(text);
  het_env_destroy(env);
  return rc;
}
