/* --nursery: starts a worker's supervisors, keeping some warm (docs/SUPERVISOR.md "The nursery"). */
#include "supervisor.h"

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

/* A supervisor an earlier nursery started (its worker restarted), watched for its exit. */
struct watched {
  int pidfd;
  long long id;
};

static struct warm pool[MAX_WARM];
static struct watched *watched; /* grows, as launched does */
static int n_watched, watched_size;
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

/* While a warm one is left, a refill waits until no task came for this long: a new warm
 * supervisor's fork, cgroups and files take the CPU the command just launched and its worker
 * need (docs/PERFORMANCE.md). With none left, it is made at once, as a burst needs. */
static long long quiet_after_ms;
enum { REFILL_QUIET_MS = 50 };

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

/* `<id> watch <pid> <start time>`: says `<id> exited` once that process is gone (at once if it is
 * gone already or the pid is another process now), or `<id> unwatched` when this kernel cannot
 * (no pidfd_open): the worker then polls. The pidfd is taken before the start time is checked, so
 * it is that process's, never a later one's under the same pid. */
static void watch(long long id, int pid, unsigned long long start) {
  int fd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) {
    if (errno == ESRCH) say("%lld exited\n", id);
    else say("%lld unwatched\n", id);
    return;
  }
  char pid_text[24];
  unsigned long long now;
  snprintf(pid_text, sizeof pid_text, "%d", pid);
  if (start_time(pid_text, &now) < 0 || now != start) {
    close(fd);
    say("%lld exited\n", id);
    return;
  }
  if (n_watched == watched_size) {
    watched_size = watched_size ? 2 * watched_size : 64;
    watched = realloc(watched, (size_t)watched_size * sizeof *watched);
    if (!watched) die("out of memory");
  }
  watched[n_watched++] = (struct watched){.pidfd = fd, .id = id};
}

int nursery_main(int argc, char **argv) {
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
    else if (strcmp(name, "--spill-dir") == 0 && value) opt.spill_dir = value;
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
    long long now = now_ms();
    int refill = now >= refill_after_ms && (n_pool == 0 || now >= quiet_after_ms);
    while (refill && n_pool < warm_target && fork_warm(parents, n_parents, seq, &pool[n_pool]) == 0) {
      seq++;
      n_pool++;
    }
    static struct pollfd *fds;
    static int *which, fds_size;
    if (fds_size < n_launched + n_watched + 1) {
      fds_size = 2 * (n_launched + n_watched + 1);
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
    int first_watched = nfds;
    for (int i = 0; i < n_watched; i++) fds[nfds++] = (struct pollfd){.fd = watched[i].pidfd, .events = POLLIN};
    /* Waiting to refill: woken when the pause or the quiet ends. */
    long long wait_ms = WARM_RETRY_MS;
    if (now < refill_after_ms) wait_ms = refill_after_ms - now;
    else if (n_pool > 0 && now < quiet_after_ms) wait_ms = quiet_after_ms - now;
    struct timespec retry = {.tv_sec = wait_ms / 1000, .tv_nsec = (wait_ms % 1000) * 1000000};
    int waiting_to_refill = n_pool < warm_target;
    if (ppoll(fds, (nfds_t)nfds, waiting_to_refill ? &retry : NULL, &waiting_mask) < 0) continue; /* EINTR: SIGCHLD */
    for (int f = 1; f < first_watched; f++)
      if (fds[f].revents) relay_report(&launched[which[f]]);
    /* Backwards, so the entry moved into a freed slot was already looked at. */
    for (int i = n_watched - 1; i >= 0; i--) {
      if (!fds[first_watched + i].revents) continue;
      say("%lld exited\n", watched[i].id);
      close(watched[i].pidfd);
      watched[i] = watched[--n_watched];
    }
    if (!fds[0].revents) continue;
    /* A task: "<id> <length>\n" then that many bytes; or "<id> watch <pid> <start>\n". EOF: the
     * worker is gone or let us go. */
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
    int watch_pid;
    unsigned long long watch_start;
    if (sscanf(header, "%lld watch %d %llu", &id, &watch_pid, &watch_start) == 3) {
      watch(id, watch_pid, watch_start);
      continue;
    }
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
    quiet_after_ms = now_ms() + REFILL_QUIET_MS;
  }
}
