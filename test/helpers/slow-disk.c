// A disk that is slow or fails, for the durability tests (test/db/durability.test.ts): an
// LD_PRELOAD library that wraps fsync and fdatasync of the process it is loaded into.
//   SLOW_DISK_MATCH=text    which files it acts on (default ".db": the database, its -wal and -shm)
//   SLOW_DISK_TRIGGER=path  it acts only while that file exists (unset: always)
//   SLOW_DISK_DELAY_MS=n    each sync of those files first sleeps n ms
//   SLOW_DISK_FAIL_AFTER=n  the sync after the first n of those fails with EIO, and every one after
// Built by the test set-up with `cc -shared -fPIC -o slow-disk.so slow-disk.c -ldl`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*sync_fn)(int);

static long counted = 0;

/** Whether fd's file is one of the database's (its path contains SLOW_DISK_MATCH). */
static int matches(int fd) {
  const char *match = getenv("SLOW_DISK_MATCH");
  if (match == NULL || match[0] == '\0') match = ".db";
  char link[64];
  char path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) return 0;
  path[n] = '\0';
  return strstr(path, match) != NULL;
}

/** What the wrapped sync does first: 0 to go on, -1 to fail with EIO. */
static int before_sync(int fd) {
  if (!matches(fd)) return 0;
  const char *trigger = getenv("SLOW_DISK_TRIGGER");
  if (trigger != NULL && trigger[0] != '\0' && access(trigger, F_OK) != 0) return 0;
  const char *delay = getenv("SLOW_DISK_DELAY_MS");
  if (delay != NULL && atol(delay) > 0) {
    long ms = atol(delay);
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&pause, &pause) == -1 && errno == EINTR) {
    }
  }
  const char *after = getenv("SLOW_DISK_FAIL_AFTER");
  if (after == NULL || after[0] == '\0') return 0;
  if (__sync_add_and_fetch(&counted, 1) > atol(after)) {
    errno = EIO;
    return -1;
  }
  return 0;
}

int fsync(int fd) {
  static sync_fn real = NULL;
  if (real == NULL) real = (sync_fn)dlsym(RTLD_NEXT, "fsync");
  if (before_sync(fd) != 0) return -1;
  return real(fd);
}

int fdatasync(int fd) {
  static sync_fn real = NULL;
  if (real == NULL) real = (sync_fn)dlsym(RTLD_NEXT, "fdatasync");
  if (before_sync(fd) != 0) return -1;
  return real(fd);
}
