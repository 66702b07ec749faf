/* --session-launch: a command's launcher for a worker with root when sessions are apart
 * (docs/CONTAINMENT.md, "Sessions apart"), in place of `nsenter --net=... bwrap ...`.
 *
 *   durable-bash-supervisor --session-launch --net <netns> [op]... [--chdir <dir>] [--] <program> [args...]
 *
 * with each op one of `--bind <src> <dest>`, `--ro-bind <src> <dest>`, `--tmpfs <dest>`,
 * `--dir <dest>`, `--perms <octal>` (the mode of the next --tmpfs or --dir; 0755 otherwise) and
 * `--remount-ro <dest>`, as bubblewrap reads them; and two of its own: `--bind-as <uid> <src> <dest>`,
 * a bind of <src> alone (not its submounts) whose owner's files show as <uid>'s (an idmapped mount:
 * a workdir handed to the session), and `--inode <dev>:<ino>`, which makes the next bind fail
 * unless its source is that directory (the one the worker checked, not a link swapped in since). It joins the session's network, takes new mount,
 * PID, IPC, UTS and cgroup namespaces, and forks the namespace's PID 1. That child leads a new
 * session, makes every mount of the host's tree nosuid and nodev, mounts a fresh /dev and /proc,
 * applies the ops in order (each bind's source taken before any op, so a later mount over it
 * changes nothing), enters <dir>, keeps only the capabilities the inner supervisor needs
 * (CAP_SETUID and CAP_SETGID for the uid switch) and runs
 * <program>: the inner supervisor, which reports the command's wait status on fd 3 (this binary's
 * own --inner, run without a second exec when <program> is this binary). This process waits for
 * it and exits as it did, 128 + the signal when one ended it.
 *
 * Why not bubblewrap: it builds a new root from a recursive bind of the host's and remounts each
 * of the host's mounts in user space, reading /proc/self/mountinfo again before each of its binds;
 * with nsenter's exec before it, that was two thirds of an isolated launch (docs/PERFORMANCE.md,
 * "Sessions apart: where an isolated launch's time goes"). Here the kernel copies the mount tree
 * once (unshare) and sets its flags in one recursive mount_setattr(2). A worker without root keeps
 * bubblewrap, which makes the user namespace such a worker needs.
 *
 * Either process dies with its parent, as bubblewrap's --die-with-parent. A setup error is said on
 * stderr (the command's) as `durable-bash-supervisor: <what>: <why>`, with exit status 1; fd 3 is
 * left to the inner supervisor. */
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>

#include "supervisor.h"

enum op_kind { OP_BIND, OP_RO_BIND, OP_BIND_AS, OP_TMPFS, OP_DIR, OP_REMOUNT_RO };

struct op {
  enum op_kind kind;
  const char *src, *dest;
  mode_t perms;
  uid_t as;   /* --bind-as: whose the source's owner's files show as */
  int pinned; /* a bind's source must be the directory dev:ino */
  dev_t dev;
  ino_t ino;
  int tree;   /* a bind's source, taken before any op */
  int is_dir; /* whether a bind's source is a directory */
};

enum { MAX_OPS = 256 };
static struct op ops[MAX_OPS];
static int n_ops;

/* The device nodes of a fresh /dev, bound from the host's, as bubblewrap's --dev has them. */
static const char *const DEV_NODES[] = {"null", "zero", "full", "random", "urandom", "tty"};
enum { N_DEV_NODES = sizeof DEV_NODES / sizeof DEV_NODES[0] };

/* What of a fresh /proc is bound read-only over itself, as bubblewrap's --proc does. */
static const char *const READ_ONLY_PROC[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

/* The capabilities the inner supervisor keeps for the uid switch (the command has none once it is
 * the session's uid). */
static const int KEPT_CAPS[] = {CAP_SETUID, CAP_SETGID};

static _Noreturn void fail(const char *what, const char *path) {
  if (path) dprintf(2, "durable-bash-supervisor: %s %s: %s\n", what, path, strerror(errno));
  else dprintf(2, "durable-bash-supervisor: %s: %s\n", what, strerror(errno));
  _exit(1);
}

static _Noreturn void usage(const char *why) {
  dprintf(2, "durable-bash-supervisor --session-launch: %s\n", why);
  _exit(1);
}

static struct op *add_op(enum op_kind kind, const char *src, const char *dest, mode_t perms) {
  if (n_ops == MAX_OPS) usage("too many mount operations");
  ops[n_ops] = (struct op){.kind = kind, .src = src, .dest = dest, .perms = perms, .tree = -1};
  return &ops[n_ops++];
}

static int is_bind(const struct op *op) {
  return op->kind == OP_BIND || op->kind == OP_RO_BIND || op->kind == OP_BIND_AS;
}

/* A detached copy of the mount tree at `path` (its submounts too), with `set` and `clear` applied. */
static int clone_tree(const char *path, unsigned long long set, unsigned long long clear) {
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (tree < 0) fail("cannot take", path);
  struct mount_attr attr = {.attr_set = set, .attr_clr = clear};
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
    fail("cannot set the flags of a copy of", path);
  return tree;
}

/* A detached copy of the mount at `path` alone (not its submounts), with `set` applied. */
static int take_dir(const char *path, unsigned long long set) {
  int tree = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0) fail("cannot take", path);
  struct mount_attr attr = {.attr_set = set};
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) fail("cannot set the flags of a copy of", path);
  return tree;
}

