/* tuning.c — the remembered kernel choices of tuning.h.  The file is read
 * once per process, on first use (and on het_tuning_reload), into a table
 * under a mutex; each new
 * choice is appended as one line (a single write with O_APPEND, so
 * processes adding at once do not interleave inside a line).
 */
#include "kernels/tuning.h"

#include <fcntl.h>
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

bool het_tuning_get(const char *key, char *value, size_t cap) {
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
