/* cmd_policy.c — `hetrt policy check FILE [MODEL]`: validates a YAML
 * placement policy (every error with its line and column) and, given a
 * model, makes the session the policy describes and lists the nodes each
 * rule matched, with the warnings (rules that match nothing or cannot be
 * followed).  Exit status: 0 valid, 1 invalid policy or failed session, 2
 * usage error.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define POLICY_PROG "hetrt policy"

typedef struct policy_args {
  cli_common common;
  const char *verb;
  const char *file;
  const char *model;
} policy_args;

static int policy_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                         const cli_value *v) {
  policy_args *a = ctx;
  (void)opt;
  if (!a->verb)
    a->verb = v->text;
  else if (!a->file)
    a->file = v->text;
  else if (!a->model)
    a->model = v->text;
  else
    return cli_usage_error(cmd->prog, "unexpected argument '%s'", v->text);
  return 0;
}

static const cli_option policy_options[] = {{0}};

static int policy_parse(int argc, char **argv, policy_args *a) {
  const cli_group groups[] = {
      {"policy", policy_options, policy_handle, a},
      {"session options", cli_session_options, cli_common_handle, &a->common},
  };
  const cli_command cmd = {
      .prog = POLICY_PROG,
      .synopsis = "check FILE [MODEL] [options]",
      .about = "Checks a YAML placement policy (docs/policy.md): a malformed one fails\n"
               "with FILE:LINE:COLUMN and what was expected.  Given MODEL, makes the\n"
               "session the policy describes (with the session options given) and\n"
               "lists the nodes each rule matched, and the warnings: rules that match\n"
               "no node, providers the machine lacks, nodes a rule cannot be followed\n"
               "for.",
      .examples = "  hetrt policy check configs/policies/cpu-only.yaml\n"
                  "  hetrt policy check configs/policies/attention-on-device.yaml \\\n"
                  "      model.onnx --devices configs/devices/npu.yaml\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  int rc = cli_parse(&cmd, argc, argv);
  if (rc != CLI_CONTINUE)
    return rc;
  if (!a->verb || strcmp(a->verb, "check") != 0)
    return cli_usage_error(POLICY_PROG, "%s%s%s (the verb is 'check')",
                           a->verb ? "unknown verb '" : "no verb given",
                           a->verb ? a->verb : "", a->verb ? "'" : "");
  if (!a->file)
    return cli_usage_error(POLICY_PROG, "no policy FILE given");
  if (a->common.policy)
    return cli_usage_error(POLICY_PROG, "give the policy as FILE, not --policy");
  return CLI_CONTINUE;
}

int cli_cmd_policy(int argc, char **argv) {
  policy_args a = {0};
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  char *text = NULL;
  int rc = policy_parse(argc, argv, &a);
  if (rc != CLI_CONTINUE)
    goto done;
  a.common.policy = a.file;
  rc = CLI_EXIT_FAILURE;
  /* A bad policy is this command's finding, not a usage error. */
  if (het_session_options_create(&opts) != HET_OK ||
      het_session_options_load_policy(opts, a.file) != HET_OK) {
    fprintf(stderr, "%s: %s\n", POLICY_PROG, het_last_error());
    goto done;
  }
  het_session_options_destroy(opts);
  opts = NULL;
  if ((rc = cli_make_options(&a.common, POLICY_PROG, &opts)) != 0)
    goto done;
  rc = CLI_EXIT_FAILURE;
  if (!a.model) {
    printf("%s: valid (provider names are checked against a session: give a MODEL "
           "to see the nodes each rule matches)\n",
           a.file);
    rc = CLI_EXIT_OK;
  } else if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "%s: %s\n", POLICY_PROG, het_last_error());
  } else if (het_session_create(env, a.model, opts, &s) != HET_OK) {
    cli_print_load_error(POLICY_PROG, a.model);
  } else if (het_session_explain(s, "rules", &text) != HET_OK) {
    fprintf(stderr, "%s: %s\n", POLICY_PROG, het_last_error());
  } else {
    printf("%s: valid for %s\n%s", a.file, a.model, text);
    rc = CLI_EXIT_OK;
  }
done:
  het_string_destroy(text);
  het_session_destroy(s);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}
