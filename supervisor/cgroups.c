/* The task's cgroups: made with their limits before the command runs, read for what the limits did, removed after the end is recorded. */
#include "supervisor.h"

static int cgroups_made; /* how many of opt.cgroups exist: a setup error removes them */

int cgroup_file(char *out, size_t size, const char *dir, const char *name) {
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
void make_cgroups(void) {
  static const char *const pids[] = {"pids.max", NULL};
  static const char *const memory[] = {"memory.max", "memory.limit_in_bytes", NULL};
  set_die_cleanup(remove_made_cgroups); /* a setup error from here on removes what was made */
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
int join_cgroups(pid_t child) {
  char text[16];
  snprintf(text, sizeof text, "%d", (int)child);
  for (int i = 0; i < opt.n_cgroups; i++) {
    if (cgroup_file(path, sizeof path, opt.cgroups[i], "cgroup.procs") < 0 || write_file(path, text) < 0)
      return -1;
  }
  return 0;
}

/* A number after `key ` in a cgroup stats file's text ("oom_kill 1", "max 12"), or 0. */
static long long stat_value(const char *text, const char *key) {
  size_t len = strlen(key);
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, key, len) == 0 && line[len] == ' ') return atoll(line + len + 1);
  }
  return 0;
}

/* What says what the limits did, in each cgroup: the file and the key counted. */
enum { OOM_V2, OOM_V1, PIDS_MAX, N_STATS };
static const char *const stats[N_STATS][2] = {
    {"memory.events", "oom_kill"}, {"memory.oom_control", "oom_kill"}, {"pids.events", "max"}};
/* Those files, opened while a supervisor is warm (-1 where a hierarchy has none): the end then
 * reads each with a pread, where the opens (a dozen on a host with four v1 hierarchies, most of
 * files a hierarchy lacks) took 0.6-0.8 ms between the command's end and its record. */
static int stat_fds[MAX_CGROUPS][N_STATS];
static int stats_opened;

void open_cgroup_stats(void) {
  for (int i = 0; i < opt.n_cgroups; i++)
    for (int s = 0; s < N_STATS; s++)
      stat_fds[i][s] =
          cgroup_file(path, sizeof path, opt.cgroups[i], stats[s][0]) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
  stats_opened = 1;
}

/* One stats file's number: through its open file (a pread from 0 reads it afresh), else by path. */
static long long cgroup_stat(int cgroup, int stat) {
  char text[1024];
  ssize_t n = -1;
  if (stats_opened) {
    int fd = stat_fds[cgroup][stat];
    if (fd >= 0) {
      do n = pread(fd, text, sizeof text - 1, 0);
      while (n < 0 && errno == EINTR);
      if (n >= 0) text[n] = '\0';
    }
  } else if (cgroup_file(path, sizeof path, opt.cgroups[cgroup], stats[stat][0]) == 0) {
    n = read_small(path, text, sizeof text);
  }
  return n > 0 ? stat_value(text, stats[stat][1]) : 0;
}

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

void remove_made_cgroups(void) {
  for (int i = 0; i < cgroups_made; i++) rmdir(opt.cgroups[i]);
  cgroups_made = 0;
}

/* What the limits did to the task, read from its cgroups before they go. */
void read_cgroup_stats(void) {
  for (int i = 0; i < opt.n_cgroups; i++) {
    oom_kills += cgroup_stat(i, OOM_V2) + cgroup_stat(i, OOM_V1);
    pids_max_hits += cgroup_stat(i, PIDS_MAX);
  }
}

/* Removes the task's cgroups in a child, so the end is not held up: removing a v1 memory cgroup
 * waits for an RCU grace period (about 10 ms here), and an exiting process can hold one longer.
 * Nothing of the task runs any more. */
void remove_cgroups_after_end(void) {
  if (opt.n_cgroups == 0) return;
  pid_t pid = fork();
  if (pid > 0) return;
  for (int i = 0; i < opt.n_cgroups; i++) remove_cgroup_tree(opt.cgroups[i], 0);
  if (pid == 0) _exit(0);
}
