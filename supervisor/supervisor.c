/*
 * durable-bash-supervisor: the real parent of one command, outliving the worker that started it.
 *
 *   durable-bash-supervisor [options] <state-file> <exit-file> -- <program> [args...]
 *
 * It claims <state-file> exclusively, records who it is and who the command is (pids, start
 * times, boot id) before the command may run, forwards kill signals to every process the command
 * started, ends whatever is left once the command ends, and writes the command's real wait status
 * to <exit-file>. The worker (or a restarted one) reads both files; docs/SUPERVISOR.md is the
 * protocol.
 *
 * Options (containment and limits; docs/SUPERVISOR.md):
 *   --cgroup DIR        make DIR (a new cgroup) and run the command in it; repeatable, one per
 *                       hierarchy. Its processes are then found and killed through DIR.
 *   --pids-max N        pids.max of each cgroup that has one
 *   --memory-max BYTES  memory.limit_in_bytes (v1) or memory.max (v2) of each cgroup that has one
 *   --output-max BYTES  relay stdout and stderr through pipes, each stopping at BYTES
 *   --grace-ms MS       time the command's leftovers get between SIGTERM and SIGKILL
 *   --stdin FIFO        the command's stdin is a pipe fed from FIFO, a named pipe made here
 *                       (0600) that a worker writes; SIGUSR2 closes it once drained (EOF)
 *   --sandboxed         <program> is a sandbox launcher (bubblewrap) that runs
 *                       `durable-bash-supervisor --inner -- <command>`: kill signals other than
 *                       SIGKILL skip the launcher, and the command's real wait status comes from
 *                       the inner supervisor on fd 3 (the launcher only knows 128 + signal)
 *
 *   durable-bash-supervisor --inner -- <program> [args...]
 *
 * runs inside the sandbox as the command's parent and writes its raw wait status to fd 3.
 *
 *   durable-bash-supervisor --nursery [--cgroup-parent DIR]... [--warm N] [limits] --output-max BYTES
 *
 * starts supervisors for a worker, so the worker never forks itself (a fork of a large process
 * blocks its event loop for milliseconds), and keeps N of them warm: forked, their cgroups made
 * and their command's process already in them, waiting for a task (a first write to a v1
 * cgroup's cgroup.procs waits for an RCU grace period, about 20 ms here). docs/SUPERVISOR.md has
 * its protocol on stdin and stdout.
 *
 * Exit codes: 0 = the exit file was written; 100 = the state file already existed (nothing ran);
 * 101 = a setup error (no exit file; reported as "error <message>" on fd 3 and on fd 2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_CLAIMED = 100, EXIT_SETUP = 101, REPORT_FD = 3, MAX_CGROUPS = 4 };

/* What the worker asked for on the command line. 0 = no limit. */
static struct {
  const char *cgroups[MAX_CGROUPS];
  int n_cgroups;
  long long pids_max, memory_max, output_max;
  int grace_ms;
  int sandboxed;
  const char *stdin_fifo;
} opt = {.grace_ms = 2000};

static int report_open;                 /* fd 3 was given to us by the worker */
static pid_t group;                     /* the command's process group, 0 until it exists */
static volatile sig_atomic_t got_chld;  /* set by the SIGCHLD handler; the loop reaps */
static volatile sig_atomic_t got_sig[NSIG]; /* kill signals waiting for the loop */
static int kill_requested;              /* a kill signal arrived while the command ran */
static int sent_kill;                   /* we SIGKILLed the command's processes */
static int inner_status_fd = -1;        /* --sandboxed: where the inner supervisor reports */
static volatile sig_atomic_t got_close_stdin; /* SIGUSR2: close the command's stdin once drained */

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
static int cgroups_made; /* how many of opt.cgroups exist: a setup error removes them */
static void remove_made_cgroups(void);

static _Noreturn void die(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dprintf(2, "durable-bash-supervisor: %s\n", msg);
  report("error %s\n", msg);
  remove_made_cgroups();
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

static void close_from(int first, int cloexec_only);

/* Signals only set flags; the main loop acts on them (it may read files and scan /proc). */
static void on_signal(int sig) {
  if (sig == SIGCHLD) got_chld = 1;
  else if (sig == SIGUSR2) got_close_stdin = 1;
  else got_sig[sig] = 1;
}

/* fds 0-3 must be taken before we open pipes, or a pipe end could land on the command's
 * stdout or on the fd 3 the child closes. A closed fd 3 means "no report pipe". Any other fd we
 * inherited (a CI runner's pipe, a worker's socket) is closed: we live long, and a pipe we held
 * open would keep its reader waiting for EOF. */
static void hold_low_fds(void) {
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
static void close_from(int first, int cloexec_only) {
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
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = write_all(fd, text, strlen(text));
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}

/* The one buffer every cgroup file path is built in (we are single-threaded, and no caller holds a
 * path across another's call): each page a long-lived supervisor touches stays private to it. */
static char path[PATH_MAX];

static int cgroup_file(char *out, size_t size, const char *dir, const char *name) {
  return snprintf(out, size, "%s/%s", dir, name) < (int)size ? 0 : -1;
}

static int has_file(const char *dir, const char *name) {
  return cgroup_file(path, sizeof path, dir, name) == 0 && access(path, F_OK) == 0;
}

/* Sets a limit in the first of `names` that the cgroup has; fails only if that write fails. */
static void set_limit(const char *dir, const char *const *names, long long value) {
  char text[32];
  snprintf(text, sizeof text, "%lld", value);
  for (; *names; names++) {
    if (!has_file(dir, *names)) continue;
    cgroup_file(path, sizeof path, dir, *names);
    if (write_file(path, text) < 0) die("cannot set %s to %s: %s", path, text, strerror(errno));
    return;
  }
}

/* Makes each task cgroup and sets its limits. A worker that asked for cgroups probed them at its
 * start; one that cannot be made now is a setup error, never a command run without it. */
static void make_cgroups(void) {
  static const char *const pids[] = {"pids.max", NULL};
  static const char *const memory[] = {"memory.max", "memory.limit_in_bytes", NULL};
  for (int i = 0; i < opt.n_cgroups; i++) {
    const char *dir = opt.cgroups[i];
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) die("cannot make cgroup %s: %s", dir, strerror(errno));
    cgroups_made = i + 1;
    if (opt.pids_max > 0) set_limit(dir, pids, opt.pids_max);
    if (opt.memory_max > 0) {
      set_limit(dir, memory, opt.memory_max);
      /* v1 with swap accounting: the limit holds for memory plus swap too (v2 swap is separate). */
      char text[32];
      snprintf(text, sizeof text, "%lld", opt.memory_max);
      if (cgroup_file(path, sizeof path, dir, "memory.memsw.limit_in_bytes") == 0 && access(path, F_OK) == 0)
        (void)write_file(path, text);
    }
  }
}

/* Moves the (not yet running) command into every task cgroup; its children inherit them. */
static int join_cgroups(pid_t child) {
  char text[16];
  snprintf(text, sizeof text, "%d", (int)child);
  for (int i = 0; i < opt.n_cgroups; i++) {
    if (cgroup_file(path, sizeof path, opt.cgroups[i], "cgroup.procs") < 0 || write_file(path, text) < 0)
      return -1;
  }
  return 0;
}

/* A process kill signals pass over (the sandbox launcher), 0 for none. */
static pid_t spared;

static void send(pid_t pid, int sig) {
  if (pid != spared) kill(pid, sig);
}

/* Sends sig (if not 0) to each process in the cgroup; returns how many there were. */
static int each_in_cgroup(const char *dir, int sig) {
  if (cgroup_file(path, sizeof path, dir, "cgroup.procs") < 0) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[256];
  int count = 0;
  long pid = 0;
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] >= '0' && buf[i] <= '9') pid = pid * 10 + (buf[i] - '0');
      else if (pid > 0) {
        count++;
        if (sig) send((pid_t)pid, sig);
        pid = 0;
      }
    }
  }
  close(fd);
  if (pid > 0) {
    count++;
    if (sig) send((pid_t)pid, sig);
  }
  return count;
}

