/*
 * durable-bash-supervisor: the real parent of one command, outliving the worker that started it.
 *
 *   durable-bash-supervisor <state-file> <exit-file> -- <program> [args...]
 *
 * It claims <state-file> exclusively, records who it is and who the command is (pids, start
 * times, boot id) before the command may run, forwards kill signals to the command's process
 * group, and writes the command's real wait status to <exit-file>. The worker (or a restarted
 * one) reads both files; docs/SUPERVISOR.md is the protocol.
 *
 * Exit codes: 0 = the exit file was written; 100 = the state file already existed (nothing ran);
 * 101 = a setup error (no exit file; reported as "error <message>" on fd 3 and on fd 2).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_CLAIMED = 100, EXIT_SETUP = 101, REPORT_FD = 3 };

static int report_open;                      /* fd 3 was given to us by the worker */
static volatile sig_atomic_t group;          /* the command's process group, 0 until it exists */
static volatile sig_atomic_t kill_requested; /* a kill signal arrived while the command ran */

/* One line to the worker on fd 3, if it gave us one. A dead reader only yields EPIPE. */
static void report(const char *fmt, ...) {
  if (!report_open) return;
  char line[600];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0) (void)!write(REPORT_FD, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A setup error: the worker learns why on fd 3; a human reading the spill file sees it on fd 2. */
static _Noreturn void die(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dprintf(2, "durable-bash-supervisor: %s\n", msg);
  report("error %s\n", msg);
  exit(EXIT_SETUP);
}

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *buf, size_t len) {
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
static ssize_t read_small(const char *path, char *buf, size_t size) {
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
static int start_time(const char *pid, unsigned long long *out) {
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
static void json_escape(const char *s, char *out, size_t size) {
  size_t o = 0;
  for (; *s && o + 7 < size; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') o += (size_t)snprintf(out + o, size - o, "\\%c", c);
    else if (c < 0x20) o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
    else out[o++] = (char)c;
  }
  out[o] = '\0';
}

/* fsync the directory holding path, so a link or rename survives a host crash. Cuts path at its
 * last '/' in place (the caller's scratch copy). */
static int sync_dir(char *path) {
  char *slash = strrchr(path, '/');
  if (!slash) strcpy(path, ".");
  else if (slash == path) path[1] = '\0'; /* "/name" lives in "/" */
  else *slash = '\0';
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
static int publish(const char *path, const char *text, int exclusive, int durable) {
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
  return durable ? sync_dir(tmp) : 0; /* tmp sits in path's directory */
}

/* Forwards the worker's kill to the whole group; SIGUSR1 means "kill now", i.e. SIGKILL. */
static void on_signal(int sig) {
  int saved = errno;
  kill_requested = 1;
  if (group > 0) kill(-group, sig == SIGUSR1 ? SIGKILL : sig);
  errno = saved;
}

/* fds 0-3 must be taken before we open pipes, or a pipe end could land on the command's
 * stdout or on the fd 3 the child closes. A closed fd 3 means "no report pipe". */
static void hold_low_fds(void) {
  for (int fd = 0; fd <= REPORT_FD; fd++) {
    if (fcntl(fd, F_GETFD) >= 0) {
      if (fd == REPORT_FD) report_open = 1;
      continue;
    }
    if (open("/dev/null", O_RDWR) != fd) die("cannot open /dev/null on fd %d", fd);
  }
  fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
}

/* The command's side of the fork: its own group, default signals, and it waits for the go byte,
 * which the supervisor writes only once the state file names it. EOF = the supervisor died. */
static _Noreturn void run_command(char **argv, int go_fd, int err_fd) {
  setpgid(0, 0);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  close(REPORT_FD);
  char go;
  ssize_t n;
  do n = read(go_fd, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) _exit(125);
  execvp(argv[0], argv);
  int e = errno;
  (void)!write(err_fd, &e, sizeof e);
  _exit(127);
}

/* What the state file says about us, fixed before the claim. */
struct identity {
  int pid;
  unsigned long long start;
  char boot_id[64]; /* JSON-escaped */
  long long started_ms;
};

static const int kill_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
#define N_KILL_SIGS (sizeof kill_sigs / sizeof *kill_sigs)

/* Kill signals stay blocked (pending) until the command's group exists, then are forwarded. */
static void block_kills(sigset_t *kills) {
  sigemptyset(kills);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaddset(kills, kill_sigs[i]);
  sigprocmask(SIG_BLOCK, kills, NULL);
  signal(SIGPIPE, SIG_IGN);  /* a dead worker on fd 3 is only EPIPE */
  signal(SIGCHLD, SIG_DFL);  /* an inherited SIG_IGN would auto-reap the command: no status */
}

static void forward_kills(const sigset_t *kills) {
  struct sigaction forward = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
  sigfillset(&forward.sa_mask); /* one handler at a time */
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaction(kill_sigs[i], &forward, NULL);
  sigprocmask(SIG_UNBLOCK, kills, NULL);
}

static void read_identity(struct identity *id) {
  char raw[64];
  id->pid = (int)getpid();
  if (start_time("self", &id->start) < 0) die("cannot read /proc/self/stat");
  if (read_small("/proc/sys/kernel/random/boot_id", raw, sizeof raw) <= 0)
    die("cannot read boot_id: %s", strerror(errno));
  raw[strcspn(raw, "\n")] = '\0';
  json_escape(raw, id->boot_id, sizeof id->boot_id);
  id->started_ms = now_ms();
}

static int write_state(const char *state_file, const struct identity *id, int pid,
                       unsigned long long pid_start, int exclusive) {
  char record[512];
  snprintf(record, sizeof record,
           "{\"v\":1,\"supervisorPid\":%d,\"supervisorStart\":%llu,\"bootId\":\"%s\","
           "\"pid\":%d,\"pidStart\":%llu,\"startedAtMs\":%lld}\n",
           id->pid, id->start, id->boot_id, pid, pid_start, id->started_ms);
  return publish(state_file, record, exclusive, 0);
}

/* Forks the command, names it in the state file, then lets it run. Returns its pid; *exec_errno
 * is execvp's errno when the program could not be started (the child then exits 127). */
static pid_t start_command(char **argv, const char *state_file, const struct identity *id,
                           int *exec_errno) {
  int go[2], exec_err[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_err, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  pid_t child = fork();
  if (child < 0) die("fork: %s", strerror(errno));
  if (child == 0) {
    close(go[1]);
    close(exec_err[0]);
    run_command(argv, go[0], exec_err[1]);
  }
  close(go[0]);
  close(exec_err[1]);
  /* Both sides call setpgid, so the group exists whichever runs first. */
  if (setpgid(child, child) < 0 && errno != EACCES && errno != ESRCH) die("setpgid: %s", strerror(errno));
  group = child;

  /* Never a run the state file does not name: on failure the go pipe closes unwritten and the
   * child exits 125 without running anything. */
  char pid_text[16];
  unsigned long long child_start;
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  int recorded = start_time(pid_text, &child_start) == 0 &&
                 write_state(state_file, id, (int)child, child_start, 0) == 0;
  if (!recorded || write_all(go[1], "g", 1) < 0) {
    int e = errno;
    close(go[1]);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) continue;
    die("cannot record the command in %s: %s", state_file, strerror(e));
  }
  close(go[1]);

  /* EOF on the exec-error pipe means execvp succeeded (its CLOEXEC end closed with it). */
  ssize_t n;
  *exec_errno = 0;
  do n = read(exec_err[0], exec_errno, sizeof *exec_errno);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t)sizeof *exec_errno) *exec_errno = 0;
  close(exec_err[0]);
  return child;
}

/* The command keeps its own copies of fds 0-2; ours must not hold the spill files open. */
static void release_stdio(void) {
  for (int fd = 0; fd <= 2; fd++) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0 && null != fd) {
      dup2(null, fd);
      close(null);
    }
  }
}

