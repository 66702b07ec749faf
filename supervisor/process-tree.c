/* Every process the command started (through its cgroups, else /proc), and the signals sent to them. */
#include "supervisor.h"

/* A process kill signals pass over (the sandbox launcher), 0 for none. */
static pid_t spared;

/* Whether the process at pid now is in the task's cgroup `dir`: /proc/<pid>/cgroup names a path
 * ending in the task's own directory (its name is the task id, unique). */
static int in_cgroup(pid_t pid, const char *dir) {
  char file[64], lines[2048];
  snprintf(file, sizeof file, "/proc/%d/cgroup", (int)pid);
  if (read_small(file, lines, sizeof lines) <= 0) return 0;
  const char *name = strrchr(dir, '/');
  name = name ? name + 1 : dir;
  size_t len = strlen(name);
  for (const char *at = lines; (at = strstr(at, name)) != NULL; at += len) {
    char after = at[len];
    if (at > lines && at[-1] == '/' && (after == '\n' || after == '/' || after == '\0')) return 1;
  }
  return 0;
}

/* Signals a process read from a cgroup's list, through a pidfd taken before its membership is
 * checked again: one that left the list and whose pid a stranger took since is never signalled. */
static void send_member(pid_t pid, int sig, const char *dir) {
  if (pid == spared) return;
  int fd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) {
    if (errno == ENOSYS && in_cgroup(pid, dir)) kill(pid, sig);
    return;
  }
  if (in_cgroup(pid, dir)) (void)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
  close(fd);
}

/* A cgroup member, by pid and start time (clock ticks since boot). */
struct member {
  pid_t pid;
  unsigned long long start;
};

static int by_start(const void *a, const void *b) {
  const struct member *x = a, *y = b;
  if (x->start != y->start) return x->start < y->start ? -1 : 1;
  return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Sends sig (if not 0) to each process in the cgroup, the oldest first; returns how many there
 * were. The list comes sorted by pid, which after pids wrap puts a child before its parent: a shell
 * whose `sleep` got TERM first would live to print `Terminated`. A parent is older than its child. */
static int each_in_cgroup(const char *dir, int sig) {
  if (cgroup_file(path, sizeof path, dir, "cgroup.procs") < 0) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[256];
  int count = 0, size = 0;
  struct member *members = NULL;
  long pid = 0;
  ssize_t n;
  for (int more = 1; more;) {
    n = read(fd, buf, sizeof buf);
    more = n > 0;
    for (ssize_t i = 0; i <= (more ? n - 1 : 0); i++) {
      char c = more ? buf[i] : '\n'; /* the end closes a last number */
      if (c >= '0' && c <= '9') {
        pid = pid * 10 + (c - '0');
        continue;
      }
      if (pid <= 0) continue;
      if (sig && count == size) {
        struct member *grown = realloc(members, (size_t)(size = size ? 2 * size : 64) * sizeof *members);
        if (!grown) break; /* those read are signalled; the next pass reads again */
        members = grown;
      }
      if (sig) members[count] = (struct member){.pid = (pid_t)pid, .start = 0};
      count++;
      pid = 0;
    }
  }
  close(fd);
  if (sig && members) {
    int listed = count < size ? count : size;
    char pid_text[24];
    for (int i = 0; i < listed; i++) {
      snprintf(pid_text, sizeof pid_text, "%d", (int)members[i].pid);
      if (start_time(pid_text, &members[i].start) < 0) members[i].start = ~0ULL; /* gone: last */
    }
    qsort(members, (size_t)listed, sizeof *members, by_start);
    for (int i = 0; i < listed; i++) send_member(members[i].pid, sig, dir);
  }
  free(members);
  return count;
}

/* Our descendants, from /proc (this kernel class lacks /proc/<pid>/task/<tid>/children). The table
 * lives on the heap only while a scan runs: a steady supervisor touches none of it. */
struct proc_entry {
  pid_t pid, parent, group;
  unsigned long long start; /* with the pid, names the process (signal_exact) */
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
    procs[n].start = 0;
    for (int f = 2; f < 22 && p; f++) p = strchr(p + 1, ' '); /* p sits just before field f+1 */
    if (p) procs[n].start = strtoull(p + 1, NULL, 10);
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
      if (sig && (signalled == 0 || procs[i].group != signalled) && procs[i].pid != spared)
        (void)signal_exact(procs[i].pid, procs[i].start, sig);
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
void signal_tree(int sig, int leader_alive) {
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
int tree_alive(void) {
  if (has_children()) return 1;
  for (int i = 0; i < opt.n_cgroups; i++)
    if (each_in_cgroup(opt.cgroups[i], 0) > 0) return 1;
  return 0;
}

/* `--kill-cgroup <dir>`: the worker's SIGKILL to every process in a task's cgroup whose supervisor is
 * gone, where the cgroup has no cgroup.kill (v1), each through a pidfd (send_member). Exit 0. */
int kill_cgroup_main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: durable-bash-supervisor --kill-cgroup <cgroup directory>\n");
    return 2;
  }
  each_in_cgroup(argv[2], SIGKILL);
  return 0;
}