/* Our descendants, from /proc (this kernel class lacks /proc/<pid>/task/<tid>/children). The table
 * lives on the heap only while a scan runs: a steady supervisor touches none of it. */
struct proc_entry {
  pid_t pid, parent, group;
  char marked;
};

/* Sends sig to every process below us (the subreaper: orphans of the command are ours too), but
 * those in process group `signalled` (already sent it); returns how many there were. */
static int signal_descendants(int sig, pid_t signalled) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int n = 0, size = 0;
  struct proc_entry *procs = NULL;
  struct dirent *e;
  char path[64], stat[512];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%d/stat", atoi(e->d_name));
    if (read_small(path, stat, sizeof stat) <= 0) continue;
    char *p = strrchr(stat, ')'); /* ") S <ppid> <pgrp> ..." */
    if (!p || strlen(p) < 8 || p[2] == 'Z') continue;
    if (n == size) {
      struct proc_entry *grown = realloc(procs, (size_t)(size = size ? 2 * size : 1024) * sizeof *procs);
      if (!grown) break; /* what was read is still signalled; the next pass reads again */
      procs = grown;
    }
    char *field = p + 4;
    procs[n].pid = (pid_t)atoi(e->d_name);
    procs[n].parent = (pid_t)strtol(field, &field, 10);
    procs[n].group = (pid_t)strtol(field, NULL, 10);
    procs[n].marked = 0;
    n++;
  }
  closedir(d);
  pid_t self = getpid();
  int count = 0;
  /* Each pass marks the children of what is marked; a task's tree is shallow, so few passes. */
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < n; i++) {
      if (procs[i].marked) continue;
      int below = procs[i].parent == self;
      for (int j = 0; !below && j < n; j++) below = procs[j].marked && procs[j].pid == procs[i].parent;
      if (!below) continue;
      procs[i].marked = 1;
      changed = 1;
      count++;
      if (sig && (signalled == 0 || procs[i].group != signalled)) send(procs[i].pid, sig);
    }
  }
  free(procs);
  return count;
}

/* Whether we have children that have not ended (reaping those that have). */
static int has_children(void) {
  int status;
  pid_t got;
  while ((got = waitpid(-1, &status, WNOHANG)) > 0) continue;
  return got == 0;
}

/* Sends sig to everything the command started, each process once. With cgroups: every member
 * (all of the task is in each of its cgroups; SIGKILL by cgroup.kill where there is one). Without:
 * its process group while the leader lives (its pid cannot be reused before), then every other
 * process below us, which catches what called setsid or double-forked. */
static void signal_tree(int sig, int leader_alive) {
  if (sig == SIGKILL) sent_kill = 1;
  /* A sandbox launcher dies of a TERM it does not handle, and takes its namespace down with
   * SIGKILL: only the processes inside get a catchable signal, so a trap in the command runs. */
  spared = opt.sandboxed && sig != SIGKILL ? group : 0;
  if (opt.n_cgroups > 0) {
    for (int i = 0; sig == SIGKILL && i < opt.n_cgroups; i++) {
      if (cgroup_file(path, sizeof path, opt.cgroups[i], "cgroup.kill") == 0 && write_file(path, "1") == 0)
        return;
    }
    /* A root command can move a process out of its cgroup; it is still below us. */
    if (each_in_cgroup(opt.cgroups[0], sig) == 0 && has_children()) signal_descendants(sig, 0);
    return;
  }
  pid_t signalled = 0;
  if (leader_alive && group > 0 && !spared) {
    kill(-group, sig);
    signalled = group;
  }
  signal_descendants(sig, signalled);
}

/* Whether anything the command started still runs. Reaps what has ended. */
static int tree_alive(void) {
  if (has_children()) return 1;
  for (int i = 0; i < opt.n_cgroups; i++)
    if (each_in_cgroup(opt.cgroups[i], 0) > 0) return 1;
  return 0;
}

/* A number after `key ` in a cgroup stats file ("oom_kill 1", "max 12"), or 0. */
static long long cgroup_stat(const char *dir, const char *file, const char *key) {
  char text[1024];
  if (cgroup_file(path, sizeof path, dir, file) < 0 || read_small(path, text, sizeof text) <= 0) return 0;
  size_t len = strlen(key);
  for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, key, len) == 0 && line[len] == ' ') return atoll(line + len + 1);
  }
  return 0;
}

/* What the limits did, for the end record. */
static long long oom_kills, pids_max_hits;

/* Removes a cgroup and any the command made below it, deepest first. An exiting process can hold
 * a cgroup a moment after it left cgroup.procs: retried for up to a second. */
static void remove_cgroup_tree(const char *dir, int depth) {
  DIR *d = depth < 16 ? opendir(dir) : NULL;
  if (d) {
    struct dirent *e;
    char child[PATH_MAX];
    while ((e = readdir(d)) != NULL) {
      if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
      if (snprintf(child, sizeof child, "%s/%s", dir, e->d_name) < (int)sizeof child) remove_cgroup_tree(child, depth + 1);
    }
    closedir(d);
  }
  for (int tries = 0; rmdir(dir) < 0 && errno == EBUSY && tries < 100; tries++) usleep(10000);
}

static void remove_made_cgroups(void) {
  for (int i = 0; i < cgroups_made; i++) rmdir(opt.cgroups[i]);
  cgroups_made = 0;
}

/* What the limits did to the task, read from its cgroups before they go. */
static void read_cgroup_stats(void) {
  for (int i = 0; i < opt.n_cgroups; i++) {
    const char *dir = opt.cgroups[i];
    oom_kills += cgroup_stat(dir, "memory.events", "oom_kill") + cgroup_stat(dir, "memory.oom_control", "oom_kill");
    pids_max_hits += cgroup_stat(dir, "pids.events", "max");
  }
}

