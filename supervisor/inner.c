/* --inner: the command's parent inside the sandbox, reporting its real wait status on fd 3. */
#include "supervisor.h"

/* Inside the sandbox: the command's parent, which reports its wait status on fd 3 and exits the way
 * a launcher can pass on. With `--tty` the command leads a session whose controlling terminal is
 * its stdin (the outer supervisor's pseudo-terminal, passed through the launcher). It ignores the catchable kill signals meant for the command, so it lives
 * to report (SIGKILL ends it with the rest). With `--as <uid>` the command runs as that uid (a
 * session's, identity.c), and enters its workdir again as that uid: the kernel then checks the way
 * there by that uid's rights, whatever the launcher (root) could pass. With `--workdir-inode` it runs
 * nothing unless its workdir is that directory. */
int inner_main(int argc, char **argv) {
  long long as = -1;
  int i = 2, tty = 0, pinned = 0;
  unsigned long long dev = 0, ino = 0;
  for (; i + 1 < argc && strcmp(argv[i], "--") != 0; i += 2) {
    if (strcmp(argv[i], "--tty") == 0) {
      tty = 1;
      i--; /* takes no value */
    } else if (strcmp(argv[i], "--as") == 0) as = number_arg(argv[i], argv[i + 1]);
    else if (strcmp(argv[i], "--workdir-inode") == 0) {
      char end;
      if (sscanf(argv[i + 1], "%llu:%llu%c", &dev, &ino, &end) != 2) die("--workdir-inode needs <dev>:<ino>");
      pinned = 1;
    }
    else die("unknown inner option %s", argv[i]);
  }
  if (i + 1 >= argc || strcmp(argv[i], "--") != 0)
    die("usage: durable-bash-supervisor --inner [--tty] [--as <uid>] [--workdir-inode <dev>:<ino>] -- <program> [args...]");
  char **program = argv + i + 1;
  /* The launcher entered the workdir it bound: it must be the directory the worker checked, whatever
   * a session swapped in on the way (a link in place of its own directory), or nothing runs. */
  struct stat here;
  /* The directory itself, with no lookup in it: a 0700 workdir of the session's is closed to us. */
  if (pinned && (fstatat(AT_FDCWD, "", &here, AT_EMPTY_PATH) < 0 || here.st_dev != (dev_t)dev ||
                 here.st_ino != (ino_t)ino)) {
    char cwd_now[PATH_MAX];
    dprintf(2, "durable-bash-supervisor: the workdir %s changed while it was being checked\n",
            getcwd(cwd_now, sizeof cwd_now) ? cwd_now : "?");
    return 1;
  }
  char cwd[PATH_MAX];
  if (as >= 0 && getcwd(cwd, sizeof cwd) == NULL) die("cannot tell the workdir: %s", strerror(errno));
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
    /* On a terminal (its stdin), the command leads a session with it, as a login shell would. */
    if (tty && lead_terminal_session() < 0) {
      dprintf(2, "bash: cannot take the terminal: %s\n", strerror(errno));
      _exit(126);
    }
    if (as >= 0) become_session((uid_t)as);
    if (as >= 0 && chdir(cwd) < 0) {
      dprintf(2, "bash: cannot enter the workdir %s: %s\n", cwd, strerror(errno));
      _exit(126);
    }
    execvp(program[0], program);
    dprintf(2, "bash: %s: %s\n", program[0], strerror(errno));
    _exit(127);
  }
  for (size_t i = 0; i < N_KILL_SIGS; i++) signal(kill_sigs[i], SIG_IGN);
  sigprocmask(SIG_UNBLOCK, &kills, NULL);
  (void)!write(REPORT_FD, "R\n", 2); /* signals sent inside now reach the command */
  /* PID 1 of the launcher's namespace (bubblewrap's --as-pid-1): orphans of the command come to
   * us, so every child is reaped, and the command's own end is the one reported. */
  int status;
  for (;;) {
    pid_t ended = waitpid(-1, &status, 0);
    if (ended == child) break;
    if (ended < 0 && errno != EINTR) return 125;
  }
  dprintf(REPORT_FD, "%d\n", status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
