/* cmd_quantize.c — `hetrt quantize MODEL -o OUT.onnx`: static
 * post-training quantization into a QDQ model through hetrt/quantize.h,
 * calibrated on inputs from a folder (test_data_set_* folders, or one .pb
 * per input for a single-input model) or on random normal inputs (with a
 * warning), then an accuracy report on inputs held apart from
 * calibration.  Exit status: 0 ok, 1 model/run error, 2 usage error.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hetrt/quantize.h"

#define QUANT_MAX_FILES 4096

typedef struct quant_args {
  cli_common common;
  const char *model, *out, *data, *eval_data;
  long holdout;    /* -1: a fifth of the calibration inputs */
  long random;     /* 0: none */
  size_t n_eval;   /* evaluation inputs given to the quantizer */
  bool dynamic;    /* --dynamic: input sets only feed the report */
  size_t n_set;    /* quantizer options, key=value, and the option that set each */
  const char *set_key[16], *set_value[16], *set_opt[16];
} quant_args;

#define QUANT_PROG "hetrt quantize"

static bool quant_set(quant_args *a, const char *opt, const char *key, const char *value) {
  if (a->n_set == sizeof a->set_key / sizeof a->set_key[0])
    return false;
  a->set_opt[a->n_set] = opt;
  a->set_key[a->n_set] = key;
  a->set_value[a->n_set++] = value;
  return true;
}

enum {
  QUANT_OUTPUT = 1, QUANT_DATA, QUANT_EVAL_DATA, QUANT_HOLDOUT, QUANT_RANDOM, QUANT_DYNAMIC,
  QUANT_METHOD, QUANT_PERCENTILE, QUANT_PER_TENSOR, QUANT_ACTIVATION_TYPE,
  QUANT_EXCLUDE_OP_TYPES, QUANT_EXCLUDE_NODES,
};

static const cli_option quant_options[] = {
    {.id = QUANT_OUTPUT, .name = "--output", .alias = "-o", .kind = CLI_ARG_TEXT,
     .metavar = "OUT.onnx", .help = "where the quantized model goes (required)"},
    {.id = QUANT_DYNAMIC, .name = "--dynamic", .kind = CLI_ARG_FLAG,
     .help = "DynamicQuantizeLinear + MatMulInteger for the\n"
             "MatMuls with constant weights; no calibration"},
    {.id = QUANT_METHOD, .name = "--method", .kind = CLI_ARG_TEXT,
     .metavar = "minmax|percentile|entropy", .choice = true,
     .help = "activation range method (default percentile)"},
    {.id = QUANT_PERCENTILE, .name = "--percentile", .kind = CLI_ARG_TEXT, .metavar = "P",
     .help = "share of values kept by --method percentile\n(default 99.999)"},
    {.id = QUANT_PER_TENSOR, .name = "--per-tensor", .kind = CLI_ARG_FLAG,
     .help = "one weight scale per tensor instead of per channel"},
    {.id = QUANT_ACTIVATION_TYPE, .name = "--activation-type", .kind = CLI_ARG_TEXT,
     .metavar = "uint8|int8", .choice = true, .help = "type of quantized activations (default uint8)"},
    {.id = QUANT_EXCLUDE_OP_TYPES, .name = "--exclude-op-types", .kind = CLI_ARG_TEXT,
     .metavar = "A,B", .help = "op types to leave in float"},
    {.id = QUANT_EXCLUDE_NODES, .name = "--exclude-nodes", .kind = CLI_ARG_TEXT,
     .metavar = "GLOB,...", .help = "node names (globs) to leave in float"},
    {0},
};

