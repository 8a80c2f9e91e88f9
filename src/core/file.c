/* file.c — reading (or mapping) files that come from anywhere (models,
 * external data, policies, plan files): only regular files are opened,
 * and the open never blocks.
 */
#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/status.h"

het_status het_open_regular(const char *path, const char *what, int *fd,
                            uint64_t *size) {
  /* O_NONBLOCK: opening a FIFO with no writer would wait forever; on a
   * regular file it changes nothing, and the others are refused below. */
  *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (*fd < 0)
    return het_error(HET_ERR_IO, "%s: cannot open: %s", what, strerror(errno));
  struct stat sb;
  if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(*fd);
    *fd = -1;
    return het_error(HET_ERR_IO, "%s: not a regular file", what);
  }
  *size = (uint64_t)sb.st_size;
  return HET_OK;
}

het_status het_map_fd(int fd, size_t size, bool populate, const char *what,
                      void **base) {
  void *p = mmap(NULL, size, PROT_READ,
                 MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED)
    return het_error(err == ENOMEM ? HET_ERR_OUT_OF_MEMORY : HET_ERR_IO,
                     "%s: cannot map %zu bytes: %s", what, size,
                     strerror(err));
  *base = p;
  return HET_OK;
}

het_status het_read_file(const char *path, size_t max_bytes, uint8_t **data,
                         size_t *size) {
  if (!path || !data || !size)
    return het_error(HET_ERR_INVALID_ARGUMENT, "het_read_file: NULL argument");
  int fd;
  uint64_t fsize;
  HET_TRY(het_open_regular(path, path, &fd, &fsize));
  uint8_t *buf = NULL;
  het_status st = HET_OK;
  if (fsize > (uint64_t)max_bytes) {
    st = het_error(HET_ERR_IO, "%s: file is %llu bytes, more than the %zu "
                               "accepted",
                   path, (unsigned long long)fsize, max_bytes);
    goto fail;
  }
  size_t n = (size_t)fsize, done = 0;
  buf = malloc(n ? n : 1);
  if (!buf) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes",
                   path, n);
    goto fail;
  }
  while (done < n) {
    ssize_t r = read(fd, buf + done, n - done);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      st = het_error(HET_ERR_IO, "%s: read failed: %s", path,
                     r < 0 ? strerror(errno) : "file shrank");
      goto fail;
    }
    done += (size_t)r;
  }
  close(fd);
  *data = buf;
  *size = n;
  return HET_OK;
fail:
  close(fd);
  free(buf);
  return st;
}