/* Removes the task's cgroups in a child, so the end is not held up: removing a v1 memory cgroup
 * waits for an RCU grace period (about 10 ms here), and an exiting process can hold one longer.
 * Nothing of the task runs any more. */
static void remove_cgroups_after_end(void) {
  if (opt.n_cgroups == 0) return;
  pid_t pid = fork();
  if (pid > 0) return;
  for (int i = 0; i < opt.n_cgroups; i++) remove_cgroup_tree(opt.cgroups[i], 0);
  if (pid == 0) _exit(0);
}

/* One output stream relayed from the command's pipe to its spill file, up to opt.output_max. */
struct relay {
  const char *name;
  int from; /* the pipe's read end; -1 once closed */
  int to;   /* the spill file (our fd 1 or 2) */
  long long written;
  int capped; /* the cap was reached and the pipe closed: the command's later writes fail */
  int copy;   /* splice(2) is refused for this file: copy through a buffer */
  int failed; /* errno of a write the spill file refused (a full disk): the pipe was closed */
};

static void close_relay(struct relay *r) {
  if (r->from >= 0) close(r->from);
  r->from = -1;
}

/* Moves what the pipe holds now into the file; closes the pipe at EOF or at the cap. */
static void pump(struct relay *r) {
  while (r->from >= 0) {
    long long room = opt.output_max - r->written;
    if (room <= 0) {
      /* At the cap: a byte more means the command wrote past it; EOF means it ended exactly. */
      char more;
      ssize_t n = read(r->from, &more, 1);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      r->capped = n > 0;
      close_relay(r);
      return;
    }
    size_t want = room < 65536 ? (size_t)room : 65536;
    ssize_t n;
    if (!r->copy) {
      n = splice(r->from, NULL, r->to, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && errno == EINVAL) {
        r->copy = 1;
        continue;
      }
    } else {
      char buf[4096];
      n = read(r->from, buf, want < sizeof buf ? want : sizeof buf);
      if (n > 0 && write_all(r->to, buf, (size_t)n) < 0) n = -1;
    }
    if (n > 0) {
      r->written += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) r->failed = errno; /* the spill file cannot take more (a full disk): stop reading */
    close_relay(r);
    return;
  }
}

/* The command's stdin, fed from a named pipe a worker writes (--stdin). The supervisor holds the
 * FIFO open for reading and writing, so it never sees EOF when a writer leaves; a close request
 * (SIGUSR2) ends it: what the FIFO holds is passed on, the command's stdin is closed (EOF), and
 * the FIFO is removed, so a later writer learns that stdin was closed. */
static struct {
  int fifo;    /* -1 when there is none, or once closed */
  int to;      /* the command's stdin pipe, write end */
  int blocked; /* the stdin pipe is full (the command is not reading): wait for room, not data */
} in = {-1, -1, 0};

static void close_stdin(void) {
  if (in.fifo >= 0) close(in.fifo);
  if (in.to >= 0) close(in.to);
  in.fifo = in.to = -1;
  if (opt.stdin_fifo) unlink(opt.stdin_fifo);
}

/* Moves what the FIFO holds into the command's stdin; returns 1 when the FIFO is empty now. */
static int pump_stdin(void) {
  in.blocked = 0;
  while (in.fifo >= 0) {
    ssize_t n = splice(in.fifo, NULL, in.to, NULL, 65536, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      /* Either side: an empty FIFO, or a full stdin pipe (the command is not reading). */
      struct pollfd probe = {.fd = in.fifo, .events = POLLIN};
      in.blocked = poll(&probe, 1, 0) > 0;
      return !in.blocked;
    }
    /* EPIPE: the command closed its stdin; nothing more can go in. */
    close_stdin();
    return 1;
  }
  return 1;
}

/* What every command process is before it execs: its own group, every signal at its default and
 * none blocked, its output on the relay pipes (when out_fd >= 0), an OOM score above the worker's,
 * fd 3 closed and every fd above it close-on-exec (the go and exec-error pipes stay open until
 * exec). */
static void become_command_process(int out_fd, int errout_fd) {
  setpgid(0, 0);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (out_fd >= 0 && (dup2(out_fd, 1) < 0 || dup2(errout_fd, 2) < 0)) _exit(125);
  /* Under memory pressure the kernel picks the task's processes before the worker or others. */
  int adj = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (adj >= 0) {
    (void)!write(adj, "500", 3);
    close(adj);
  }
  close(REPORT_FD);
  close_from(REPORT_FD, 1);
}

/* The command's side of the fork: it waits for the go byte, which the supervisor writes only once
 * the state file names it (and the command is in its cgroups). EOF = the supervisor died. */
