/* cmd_test.c — `hetrt test DIR...`: runs ONNX backend-test cases with
 * het_testcase_run(), in-process or (--fork) one child process per case so
 * a crash or hang cannot stop the suite.  Prints PASS/FAIL/SKIP lines and
 * ends with "N passed, N failed, N skipped"; stderr, when a terminal,
 * shows the case running ("[12/915] test_abs").  Exit status 1 when a case
 * fails (with --expected FILE: when a listed case does not pass) or a DIR
 * holds no case, 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "testcase/testcase.h"

#define TEST_MSG_CAP 1024

typedef struct test_case {
  char *dir;
  const char *name; /* basename of dir */
  het_testcase_verdict verdict;
  char msg[TEST_MSG_CAP];
} test_case;

typedef struct test_args {
  cli_common common;
  bool fork_mode;
  long timeout_s;
  const char *list_passing;
  const char *expected;
  const char *dirs[CLI_MAX_ARGS];
  size_t n_dirs;
  test_case *cases;
  size_t n_cases, cap_cases;
} test_args;

#define TEST_PROG "hetrt test"

enum { TEST_FORK = 1, TEST_TIMEOUT, TEST_LIST_PASSING, TEST_EXPECTED };

static const cli_option test_options[] = {
    {.id = TEST_FORK, .name = "--fork", .kind = CLI_ARG_FLAG,
     .help = "run each case in a child process: a crash or a hang\nbecomes a FAIL"},
    {.id = TEST_TIMEOUT, .name = "--timeout", .kind = CLI_ARG_INT, .metavar = "S", .min = 1,
     .help = "with --fork, fail a case running over S seconds\n(default 300)"},
    {.id = TEST_LIST_PASSING, .name = "--list-passing", .kind = CLI_ARG_TEXT, .metavar = "FILE",
     .help = "write the names of the passing cases to FILE"},
    {.id = TEST_EXPECTED, .name = "--expected", .kind = CLI_ARG_TEXT, .metavar = "FILE",
     .help = "cases that should pass (one a line, # comments):\n"
             "exit 1 only when one of them does not"},
    {0},
};

static int test_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                       const cli_value *v) {
  test_args *a = ctx;
  if (!opt) {
    if (a->n_dirs >= CLI_MAX_ARGS)
      return cli_usage_error(cmd->prog, "more than %d folders", CLI_MAX_ARGS);
    a->dirs[a->n_dirs++] = v->text;
    return 0;
  }
  switch (opt->id) {
  case TEST_FORK: a->fork_mode = true; break;
  case TEST_TIMEOUT: a->timeout_s = v->number; break;
  case TEST_LIST_PASSING: a->list_passing = v->text; break;
  case TEST_EXPECTED: a->expected = v->text; break;
  }
  return 0;
}

