/* Following the command to its end: kills, the relays, what it left behind, and the end record. */
#include "supervisor.h"

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

static int kill_requested;  /* a kill signal arrived */
static int stopped_running; /* a kill signal reached the command before its leader ended */

/* Follows the command to its end: acts on kills, relays output, and once the leader has ended,
 * ends whatever it left (SIGTERM, SIGKILL after the grace) and drains the pipes. Returns the
 * leader's wait status. */
static int follow(pid_t leader, struct relay relays[2], const sigset_t *waiting_mask) {
  int status = 0, leader_done = 0;
  long long kill_at = 0;
  for (;;) {
    if (opt.sandboxed) read_inner();
    if (in.fifo >= 0 && pump_stdin() && got_close_stdin) close_stdin();
    if (got_winch) {
      got_winch = 0;
      int cols, rows;
      /* What the command wrote before is relayed first, so the new size is recorded where it
       * begins in the output. */
      if (asked_terminal_size(&cols, &rows)) {
        pump(&relays[0]);
        resize_terminal(cols, rows, relays[0].written);
      }
    }
    /* Reaped before the kill signals are acted on: a command that ended on its own just before a
     * kill came counts as ended by itself, so the kill is not reported as its end. */
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
    for (size_t i = 0; i < N_KILL_SIGS; i++) {
      int sig = kill_sigs[i];
      if (!got_sig[sig]) continue;
      /* In a sandbox, a catchable signal before the command is forked would meet only processes
       * that ignore it: it waits (still pending) until the inner supervisor says it is ready. */
      if (opt.sandboxed && sig != SIGUSR1 && !inner_ready() && inner_status_fd >= 0 && !leader_done) continue;
      got_sig[sig] = 0;
      kill_requested = 1;
      if (!leader_done) stopped_running = 1;
      signal_tree(sig == SIGUSR1 ? SIGKILL : sig, !leader_done);
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
  snprintf(record, sizeof record, "{\"v\":1,\"%s\":%d,\"endedAtMs\":%lld,\"stopped\":%s%s}\n",
           exited ? "exitCode" : "signal", exited ? WEXITSTATUS(status) : WTERMSIG(status), now_ms(),
           stopped_running ? "true" : "false", extra);
  return publish_through(take_unnamed(&unnamed.exit), exit_file, record, 0, 1);
}

/* What a supervisor is before its claim: its signals blocked but in ppoll, its own session (it
 * outlives the worker), the subreaper of the command's orphans (so it reaps, and can end, them),
 * and its identity and cgroups ready for the state record. */
void become_supervisor(sigset_t *waiting_mask, struct identity *id) {
  block_signals(waiting_mask);
  if (setsid() < 0 && errno != EPERM) die("setsid: %s", strerror(errno));
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  read_identity(id);
  build_cgroups_json();
}

/* Once the command runs (or failed to exec): reports it, follows it to its end, removes its cgroups
 * and writes the exit file. */
int supervise(pid_t child, struct relay relays[2], int exec_errno, const char *exit_file,
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