/* Mounts a detached tree on dest, following a symlink there as mount(2) (and bubblewrap) would. */
static void attach(int tree, const char *dest) {
  if (syscall(SYS_move_mount, tree, "", AT_FDCWD, dest, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_SYMLINKS) < 0)
    fail("cannot mount on", dest);
  close(tree);
}

/* Makes every missing directory of `path` (mode 0755), and `path` itself when missing: a directory,
 * or an empty file to bind a file over. A symlink whose target is gone has its target made, where
 * the mount will land: /etc/resolv.conf pointing into /run (systemd-resolved's), once /run is the
 * session's empty one. */
static void make_path_at_depth(const char *path, int is_dir, int depth) {
  struct stat st;
  if (stat(path, &st) == 0) return;
  char walk[PATH_MAX];
  ssize_t n;
  if (depth < 8 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (n = readlink(path, walk, sizeof walk - 1)) > 0) {
    walk[n] = '\0';
    char target[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int len = walk[0] == '/' ? snprintf(target, sizeof target, "%s", walk)
                             : snprintf(target, sizeof target, "%.*s/%s", (int)(slash - path), path, walk);
    if (len >= (int)sizeof target) {
      errno = ENAMETOOLONG;
      fail("cannot make", path);
    }
    make_path_at_depth(target, is_dir, depth + 1);
    return;
  }
  if (snprintf(walk, sizeof walk, "%s", path) >= (int)sizeof walk) {
    errno = ENAMETOOLONG;
    fail("cannot make", path);
  }
  for (char *slash = strchr(walk + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    if (mkdir(walk, 0755) < 0 && errno != EEXIST) fail("cannot make", walk);
    *slash = '/';
  }
  if (is_dir) {
    if (mkdir(path, 0755) < 0 && errno != EEXIST) fail("cannot make", path);
    return;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
  if (fd < 0) fail("cannot make", path);
  close(fd);
}

static void make_path(const char *path, int is_dir) { make_path_at_depth(path, is_dir, 0); }

/* Whether only root may change what a directory holds: root's, and not writable by its group or
 * others. A link found in such a directory was put there by root, not by a session. */
static int only_root_changes(int dir) {
  struct stat st;
  return fstat(dir, &st) == 0 && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* An O_PATH descriptor of an op's destination, made where missing when `make` (each missing directory
 * 0755; the last a directory, or an empty file to bind a file over), walked one name at a time from
 * /. A link is followed only where only root may have put it (/etc/resolv.conf into /run, for one);
 * one in a directory a session may change (its /tmp, its home, a handed workdir) fails the launch
 * rather than be followed as root: its target could be anywhere on the host. */
static int open_dest_at_depth(const char *path, int is_dir, int make, int depth) {
  if (path[0] != '/' || strlen(path) >= PATH_MAX) {
    errno = EINVAL;
    fail("cannot use the destination", path);
  }
  int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) fail("cannot open", "/");
  /* `done` is the part walked so far, for a relative link's target. */
  char done[PATH_MAX] = "";
  const char *rest = path;
  while (*rest == '/') rest++;
  while (*rest) {
    const char *end = strchr(rest, '/');
    size_t len = end ? (size_t)(end - rest) : strlen(rest);
    char name[NAME_MAX + 1];
    if (len > NAME_MAX) {
      errno = ENAMETOOLONG;
      fail("cannot use the destination", path);
    }
    memcpy(name, rest, len);
    name[len] = '\0';
    rest += len;
    while (*rest == '/') rest++;
    int last = *rest == '\0';
    if (strcmp(name, ".") == 0) continue;
    if (strcmp(name, "..") == 0) {
      /* Only from a link's target (the worker's paths are real): /etc/resolv.conf -> ../run/... */
      int parent = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (parent < 0) fail("cannot use the destination", path);
      close(dir);
      dir = parent;
      char *slash = strrchr(done, '/');
      if (slash) *slash = '\0';
      continue;
    }
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno != ENOENT || !make) fail("cannot make", path);
      if (!last || is_dir) {
        if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST) fail("cannot make", path);
      } else {
        int file = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (file < 0 && errno != EEXIST) fail("cannot make", path);
        if (file >= 0) close(file);
      }
      if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) fail("cannot make", path);
    }
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX], next[PATH_MAX];
      ssize_t n;
      if (depth >= 8 || !only_root_changes(dir) || (n = readlinkat(dir, name, target, sizeof target - 1)) <= 0) {
        errno = ELOOP;
        fail("will not follow a link a session may have made on the way to", path);
      }
      target[n] = '\0';
      int made = target[0] == '/' ? snprintf(next, sizeof next, "%s%s%s", target, *rest ? "/" : "", rest)
                                  : snprintf(next, sizeof next, "%s/%s%s%s", done, target, *rest ? "/" : "", rest);
      if (made >= (int)sizeof next) {
        errno = ENAMETOOLONG;
        fail("cannot use the destination", path);
      }
      close(dir);
      return open_dest_at_depth(next, is_dir, make, depth + 1);
    }
    int child = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    /* What was checked is what was opened: a link swapped in meanwhile is a link here too. */
    if (child < 0 || fstat(child, &st) < 0 || S_ISLNK(st.st_mode) || (!last && !S_ISDIR(st.st_mode)))
      fail("cannot use the destination", path);
    close(dir);
    dir = child;
    size_t used = strlen(done);
    snprintf(done + used, sizeof done - used, "/%s", name);
  }
  return dir;
}

