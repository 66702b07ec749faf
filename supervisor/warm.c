/* A warm supervisor: made by the nursery before its task, then a supervisor like any other. */
#include "supervisor.h"

/* ---- The nursery and its warm supervisors ------------------------------------------------------
 *
 * A warm supervisor is forked by the nursery before any task asks for it. It makes its cgroups
 * (named warm-<nursery pid>-<n> under each --cgroup-parent), forks its command's process, puts
 * that process in them and leaves it waiting on its go pipe. Then it reads one task from fd 0
 * until EOF: NUL-separated fields, the first their count (a task cut short is refused whole)
 *
 *   <count> <state-file> <exit-file> <stdout-file> <stderr-file> <stdin-fifo or empty> <flags> <workdir>
 *   <argc> <argv...> <environment entries...>
 *
 * where <flags> is empty, or `s` for a program that is a sandbox launcher (as --sandboxed: its inner
 * supervisor reports the command's wait status on the fd 3 it gets).
 *
 * and goes on as a supervisor started with them would: the spill files (opened here, private
 * regular files of this user only), the claim, the state record naming the command (the claim
 * itself without a stdin FIFO), then the go message (mode, workdir, argv, environment) on which the
 * waiting process enters the workdir and execs. An EOF before any task (the nursery or its worker
 * is gone) ends it, and its cgroups with it. Output always goes through the relay: the nursery
 * takes only an --output-max above 0. */

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
 * come on the go pipe, once there is a task. Mode 'p': stdin is the stdin pipe; 'n': /dev/null; a
 * second letter 's': the program is a sandbox launcher, given the inner supervisor's status pipe. */
static _Noreturn void run_warm_command(int go_fd, int err_fd, int out_fd, int errout_fd, int stdin_fd, int status_fd) {
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
  if (fields[0][0] != '\0' && fields[0][1] == 's' && dup2(status_fd, REPORT_FD) < 0) _exit(125);
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

/* A spill file for the command's output, opened for writing: created 0600, or one an attempt that
 * started nothing left; never through a link, and only a private regular file of this user. */
static int open_spill(const char *file) {
  int fd = open(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) die("cannot open spill file %s: %s", file, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) != 0)
    die("spill file %s is not a private regular file of this user", file);
  return fd;
}

/* The spill file through the unnamed file in *slot, named now; else (none made, or the file exists
 * as an attempt that started nothing left it) opened as open_spill() does. */
static int name_spill(int *slot, const char *file) {
  int fd = take_unnamed(slot);
  if (fd >= 0 && name_file(fd, file) == 0) return fd;
  if (fd >= 0) close(fd);
  return open_spill(file);
}

/* Makes a spill file's descriptor the supervisor's own fd `target` (1 or 2), where it relays to. */
static void relay_into(int fd, int target) {
  if (dup2(fd, target) < 0) die("dup2: %s", strerror(errno));
  close(fd);
}

/* Writes the go message, mode then the rest, in one writev: the waiting process wakes once, where a
 * write per field woke it for each (a hundred and more with an environment). */
static int write_go(int fd, const char *mode, const char *rest, size_t rest_len) {
  size_t mode_len = strlen(mode) + 1;
  struct iovec iov[2] = {{.iov_base = (void *)mode, .iov_len = mode_len},
                         {.iov_base = (void *)rest, .iov_len = rest_len}};
  ssize_t n;
  do n = writev(fd, iov, 2);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  size_t done = (size_t)n; /* a pipe may take less than all: the rest by write_all */
  if (done < mode_len && write_all(fd, mode + done, mode_len - done) < 0) return -1;
  done = done < mode_len ? 0 : done - mode_len;
  return write_all(fd, rest + done, rest_len - done);
}

/* Ends a command process that never got its go message (it runs nothing), and reaps it. */
static void end_waiting_command(pid_t child) {
  kill(child, SIGKILL);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) continue;
}