/* Reaps everything; orphans that reparented to us are dropped. Returns the leader's status. */
static int wait_leader(pid_t leader) {
  int status;
  for (;;) {
    pid_t got = waitpid(-1, &status, 0);
    if (got == leader) return status;
    if (got < 0 && errno != EINTR) exit(EXIT_SETUP); /* ECHILD: impossible before the leader */
  }
}

/* Written only from a real wait status: no status, no exit file. */
static int write_end(const char *exit_file, int status, int exec_errno) {
  char record[512], error[300] = "", escaped[256];
  if (exec_errno) {
    json_escape(strerror(exec_errno), escaped, sizeof escaped);
    snprintf(error, sizeof error, ",\"error\":\"%s\"", escaped);
  }
  int exited = WIFEXITED(status);
  snprintf(record, sizeof record, "{\"v\":1,\"%s\":%d,\"endedAtMs\":%lld%s}\n", exited ? "exitCode" : "signal",
           exited ? WEXITSTATUS(status) : WTERMSIG(status), now_ms(), error);
  return publish(exit_file, record, 0, 1);
}

int main(int argc, char **argv) {
  hold_low_fds();
  if (argc < 5 || strcmp(argv[3], "--") != 0)
    die("usage: durable-bash-supervisor <state-file> <exit-file> -- <program> [args...]");
  const char *state_file = argv[1], *exit_file = argv[2];

  sigset_t kills;
  block_kills(&kills);
  if (setsid() < 0 && errno != EPERM) die("setsid: %s", strerror(errno));
  /* Orphans of the command reparent to us rather than to init, so we reap them. */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  struct identity id;
  read_identity(&id);

  /* The claim: from here on the state file exists; a second supervisor (or a tombstone left by a
   * worker that gave up on this task) makes us run nothing. */
  if (write_state(state_file, &id, 0, 0, 1) < 0) {
    if (errno != EEXIST) die("cannot claim %s: %s", state_file, strerror(errno));
    report("claimed\n");
    return EXIT_CLAIMED;
  }

  int exec_errno;
  pid_t child = start_command(argv + 4, state_file, &id, &exec_errno);
  if (exec_errno) report("started %d exec-error %s\n", (int)child, strerror(exec_errno));
  else report("started %d\n", (int)child);
  close(REPORT_FD);
  release_stdio();
  forward_kills(&kills);

  int written = write_end(exit_file, wait_leader(child), exec_errno) == 0;
  /* A kill ends the whole group, even members that outlived the leader. */
  if (kill_requested) kill(-child, SIGKILL);
  return written ? 0 : EXIT_SETUP;
}
