/* Signals to processes found by pid, through pidfds: a pid read a moment ago may name another
 * process by the time the signal goes, and a pidfd names one process for good. The start time is
 * checked after the pidfd is taken, so a pidfd of a process that has the pid only since is never
 * used. Kernels before 5.3 (no pidfd_open) get the start-time check before a plain kill(2). */
#include "supervisor.h"


/* Sends sig to the process with this pid and start time; 0 when it went, -1 with errno ESRCH when
 * that process is gone (another may hold its pid now), another errno on failure. start 0: any. */
int signal_exact(pid_t pid, unsigned long long start, int sig) {
  char pid_text[24];
  unsigned long long now;
  snprintf(pid_text, sizeof pid_text, "%d", (int)pid);
  int fd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0 && errno != ENOSYS) return -1;
  if (start != 0 && (start_time(pid_text, &now) < 0 || now != start)) {
    if (fd >= 0) close(fd);
    errno = ESRCH;
    return -1;
  }
  if (fd < 0) return kill(pid, sig);
  int sent = (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  return sent;
}

/* Sends sig to the process group led by this process, while that leader is the process with this
 * start time: a group's id is not given to a new process while the leader lives (nor while any of
 * the group does), so the group signalled is the one the leader led. */
static int signal_group_of(pid_t leader, unsigned long long start, int sig) {
  if (signal_exact(leader, start, 0) < 0) return -1;
  return kill(-leader, sig);
}

/* `--signal <pid> <start time> <signal>` and `--signal-group ...`: the worker's signals to a
 * supervisor or a task's group it found in a record (Node has no pidfd). Exit 0: sent; 3: that
 * process is gone; 1: another failure; 2: bad arguments. */
int signal_main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: durable-bash-supervisor %s <pid> <start time> <signal number>\n", argv[1]);
    return 2;
  }
  char *end;
  long pid = strtol(argv[2], &end, 10);
  if (*end || pid <= 0) return 2;
  unsigned long long start = strtoull(argv[3], &end, 10);
  if (*end || start == 0) return 2;
  long sig = strtol(argv[4], &end, 10);
  if (*end || sig < 0 || sig > 64) return 2;
  int group = strcmp(argv[1], "--signal-group") == 0;
  int sent = group ? signal_group_of((pid_t)pid, start, (int)sig) : signal_exact((pid_t)pid, start, (int)sig);
  if (sent == 0) return 0;
  return errno == ESRCH ? 3 : 1;
}
