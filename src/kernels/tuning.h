/* tuning.h — kernel choices made by timing, remembered across processes:
 * kernel-choices.txt in the cache folder (core/cache.h), one "key<TAB>value"
 * line per choice, so only the first session on a machine pays for the
 * timing.  Keys carry the CPU (its model name and logical CPU count) and
 * what the caller adds (library version, shapes, fusions, layouts).
 * Unreadable, foreign or malformed lines are ignored; the last line for a
 * key wins.  HETRT_TUNING=off neither reads nor writes the file. */
#ifndef HET_KERNELS_TUNING_H
#define HET_KERNELS_TUNING_H

#include <stdbool.h>
#include <stddef.h>

#define HET_TUNING_KEY_CAP 400
#define HET_TUNING_VALUE_CAP 160

/* The remembered value for key into value (cap bytes); false if none. */
bool het_tuning_get(const char *key, char *value, size_t cap);
/* Remembers value for key, in this process and in the file (best
 * effort: a cache folder that cannot be written keeps it in memory). */
void het_tuning_put(const char *key, const char *value);
/* Reads the file again, dropping what this process holds (for tests and
 * tools that change the file or the environment). */
void het_tuning_reload(void);

/* Choices of one compile, for ahead-of-time plans (per thread: a compile
 * prepares its kernels on the thread that calls it).
 * Capture: between het_tuning_capture_begin and het_tuning_capture_end
 * every choice this thread gets or puts is also appended to *text
 * ("key<TAB>value" lines, malloc'd; caller frees) — the keys without the
 * CPU, so the choices apply wherever the plan is loaded.
 * Replay: between het_tuning_replay_begin(lines) and het_tuning_replay_end
 * this thread's gets answer from lines (such a capture) first, and
 * het_tuning_may_time says false, so a kernel whose choice is not in lines
 * takes its untimed default instead of timing (the same choice on every
 * load).  Neither nests; lines must stay valid until the end call. */
void het_tuning_capture_begin(void);
char *het_tuning_capture_end(void);
void het_tuning_replay_begin(const char *lines, size_t len);
void het_tuning_replay_end(void);
bool het_tuning_may_time(void);

#endif
