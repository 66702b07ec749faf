/*
 * durable-bash-supervisor's parts: one section per file, naming what that file defines for the
 * others, each part before the parts that use it (none uses a part that uses it). supervisor.c has
 * the program's usage and main, which only wires the parts; docs/SUPERVISOR.md has the protocol.
 * scripts/supervisor-deps.sh checks the sections and the order against the objects.
 */
#ifndef DURABLE_BASH_SUPERVISOR_H
#define DURABLE_BASH_SUPERVISOR_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* pidfds (Linux 5.3): the numbers are the same on every architecture. */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

enum { EXIT_CLAIMED = 100, EXIT_SETUP = 101, REPORT_FD = 3, MAX_CGROUPS = 4 };

/* globals.c: the state more than one part uses */
/* The command's stdin, fed from a named pipe a worker writes (--stdin). The supervisor holds the
 * FIFO open for reading and writing, so it never sees EOF when a writer leaves; a close request
 * (SIGUSR2) ends it: what the FIFO holds is passed on, the command's stdin is closed (EOF), and
 * the FIFO is removed, so a later writer learns that stdin was closed. */
struct stdin_pipe {
  int fifo;    /* -1 when there is none, or once closed */
  int to;      /* the command's stdin pipe, write end */
  int blocked; /* the stdin pipe is full (the command is not reading): wait for room, not data */
};
extern int report_open;                       /* fd 3 was given to us by the worker */
extern pid_t group;                           /* the command's process group, 0 until it exists */
extern volatile sig_atomic_t got_chld;        /* set by the SIGCHLD handler; the loop reaps */
extern volatile sig_atomic_t got_sig[NSIG];   /* kill signals waiting for the loop */
extern volatile sig_atomic_t got_close_stdin; /* SIGUSR2: close the command's stdin once drained */
extern volatile sig_atomic_t got_winch;       /* SIGWINCH: resize the terminal (--tty-resize) */
extern int sent_kill;                         /* we SIGKILLed the command's processes */
extern int inner_status_fd;                   /* --sandboxed: where the inner supervisor reports */
extern const int kill_sigs[4];                /* the signals a worker sends to end a command */
#define N_KILL_SIGS (sizeof kill_sigs / sizeof *kill_sigs)
extern struct stdin_pipe in;                  /* the command's stdin (--stdin) */
extern char path[PATH_MAX];                   /* the one buffer every cgroup file path is built in */
extern long long oom_kills, pids_max_hits;    /* what the limits did, for the end record */

/* util.c: reports, setup errors, files and fds */
void report(const char *fmt, ...);
void set_die_cleanup(void (*cleanup)(void));
_Noreturn void die(const char *fmt, ...);
long long now_ms(void);
int write_all(int fd, const char *buf, size_t len);
ssize_t read_small(const char *path, char *buf, size_t size);
int start_time(const char *pid, unsigned long long *out);
void json_escape(const char *s, char *out, size_t size);
int publish(const char *path, const char *text, int exclusive, int durable);
int sync_dir(const char *path);
void on_signal(int sig);
void hold_low_fds(void);
void close_from(int first, int cloexec_only);
int write_file(const char *path, const char *text);

/* unnamed-files.c: a task's files made before their names are known (O_TMPFILE), named by a link */
struct unnamed_files {
  int out, err, state, exit; /* -1: none made (the file is then made when it is named) */
};
extern struct unnamed_files unnamed;
int unnamed_file(const char *dir);
int name_file(int fd, const char *path);
int take_unnamed(int *slot);
int publish_through(int fd, const char *path, const char *text, int exclusive, int durable);

/* options.c: the command line */
/* What the worker asked for on the command line. 0 = no limit. */
struct options {
  const char *cgroups[MAX_CGROUPS];
  int n_cgroups;
  long long pids_max, memory_max, output_max;
  int grace_ms;
  int sandboxed;
  const char *stdin_fifo;
  int tty_cols, tty_rows; /* --tty: the command's terminal size; 0 without one */
  const char *tty_events; /* --tty-events: where each size is recorded with its output offset */
  const char *tty_resize; /* --tty-resize: the size a worker asks for, read on SIGWINCH */
  const char *spill_dir;  /* the nursery's --spill-dir: where warm supervisors make their task's files */
};
extern struct options opt;
long long number_arg(const char *name, const char *value);
int parse_terminal_size(const char *text, int *cols, int *rows);
int parse_options(int argc, char **argv);

