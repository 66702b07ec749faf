/* The session's own identity for a command inside the launcher (docs/CONTAINMENT.md, "Sessions
 * apart"): a workdir handed to it shown as the session's by an idmapped mount (the launcher's
 * --bind-as), then the command's uid and gid switched to the session's, with a seccomp filter that refuses setuid and setgid modes (a file the session
 * makes in an idmapped workdir belongs on disk to the workdir's owner: setuid, it would run as
 * that owner outside). Runs as root inside the launcher's mount namespace. */
#include "supervisor.h"
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>

/* A user namespace whose only mapping is `from` -> `to` for uids and gids: the idmapping of a
 * mount that shows files of `from` as `to`'s. Returns an fd of it, or -1. */
static int idmapping(uid_t from_uid, gid_t from_gid, uid_t to) {
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) < 0) return -1;
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    char c = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
    (void)!write(sync[1], &c, 1);
    pause();
    _exit(0);
  }
  close(sync[1]);
  char c = 'n', file[64], map[64];
  (void)!read(sync[0], &c, 1);
  close(sync[0]);
  int fd = -1;
  if (c == 'y') {
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)from_uid, (unsigned)to);
    snprintf(file, sizeof file, "/proc/%d/uid_map", (int)child);
    int ok = write_file(file, map) == 0;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)from_gid, (unsigned)to);
    snprintf(file, sizeof file, "/proc/%d/gid_map", (int)child);
    ok = ok && write_file(file, map) == 0;
    snprintf(file, sizeof file, "/proc/%d/ns/user", (int)child);
    if (ok) fd = open(file, O_RDONLY | O_CLOEXEC);
  }
  kill(child, SIGKILL);
  while (waitpid(child, NULL, 0) < 0 && errno == EINTR) continue;
  return fd;
}

/* Shows a detached mount tree's files of its root's owner as uid `to`'s (and `to`'s writes land as
 * that owner), without setuid or device files. Dies with the reason when it cannot. */
void idmap_tree(int tree, const char *dir, uid_t to) {
  struct stat st;
  if (fstat(tree, &st) < 0) die("cannot use the workdir %s: %s", dir, strerror(errno));
  int ns = idmapping(st.st_uid, st.st_gid, to);
  if (ns < 0) die("cannot map the workdir's owner to the session: %s", strerror(errno));
  struct mount_attr attr = {
      .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
      .userns_fd = (unsigned long long)ns,
  };
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    die("cannot show the workdir %s as the session's (idmapped mounts): %s", dir, strerror(errno));
  close(ns);
}

#define MODE_BITS (S_ISUID | S_ISGID)

/* The filter, built in blocks so no jump crosses more than its own block. */
static struct sock_filter filter[64];
static unsigned short n_filter;

static void emit(struct sock_filter insn) {
  if (n_filter == sizeof filter / sizeof filter[0]) die("the session's seccomp filter is too long");
  filter[n_filter++] = insn;
}

/* Syscall nr with argument n holding a mode: refused (EPERM) when the mode has a setuid or setgid
 * bit, allowed otherwise. A syscall that is not nr skips the block, with the number still loaded. */
static void refuse_mode_in(long nr, int n) {
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4));
  /* The low half of the 64-bit argument (little-endian): a mode fits in it. */
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 8 * n));
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MODE_BITS, 0, 1));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

/* Syscall nr refused outright with ENOSYS (callers fall back to calls the filter can read). */
static void refuse(long nr) {
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
}

/* Refuses setuid and setgid modes in every call that sets a mode, and outright the calls whose
 * mode a filter cannot read (openat2's struct, io_uring's queue). Everything else passes. */
static void refuse_setuid_modes(void) {
#if defined(__x86_64__)
  const unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  const unsigned arch = AUDIT_ARCH_AARCH64;
#else
#error "the session filter knows x86_64 and aarch64"
#endif
  n_filter = 0;
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  emit((struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
  /* x32 calls carry this bit; none is expected, and none may pass unread. */
  emit((struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  refuse_mode_in(SYS_chmod, 1);
  refuse_mode_in(SYS_creat, 1);
  refuse_mode_in(SYS_mknod, 1);
  refuse_mode_in(SYS_open, 2);
#endif
  refuse_mode_in(SYS_fchmod, 1);
  refuse_mode_in(SYS_fchmodat, 2);
  refuse_mode_in(452 /* fchmodat2, Linux 6.6 */, 2);
  refuse_mode_in(SYS_mknodat, 2);
  refuse_mode_in(SYS_openat, 3);
  refuse(437 /* openat2 */);
  refuse(425 /* io_uring_setup */);
  emit((struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  struct sock_fprog prog = {.len = n_filter, .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
    die("cannot install the session's seccomp filter: %s", strerror(errno));
}

/* Becomes the session's uid and gid, with no other groups and no capabilities left, under the
 * filter. In the command's process, just before exec. */
void become_session(uid_t uid) {
  if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
    die("cannot become the session's uid %u: %s", (unsigned)uid, strerror(errno));
  refuse_setuid_modes();
}