static _Noreturn void run_command(char **argv, int go_fd, int err_fd, int out_fd, int errout_fd,
                                   int status_fd, int stdin_fd) {
  become_command_process(out_fd, errout_fd);
  if (stdin_fd >= 0 && dup2(stdin_fd, 0) < 0) _exit(125);
  if (status_fd >= 0 && dup2(status_fd, REPORT_FD) < 0) _exit(125); /* the inner supervisor's fd 3 */
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

/* Kill signals and SIGCHLD stay blocked except while the loop waits in ppoll, so each one is
 * acted on in the loop, never lost between a check and the wait. */
static void block_signals(sigset_t *waiting_mask) {
  sigset_t blocked;
  sigemptyset(&blocked);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaddset(&blocked, kill_sigs[i]);
  sigaddset(&blocked, SIGCHLD);
  sigaddset(&blocked, SIGUSR2);
  sigprocmask(SIG_BLOCK, &blocked, waiting_mask);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigdelset(waiting_mask, kill_sigs[i]);
  sigdelset(waiting_mask, SIGCHLD);
  sigdelset(waiting_mask, SIGUSR2);
  signal(SIGPIPE, SIG_IGN); /* a dead worker on fd 3 is only EPIPE */
  signal(SIGXFSZ, SIG_IGN); /* a spill file past an inherited file size limit is only EFBIG */
  struct sigaction flag = {.sa_handler = on_signal};
  sigfillset(&flag.sa_mask);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaction(kill_sigs[i], &flag, NULL);
  sigaction(SIGCHLD, &flag, NULL); /* never an inherited SIG_IGN, which would discard the status */
  sigaction(SIGUSR2, &flag, NULL);
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

/* The task's cgroups as a JSON field, so whoever finds the task later (a worker whose supervisor
 * was killed) can end what is in them. Static: built once, before the claim. */
static char cgroups_json[MAX_CGROUPS * (PATH_MAX + 8) + 16];

static void build_cgroups_json(void) {
  static char escaped[2 * PATH_MAX];
  if (opt.n_cgroups == 0) return;
  size_t len = (size_t)snprintf(cgroups_json, sizeof cgroups_json, ",\"cgroups\":[");
  for (int i = 0; i < opt.n_cgroups && len < sizeof cgroups_json; i++) {
    json_escape(opt.cgroups[i], escaped, sizeof escaped);
    len += (size_t)snprintf(cgroups_json + len, sizeof cgroups_json - len, "%s\"%s\"", i ? "," : "", escaped);
  }
  if (len >= sizeof cgroups_json - 2) die("--cgroup paths too long");
  snprintf(cgroups_json + len, sizeof cgroups_json - len, "]");
}

static int write_state(const char *state_file, const struct identity *id, int pid,
                       unsigned long long pid_start, int exclusive) {
  char record[512 + strlen(cgroups_json)];
  snprintf(record, sizeof record,
           "{\"v\":1,\"supervisorPid\":%d,\"supervisorStart\":%llu,\"bootId\":\"%s\","
           "\"pid\":%d,\"pidStart\":%llu,\"startedAtMs\":%lld%s}\n",
           id->pid, id->start, id->boot_id, pid, pid_start, id->started_ms, cgroups_json);
  return publish(state_file, record, exclusive, 0);
}

/* execvp's errno from the exec-error pipe (and closes it), 0 when it succeeded: EOF then, as the
 * pipe's CLOEXEC end closed with the exec. */
static int read_exec_errno(int fd) {
  int e = 0;
  ssize_t n;
  do n = read(fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(fd);
  return n == (ssize_t)sizeof e ? e : 0;
}

/* Forks the command, puts it in its cgroups, names it in the state file, then lets it run.
 * Returns its pid; *exec_errno is execvp's errno when the program could not be started (the child
 * then exits 127). With relays, the command's stdout and stderr are their pipes. */
static pid_t start_command(char **argv, const char *state_file, const struct identity *id,
                           struct relay relays[2], int *exec_errno) {
  int go[2], exec_err[2], out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1}, input[2] = {-1, -1};
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_err, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  if (opt.sandboxed && pipe2(status, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  if (opt.stdin_fifo) {
    if (pipe2(input, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
    if (mkfifo(opt.stdin_fifo, 0600) < 0) die("cannot make %s: %s", opt.stdin_fifo, strerror(errno));
    in.fifo = open(opt.stdin_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (in.fifo < 0) die("cannot open %s: %s", opt.stdin_fifo, strerror(errno));
  }
  if (opt.output_max > 0 && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0))
    die("pipe: %s", strerror(errno));
  pid_t child = fork();
  if (child < 0) die("fork: %s", strerror(errno));
  if (child == 0) {
    close(go[1]);
    close(exec_err[0]);
    run_command(argv, go[0], exec_err[1], out[1], err[1], status[1], input[0]);
  }
  if (opt.stdin_fifo) {
    close(input[0]);
    in.to = input[1];
    fcntl(in.to, F_SETFL, O_NONBLOCK);
  }
  close(go[0]);
  close(exec_err[1]);
  if (opt.sandboxed) {
    close(status[1]);
    inner_status_fd = status[0];
    fcntl(inner_status_fd, F_SETFL, O_NONBLOCK);
  }
  if (opt.output_max > 0) {
    close(out[1]);
    close(err[1]);
    relays[0].from = out[0];
    relays[1].from = err[0];
    for (int i = 0; i < 2; i++) {
      fcntl(relays[i].from, F_SETFL, O_NONBLOCK);
      /* splice(2) refuses O_APPEND files; we are the spill file's only writer, from offset 0. */
      fcntl(relays[i].to, F_SETFL, fcntl(relays[i].to, F_GETFL) & ~O_APPEND);
    }
  }
  /* Both sides call setpgid, so the group exists whichever runs first. */
  if (setpgid(child, child) < 0 && errno != EACCES && errno != ESRCH) die("setpgid: %s", strerror(errno));
  group = child;

  /* Never a run the state file does not name, nor one outside its cgroups: on failure the go
   * pipe closes unwritten and the child exits 125 without running anything. */
  char pid_text[16];
  unsigned long long child_start;
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  const char *failed = NULL;
  if (join_cgroups(child) < 0) failed = "cannot move the command into its cgroup";
  else if (start_time(pid_text, &child_start) < 0 || write_state(state_file, id, (int)child, child_start, 0) < 0)
    failed = "cannot record the command";
  else if (write_all(go[1], "g", 1) < 0) failed = "cannot start the command";
  if (failed) {
    int e = errno;
    close(go[1]);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) continue;
    die("%s (%s): %s", failed, state_file, strerror(e));
  }
  close(go[1]);

  *exec_errno = read_exec_errno(exec_err[0]);
  return child;
}

/* The command's wait status as the inner supervisor saw it inside the sandbox, if it said. */
/* What the inner supervisor said on fd 3: `R\n` once the command is forked (signals inside then
 * reach it), then `<raw wait status>\n`. Read as it comes, without blocking. */
static char inner_said[64];
static size_t inner_said_len;

static void read_inner(void) {
  while (inner_status_fd >= 0 && inner_said_len < sizeof inner_said - 1) {
    ssize_t n = read(inner_status_fd, inner_said + inner_said_len, sizeof inner_said - 1 - inner_said_len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) { /* EOF: the inner supervisor is gone */
        close(inner_status_fd);
        inner_status_fd = -1;
      }
      return;
    }
    inner_said_len += (size_t)n;
    inner_said[inner_said_len] = '\0';
  }
}

static int inner_ready(void) {
  return inner_said_len >= 2 && inner_said[0] == 'R' && inner_said[1] == '\n';
}

/* Exactly `R\n<status>\n`, or nothing: a command cannot reach fd 3 (the inner supervisor is not
 * dumpable), and anything else is not its report. */
static int inner_status(int *status) {
  read_inner();
  if (!inner_ready()) return 0;
  const char *text = inner_said + 2;
  char *end;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\n' || end[1] != '\0') return 0;
  *status = (int)value;
  return 1;
}

/* The command holds its own stdio; ours must not keep the spill files open, unless we relay. */
static void release_stdio(int keep_output) {
  for (int fd = 0; fd <= 2; fd++) {
    if (keep_output && fd > 0) continue;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0 && null != fd) {
      dup2(null, fd);
      close(null);
    }
  }
}

/* Follows the command to its end: acts on kills, relays output, and once the leader has ended,
 * ends whatever it left (SIGTERM, SIGKILL after the grace) and drains the pipes. Returns the
 * leader's wait status. */
static int follow(pid_t leader, struct relay relays[2], const sigset_t *waiting_mask) {
  int status = 0, leader_done = 0;
  long long kill_at = 0;
  for (;;) {
    if (opt.sandboxed) read_inner();
    if (in.fifo >= 0 && pump_stdin() && got_close_stdin) close_stdin();
    for (size_t i = 0; i < N_KILL_SIGS; i++) {
      int sig = kill_sigs[i];
      if (!got_sig[sig]) continue;
      /* In a sandbox, a catchable signal before the command is forked would meet only processes
       * that ignore it: it waits (still pending) until the inner supervisor says it is ready. */
      if (opt.sandboxed && sig != SIGUSR1 && !inner_ready() && inner_status_fd >= 0 && !leader_done) continue;
      got_sig[sig] = 0;
      kill_requested = 1;
      signal_tree(sig == SIGUSR1 ? SIGKILL : sig, !leader_done);
    }
    if (!leader_done) {
      got_chld = 0;
      int st;
      pid_t got;
      while ((got = waitpid(-1, &st, WNOHANG)) > 0) {
        if (got != leader) continue; /* an orphan that reparented to us */
        status = st;
        leader_done = 1;
        /* What the command left behind ends with it: SIGTERM now, SIGKILL after the grace. Most
         * commands leave nothing, and then nothing is looked for. */
        if (tree_alive()) signal_tree(SIGTERM, 0);
        kill_at = now_ms() + opt.grace_ms;
        break;
      }
    }
    int alive = leader_done ? tree_alive() : 1;
    if (leader_done && alive && (kill_requested || now_ms() >= kill_at)) signal_tree(SIGKILL, 0);
    if (leader_done && !alive) {
      close_stdin();
      /* Nothing runs that could still write: take what the pipes hold and stop. */
      for (int i = 0; i < 2; i++) {
        pump(&relays[i]);
        close_relay(&relays[i]);
      }
      return status;
    }
    struct pollfd fds[5];
    int nfds = 0;
    for (int i = 0; i < 2; i++) {
      if (relays[i].from >= 0) fds[nfds++] = (struct pollfd){.fd = relays[i].from, .events = POLLIN};
    }
    if (inner_status_fd >= 0 && !inner_ready()) fds[nfds++] = (struct pollfd){.fd = inner_status_fd, .events = POLLIN};
    /* Data in the FIFO, or room in a full stdin pipe, wakes us. */
    /* Data in the FIFO, or room in a full stdin pipe, wakes us; so does the command closing its
     * stdin (POLLERR on the pipe's write end), which ends the FIFO at once. */
    int stdin_slot = -1;
    if (in.fifo >= 0) {
      if (!in.blocked) fds[nfds++] = (struct pollfd){.fd = in.fifo, .events = POLLIN};
      stdin_slot = nfds;
      fds[nfds++] = (struct pollfd){.fd = in.to, .events = in.blocked ? POLLOUT : 0};
    }
    struct timespec tick = {.tv_sec = 0, .tv_nsec = 20 * 1000000L};
    int ready = ppoll(fds, (nfds_t)nfds, leader_done ? &tick : NULL, waiting_mask);
    if (ready > 0 && stdin_slot >= 0 && (fds[stdin_slot].revents & (POLLERR | POLLHUP))) close_stdin();
    for (int i = 0; i < 2; i++) pump(&relays[i]);
  }
}

/* Written only from a real wait status: no status, no exit file. */
static int write_end(const char *exit_file, int status, int exec_errno, const struct relay relays[2]) {
  char record[768], extra[512] = "", escaped[256];
  size_t len = 0;
  if (exec_errno) {
    json_escape(strerror(exec_errno), escaped, sizeof escaped);
    len += (size_t)snprintf(extra + len, sizeof extra - len, ",\"error\":\"%s\"", escaped);
  }
  if (relays[0].capped || relays[1].capped) {
    len += (size_t)snprintf(extra + len, sizeof extra - len, ",\"outputCapped\":[%s%s%s],\"outputMax\":%lld",
                            relays[0].capped ? "\"stdout\"" : "",
                            relays[0].capped && relays[1].capped ? "," : "",
                            relays[1].capped ? "\"stderr\"" : "", opt.output_max);
  }
  if (relays[0].failed || relays[1].failed) {
    len += (size_t)snprintf(extra + len, sizeof extra - len, ",\"outputFailed\":{");
    for (int i = 0, first = 1; i < 2; i++) {
      if (!relays[i].failed) continue;
      json_escape(strerror(relays[i].failed), escaped, sizeof escaped);
      len += (size_t)snprintf(extra + len, sizeof extra - len, "%s\"%s\":\"%s\"", first ? "" : ",",
                              relays[i].name, escaped);
      first = 0;
    }
    len += (size_t)snprintf(extra + len, sizeof extra - len, "}");
  }
  if (oom_kills > 0)
    len += (size_t)snprintf(extra + len, sizeof extra - len, ",\"oomKills\":%lld,\"memoryMax\":%lld", oom_kills,
                            opt.memory_max);
  if (pids_max_hits > 0)
    len += (size_t)snprintf(extra + len, sizeof extra - len, ",\"pidsMaxHits\":%lld,\"pidsMax\":%lld",
                            pids_max_hits, opt.pids_max);
  int exited = WIFEXITED(status);
  snprintf(record, sizeof record, "{\"v\":1,\"%s\":%d,\"endedAtMs\":%lld%s}\n", exited ? "exitCode" : "signal",
           exited ? WEXITSTATUS(status) : WTERMSIG(status), now_ms(), extra);
  return publish(exit_file, record, 0, 1);
}

/* What a supervisor is before its claim: its signals blocked but in ppoll, its own session (it
 * outlives the worker), the subreaper of the command's orphans (so it reaps, and can end, them),
 * and its identity and cgroups ready for the state record. */
static void become_supervisor(sigset_t *waiting_mask, struct identity *id) {
  block_signals(waiting_mask);
  if (setsid() < 0 && errno != EPERM) die("setsid: %s", strerror(errno));
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  read_identity(id);
  build_cgroups_json();
}

/* Once the command runs (or failed to exec): reports it, follows it to its end, removes its cgroups
 * and writes the exit file. */
static int supervise(pid_t child, struct relay relays[2], int exec_errno, const char *exit_file,
                     const sigset_t *waiting_mask) {
  if (exec_errno) report("started %d exec-error %s\n", (int)child, strerror(exec_errno));
  else report("started %d\n", (int)child);
  release_stdio(opt.output_max > 0); /* before fd 3's EOF, so a worker that saw it sees them released */
  close(REPORT_FD);

  int status = follow(child, relays, waiting_mask);
  if (opt.sandboxed) {
    int inner;
    if (inner_status(&inner)) status = inner;
    /* The inner supervisor was killed with the rest: the launcher can only say 128 + 9. */
    else if (sent_kill && WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL) status = SIGKILL;
  }
  read_cgroup_stats();
  int rc = write_end(exit_file, status, exec_errno, relays) == 0 ? 0 : EXIT_SETUP;
  remove_cgroups_after_end();
  return rc;
}

static long long number_arg(const char *name, const char *value) {
  char *end;
  errno = 0;
  long long n = value ? strtoll(value, &end, 10) : -1;
  if (!value || errno || *end || n < 0) die("%s needs a non-negative number, got %s", name, value ? value : "nothing");
  return n;
}

/* Options come before <state-file>; returns the index of <state-file>. */
static int parse_options(int argc, char **argv) {
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0'; i += 2) {
    const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(name, "--cgroup") == 0) {
      if (!value || opt.n_cgroups == MAX_CGROUPS) die("--cgroup needs a directory (at most %d)", MAX_CGROUPS);
      opt.cgroups[opt.n_cgroups++] = value;
    } else if (strcmp(name, "--pids-max") == 0) opt.pids_max = number_arg(name, value);
    else if (strcmp(name, "--memory-max") == 0) opt.memory_max = number_arg(name, value);
    else if (strcmp(name, "--output-max") == 0) opt.output_max = number_arg(name, value);
    else if (strcmp(name, "--grace-ms") == 0) opt.grace_ms = (int)number_arg(name, value);
    else if (strcmp(name, "--stdin") == 0) {
      if (!value) die("--stdin needs a path");
      opt.stdin_fifo = value;
    } else if (strcmp(name, "--sandboxed") == 0) {
      opt.sandboxed = 1;
      i--; /* takes no value */
    }
    else die("unknown option %s", name);
  }
  return i;
}

/* Inside the sandbox: the command's parent, which reports its wait status on fd 3 and exits the way
 * a launcher can pass on. It ignores the catchable kill signals meant for the command, so it lives
 * to report (SIGKILL ends it with the rest). */
static int inner_main(int argc, char **argv) {
  if (argc < 4 || strcmp(argv[2], "--") != 0) die("usage: durable-bash-supervisor --inner -- <program> [args...]");
  fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
  /* Not dumpable: the command (same uid, inside the sandbox) cannot open /proc/<us>/fd/3 to forge
   * its own end. exec resets this for the command. */
  prctl(PR_SET_DUMPABLE, 0);
  /* Kill signals are held across the fork: the command gets one that comes early once its
   * dispositions are the defaults (never one lost to an inherited SIG_IGN), and we ignore ours. */
  sigset_t kills, none;
  sigemptyset(&kills);
  sigemptyset(&none);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaddset(&kills, kill_sigs[i]);
  sigprocmask(SIG_BLOCK, &kills, NULL);
  pid_t child = fork();
  if (child < 0) die("fork: %s", strerror(errno));
  if (child == 0) {
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
      if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[3], argv + 3);
    dprintf(2, "bash: %s: %s\n", argv[3], strerror(errno));
    _exit(127);
  }
  for (size_t i = 0; i < N_KILL_SIGS; i++) signal(kill_sigs[i], SIG_IGN);
  sigprocmask(SIG_UNBLOCK, &kills, NULL);
  (void)!write(REPORT_FD, "R\n", 2); /* signals sent inside now reach the command */
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) return 125;
  dprintf(REPORT_FD, "%d\n", status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- The nursery and its warm supervisors ------------------------------------------------------
 *
 * A warm supervisor is forked by the nursery before any task asks for it. It makes its cgroups
 * (named warm-<nursery pid>-<n> under each --cgroup-parent), forks its command's process, puts
 * that process in them and leaves it waiting on its go pipe. Then it reads one task from fd 0
 * until EOF: NUL-separated fields, the first their count (a task cut short is refused whole)
 *
 *   <count> <state-file> <exit-file> <stdout-file> <stderr-file> <stdin-fifo or empty> <workdir> <argc>
 *   <argv...> <environment entries...>
 *
 * and goes on as a supervisor started with them would: the claim, the spill files (opened here,
 * private regular files of this user only), the state record naming the command, then the go
 * message (mode, workdir, argv, environment) on which the waiting process enters the workdir and
 * execs. An EOF before any task (the nursery or its worker is gone) ends it, and its cgroups with
 * it. Output always goes through the relay: the nursery takes only an --output-max above 0. */

static char *warm_cgroup_names[MAX_CGROUPS];

/* Reads fd until EOF into a malloc'd buffer; its length in *len. NULL on a read error. */
static char *read_to_eof(int fd, size_t *len) {
  size_t size = 4096, used = 0;
  char *buf = malloc(size);
  if (!buf) return NULL;
  for (;;) {
    if (used == size) {
      char *bigger = realloc(buf, size *= 2);
      if (!bigger) {
        free(buf);
        return NULL;
      }
      buf = bigger;
    }
    ssize_t n = read(fd, buf + used, size - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      free(buf);
      return NULL;
    }
    if (n == 0) break;
    used += (size_t)n;
  }
  *len = used;
  return buf;
}

/* Splits a buffer of NUL-terminated fields into up to max pointers; returns how many. */
static int split_fields(char *buf, size_t len, char **fields, int max) {
  int n = 0;
  size_t at = 0;
  while (at < len && n < max) {
    char *end = memchr(buf + at, '\0', len - at);
    if (!end) break;
    fields[n++] = buf + at;
    at = (size_t)(end - buf) + 1;
  }
  return n;
}

/* The waiting command's side: like run_command, but the program, its workdir and its environment
 * come on the go pipe, once there is a task. Mode 'p': stdin is the stdin pipe; 'n': /dev/null. */
static _Noreturn void run_warm_command(int go_fd, int err_fd, int out_fd, int errout_fd, int stdin_fd) {
  become_command_process(out_fd, errout_fd); /* the stdin pipe stays open until exec too */
  size_t len;
  char *msg = read_to_eof(go_fd, &len);
  if (!msg || len == 0) _exit(125);
  static char *fields[1 << 16];
  int n = split_fields(msg, len, fields, (int)(sizeof fields / sizeof *fields) - 2);
  if (n < 3) _exit(125);
  int argc = atoi(fields[2]);
  if (argc < 1 || 3 + argc > n) _exit(125);
  char **argv = fields + 3;
  char **envp = fields + 3 + argc + 1;
  /* argv ends at the NULL we put where the environment's first entry was; the environment ends
   * after the last field. */
  memmove(envp, fields + 3 + argc, (size_t)(n - 3 - argc) * sizeof *fields);
  argv[argc] = NULL;
  envp[n - 3 - argc] = NULL;
  int in_fd = fields[0][0] == 'p' ? stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in_fd < 0 || dup2(in_fd, 0) < 0) _exit(125);
  int e = 0;
  if (chdir(fields[1]) < 0) e = errno;
  else {
    extern char **environ;
    environ = envp;
    execvp(argv[0], argv);
    e = errno;
  }
  (void)!write(err_fd, &e, sizeof e);
  _exit(127);
}