/* terminal.c: --tty */
int open_terminal(void);
int become_terminal_session(void);
int lead_terminal_session(void);
void answer_terminal_queries(const char *buf, size_t n);
int asked_terminal_size(int *cols, int *rows);
void resize_terminal(int cols, int rows, long long offset);

/* cgroups.c: the task's cgroups, their limits and what the limits did */
int cgroup_file(char *out, size_t size, const char *dir, const char *name);
void make_cgroups(void);
int join_cgroups(pid_t child);
void remove_made_cgroups(void);
void open_cgroup_stats(void);
void read_cgroup_stats(void);
void remove_cgroups_after_end(void);

/* pidfd.c: signals to a process named by its pid and start time */
int signal_exact(pid_t pid, unsigned long long start, int sig);
int signal_main(int argc, char **argv);

/* process-tree.c: every process the command started, and signalling them */
void signal_tree(int sig, int leader_alive);
int tree_alive(void);
int kill_cgroup_main(int argc, char **argv);

/* identity.c: a session's own identity for the command (inside the launcher) */
void idmap_tree(int tree, const char *dir, uid_t to);
void become_session(uid_t uid);

/* relay.c: stdout and stderr relayed to the spill files, stdin fed from its FIFO */
/* One output stream relayed from the command's pipe to its spill file, up to opt.output_max. */
struct relay {
  const char *name;
  int from; /* the pipe's read end; -1 once closed */
  int to;   /* the spill file (our fd 1 or 2) */
  long long written;
  int capped; /* the cap was reached and the pipe closed: the command's later writes fail */
  int copy;   /* splice(2) is refused for this file: copy through a buffer */
  int failed; /* errno of a write the spill file refused (a full disk): the pipe was closed */
  int terminal; /* `from` is a pseudo-terminal's master (--tty) */
};
void close_relay(struct relay *r);
void pump(struct relay *r);
void close_stdin(void);
int pump_stdin(void);

/* command.c: the command's process, its claim and state record */
/* What the state file says about us, fixed before the claim. */
struct identity {
  int pid;
  unsigned long long start;
  char boot_id[64]; /* JSON-escaped */
  long long started_ms;
};
void become_command_process(int out_fd, int errout_fd);
void block_signals(sigset_t *waiting_mask);
void read_identity(struct identity *id);
void build_cgroups_json(void);
int write_state(const char *state_file, const struct identity *id, int pid, unsigned long long pid_start, int exclusive);
int read_exec_errno(int fd);
pid_t fork_held(int go[2], int exec_err[2]);
pid_t start_command(char **argv, const char *state_file, const struct identity *id, struct relay relays[2], int *exec_errno);

/* supervise.c: following the command to its end, and the end record */
void become_supervisor(sigset_t *waiting_mask, struct identity *id);
int supervise(pid_t child, struct relay relays[2], int exec_errno, const char *exit_file, const sigset_t *waiting_mask);

/* inner.c: --inner, the command's parent inside the sandbox */
int inner_main(int argc, char **argv);

/* warm.c: a warm supervisor, made by the nursery before its task */
_Noreturn void warm_main(const char *const *parents, int n_parents, int seq);

/* nursery.c: --nursery, which starts a worker's supervisors */
int nursery_main(int argc, char **argv);

/* session-routes.c: the addresses a session's network refuses, as prohibit routes in it */
/* An address or prefix: `bits` of `addr` (4 bytes for AF_INET, 16 for AF_INET6). */
struct refusal {
  unsigned char family;
  unsigned char bits;
  unsigned char addr[16];
};
int parse_refusal(const char *text, struct refusal *out);
int own_addresses(struct refusal *out, int max);
int refuse_routes(const struct refusal *refusals, int n, char *failed, size_t size);

/* session-net.c: --session-net and --session-holder, a session's network namespace */
int session_net_main(int argc, char **argv);
int session_holder_main(bool net_only);

/* session-launch.c: --session-launch, a command's launcher in its session (a worker with root) */
int session_launch_main(int argc, char **argv);

#endif