/* Returns CLI_CONTINUE or the exit status. */
static int test_parse(int argc, char **argv, test_args *a) {
  const cli_group groups[] = {
      {"test options", test_options, test_handle, a},
      {"session options", cli_session_options, cli_common_handle, &a->common},
  };
  const cli_command cmd = {
      .prog = TEST_PROG,
      .synopsis = "DIR... [options]",
      .about = "Runs ONNX backend-test cases: each DIR is a case (model.onnx and\n"
               "test_data_set_*/{input,output}_K.pb) or a folder with cases below it.\n"
               "Prints PASS name, FAIL name: reason or SKIP name: reason per case and\n"
               "ends with 'N passed, N failed, N skipped'; on a terminal, stderr shows\n"
               "which case is running.  Exit status 1 when a case fails (with\n"
               "--expected: when a listed case does not pass).",
      .examples = "  hetrt test /usr/share/libonnx-testdata/data/node --fork --timeout 120\n"
                  "  hetrt test cases/ --providers emu,cpu --expected passing.txt\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  int rc = cli_parse(&cmd, argc, argv);
  if (rc == CLI_CONTINUE && a->n_dirs == 0)
    rc = cli_usage_error(TEST_PROG, "no DIR given");
  return rc;
}

/* ---- collecting cases ---- */

static bool test_is_case(const char *dir) {
  char path[4096];
  struct stat st;
  if (snprintf(path, sizeof path, "%s/model.onnx", dir) >= (int)sizeof path)
    return false;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool test_add_case(test_args *a, const char *dir) {
  if (a->n_cases == a->cap_cases) {
    size_t cap = a->cap_cases ? a->cap_cases * 2 : 256;
    test_case *c = realloc(a->cases, cap * sizeof *c);
    if (!c)
      return false;
    a->cases = c;
    a->cap_cases = cap;
  }
  test_case *c = &a->cases[a->n_cases];
  memset(c, 0, sizeof *c);
  size_t len = strlen(dir);
  while (len > 1 && dir[len - 1] == '/')
    len--;
  if (!(c->dir = strndup(dir, len)))
    return false;
  const char *slash = strrchr(c->dir, '/');
  c->name = slash ? slash + 1 : c->dir;
  a->n_cases++;
  return true;
}

static int test_cmp_dirent(const struct dirent **x, const struct dirent **y) {
  return strcmp((*x)->d_name, (*y)->d_name);
}

static bool test_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Adds dir itself when it is a case, else every case folder found below
 * it (sorted, at most depth levels down). */
static bool test_collect_below(test_args *a, const char *dir, int depth) {
  if (test_is_case(dir))
    return test_add_case(a, dir);
  if (depth == 0 || !test_is_dir(dir))
    return true;
  struct dirent **ents = NULL;
  int n = scandir(dir, &ents, NULL, test_cmp_dirent);
  if (n < 0) {
    fprintf(stderr, "hetrt test: %s: %s\n", dir, strerror(errno));
    return false;
  }
  bool ok = true;
  for (int i = 0; i < n; i++) {
    char path[4096];
    bool fits = snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name) < (int)sizeof path;
    if (ok && fits && ents[i]->d_name[0] != '.')
      ok = test_collect_below(a, path, depth - 1);
    free(ents[i]);
  }
  free(ents);
  return ok;
}

static bool test_collect(test_args *a, const char *dir) {
  size_t before = a->n_cases;
  if (!test_is_dir(dir)) {
    fprintf(stderr, "hetrt test: %s: not a folder\n", dir);
    return false;
  }
  if (!test_collect_below(a, dir, 3))
    return false;
  if (a->n_cases == before) {
    fprintf(stderr, "hetrt test: %s: no test cases (no model.onnx in it or below it)\n", dir);
    return false;
  }
  return true;
}

/* ---- running ---- */

static void test_run_inprocess(het_env *env, const het_session_options *opts, test_case *c) {
  if (het_testcase_run(env, c->dir, opts, &c->verdict, c->msg, sizeof c->msg) != HET_OK) {
    c->verdict = HET_TESTCASE_FAIL;
    snprintf(c->msg, sizeof c->msg, "%s", het_last_error());
  }
}

typedef struct test_wire {
  int verdict;
  char msg[TEST_MSG_CAP];
} test_wire;

/* The child of --fork: runs c with a fresh env (none is shared across
 * fork) and the parent's options, and writes a test_wire to fd. */
static void test_child(int fd, const het_session_options *opts, test_case *c) {
  het_env *env = NULL;
  test_wire w = {.verdict = HET_TESTCASE_FAIL};
  if (het_env_create(&env) != HET_OK) {
    snprintf(w.msg, sizeof w.msg, "env: %s", het_last_error());
  } else {
    test_run_inprocess(env, opts, c);
    w.verdict = (int)c->verdict;
    memcpy(w.msg, c->msg, sizeof w.msg);
  }
  het_env_destroy(env);
  ssize_t wr = write(fd, &w, sizeof w);
  _exit(wr == (ssize_t)sizeof w ? 0 : 3);
}

/* Waits for the child's result; kills it after timeout_ms. */
static void test_collect_child(pid_t pid, int fd, long timeout_s, test_case *c) {
  test_wire w;
  size_t got = 0;
  double deadline = cli_now_ms() + (double)timeout_s * 1000.0;
  bool timed_out = false;
  while (got < sizeof w) {
    double left = deadline - cli_now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int pr = left > 0 ? poll(&p, 1, (int)left + 1) : 0;
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr == 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    ssize_t r = pr > 0 ? read(fd, (char *)&w + got, sizeof w - got) : -1;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  c->verdict = HET_TESTCASE_FAIL;
  if (got == sizeof w) {
    c->verdict = (het_testcase_verdict)w.verdict;
    memcpy(c->msg, w.msg, sizeof c->msg);
    c->msg[sizeof c->msg - 1] = '\0';
  } else if (timed_out) {
    snprintf(c->msg, sizeof c->msg, "timed out after %ld s", timeout_s);
  } else if (WIFSIGNALED(status)) {
    snprintf(c->msg, sizeof c->msg, "crashed: signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  } else {
    snprintf(c->msg, sizeof c->msg, "child exited with status %d without a result",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
}

static void test_run_forked(const test_args *a, const het_session_options *opts,
                            test_case *c) {
  int fds[2];
  fflush(stdout);
  fflush(stderr);
  if (pipe(fds) != 0) {
    c->verdict = HET_TESTCASE_FAIL;
    snprintf(c->msg, sizeof c->msg, "pipe: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    test_child(fds[1], opts, c);
  }
  close(fds[1]);
  if (pid < 0) {
    c->verdict = HET_TESTCASE_FAIL;
    snprintf(c->msg, sizeof c->msg, "fork: %s", strerror(errno));
  } else {
    test_collect_child(pid, fds[0], a->timeout_s, c);
  }
  close(fds[0]);
}

static void test_print(const test_case *c) {
  static const char *const word[] = {"PASS", "FAIL", "SKIP"};
  char msg[TEST_MSG_CAP];
  snprintf(msg, sizeof msg, "%s", c->msg);
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  if (c->verdict == HET_TESTCASE_PASS)
    printf("PASS %s\n", c->name);
  else
    printf("%s %s: %s\n", word[c->verdict], c->name, msg[0] ? msg : "(no reason given)");
  fflush(stdout);
}

/* Runs every case, printing each verdict as it comes. */
static bool test_run_all(test_args *a, const het_session_options *opts) {
  het_env *env = NULL;
  cli_progress progress;
  /* with --fork the parent creates no env: its threads would not survive fork */
  if (!a->fork_mode && het_env_create(&env) != HET_OK) {
    fprintf(stderr, "hetrt test: %s\n", het_last_error());
    return false;
  }
  cli_progress_init(&progress, false);
  for (size_t i = 0; i < a->n_cases; i++) {
    cli_progress_show(&progress, i + 1, a->n_cases, a->cases[i].name);
    if (a->fork_mode)
      test_run_forked(a, opts, &a->cases[i]);
    else
      test_run_inprocess(env, opts, &a->cases[i]);
    cli_progress_end(&progress, false);
    test_print(&a->cases[i]);
  }
  het_env_destroy(env);
  return true;
}

/* ---- reporting ---- */

static bool test_write_passing(const test_args *a) {
  FILE *f = fopen(a->list_passing, "w");
  if (!f) {
    fprintf(stderr, "hetrt test: cannot write %s: %s\n", a->list_passing, strerror(errno));
    return false;
  }
  for (size_t i = 0; i < a->n_cases; i++)
    if (a->cases[i].verdict == HET_TESTCASE_PASS)
      fprintf(f, "%s\n", a->cases[i].name);
  return fclose(f) == 0;
}

static const test_case *test_find(const test_args *a, const char *name) {
  for (size_t i = 0; i < a->n_cases; i++)
    if (strcmp(a->cases[i].name, name) == 0)
      return &a->cases[i];
  return NULL;
}

/* Reads the expected list (one name per line, '#' comments) into a
 * malloc'd array of malloc'd names.  Returns the count, -1 on error. */
static long test_read_expected(const char *path, char ***names) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "hetrt test: --expected %s: %s\n", path, strerror(errno));
    return -1;
  }
  char line[1024];
  long n = 0, cap = 0;
  *names = NULL;
  while (fgets(line, sizeof line, f)) {
    char *s = line, *e;
    while (*s == ' ' || *s == '\t')
      s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
      *--e = '\0';
    if (*s == '\0' || *s == '#')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      char **grown = realloc(*names, (size_t)cap * sizeof **names);
      if (!grown)
        break;
      *names = grown;
    }
    if (((*names)[n] = strdup(s)) != NULL)
      n++;
  }
  fclose(f);
  return n;
}

static bool test_listed(char **names, long n, const char *name) {
  for (long i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0)
      return true;
  return false;
}

/* Compares the passing set with the expected list; returns the number of
 * regressions, or -1 when the list cannot be read. */
static long test_compare_expected(const test_args *a) {
  char **names = NULL;
  long n = test_read_expected(a->expected, &names), regressions = 0, fresh = 0, missing = 0;
  if (n < 0)
    return -1;
  for (size_t i = 0; i < a->n_cases; i++) {
    const test_case *c = &a->cases[i];
    if (c->verdict == HET_TESTCASE_PASS && !test_listed(names, n, c->name)) {
      printf("NEW PASS %s\n", c->name);
      fresh++;
    }
  }
  for (long i = 0; i < n; i++) {
    const test_case *c = test_find(a, names[i]);
    if (!c) {
      printf("NOT RUN %s (listed in %s but not found)\n", names[i], a->expected);
      missing++;
    } else if (c->verdict != HET_TESTCASE_PASS) {
      printf("REGRESSION %s: %s\n", c->name, c->msg);
      regressions++;
    }
    free(names[i]);
  }
  free(names);
  printf("expected %ld passing: %ld regressions, %ld new passes, %ld not run\n", n, regressions,
         fresh, missing);
  return regressions;
}

int cli_cmd_test(int argc, char **argv) {
  test_args a = {.timeout_s = 300};
  het_session_options *opts = NULL;
  int rc = test_parse(argc, argv, &a);
  if (rc != CLI_CONTINUE || (rc = cli_make_options(&a.common, TEST_PROG, &opts)) != 0)
    goto done;
  /* a folder that is not there is a failure, like a model that is not */
  for (size_t i = 0; rc == 0 && i < a.n_dirs; i++)
    if (!test_collect(&a, a.dirs[i]))
      rc = CLI_EXIT_FAILURE;
  if (rc == 0 && !test_run_all(&a, opts))
    rc = CLI_EXIT_FAILURE;
  if (rc == 0) {
    size_t count[3] = {0};
    for (size_t i = 0; i < a.n_cases; i++)
      count[a.cases[i].verdict]++;
    if (a.list_passing && !test_write_passing(&a))
      rc = CLI_EXIT_FAILURE;
    if (a.expected) {
      if (test_compare_expected(&a) != 0)
        rc = CLI_EXIT_FAILURE;
    } else if (count[HET_TESTCASE_FAIL] > 0) {
      rc = CLI_EXIT_FAILURE;
    }
    printf("%zu passed, %zu failed, %zu skipped\n", count[HET_TESTCASE_PASS],
           count[HET_TESTCASE_FAIL], count[HET_TESTCASE_SKIP]);
  }
done:
  for (size_t i = 0; i < a.n_cases; i++)
    free(a.cases[i].dir);
  free(a.cases);
  het_session_options_destroy(opts);
  cli_common_clear(&a.common);
  return rc;
}