static int open_dest(const char *path, int is_dir, int make) { return open_dest_at_depth(path, is_dir, make, 0); }

/* The path of a descriptor, through this process's /proc (the namespace's own, mounted by now):
 * mount(2) and chmod(2) on it act on that very file, whatever its path names meanwhile. */
static const char *fd_path(int fd, char buf[64]) {
  snprintf(buf, 64, "/proc/self/fd/%d", fd);
  return buf;
}

static void mount_tmpfs(const char *dest, mode_t perms, unsigned long flags) {
  char data[32];
  snprintf(data, sizeof data, "mode=0%o", (unsigned)perms);
  make_path(dest, 1);
  if (mount("tmpfs", dest, "tmpfs", flags, data) < 0) fail("cannot mount a tmpfs on", dest);
}

/* A fresh /dev: a tmpfs with the host's basic device nodes bound in, its own pseudo-terminals and
 * the usual links, as bubblewrap's --dev makes it. */
static void fresh_dev(const int nodes[N_DEV_NODES]) {
  mount_tmpfs("/dev", 0755, MS_NOSUID);
  char dest[64];
  for (size_t i = 0; i < N_DEV_NODES; i++) {
    snprintf(dest, sizeof dest, "/dev/%s", DEV_NODES[i]);
    make_path(dest, 0);
    attach(nodes[i], dest);
  }
  static const char *const links[][2] = {
      {"/proc/self/fd", "/dev/fd"},         {"/proc/self/fd/0", "/dev/stdin"},
      {"/proc/self/fd/1", "/dev/stdout"},   {"/proc/self/fd/2", "/dev/stderr"},
      {"/proc/kcore", "/dev/core"},         {"pts/ptmx", "/dev/ptmx"},
  };
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (symlink(links[i][0], links[i][1]) < 0) fail("cannot link", links[i][1]);
  if (mkdir("/dev/shm", 01777) < 0 || chmod("/dev/shm", 01777) < 0) fail("cannot make", "/dev/shm");
  make_path("/dev/pts", 1);
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") < 0)
    fail("cannot mount", "/dev/pts");
}

/* Keeps KEPT_CAPS alone: in the bounding set (what an exec may give), the permitted and effective
 * sets, none inheritable or ambient. */
