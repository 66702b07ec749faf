/* Reports to the worker, setup errors, and the small file and fd helpers every part uses. */
#include "supervisor.h"

/* One line to the worker on fd 3, if it gave us one. A dead reader only yields EPIPE. */
void report(const char *fmt, ...) {
  if (!report_open) return;
  char line[600];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0) (void)!write(REPORT_FD, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* What a setup error undoes before it exits: set by the part that made it (cgroups.c), so this
 * file never calls up into the parts that use it. */
static void (*die_cleanup)(void);

void set_die_cleanup(void (*cleanup)(void)) {
  die_cleanup = cleanup;
}

/* A setup error: the worker learns why on fd 3; a human reading the spill file sees it on fd 2. */
_Noreturn void die(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dprintf(2, "durable-bash-supervisor: %s\n", msg);
  report("error %s\n", msg);
  if (die_cleanup) die_cleanup();
  exit(EXIT_SETUP);
}

long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Reads a small file into buf (NUL-terminated); returns its length or -1. */
ssize_t read_small(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n;
  do n = read(fd, buf, size - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n >= 0) buf[n] = '\0';
  return n;
}

/* Field 22 of /proc/<pid>/stat: with the pid, it names a process uniquely within one boot. The
 * command name (field 2) may hold spaces and ')', so fields are counted after the LAST ')'. */
int start_time(const char *pid, unsigned long long *out) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  if (read_small(path, buf, sizeof buf) <= 0) return -1;
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  for (int field = 2; field < 22; field++) { /* p sits just before field+1 */
    p = strchr(p + 1, ' ');
    if (!p) return -1;
  }
  char *end;
  errno = 0;
  *out = strtoull(p + 1, &end, 10);
  return errno || end == p + 1 ? -1 : 0;
}

/* Copies s into out as the body of a JSON string. */
void json_escape(const char *s, char *out, size_t size) {
  size_t o = 0;
  for (; *s && o + 7 < size; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, size - o, "\\%c", c);
    else if (c < 0x20) o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
    else out[o++] = (char)c;
  }
  out[o] = '\0';
}

/* fsync the directory holding path, so a link or rename survives a host crash. The path is cut at
 * its last '/' in a static copy (a PATH_MAX frame would cost a page or two in each supervisor). */
int sync_dir(const char *path) {
  static char dir[PATH_MAX];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
    errno = ENAMETOOLONG;
    return -1;
  }
  char *slash = strrchr(dir, '/');
  if (!slash) strcpy(dir, ".");
  else if (slash == dir) dir[1] = '\0'; /* "/name" lives in "/" */
  else *slash = '\0';
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

/* Writes text to <path>.tmp.<pid>, fsynced when durable; readers never see a half-written record. */
static int write_tmp(const char *tmp, const char *text, int durable) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (write_all(fd, text, strlen(text)) < 0 || (durable && fsync(fd) < 0)) {
    int e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
    return -1;
  }
  return close(fd);
}

/* exclusive: link() fails with EEXIST when the file exists (the claim); else rename() replaces.
 * durable: fsync the file and its directory, so the record survives a host crash. Only the end
 * needs that: the claim and the start name processes that a crash ends anyway (the boot id then
 * differs), while a command that ended before the crash keeps its exit status.
 * The name buffer is static, not on the stack: every stack page touched stays private to this
 * long-lived process, and a PATH_MAX frame would cost a page or two in each of thousands. */
int publish(const char *path, const char *text, int exclusive, int durable) {
  static char tmp[PATH_MAX + 32];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if (write_tmp(tmp, text, durable) < 0) return -1;
  int rc = exclusive ? link(tmp, path) : rename(tmp, path);
  int e = errno;
  if (exclusive || rc < 0) unlink(tmp);
  errno = e;
  if (rc < 0) return -1;
  return durable ? sync_dir(path) : 0;
}

/* Signals only set flags; the main loop acts on them (it may read files and scan /proc). */
void on_signal(int sig) {
  if (sig == SIGCHLD) got_chld = 1;
  else if (sig == SIGUSR2) got_close_stdin = 1;
  else if (sig == SIGWINCH) got_winch = 1;
  else got_sig[sig] = 1;
}

/* fds 0-3 must be taken before we open pipes, or a pipe end could land on the command's
 * stdout or on the fd 3 the child closes. A closed fd 3 means "no report pipe". Any other fd we
 * inherited (a CI runner's pipe, a worker's socket) is closed: we live long, and a pipe we held
 * open would keep its reader waiting for EOF. */
void hold_low_fds(void) {
  for (int fd = 0; fd <= REPORT_FD; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) {
      if (fd == REPORT_FD) report_open = 1;
      continue;
    }
    if (open("/dev/null", O_RDWR) != fd) die("cannot open /dev/null on fd %d", fd);
  }
  fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
  close_from(REPORT_FD + 1, 0);
}

/* Closes (or marks close-on-exec) every fd from `first` up. close_range(2) where the kernel has it;
 * else each open fd in /proc/self/fd. */
void close_from(int first, int cloexec_only) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)first, ~0U, cloexec_only ? 4U /* CLOSE_RANGE_CLOEXEC */ : 0U) == 0)
    return;
#endif
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  int self = dirfd(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name);
    if (fd < first || fd == self || e->d_name[0] == '.') continue;
    if (cloexec_only) fcntl(fd, F_SETFD, FD_CLOEXEC);
    else close(fd);
  }
  closedir(d);
}

/* Writes text to a file that exists (a cgroup control file). */
int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = write_all(fd, text, strlen(text));
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}
