/* file.h — reading (or mapping) files that come from anywhere (models,
 * external data, policies, plan files) without blocking on a FIFO or a
 * device. */
#ifndef HET_CORE_FILE_H
#define HET_CORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* Opens path read-only when it is a regular file, *fd (caller closes) and
 * *size its length.  The open never blocks: a FIFO, a device or a
 * directory is refused with a message that starts with what. */
het_status het_open_regular(const char *path, const char *what, int *fd,
                            uint64_t *size);

/* Maps size (> 0) bytes of the regular file open as fd read-only and
 * closes fd (either way); populate: every page faulted in now, in one
 * call, rather than on first touch.  what names the file in messages;
 * OUT_OF_MEMORY or ERR_IO.  Caller munmaps *base. */
het_status het_map_fd(int fd, size_t size, bool populate, const char *what,
                      void **base);

/* Reads a whole file into malloc'd memory, refusing files over max_bytes.
 * Caller frees *data. */
het_status het_read_file(const char *path, size_t max_bytes, uint8_t **data,
                         size_t *size);

#endif