/* A warm supervisor: fd 0 brings its task, fd 3 takes its report (both from the nursery). */
_Noreturn void warm_main(const char *const *parents, int n_parents, int seq) {
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

  int go[2], exec_err[2], out[2], err[2], input[2], status[2];
  if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(input, O_CLOEXEC) < 0 ||
      pipe2(status, O_CLOEXEC) < 0)
    die("pipe: %s", strerror(errno));
  pid_t child = fork_held(go, exec_err);
  if (child == 0) {
    close(input[1]);
    close(status[0]);
    run_warm_command(go[0], exec_err[1], out[1], err[1], input[0], status[1]);
  }
  close(out[1]);
  close(err[1]);
  close(input[0]);
  close(status[1]);
  if (join_cgroups(child) < 0) die("cannot move the command into its cgroup: %s", strerror(errno));
  open_cgroup_stats();
  /* Read while warm, so the task's record costs no read of /proc. */
  char pid_text[16];
  unsigned long long child_start;
  snprintf(pid_text, sizeof pid_text, "%d", (int)child);
  if (start_time(pid_text, &child_start) < 0) die("cannot read /proc/%s/stat", pid_text);
  /* The task's files, but for their names (a task outside this directory names none of them). */
  if (opt.spill_dir) {
    int *slots[] = {&unnamed.out, &unnamed.err, &unnamed.state, &unnamed.exit};
    for (size_t i = 0; i < sizeof slots / sizeof *slots; i++) *slots[i] = unnamed_file(opt.spill_dir);
  }

  /* Warm. Now the task, or EOF: the nursery let us go. */
  size_t len;
  char *task = read_to_eof(0, &len);
  static char *fields[1 << 16];
  int n = task ? split_fields(task, len, fields, (int)(sizeof fields / sizeof *fields)) : 0;
  int whole = n >= 9 && atoi(fields[0]) == n;
  char **f = fields + 1; /* past the count */
  n--;
  int argc = whole ? atoi(f[7]) : 0;
  if (!whole || argc < 1 || 8 + argc > n) {
    end_waiting_command(child);
    remove_made_cgroups();
    if (n <= 0) _exit(0);
    die("a malformed task from the nursery");
  }
  const char *state_file = f[0], *exit_file = f[1];
  int keep_stdin = f[4][0] != '\0';
  id.started_ms = now_ms();
  /* The spill files exist before any record names the command: an attempt that attaches to it
   * then opens its readers on them (a missing one reads as empty). A lost claim writes nothing to
   * them: whoever holds it does (after a kill's tombstone they stay empty until swept). */
  int spill_out = name_spill(&unnamed.out, f[2]), spill_err = name_spill(&unnamed.err, f[3]);
  /* The claim names the command at once, as its process exists and waits for the go: one record
   * written, not two. With a stdin FIFO the command is named only once the FIFO exists (a writer
   * that finds a named command and no FIFO takes its stdin as closed), so the claim comes first. */
  if (write_state(state_file, &id, keep_stdin ? 0 : (int)child, keep_stdin ? 0 : child_start, 1) < 0) {
    int e = errno;
    end_waiting_command(child);
    if (e != EEXIST) die("cannot claim %s: %s", state_file, strerror(e));
    remove_made_cgroups();
    report("claimed\n");
    _exit(EXIT_CLAIMED);
  }
  relay_into(spill_out, 1);
  relay_into(spill_err, 2);
  struct relay relays[2] = {{.name = "stdout", .from = out[0], .to = 1}, {.name = "stderr", .from = err[0], .to = 2}};
  for (int i = 0; i < 2; i++) fcntl(relays[i].from, F_SETFL, O_NONBLOCK);
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
  int sandboxed = f[5][0] == 's';
  if (sandboxed) {
    opt.sandboxed = 1;
    inner_status_fd = status[0];
    fcntl(inner_status_fd, F_SETFL, O_NONBLOCK);
  } else {
    close(status[0]);
  }

  if (keep_stdin && write_state(state_file, &id, (int)child, child_start, 0) < 0) {
    int e = errno;
    end_waiting_command(child);
    die("cannot record the command (%s): %s", state_file, strerror(e));
  }
  /* The go message: mode, workdir, argc, argv, environment, each NUL-terminated. The task's fields
   * from the workdir on lie one after another in its buffer: they go in one write with the mode. */
  const char *mode = keep_stdin ? (sandboxed ? "ps" : "p") : (sandboxed ? "ns" : "n");
  const char *last = f[n - 1];
  int ok = write_go(go[1], mode, f[6], (size_t)(last + strlen(last) + 1 - f[6])) == 0;
  close(go[1]);
  if (!ok) die("cannot start the command (%s): %s", state_file, strerror(errno));

  int exec_errno = read_exec_errno(exec_err[0]);
  /* What a worker that spawns the supervisor itself would have been told at its spawn. */
  if (exec_errno == E2BIG) die("spawn E2BIG");
  _exit(supervise(child, relays, exec_errno, exit_file, &waiting_mask));
}