static const cli_option quant_input_options[] = {
    {.id = QUANT_DATA, .name = "--data", .kind = CLI_ARG_TEXT, .metavar = "DIR",
     .help = "calibration inputs: test_data_set_N/input_K.pb\n"
             "folders, or one .pb per set (single-input model)"},
    {.id = QUANT_RANDOM, .name = "--random", .kind = CLI_ARG_INT, .metavar = "N", .min = 1,
     .help = "calibrate on N random normal input sets instead\n"
             "(with a warning: the ranges then fit noise)"},
    {.id = QUANT_EVAL_DATA, .name = "--eval-data", .kind = CLI_ARG_TEXT, .metavar = "DIR",
     .help = "inputs for the accuracy report (layout as --data)"},
    {.id = QUANT_HOLDOUT, .name = "--holdout", .kind = CLI_ARG_INT, .metavar = "N", .min = 0,
     .help = "without --eval-data, keep N --data sets for the\n"
             "report (default a fifth; 0: no report)"},
    {0},
};

/* Options that map to a quantizer key. */
static const struct {
  int id;
  const char *key;
} quant_keyed[] = {
    {QUANT_METHOD, "method"},
    {QUANT_PERCENTILE, "percentile"},
    {QUANT_ACTIVATION_TYPE, "activation_type"},
    {QUANT_EXCLUDE_OP_TYPES, "exclude_op_types"},
    {QUANT_EXCLUDE_NODES, "exclude_nodes"},
};

static int quant_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                        const cli_value *v) {
  quant_args *a = ctx;
  if (!opt) {
    if (a->model)
      return cli_usage_error(cmd->prog, "unexpected argument '%s' (MODEL is '%s')", v->text,
                             a->model);
    a->model = v->text;
    return 0;
  }
  for (size_t k = 0; k < sizeof quant_keyed / sizeof quant_keyed[0]; k++)
    if (quant_keyed[k].id == opt->id)
      return quant_set(a, opt->name, quant_keyed[k].key, v->text)
                 ? 0 : cli_usage_error(cmd->prog, "too many quantizer options");
  switch (opt->id) {
  case QUANT_OUTPUT: a->out = v->text; break;
  case QUANT_DATA: a->data = v->text; break;
  case QUANT_EVAL_DATA: a->eval_data = v->text; break;
  case QUANT_HOLDOUT: a->holdout = v->number; break;
  case QUANT_RANDOM: a->random = v->number; break;
  case QUANT_DYNAMIC:
    a->dynamic = true;
    quant_set(a, opt->name, "mode", "dynamic");
    break;
  case QUANT_PER_TENSOR: quant_set(a, opt->name, "per_channel", "false"); break;
  }
  return 0;
}

