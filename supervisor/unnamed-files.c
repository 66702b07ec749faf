/* Files made before their names are known: a warm supervisor makes its task's spill files and
 * records as unnamed files (O_TMPFILE) in the spill directory while it waits, and names each with a
 * link once the task comes. A link is a directory entry, where a new inode on the task's path cost
 * 0.3-1 ms a file on this project's ext4 hosts (docs/PERFORMANCE.md, "New files off the command's
 * path"). Each is used once; where one cannot be made or named, the caller goes on as before. */
#include "supervisor.h"

struct unnamed_files unnamed = {.out = -1, .err = -1, .state = -1, .exit = -1};

/* An unnamed file in dir, private to this user; -1 where its filesystem has none (EOPNOTSUPP). */
int unnamed_file(const char *dir) { return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600); }

/* Gives an unnamed file its name; fails with EEXIST where path exists, as link() does. Through
 * /proc/self/fd, as linkat()'s AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH. */
int name_file(int fd, const char *path) {
  char proc[32];
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

/* The unnamed file in *slot (-1 for none), which is then empty: each is used once. */
int take_unnamed(int *slot) {
  int fd = *slot;
  *slot = -1;
  return fd;
}

/* publish() through an unnamed file (fd, closed here), with the same guarantees: readers never
 * see a half-written record, a durable one is synced with its directory before this returns, and
 * an exclusive one fails with EEXIST where the record exists. Anything else that fails (no /proc,
 * another filesystem, a record to replace) falls back to publish(). */
int publish_through(int fd, const char *path, const char *text, int exclusive, int durable) {
  if (fd < 0) return publish(path, text, exclusive, durable);
  int written = write_all(fd, text, strlen(text)) == 0 && (!durable || fsync(fd) == 0);
  int rc = written ? name_file(fd, path) : -1;
  int e = errno;
  close(fd);
  if (rc == 0) return durable ? sync_dir(path) : 0;
  if (written && exclusive && e == EEXIST) {
    errno = EEXIST;
    return -1;
  }
  return publish(path, text, exclusive, durable);
}
