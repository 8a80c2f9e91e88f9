/* main.c — `partview`: loads a model into a session with the given
 * providers, device profiles and algorithm, and prints the placement report
 * (het_session_explain) as text, JSON, DOT or HTML to stdout or a file.
 * Exit status: 0 success, 1 the library failed (message from
 * het_last_error()), 2 bad command line.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"

#define PV_MAX_DEVICES 16

typedef struct pv_args {
  const char *model;
  const char *providers;
  const char *devices[PV_MAX_DEVICES];
  int n_devices;
  const char *algorithm;
  const char *format;
  const char *output;
  const char *threads;
  const char *node_times;
  const char *optimization;
  bool non_strict;
} pv_args;

static void pv_usage(FILE *f) {
  fprintf(f,
          "usage: partview MODEL [options]\n"
          "\n"
          "Shows where each node of MODEL would run: provider and reason per node,\n"
          "subgraphs, boundary (copy/layout/cast) nodes with the bytes they move,\n"
          "estimated cost per subgraph and in total, planned peak memory per device\n"
          "and the estimated latency of the cost algorithm against priority.\n"
          "\n"
          "options:\n"
          "  --providers LIST       provider priority list, e.g. emu,cpu (default cpu)\n"
          "  --devices PROFILE ...  device profiles (YAML), repeatable or comma-separated\n"
          "  --algorithm A          cost (default) or priority\n"
          "  --format F             text (default), json, dot or html\n"
          "  -o, --output FILE      write the report to FILE instead of stdout\n"
          "  --threads N            CPU threads\n"
          "  --non-strict           skip unknown/unbuilt/absent providers with a warning\n"
          "  --optimization LEVEL   graph rewrites first: none, basic, extended or\n"
          "                         all (default)\n"
          "                         (default; the report shows the rewritten graph)\n"
          "  --node-times FILE      plan with measured node times (hetrt bench\n"
          "                         --save-node-times FILE): profile-guided mode\n"
          "  -h, --help             this text;  --version  library and providers\n"
          "\n"
          "example: partview model.onnx --providers emu,cpu \\\n"
          "           --devices configs/devices/npu.yaml --format dot -o p.dot\n"
          "         dot -Tpng p.dot -o p.png\n");
}

static bool pv_is_profile(const char *s) {
  size_t n = strlen(s);
  return (n > 5 && strcmp(s + n - 5, ".yaml") == 0) ||
         (n > 4 && strcmp(s + n - 4, ".yml") == 0);
}

/* The value of option argv[*i]; NULL (after a message) when missing. */
static const char *pv_value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc) {
    fprintf(stderr, "partview: option %s needs a value\n", argv[*i]);
    return NULL;
  }
  return argv[++*i];
}

static bool pv_add_device(pv_args *a, const char *path) {
  if (a->n_devices == PV_MAX_DEVICES) {
    fprintf(stderr, "partview: more than %d --devices profiles\n",
            PV_MAX_DEVICES);
    return false;
  }
  a->devices[a->n_devices++] = path;
  return true;
}