static void keep_inner_caps(void) {
  unsigned long long keep = 0;
  for (size_t i = 0; i < sizeof KEPT_CAPS / sizeof KEPT_CAPS[0]; i++) keep |= 1ULL << KEPT_CAPS[i];
  for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
    if (!(keep & (1ULL << cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) fail("cannot drop a capability", NULL);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {
      {.effective = (unsigned)keep, .permitted = (unsigned)keep, .inheritable = 0},
      {.effective = (unsigned)(keep >> 32), .permitted = (unsigned)(keep >> 32), .inheritable = 0},
  };
  if (syscall(SYS_capset, &header, data) < 0) fail("cannot set the capabilities", NULL);
}

/* Whether `path` is the file this process runs (held open since the exec, so a rename over it
 * since, as a worker's start makes its private copy, tells them apart). */
static int is_this_binary(const char *path) {
  struct stat that, self;
  return stat(path, &that) == 0 && stat("/proc/self/exe", &self) == 0 && that.st_dev == self.st_dev &&
         that.st_ino == self.st_ino;
}

/* PID 1 of the new namespaces: the mounts, the directory, the capabilities, then the program. */
static _Noreturn void become_pid_1(char **program, const char *chdir_to, int launcher_alive) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  /* The launcher lives while its end of the pipe is open (its pid is not seen from in here). */
  struct pollfd gone = {.fd = launcher_alive, .events = POLLIN};
  if (poll(&gone, 1, 0) != 0) _exit(1);
  close(launcher_alive);
  if (setsid() < 0) fail("cannot start a session", NULL);
  /* Host mounts and unmounts still reach this copy; nothing made here reaches the host. */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) fail("cannot make the mounts private", NULL);
  /* Every source first, as it is on the host: an op's mount never changes a later op's source. */
  int nodes[N_DEV_NODES];
  char node[64];
  for (size_t i = 0; i < N_DEV_NODES; i++) {
    snprintf(node, sizeof node, "/dev/%s", DEV_NODES[i]);
    nodes[i] = clone_tree(node, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV);
  }
  for (int i = 0; i < n_ops; i++) {
    struct op *op = &ops[i];
    if (!is_bind(op)) continue;
    struct stat st;
    if (stat(op->src, &st) < 0) fail("cannot bind", op->src);
    op->is_dir = S_ISDIR(st.st_mode);
    unsigned long long set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op->kind == OP_RO_BIND ? MOUNT_ATTR_RDONLY : 0);
    /* An idmapped mount takes the directory alone: a submount of another filesystem may not be mappable. */
    op->tree = op->kind == OP_BIND_AS ? take_dir(op->src, set) : clone_tree(op->src, set, 0);
    /* The tree's root is what will be bound: it must be the directory the worker checked. */
    if (op->pinned && (fstat(op->tree, &st) < 0 || st.st_dev != op->dev || st.st_ino != op->ino)) {
      dprintf(2, "durable-bash-supervisor: the workdir %s changed while it was being checked\n", op->src);
      _exit(1);
    }
  }
  /* No setuid program or device node of the host's works inside. */
  struct mount_attr host = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV};
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &host, sizeof host) < 0)
    fail("cannot make the host's mounts nosuid and nodev", NULL);
  fresh_dev(nodes);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0) fail("cannot mount", "/proc");
  /* The kernel's knobs read-only, as bubblewrap's --proc leaves them (the command, no longer root,
   * could not write them anyway). */
  for (size_t i = 0; i < sizeof READ_ONLY_PROC / sizeof READ_ONLY_PROC[0]; i++) {
    if (access(READ_ONLY_PROC[i], F_OK) < 0) continue;
    attach(clone_tree(READ_ONLY_PROC[i], MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0), READ_ONLY_PROC[i]);
  }
  /* Once this namespace's /proc is there: the idmapping's user namespace is set up through it. */
  for (int i = 0; i < n_ops; i++)
    if (ops[i].kind == OP_BIND_AS) idmap_tree(ops[i].tree, ops[i].src, ops[i].as);
  for (int i = 0; i < n_ops; i++) {
    struct op *op = &ops[i];
    switch (op->kind) {
    case OP_BIND:
    case OP_RO_BIND:
    case OP_BIND_AS: {
      int dest = open_dest(op->dest, op->is_dir, 1);
      if (syscall(SYS_move_mount, op->tree, "", dest, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        fail("cannot mount on", op->dest);
      close(op->tree);
      close(dest);
      break;
    }
    case OP_TMPFS: {
      char data[32], buf[64];
      snprintf(data, sizeof data, "mode=0%o", (unsigned)op->perms);
      int dest = open_dest(op->dest, 1, 1);
      if (mount("tmpfs", fd_path(dest, buf), "tmpfs", MS_NOSUID | MS_NODEV, data) < 0)
        fail("cannot mount a tmpfs on", op->dest);
      close(dest);
      break;
    }
    case OP_DIR: {
      char buf[64];
      int dest = open_dest(op->dest, 1, 1);
      if (chmod(fd_path(dest, buf), op->perms) < 0) fail("cannot set the mode of", op->dest);
      close(dest);
      break;
    }
    case OP_REMOUNT_RO: {
      struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
      int dest = open_dest(op->dest, 1, 0);
      if (syscall(SYS_mount_setattr, dest, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0) fail("cannot make read-only", op->dest);
      close(dest);
      break;
    }
    }
  }
  if (chdir_to && chdir(chdir_to) < 0) fail("cannot enter", chdir_to);
  keep_inner_caps();
  /* The inner supervisor is this binary: run it here rather than exec it again (an exec of this
   * static binary is a few hundred µs of a launch). */
  if (program[1] && strcmp(program[1], "--inner") == 0 && is_this_binary(program[0])) {
    int argc = 0;
    while (program[argc]) argc++;
    exit(inner_main(argc, program));
  }
  execv(program[0], program);
  fail("cannot run", program[0]);
}

int session_launch_main(int argc, char **argv) {
  const char *net = NULL, *chdir_to = NULL;
  mode_t perms = 0755;
  int pinned = 0;
  unsigned long long dev = 0, ino = 0;
  int i = 2;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
    const char *name = argv[i];
    int values = strcmp(name, "--bind-as") == 0                                       ? 3
                 : strcmp(name, "--bind") == 0 || strcmp(name, "--ro-bind") == 0 ? 2
                 : strcmp(name, "--") == 0                                        ? 0
                                                                                  : 1;
    if (values == 0) {
      i++;
      break;
    }
    if (i + values >= argc) usage("an option's value is missing");
    const char *a = argv[i + 1], *b = values >= 2 ? argv[i + 2] : NULL;
    struct op *bind = NULL;
    if (strcmp(name, "--net") == 0) net = a;
    else if (strcmp(name, "--chdir") == 0) chdir_to = a;
    else if (strcmp(name, "--bind") == 0) bind = add_op(OP_BIND, a, b, 0);
    else if (strcmp(name, "--ro-bind") == 0) bind = add_op(OP_RO_BIND, a, b, 0);
    else if (strcmp(name, "--bind-as") == 0) {
      bind = add_op(OP_BIND_AS, b, argv[i + 3], 0);
      bind->as = (uid_t)number_arg(name, a);
    } else if (strcmp(name, "--inode") == 0) {
      char end;
      if (sscanf(a, "%llu:%llu%c", &dev, &ino, &end) != 2) usage("--inode needs <dev>:<ino>");
      pinned = 1;
    }
    else if (strcmp(name, "--tmpfs") == 0) add_op(OP_TMPFS, NULL, a, perms), perms = 0755;
    else if (strcmp(name, "--dir") == 0) add_op(OP_DIR, NULL, a, perms), perms = 0755;
    else if (strcmp(name, "--remount-ro") == 0) add_op(OP_REMOUNT_RO, NULL, a, 0);
    else if (strcmp(name, "--perms") == 0) {
      char *end;
      long mode = strtol(a, &end, 8);
      if (*end || mode < 0 || mode > 07777) usage("--perms needs an octal mode");
      perms = (mode_t)mode;
    } else usage("unknown option");
    if (bind && pinned) {
      bind->pinned = 1;
      bind->dev = (dev_t)dev;
      bind->ino = (ino_t)ino;
      pinned = 0;
    }
    i += values;
  }
  if (!net) usage("--net is missing");
  if (i >= argc) usage("no program");
  char **program = argv + i;

  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  int netns = open(net, O_RDONLY | O_CLOEXEC);
  if (netns < 0 || setns(netns, CLONE_NEWNET) < 0) fail("cannot join the session's network", net);
  close(netns);
  if (unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS) < 0) fail("cannot make the namespaces", NULL);
  /* As bubblewrap's --unshare-cgroup-try: a kernel without cgroup namespaces goes without. */
  if (unshare(CLONE_NEWCGROUP) < 0 && errno != EINVAL) fail("cannot make the cgroup namespace", NULL);
  /* Kill signals are the inner supervisor's and the command's: the outer supervisor spares this
   * process, and only SIGKILL (or its parent's death) ends it before its child. */
  for (size_t k = 0; k < N_KILL_SIGS; k++) signal(kill_sigs[k], SIG_IGN);
  int alive[2];
  if (pipe2(alive, O_CLOEXEC) < 0) fail("cannot make a pipe", NULL);
  pid_t child = fork();
  if (child < 0) fail("cannot fork", NULL);
  if (child == 0) {
    close(alive[1]);
    for (size_t k = 0; k < N_KILL_SIGS; k++) signal(kill_sigs[k], SIG_DFL);
    become_pid_1(program, chdir_to, alive[0]);
  }
  close(alive[0]);
  close(REPORT_FD); /* the inner supervisor's alone: its end reaches the outer one at once */
  int status;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) fail("cannot wait for the namespace's first process", NULL);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