/* Returns CLI_CONTINUE or the exit status. */
static int quant_parse(int argc, char **argv, quant_args *a) {
  const cli_group groups[] = {
      {"quantize options", quant_options, quant_handle, a},
      {"input sets", quant_input_options, quant_handle, a},
      {"generated inputs", cli_dim_options, cli_common_handle, &a->common},
      {"session options (calibration and evaluation runs)", cli_session_options,
       cli_common_handle, &a->common},
  };
  const cli_command cmd = {
      .prog = QUANT_PROG,
      .synopsis = "MODEL -o OUT.onnx (--data DIR | --random N | --dynamic)\n"
                  "             [options]",
      .about = "int8 post-training quantization into a QDQ model (docs/quantize.md):\n"
               "calibrates on the input sets, writes OUT.onnx, then prints an accuracy\n"
               "report on inputs held apart from calibration.  On a terminal, stderr\n"
               "shows the calibration's progress; elsewhere a line per tenth.",
      .examples = "  hetrt quantize model.onnx -o model.int8.onnx --data calib/ --method entropy\n"
                  "  hetrt quantize bert.onnx -o bert.dyn.onnx --dynamic --data eval/\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  a->holdout = -1;
  int rc = cli_parse(&cmd, argc, argv);
  if (rc != CLI_CONTINUE)
    return rc;
  if (!a->model)
    return cli_usage_error(QUANT_PROG, "no MODEL given");
  if (!a->out)
    return cli_usage_error(QUANT_PROG, "no -o OUT.onnx given");
  if (a->data && a->random)
    return cli_usage_error(QUANT_PROG, "--data and --random exclude each other");
  if (!a->dynamic && !a->data && !a->random)
    return cli_usage_error(QUANT_PROG, "give --data DIR or --random N (or --dynamic)");
  return CLI_CONTINUE;
}

/* ---- progress ---- */

/* The quantizer's progress callback: one cli_progress line per phase, kept
 * on the terminal when the phase ends. */
static void quant_on_progress(void *ctx, const char *phase, size_t done, size_t total) {
  cli_progress *p = ctx;
  cli_progress_show(p, done, total, phase);
  if (done == total)
    cli_progress_end(p, true);
}

/* ---- inputs ---- */

/* Natural order: input_2.pb before input_10.pb. */
static int quant_cmp(const void *a, const void *b) {
  return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's entries that start with prefix and end with suffix
 * (either may be ""); *n the count.  NULL (message printed) on error. */
static char **quant_list(const char *dir, const char *prefix, const char *suffix, size_t *n) {
  DIR *d = opendir(dir);
  *n = 0;
  if (!d) {
    fprintf(stderr, "hetrt quantize: cannot open folder %s\n", dir);
    return NULL;
  }
  char **names = calloc(QUANT_MAX_FILES, sizeof *names);
  struct dirent *e;
  while (names && (e = readdir(d)) && *n < QUANT_MAX_FILES) {
    size_t len = strlen(e->d_name), sl = strlen(suffix);
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || e->d_name[0] == '.' ||
        len < sl || strcmp(e->d_name + len - sl, suffix) != 0)
      continue;
    if (!(names[*n] = strdup(e->d_name)))
      break;
    (*n)++;
  }
  closedir(d);
  if (names)
    qsort(names, *n, sizeof *names, quant_cmp);
  return names;
}

static void quant_list_free(char **names, size_t n) {
  for (size_t i = 0; names && i < n; i++)
    free(names[i]);
  free(names);
}

/* A sample folder: test_data_set_N folders of input_K.pb, or one .pb per sample
 * (single-input models).  Calls add(ctx, inputs) per sample. */
typedef bool (*quant_add_fn)(void *ctx, const cli_inputs *in);

static bool quant_read_sets(het_session *s, const cli_common *c, const char *dir,
                            quant_add_fn add, void *ctx, size_t *count) {
  size_t n_sets = 0, n_pb = 0;
  char **sets = quant_list(dir, "test_data_set_", "", &n_sets);
  char **pbs = sets ? quant_list(dir, "", ".pb", &n_pb) : NULL;
  bool ok = sets && pbs;
  *count = 0;
  if (ok && n_sets == 0 && n_pb > 0 && het_session_get_input_count(s) != 1) {
    fprintf(stderr, "hetrt quantize: %s holds .pb files, one input each, but the model has "
            "%zu inputs: put each input set in a test_data_set_N folder\n", dir,
            het_session_get_input_count(s));
    ok = false;
  }
  if (ok && n_sets == 0 && n_pb == 0) {
    fprintf(stderr, "hetrt quantize: %s has no test_data_set_* folder and no .pb file\n", dir);
    ok = false;
  }
  for (size_t k = 0; ok && k < (n_sets ? n_sets : n_pb); k++) {
    char path[8192], *files[CLI_MAX_ARGS] = {0};
    size_t n_files = 0;
    cli_inputs in = {0};
    if (n_sets) {
      char sub[4096];
      size_t n_inputs = 0;
      snprintf(sub, sizeof sub, "%s/%s", dir, sets[k]);
      char **inputs = quant_list(sub, "input_", ".pb", &n_inputs);
      ok = inputs != NULL;
      for (; ok && n_files < n_inputs && n_files < CLI_MAX_ARGS; n_files++) {
        snprintf(path, sizeof path, "%s/%s", sub, inputs[n_files]);
        ok = (files[n_files] = strdup(path)) != NULL;
      }
      quant_list_free(inputs, n_inputs);
    } else {
      snprintf(path, sizeof path, "%s/%s", dir, pbs[k]);
      files[0] = strdup(path);
      n_files = 1;
      ok = files[0] != NULL;
    }
    ok = ok && cli_bind_inputs(s, c, (const char *const *)files, n_files, false, &in) &&
         add(ctx, &in);
    cli_inputs_clear(&in);
    for (size_t j = 0; j < n_files; j++)
      free(files[j]);
    *count += ok;
  }
  quant_list_free(sets, n_sets);
  quant_list_free(pbs, n_pb);
  return ok;
}

/* Calibration inputs from --data, with every held-apart one (evenly spread)
 * going to evaluation instead. */
typedef struct quant_feed {
  het_quantizer *q;
  size_t index, total, holdout;
  bool evaluation; /* all inputs go to evaluation (--eval-data) */
} quant_feed;

static bool quant_held_apart(const quant_feed *f, size_t i) {
  return f->holdout && (i + 1) * f->holdout / f->total > i * f->holdout / f->total;
}

static bool quant_add(void *ctx, const cli_inputs *in) {
  quant_feed *f = ctx;
  bool eval = f->evaluation || quant_held_apart(f, f->index);
  f->index++;
  if (het_quantizer_add_input(f->q, eval, in->names, in->tensors, in->n) != HET_OK) {
    fprintf(stderr, "hetrt quantize: %s\n", het_last_error());
    return false;
  }
  return true;
}

static bool quant_count(void *ctx, const cli_inputs *in) {
  (void)in;
  (*(size_t *)ctx)++;
  return true;
}

static bool quant_feed_data(het_session *s, quant_args *a, het_quantizer *q) {
  size_t total = 0, n;
  if (!quant_read_sets(s, &a->common, a->data, quant_count, &total, &n))
    return false;
  quant_feed f = {.q = q, .total = total, .evaluation = a->dynamic};
  if (a->dynamic) {
    a->n_eval = total;
    return quant_read_sets(s, &a->common, a->data, quant_add, &f, &n);
  }
  f.holdout = a->eval_data ? 0 : a->holdout >= 0 ? (size_t)a->holdout : total / 5;
  if (f.holdout >= total) {
    fprintf(stderr, "hetrt quantize: --holdout %zu leaves no calibration input (%zu given)\n",
            f.holdout, total);
    return false;
  }
  if (!quant_read_sets(s, &a->common, a->data, quant_add, &f, &n))
    return false;
  a->n_eval = f.holdout;
  if (a->eval_data) {
    quant_feed e = {.q = q, .evaluation = true};
    if (!quant_read_sets(s, &a->common, a->eval_data, quant_add, &e, &a->n_eval))
      return false;
  }
  fprintf(stderr, "calibrating on %zu input set%s from %s", total - f.holdout,
          total - f.holdout == 1 ? "" : "s", a->data);
  if (f.holdout)
    fprintf(stderr, " (%zu more held apart for the accuracy report)", f.holdout);
  fprintf(stderr, "\n");
  return true;
}

static bool quant_feed_random(het_session *s, quant_args *a, het_quantizer *q) {
  /* dynamic mode calibrates nothing: every input set is for the report */
  size_t n_calib = a->dynamic ? 0 : (size_t)a->random;
  size_t n_eval = a->dynamic         ? (size_t)a->random
                  : a->holdout >= 0  ? (size_t)a->holdout
                  : (size_t)(a->random / 5 ? a->random / 5 : 1);
  if (!a->dynamic)
    fprintf(stderr, "hetrt quantize: warning: calibrating on %ld random normal inputs: the "
            "ranges then fit N(0, 1) noise, not the data the model will see; give --data with "
            "real inputs for a model worth deploying\n", a->random);
  a->n_eval = n_eval;
  for (size_t i = 0; i < n_calib + n_eval; i++) {
    cli_inputs in = {0};
    a->common.seed = 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull * (i + 1);
    bool ok = cli_bind_inputs(s, &a->common, NULL, 0, true, &in) &&
              het_quantizer_add_input(q, i >= n_calib, in.names, in.tensors, in.n) == HET_OK;
    if (!ok && in.n)
      fprintf(stderr, "hetrt quantize: %s\n", het_last_error());
    cli_inputs_clear(&in);
    if (!ok)
      return false;
  }
  return true;
}

/* ---- main ---- */

static void quant_print_warnings(const het_quantizer *q, size_t *shown) {
  for (; *shown < het_quantizer_get_warning_count(q); (*shown)++)
    fprintf(stderr, "hetrt quantize: warning: %s\n", het_quantizer_get_warning(q, *shown));
}

static int quant_run(quant_args *a, het_env *env, het_session_options *o) {
  het_session *s = NULL;
  het_quantizer *q = NULL;
  cli_progress prog;
  size_t warned = 0;
  int rc = CLI_EXIT_FAILURE;
  cli_progress_init(&prog, true);
  if (het_session_create(env, a->model, o, &s) != HET_OK ||
      het_quantizer_create(env, a->model, o, &q) != HET_OK) {
    cli_print_load_error(QUANT_PROG, a->model);
    goto done;
  }
  for (size_t i = 0; i < a->n_set; i++)
    if (het_quantizer_set(q, a->set_key[i], a->set_value[i]) != HET_OK) {
      rc = cli_usage_error(QUANT_PROG, "%s: %s", a->set_opt[i], het_last_error());
      goto done;
    }
  if ((a->data || a->random) &&
      !(a->data ? quant_feed_data(s, a, q) : quant_feed_random(s, a, q)))
    goto done;
  het_session_destroy(s);
  s = NULL;
  het_quantizer_set_progress(q, quant_on_progress, &prog);
  if (het_quantizer_calibrate(q) != HET_OK || het_quantizer_save(q, a->out) != HET_OK) {
    fprintf(stderr, "hetrt quantize: %s\n", het_last_error());
    goto done;
  }
  quant_print_warnings(q, &warned);
  if (a->dynamic)
    printf("quantized %zu MatMuls dynamically into %s\n", het_quantizer_get_node_count(q),
           a->out);
  else
    printf("quantized %zu nodes and %zu activation tensors into %s\n",
           het_quantizer_get_node_count(q), het_quantizer_get_tensor_count(q), a->out);
  char *report = NULL;
  if (a->n_eval == 0) {
    printf("no accuracy report: no input was held apart (give --eval-data DIR, or more than "
           "one input set without --holdout 0)\n");
    rc = CLI_EXIT_OK;
  } else if (het_quantizer_get_node_count(q) == 0) {
    rc = CLI_EXIT_OK;
  } else if (het_quantizer_evaluate(q, &report) == HET_OK) {
    fputs(report, stdout);
    rc = CLI_EXIT_OK;
  } else {
    fprintf(stderr, "hetrt quantize: evaluation: %s\n", het_last_error());
  }
  het_string_destroy(report);
done:
  quant_print_warnings(q, &warned);
  het_quantizer_destroy(q);
  het_session_destroy(s);
  return rc;
}

int cli_cmd_quantize(int argc, char **argv) {
  quant_args a = {0};
  het_env *env = NULL;
  het_session_options *o = NULL;
  int rc = quant_parse(argc, argv, &a);
  if (rc != CLI_CONTINUE || (rc = cli_make_options(&a.common, QUANT_PROG, &o)) != 0)
    goto done;
  if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "hetrt quantize: %s\n", het_last_error());
    rc = CLI_EXIT_FAILURE;
  } else {
    rc = quant_run(&a, env, o);
  }
done:
  het_session_options_destroy(o);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}