/* A spill file for the command's output, on fd `target`: created 0600, or one an attempt that
 * started nothing left; never through a link, and only a private regular file of this user. */
static void open_spill(const char *file, int target) {
  int fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) die("cannot open spill file %s: %s", file, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
    die("spill file %s is not a private regular file of this user", file);
  if (dup2(fd, target) < 0) die("dup2: %s", strerror(errno));
  close(fd);
}

/* Ends a command process that never got its go message (it runs nothing), and reaps it. */
static void end_waiting_command(pid_t child) {
  kill(child, SIGKILL);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) continue;
}

/* A warm supervisor: fd 0 brings its task, fd 3 takes its report (both from the nursery). */
static _Noreturn void warm_main(const char *const *parents, int n_parents, int seq) {
  report_open = 1;
  char name[64];
  snprintf(name, sizeof name, "warm-%d-%d", (int)getppid(), seq);
  for (int i = 0; i < n_parents; i++) {
    size_t size = strlen(parents[i]) + strlen(name) + 2;
    warm_cgroup_names[i] = malloc(size);
    if (!warm_cgroup_names[i]) die("out of memory");
    snprintf(warm_cgroup_names[i], size, "%s/%s", parents[i], name);
    opt.cgroups[i] = warm_cgroup_names[i];
  }
  opt.n_cgroups = n_parents;
  sigset_t waiting_mask;
  struct identity id;
  become_supervisor(&waiting_mask, &id);
  make_cgroups();

  int go[2], exec_err[2], out[2], err[2], input[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_err, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
      pipe2(err, O_CLOEXEC) < 0 || pipe2(input, O_CLOEXEC) < 0)
    die("pipe: %s", strerror(errno));
  pid_t child = fork();
  if (child < 0) die("fork: %s", strerror(errno));
  if (child == 0) {
    close(go[1]);
    close(exec_err[0]);
    close(input[1]);
    run_warm_command(go[0], exec_err[1], out[1], err[1], input[0]);
  }
  close(go[0]);
  close(exec_err[1]);
  close(out[1]);
  close(err[1]);
  close(input[0]);
  if (setpgid(child, child) < 0 && errno != EACCES && errno != ESRCH) die("setpgid: %s", strerror(errno));
  group = child;
  if (join_cgroups(child) < 0) die("cannot move the command into its cgroup: %s", strerror(errno));

  /* Warm. Now the task, or EOF: the nursery let us go. */
  size_t len;
  char *task = read_to_eof(0, &len);
  static char *fields[1 << 16];
  int n = task ? split_fields(task, len, fields, (int)(sizeof fields / sizeof *fields)) : 0;
  int whole = n >= 8 && atoi(fields[0]) == n;
  char **f = fields + 1; /* past the count */
  n--;
  int argc = whole ? atoi(f[6]) : 0;
  if (!whole || argc < 1 || 7 + argc > n) {
    end_waiting_command(child);
    remove_made_cgroups();
    if (n <= 0) _exit(0);
    die("a malformed task from the nursery");
  }
  const char *state_file = f[0], *exit_file = f[1];
  id.started_ms = now_ms();
  if (write_state(state_file, &id, 0, 0, 1) < 0) {
    int e = errno;
    end_waiting_command(child);
    if (e != EEXIST) die("cannot claim %s: %s", state_file, strerror(e));
    remove_made_cgroups();
    report("claimed\n");
    _exit(EXIT_CLAIMED);
  }
  open_spill(f[2], 1);
  open_spill(f[3], 2);
  struct relay relays[2] = {{.name = "stdout", .from = out[0], .to = 1}, {.name = "stderr", .from = err[0], .to = 2}};
  for (int i = 0; i < 2; i++) fcntl(relays[i].from, F_SETFL, O_NONBLOCK);
  int keep_stdin = f[4][0] != '\0';
  if (keep_stdin) {
    opt.stdin_fifo = f[4];
    if (mkfifo(opt.stdin_fifo, 0600) < 0) die("cannot make %s: %s", opt.stdin_fifo, strerror(errno));
    in.fifo = open(opt.stdin_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (in.fifo < 0) die("cannot open %s: %s", opt.stdin_fifo, strerror(errno));
    in.to = input[1];
    fcntl(in.to, F_SETFL, O_NONBLOCK);
  } else {
    close(input[1]);
  }

  char pid_text[16];
  unsigned long long child_start;
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  if (start_time(pid_text, &child_start) < 0 || write_state(state_file, &id, (int)child, child_start, 0) < 0) {
    int e = errno;
    end_waiting_command(child);
    die("cannot record the command (%s): %s", state_file, strerror(e));
  }
  /* The go message: mode, workdir, argc, argv, environment, each NUL-terminated. */
  const char *mode = keep_stdin ? "p" : "n";
  int ok = write_all(go[1], mode, 2) == 0 && write_all(go[1], f[5], strlen(f[5]) + 1) == 0;
  for (int i = 6; ok && i < n; i++) ok = write_all(go[1], f[i], strlen(f[i]) + 1) == 0;
  close(go[1]);
  if (!ok) die("cannot start the command (%s): %s", state_file, strerror(errno));

  int exec_errno = read_exec_errno(exec_err[0]);
  /* What a worker that spawns the supervisor itself would have been told at its spawn. */
  if (exec_errno == E2BIG) die("spawn E2BIG");
  _exit(supervise(child, relays, exec_errno, exit_file, &waiting_mask));
}

/* The nursery's books: warm supervisors waiting for a task, and launched ones it reports on. */
enum { MAX_WARM = 16 };
struct warm {
  pid_t pid;
  int task_fd;   /* write end of its fd 0 */
  int report_fd; /* read end of its fd 3 */
};
struct launched {
  pid_t pid;     /* 0 once it exited */
  int report_fd; /* -1 once its report ended */
  long long id;
  char line[640];
  size_t line_len;
};

static struct warm pool[MAX_WARM];
static int n_pool;
static struct launched *launched; /* grows: one per supervisor alive (a host may hold thousands) */
static int n_launched, launched_size;

static void say(const char *fmt, ...) {
  char line[800];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n > 0 && write_all(1, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) exit(0);
}

static int fork_warm(const char *const *parents, int n_parents, int seq, struct warm *w) {
  int task[2], rep[2];
  if (pipe2(task, O_CLOEXEC) < 0) return -1;
  if (pipe2(rep, O_CLOEXEC) < 0) {
    close(task[0]);
    close(task[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(task[0]);
    close(task[1]);
    close(rep[0]);
    close(rep[1]);
    return -1;
  }
  if (pid == 0) {
    if (dup2(task[0], 0) < 0 || dup2(rep[1], REPORT_FD) < 0) _exit(EXIT_SETUP);
    /* Nothing of the worker's stays open in a long-lived supervisor; a setup error goes on fd 3. */
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(EXIT_SETUP);
    close_from(REPORT_FD + 1, 0);
    warm_main(parents, n_parents, seq);
  }
  close(task[0]);
  close(rep[1]);
  w->pid = pid;
  w->task_fd = task[1];
  w->report_fd = rep[0];
  return 0;
}

/* One report line of a launched supervisor, on to the worker with its launch's id. */
static void relay_report(struct launched *l) {
  char buf[512];
  ssize_t n = read(l->report_fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    if (l->line_len > 0) say("%lld %.*s\n", l->id, (int)l->line_len, l->line);
    l->line_len = 0;
    close(l->report_fd);
    l->report_fd = -1;
    say("%lld reported\n", l->id);
    return;
  }
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n') {
      say("%lld %.*s\n", l->id, (int)l->line_len, l->line);
      l->line_len = 0;
    } else if (l->line_len < sizeof l->line) {
      l->line[l->line_len++] = buf[i];
    }
  }
}

/* Warm refills wait until then after a warm supervisor died before it had a task. */
static long long refill_after_ms;
enum { WARM_RETRY_MS = 1000 };

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (int i = 0; i < n_launched; i++) {
      if (launched[i].pid != pid) continue;
      launched[i].pid = 0;
      say("%lld exited\n", launched[i].id);
    }
    for (int i = 0; i < n_pool; i++) {
      if (pool[i].pid != pid) continue;
      /* Died warm (a setup error: cgroups that cannot be made, say): it is no one's task. The
       * next launch's own supervisor reports the error; refills pause, so this is no fork loop. */
      refill_after_ms = now_ms() + WARM_RETRY_MS;
      close(pool[i].task_fd);
      close(pool[i].report_fd);
      pool[i--] = pool[--n_pool];
    }
  }
  /* Entries done with both are dropped. */
  for (int i = 0; i < n_launched; i++)
    if (launched[i].pid == 0 && launched[i].report_fd < 0) launched[i--] = launched[--n_launched];
}