/* Returns 0 to go on, or the exit status (help: 0 via *done). */
static int pv_parse(int argc, char **argv, pv_args *a, bool *done) {
  const char **slot;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    slot = NULL;
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      pv_usage(stdout);
      *done = true;
      return 0;
    } else if (strcmp(arg, "--version") == 0) {
      het_env *env = NULL;
      bool ok = het_env_create(&env) == HET_OK;
      printf("partview (hetrt %d.%d.%d, providers built: %s)\n",
             HET_VERSION_MAJOR, HET_VERSION_MINOR, HET_VERSION_PATCH,
             ok ? het_env_get_built_providers(env) : "?");
      het_env_destroy(env);
      *done = true;
      return 0;
    } else if (strcmp(arg, "--providers") == 0) {
      slot = &a->providers;
    } else if (strcmp(arg, "--algorithm") == 0) {
      slot = &a->algorithm;
    } else if (strcmp(arg, "--format") == 0) {
      slot = &a->format;
    } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      slot = &a->output;
    } else if (strcmp(arg, "--threads") == 0) {
      slot = &a->threads;
    } else if (strcmp(arg, "--node-times") == 0) {
      slot = &a->node_times;
    } else if (strcmp(arg, "--optimization") == 0) {
      slot = &a->optimization;
    } else if (strcmp(arg, "--non-strict") == 0) {
      a->non_strict = true;
      continue;
    } else if (strcmp(arg, "--devices") == 0) {
      const char *v = pv_value(argc, argv, &i);
      if (!v || !pv_add_device(a, v))
        return 2;
      while (i + 1 < argc && argv[i + 1][0] != '-' && pv_is_profile(argv[i + 1]))
        if (!pv_add_device(a, argv[++i]))
          return 2;
      continue;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      fprintf(stderr, "partview: unknown option '%s' (see --help)\n", arg);
      return 2;
    } else if (!a->model) {
      a->model = arg;
      continue;
    } else {
      fprintf(stderr, "partview: unexpected argument '%s' (model is '%s')\n",
              arg, a->model);
      return 2;
    }
    if (!(*slot = pv_value(argc, argv, &i)))
      return 2;
  }
  if (!a->model) {
    fprintf(stderr, "partview: no MODEL given\n\n");
    pv_usage(stderr);
    return 2;
  }
  return 0;
}

/* "a.yaml,b.yaml" from the --devices list; caller frees. */
static char *pv_join_devices(const pv_args *a) {
  size_t n = 1;
  for (int d = 0; d < a->n_devices; d++)
    n += strlen(a->devices[d]) + 1;
  char *s = malloc(n);
  if (!s)
    return NULL;
  s[0] = '\0';
  for (int d = 0; d < a->n_devices; d++) {
    if (d)
      strcat(s, ",");
    strcat(s, a->devices[d]);
  }
  return s;
}

static het_status pv_options(const pv_args *a, het_session_options *o) {
  het_status st = HET_OK;
  if (a->providers)
    st = het_session_options_set(o, "providers", a->providers);
  if (st == HET_OK && a->threads)
    st = het_session_options_set(o, "threads", a->threads);
  if (st == HET_OK && a->algorithm)
    st = het_session_options_set(o, "algorithm", a->algorithm);
  if (st == HET_OK && a->non_strict)
    st = het_session_options_set(o, "strict", "false");
  if (st == HET_OK && a->node_times)
    st = het_session_options_set(o, "node_times", a->node_times);
  if (st == HET_OK && a->optimization)
    st = het_session_options_set(o, "optimization", a->optimization);
  if (st == HET_OK && a->n_devices) {
    char *list = pv_join_devices(a);
    if (!list) {
      fprintf(stderr, "partview: out of memory\n");
      return HET_ERR_OUT_OF_MEMORY;
    }
    st = het_session_options_set(o, "devices", list);
    free(list);
  }
  return st;
}

static int pv_write(const pv_args *a, const char *text) {
  FILE *f = a->output ? fopen(a->output, "w") : stdout;
  if (!f) {
    fprintf(stderr, "partview: cannot open '%s' for writing\n", a->output);
    return 1;
  }
  size_t n = strlen(text);
  bool ok = fwrite(text, 1, n, f) == n;
  ok = (a->output ? fclose(f) : fflush(f)) == 0 && ok;
  if (!ok) {
    fprintf(stderr, "partview: writing '%s' failed\n",
            a->output ? a->output : "stdout");
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  pv_args a = {.format = "text"};
  bool done = false;
  int rc = pv_parse(argc, argv, &a, &done);
  if (rc != 0 || done)
    return rc;

  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *session = NULL;
  char *text = NULL;
  het_status st = het_env_create(&env);
  if (st == HET_OK)
    st = het_session_options_create(&opts);
  if (st == HET_OK)
    st = pv_options(&a, opts);
  if (st == HET_OK)
    st = het_session_create(env, a.model, opts, &session);
  if (st == HET_OK)
    st = het_session_explain(session, a.format, &text);
  if (st != HET_OK) {
    fprintf(stderr, "partview: %s: %s\n", het_status_str(st),
            het_last_error());
    rc = 1;
  } else {
    rc = pv_write(&a, text);
  }
  het_string_destroy(text);
  het_session_destroy(session);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  return rc;
}
