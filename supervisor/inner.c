/* --inner: the command's parent inside the sandbox, reporting its real wait status on fd 3. */
#include "supervisor.h"

/* Inside the sandbox: the command's parent, which reports its wait status on fd 3 and exits the way
 * a launcher can pass on. It ignores the catchable kill signals meant for the command, so it lives
 * to report (SIGKILL ends it with the rest). */
int inner_main(int argc, char **argv) {
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