/* Reads exactly len bytes of stdin (a task's payload). */
static int read_exact(int fd, char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = read(fd, buf, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    buf += n;
    len -= (size_t)n;
  }
  return 0;
}

static int nursery_main(int argc, char **argv) {
  static const char *parents[MAX_CGROUPS];
  int n_parents = 0, warm_target = 2;
  for (int i = 2; i < argc; i += 2) {
    const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(name, "--cgroup-parent") == 0) {
      if (!value || n_parents == MAX_CGROUPS) die("--cgroup-parent needs a directory (at most %d)", MAX_CGROUPS);
      parents[n_parents++] = value;
    } else if (strcmp(name, "--warm") == 0) warm_target = (int)number_arg(name, value);
    else if (strcmp(name, "--pids-max") == 0) opt.pids_max = number_arg(name, value);
    else if (strcmp(name, "--memory-max") == 0) opt.memory_max = number_arg(name, value);
    else if (strcmp(name, "--output-max") == 0) opt.output_max = number_arg(name, value);
    else if (strcmp(name, "--grace-ms") == 0) opt.grace_ms = (int)number_arg(name, value);
    else die("unknown nursery option %s", name);
  }
  if (opt.output_max <= 0) die("the nursery needs --output-max above 0 (its supervisors relay output)");
  if (warm_target > MAX_WARM) warm_target = MAX_WARM;
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld, waiting_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &waiting_mask);
  sigdelset(&waiting_mask, SIGCHLD);
  struct sigaction flag = {.sa_handler = on_signal};
  sigaction(SIGCHLD, &flag, NULL);
  close_from(REPORT_FD, 0);
  int seq = 0;
  char header[64];
  size_t header_len = 0;
  for (;;) {
    got_chld = 0;
    reap();
    int refill = now_ms() >= refill_after_ms;
    while (refill && n_pool < warm_target && fork_warm(parents, n_parents, seq, &pool[n_pool]) == 0) {
      seq++;
      n_pool++;
    }
    static struct pollfd *fds;
    static int *which, fds_size;
    if (fds_size < n_launched + 1) {
      fds_size = 2 * (n_launched + 1);
      fds = realloc(fds, (size_t)fds_size * sizeof *fds);
      which = realloc(which, (size_t)fds_size * sizeof *which);
      if (!fds || !which) die("out of memory");
    }
    int nfds = 0;
    fds[nfds++] = (struct pollfd){.fd = 0, .events = POLLIN};
    for (int i = 0; i < n_launched; i++) {
      if (launched[i].report_fd < 0) continue;
      which[nfds] = i;
      fds[nfds++] = (struct pollfd){.fd = launched[i].report_fd, .events = POLLIN};
    }
    struct timespec retry = {.tv_sec = WARM_RETRY_MS / 1000, .tv_nsec = 0};
    int waiting_to_refill = n_pool < warm_target;
    if (ppoll(fds, (nfds_t)nfds, waiting_to_refill ? &retry : NULL, &waiting_mask) < 0) continue; /* EINTR: SIGCHLD */
    for (int f = 1; f < nfds; f++)
      if (fds[f].revents) relay_report(&launched[which[f]]);
    if (!fds[0].revents) continue;
    /* A task: "<id> <length>\n" then that many bytes. EOF: the worker is gone or let us go. */
    char c;
    ssize_t n = read(0, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0; /* the warm ones see EOF on their fd 0 as we exit, and end */
    if (c != '\n') {
      if (header_len < sizeof header - 1) header[header_len++] = c;
      continue;
    }
    header[header_len] = '\0';
    header_len = 0;
    long long id = -1, len = -1;
    if (sscanf(header, "%lld %lld", &id, &len) != 2 || len <= 0 || len > (1LL << 30)) die("a malformed header %s", header);
    char *payload = malloc((size_t)len);
    if (!payload || read_exact(0, payload, (size_t)len) < 0) return 0;
    if (n_launched == launched_size) {
      launched_size = launched_size ? 2 * launched_size : 64;
      launched = realloc(launched, (size_t)launched_size * sizeof *launched);
      if (!launched) die("out of memory");
    }
    struct warm w;
    if (n_pool > 0) {
      w = pool[0];
      pool[0] = pool[--n_pool];
    } else if (fork_warm(parents, n_parents, seq++, &w) < 0) {
      say("%lld error cannot fork a supervisor: %s\n%lld reported\n%lld exited\n", id, strerror(errno), id, id);
      free(payload);
      continue;
    }
    /* A warm one that died meanwhile says why on its report pipe, which goes to this task. */
    (void)write_all(w.task_fd, payload, (size_t)len);
    close(w.task_fd);
    free(payload);
    fcntl(w.report_fd, F_SETFL, O_NONBLOCK);
    launched[n_launched++] = (struct launched){.pid = w.pid, .report_fd = w.report_fd, .id = id};
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--inner") == 0) return inner_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--nursery") == 0) return nursery_main(argc, argv);
  hold_low_fds();
  int first = parse_options(argc, argv);
  if (argc - first < 4 || strcmp(argv[first + 2], "--") != 0)
    die("usage: durable-bash-supervisor [options] <state-file> <exit-file> -- <program> [args...]");
  const char *state_file = argv[first], *exit_file = argv[first + 1];

  sigset_t waiting_mask;
  struct identity id;
  become_supervisor(&waiting_mask, &id);

  /* The claim: from here on the state file exists; a second supervisor (or a tombstone left by a
   * worker that gave up on this task) makes us run nothing. */
  if (write_state(state_file, &id, 0, 0, 1) < 0) {
    if (errno != EEXIST) die("cannot claim %s: %s", state_file, strerror(errno));
    report("claimed\n");
    return EXIT_CLAIMED;
  }
  make_cgroups();

  struct relay relays[2] = {{.name = "stdout", .from = -1, .to = 1}, {.name = "stderr", .from = -1, .to = 2}};
  int exec_errno;
  pid_t child = start_command(argv + first + 3, state_file, &id, relays, &exec_errno);
  return supervise(child, relays, exec_errno, exit_file, &waiting_mask);
}
