/* tuning.c — the remembered kernel choices of tuning.h.  The file is read
 * once per process, on first use (and on het_tuning_reload), into a table
 * under a mutex; each new
 * choice is appended as one line (a single write with O_APPEND, so
 * processes adding at once do not interleave inside a line).
 */
#include "kernels/tuning.h"

#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cache.h"

#define HET_TUNING_FILE "kernel-choices.txt"
#define HET_TUNING_MAX 4096 /* choices held; more are not remembered */

typedef struct het_tuning_entry {
  char key[HET_TUNING_KEY_CAP];
  char value[HET_TUNING_VALUE_CAP];
} het_tuning_entry;

static pthread_mutex_t het_tuning_lock = PTHREAD_MUTEX_INITIALIZER;
static bool het_tuning_loaded;
static het_tuning_entry *het_tuning_table;
static int het_tuning_n;
static bool het_tuning_off;
static char het_tuning_cpu[160]; /* "<model name> x<logical CPUs>" */

static void het_tuning_cpu_name(void) {
  char model[128] = "unknown-cpu";
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(model, sizeof model, "%s", colon + 2);
      model[strcspn(model, "\n")] = '\0';
      break;
    }
  }
  if (f)
    fclose(f);
  for (char *p = model; *p; p++)
    if (*p == '\t' || *p == ' ')
      *p = '_';
  snprintf(het_tuning_cpu, sizeof het_tuning_cpu, "%s_x%ld", model,
           sysconf(_SC_NPROCESSORS_CONF));
}

/* Index of key in the table, or -1 (lock held). */
static int het_tuning_find(const char *key) {
  for (int i = het_tuning_n - 1; i >= 0; i--)
    if (strcmp(het_tuning_table[i].key, key) == 0)
      return i;
  return -1;
}

/* Sets key to value in the table (lock held). */
static void het_tuning_set(const char *key, const char *value) {
  int i = het_tuning_find(key);
  if (i < 0 && het_tuning_n < HET_TUNING_MAX)
    i = het_tuning_n++;
  if (i < 0)
    return;
  snprintf(het_tuning_table[i].key, HET_TUNING_KEY_CAP, "%s", key);
  snprintf(het_tuning_table[i].value, HET_TUNING_VALUE_CAP, "%s", value);
}

/* Reads the file into the table (lock held). */
static void het_tuning_load(void) {
  const char *mode = getenv("HETRT_TUNING");
  het_tuning_loaded = true;
  het_tuning_off = mode && strcmp(mode, "off") == 0;
  het_tuning_cpu_name();
  if (!het_tuning_table)
    het_tuning_table = calloc(HET_TUNING_MAX, sizeof *het_tuning_table);
  het_tuning_n = 0;
  char path[4096];
  if (het_tuning_off || !het_tuning_table ||
      !het_cache_path(HET_TUNING_FILE, path, sizeof path, false))
    return;
  FILE *f = fopen(path, "r");
  char line[HET_TUNING_KEY_CAP + HET_TUNING_VALUE_CAP + 8];
  while (f && fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n')
      continue; /* too long or cut off: not one of ours */
    line[len - 1] = '\0';
    char *tab = strchr(line, '\t');
    if (!tab || tab == line || !tab[1] || strchr(tab + 1, '\t') ||
        (size_t)(tab - line) >= HET_TUNING_KEY_CAP ||
        strlen(tab + 1) >= HET_TUNING_VALUE_CAP)
      continue;
    *tab = '\0';
    het_tuning_set(line, tab + 1);
  }
  if (f)
    fclose(f);
}

/* key with the CPU in front, into full (cap bytes); false if too long. */
static bool het_tuning_full_key(const char *key, char *full, size_t cap) {
  int n = snprintf(full, cap, "%s %s", het_tuning_cpu, key);
  return n > 0 && (size_t)n < cap && !strpbrk(full, "\t\n");
}

void het_tuning_reload(void) {
  pthread_mutex_lock(&het_tuning_lock);
  het_tuning_load();
  pthread_mutex_unlock(&het_tuning_lock);
}

static bool het_tuning_get_remembered(const char *key, char *value,
                                      size_t cap);

/* ---- per-thread capture and replay ---- */

typedef struct het_tuning_log {
  char *text;
  size_t len, cap;
  bool failed;
} het_tuning_log;

