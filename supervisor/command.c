/* The command's process: forked, put in its cgroups, named in the state record (the claim), then let go. */
#include "supervisor.h"

/* What every command process is before it execs: its own group, every signal at its default and
 * none blocked, its output on the relay pipes (when out_fd >= 0), an OOM score above the worker's,
 * fd 3 closed and every fd above it close-on-exec (the go and exec-error pipes stay open until
 * exec). */
void become_command_process(int out_fd, int errout_fd) {
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
  if (opt.tty_cols) {
    int slave = become_terminal_session();
    if (slave < 0) _exit(125);
    out_fd = errout_fd = stdin_fd = slave;
  }
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

/* Kill signals and SIGCHLD stay blocked except while the loop waits in ppoll, so each one is
 * acted on in the loop, never lost between a check and the wait. */
void block_signals(sigset_t *waiting_mask) {
  sigset_t blocked;
  sigemptyset(&blocked);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaddset(&blocked, kill_sigs[i]);
  sigaddset(&blocked, SIGCHLD);
  sigaddset(&blocked, SIGUSR2);
  sigaddset(&blocked, SIGWINCH);
  sigprocmask(SIG_BLOCK, &blocked, waiting_mask);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigdelset(waiting_mask, kill_sigs[i]);
  sigdelset(waiting_mask, SIGCHLD);
  sigdelset(waiting_mask, SIGUSR2);
  sigdelset(waiting_mask, SIGWINCH);
  signal(SIGPIPE, SIG_IGN); /* a dead worker on fd 3 is only EPIPE */
  signal(SIGXFSZ, SIG_IGN); /* a spill file past an inherited file size limit is only EFBIG */
  struct sigaction flag = {.sa_handler = on_signal};
  sigfillset(&flag.sa_mask);
  for (size_t i = 0; i < N_KILL_SIGS; i++) sigaction(kill_sigs[i], &flag, NULL);
  sigaction(SIGCHLD, &flag, NULL); /* never an inherited SIG_IGN, which would discard the status */
  sigaction(SIGUSR2, &flag, NULL);
  sigaction(SIGWINCH, &flag, NULL);
}

void read_identity(struct identity *id) {
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

void build_cgroups_json(void) {
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

int write_state(const char *state_file, const struct identity *id, int pid,
                       unsigned long long pid_start, int exclusive) {
  char record[512 + strlen(cgroups_json)];
  snprintf(record, sizeof record,
           "{\"v\":1,\"supervisorPid\":%d,\"supervisorStart\":%llu,\"bootId\":\"%s\","
           "\"pid\":%d,\"pidStart\":%llu,\"startedAtMs\":%lld%s}\n",
           id->pid, id->start, id->boot_id, pid, pid_start, id->started_ms, cgroups_json);
  /* The claim through the file a warm supervisor made for it; a later record replaces it (publish). */
  return publish_through(exclusive ? take_unnamed(&unnamed.state) : -1, state_file, record, exclusive, 0);
}

/* execvp's errno from the exec-error pipe (and closes it), 0 when it succeeded: EOF then, as the
 * pipe's CLOEXEC end closed with the exec. */
int read_exec_errno(int fd) {
  int e = 0;
  ssize_t n;
  do n = read(fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(fd);
  return n == (ssize_t)sizeof e ? e : 0;
}

/* Forks the command's process, held until its go message: makes the go and exec-error pipes; the
 * parent closes the child's ends and makes the child a process group of its own. Returns the
 * child's pid in the parent and 0 in the child, which keeps go[0] and exec_err[1]. */
pid_t fork_held(int go[2], int exec_err[2]) {
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(exec_err, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  pid_t child = fork();
  if (child < 0) die("fork: %s", strerror(errno));
  if (child == 0) {
    close(go[1]);
    close(exec_err[0]);
    return 0;
  }
  close(go[0]);
  close(exec_err[1]);
  /* Both sides call setpgid, so the group exists whichever runs first; on a terminal the child's
   * setsid makes it (a group leader could not lead a session). */
  if ((!opt.tty_cols || opt.sandboxed) && setpgid(child, child) < 0 && errno != EACCES && errno != ESRCH)
    die("setpgid: %s", strerror(errno));
  group = child;
  return child;
}

/* Forks the command, puts it in its cgroups, names it in the state file, then lets it run.
 * Returns its pid; *exec_errno is execvp's errno when the program could not be started (the child
 * then exits 127). With relays, the command's stdout and stderr are their pipes. */
pid_t start_command(char **argv, const char *state_file, const struct identity *id,
                           struct relay relays[2], int *exec_errno) {
  int go[2], exec_err[2], out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1}, input[2] = {-1, -1};
  if (opt.sandboxed && pipe2(status, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
  if (opt.stdin_fifo) {
    if (pipe2(input, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
    if (mkfifo(opt.stdin_fifo, 0600) < 0) die("cannot make %s: %s", opt.stdin_fifo, strerror(errno));
    in.fifo = open(opt.stdin_fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (in.fifo < 0) die("cannot open %s: %s", opt.stdin_fifo, strerror(errno));
  }
  int master = -1;
  if (opt.tty_cols) {
    master = open_terminal();
  } else if (opt.output_max > 0 && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)) {
    die("pipe: %s", strerror(errno));
  }
  pid_t child = fork_held(go, exec_err);
  if (child == 0) run_command(argv, go[0], exec_err[1], out[1], err[1], status[1], input[0]);
  if (opt.stdin_fifo) {
    close(input[0]);
    if (master >= 0) {
      /* What is written goes to the terminal, as a person's typing does. */
      close(input[1]);
      input[1] = fcntl(master, F_DUPFD_CLOEXEC, 0);
      if (input[1] < 0) die("dup: %s", strerror(errno));
    }
    in.to = input[1];
    fcntl(in.to, F_SETFL, O_NONBLOCK);
  }
  if (master >= 0) {
    out[0] = master; /* the terminal's output; nothing comes on stderr */
    err[0] = -1;
    relays[0].terminal = 1;
    relays[0].copy = 1; /* splice(2) takes a pipe on one side */
  }
  if (opt.sandboxed) {
    close(status[1]);
    inner_status_fd = status[0];
    fcntl(inner_status_fd, F_SETFL, O_NONBLOCK);
  }
  if (opt.output_max > 0) {
    if (out[1] >= 0) close(out[1]);
    if (err[1] >= 0) close(err[1]);
    relays[0].from = out[0];
    relays[1].from = err[0];
    for (int i = 0; i < 2; i++) {
      fcntl(relays[i].from, F_SETFL, O_NONBLOCK);
      /* splice(2) refuses O_APPEND files; we are the spill file's only writer, from offset 0. */
      fcntl(relays[i].to, F_SETFL, fcntl(relays[i].to, F_GETFL) & ~O_APPEND);
    }
  }
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