static _Thread_local het_tuning_log *het_tuning_capture;
static _Thread_local const char *het_tuning_replay;
static _Thread_local size_t het_tuning_replay_len;

void het_tuning_capture_begin(void) {
  het_tuning_capture = calloc(1, sizeof *het_tuning_capture);
}

char *het_tuning_capture_end(void) {
  het_tuning_log *l = het_tuning_capture;
  het_tuning_capture = NULL;
  char *text = l && !l->failed ? l->text : NULL;
  if (l && l->failed)
    free(l->text);
  free(l);
  return text ? text : calloc(1, 1);
}

/* Appends "key<TAB>value\n" to the capture (a key seen before is kept). */
static void het_tuning_record(const char *key, const char *value) {
  het_tuning_log *l = het_tuning_capture;
  if (!l || l->failed || strpbrk(key, "\t\n") || strpbrk(value, "\t\n"))
    return;
  size_t need = strlen(key) + strlen(value) + 3;
  if (l->len + need > l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 1024;
    while (cap < l->len + need)
      cap *= 2;
    char *t = realloc(l->text, cap);
    if (!t) {
      l->failed = true;
      return;
    }
    l->text = t;
    l->cap = cap;
  }
  l->len += (size_t)snprintf(l->text + l->len, l->cap - l->len, "%s\t%s\n",
                             key, value);
}

void het_tuning_replay_begin(const char *lines, size_t len) {
  het_tuning_replay = lines ? lines : "";
  het_tuning_replay_len = lines ? len : 0;
}

void het_tuning_replay_end(void) {
  het_tuning_replay = NULL;
  het_tuning_replay_len = 0;
}

bool het_tuning_may_time(void) { return !het_tuning_replay; }

/* key's value in the replayed lines into value; false if absent. */
static bool het_tuning_replayed(const char *key, char *value, size_t cap) {
  const char *p = het_tuning_replay, *end = p + het_tuning_replay_len;
  size_t klen = strlen(key);
  bool found = false;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    if ((size_t)(stop - p) > klen && strncmp(p, key, klen) == 0 &&
        p[klen] == '\t') {
      snprintf(value, cap, "%.*s", (int)(stop - p - (ptrdiff_t)klen - 1),
               p + klen + 1);
      found = true; /* the last line for a key wins */
    }
    p = stop + 1;
  }
  return found;
}

bool het_tuning_get(const char *key, char *value, size_t cap) {
  if (het_tuning_replay) {
    bool found = het_tuning_replayed(key, value, cap);
    if (found)
      het_tuning_record(key, value);
    return found;
  }
  bool found = het_tuning_get_remembered(key, value, cap);
  if (found)
    het_tuning_record(key, value);
  return found;
}

static bool het_tuning_get_remembered(const char *key, char *value,
                                      size_t cap) {
  char full[HET_TUNING_KEY_CAP];
  pthread_mutex_lock(&het_tuning_lock);
  if (!het_tuning_loaded)
    het_tuning_load();
  int i = het_tuning_off || !het_tuning_table ||
                  !het_tuning_full_key(key, full, sizeof full)
              ? -1
              : het_tuning_find(full);
  if (i >= 0)
    snprintf(value, cap, "%s", het_tuning_table[i].value);
  pthread_mutex_unlock(&het_tuning_lock);
  return i >= 0;
}

void het_tuning_put(const char *key, const char *value) {
  char full[HET_TUNING_KEY_CAP];
  het_tuning_record(key, value);
  pthread_mutex_lock(&het_tuning_lock);
  if (!het_tuning_loaded)
    het_tuning_load();
  if (het_tuning_off || !het_tuning_table ||
      !het_tuning_full_key(key, full, sizeof full) ||
      strlen(value) >= HET_TUNING_VALUE_CAP || strpbrk(value, "\t\n")) {
    pthread_mutex_unlock(&het_tuning_lock);
    return;
  }
  het_tuning_set(full, value);
  char path[4096], line[HET_TUNING_KEY_CAP + HET_TUNING_VALUE_CAP + 8];
  int n = snprintf(line, sizeof line, "%s\t%s\n", full, value);
  if (het_cache_path(HET_TUNING_FILE, path, sizeof path, true)) {
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ssize_t w = write(fd, line, (size_t)n);
      (void)w; /* best effort */
      close(fd);
    }
  }
  pthread_mutex_unlock(&het_tuning_lock);
}
