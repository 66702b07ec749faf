/*
 * The supervisor's command line, `[options] <state-file> <exit-file> -- <program> [args...]`, parsed
 * into `opt`, which every part reads. The other modes (--inner, --nursery, ...) parse their own
 * few options in their files, with number_arg.
 *
 * Options (containment and limits; docs/SUPERVISOR.md):
 *   --cgroup DIR        make DIR (a new cgroup) and run the command in it; repeatable, one per
 *                       hierarchy. Its processes are then found and killed through DIR.
 *   --pids-max N        pids.max of each cgroup that has one
 *   --memory-max BYTES  memory.limit_in_bytes (v1) or memory.max (v2) of each cgroup that has one
 *   --output-max BYTES  relay stdout and stderr through pipes, each stopping at BYTES
 *   --grace-ms MS       time the command's leftovers get between SIGTERM and SIGKILL
 *   --stdin FIFO        the command's stdin is a pipe fed from FIFO, a named pipe made here
 *                       (0600) that a worker writes; SIGUSR2 closes it once drained (EOF)
 *   --tty COLSxROWS     the command runs on a pseudo-terminal of that size held here: stdin,
 *                       stdout and stderr are its slave, the command leads a session with it as
 *                       its controlling terminal, and what it writes is relayed to the stdout
 *                       file (the stderr file stays empty); --stdin writes go to the terminal
 *   --tty-events FILE   with --tty: each size the terminal had, as `<stdout offset> <cols>x<rows>`
 *   --tty-resize FILE   with --tty: on SIGWINCH the terminal takes the size FILE holds
 *   --sandboxed         <program> is a sandbox launcher (bubblewrap) that runs
 *                       `durable-bash-supervisor --inner -- <command>`: kill signals other than
 *                       SIGKILL skip the launcher, and the command's real wait status comes from
 *                       the inner supervisor on fd 3 (the launcher only knows 128 + signal)
 */
#include "supervisor.h"

struct options opt = {.grace_ms = 2000};

/* A non-negative number given for option `name`; dies naming the option when it is not one. */
long long number_arg(const char *name, const char *value) {
  char *end;
  errno = 0;
  long long n = value ? strtoll(value, &end, 10) : -1;
  if (!value || errno || *end || n < 0) die("%s needs a non-negative number, got %s", name, value ? value : "nothing");
  return n;
}

/* `<cols>x<rows>`, each from 2 to 1000, with an optional final newline; 0 when `text` is not one.
 * --tty takes it, and terminal.c reads a --tty-resize file with it. */
int parse_terminal_size(const char *text, int *cols, int *rows) {
  char *x;
  long c = strtol(text, &x, 10), r = *x == 'x' ? strtol(x + 1, &x, 10) : 0;
  if ((*x != '\0' && *x != '\n') || c < 2 || c > 1000 || r < 2 || r > 1000) return 0;
  *cols = (int)c;
  *rows = (int)r;
  return 1;
}

/* Options come before <state-file>; returns the index of <state-file>, after which come
 * <exit-file>, `--` and the program. A command line that is not one dies with its usage. */
int parse_options(int argc, char **argv) {
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0'; i += 2) {
    const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(name, "--cgroup") == 0) {
      if (!value || opt.n_cgroups == MAX_CGROUPS) die("--cgroup needs a directory (at most %d)", MAX_CGROUPS);
      opt.cgroups[opt.n_cgroups++] = value;
    } else if (strcmp(name, "--pids-max") == 0) opt.pids_max = number_arg(name, value);
    else if (strcmp(name, "--memory-max") == 0) opt.memory_max = number_arg(name, value);
    else if (strcmp(name, "--output-max") == 0) opt.output_max = number_arg(name, value);
    else if (strcmp(name, "--grace-ms") == 0) opt.grace_ms = (int)number_arg(name, value);
    else if (strcmp(name, "--stdin") == 0) {
      if (!value) die("--stdin needs a path");
      opt.stdin_fifo = value;
    } else if (strcmp(name, "--tty") == 0) {
      if (!value || strchr(value, '\n') || !parse_terminal_size(value, &opt.tty_cols, &opt.tty_rows))
        die("--tty needs <cols>x<rows>, each from 2 to 1000, got %s", value ? value : "nothing");
    } else if (strcmp(name, "--tty-events") == 0) {
      if (!value) die("--tty-events needs a path");
      opt.tty_events = value;
    } else if (strcmp(name, "--tty-resize") == 0) {
      if (!value) die("--tty-resize needs a path");
      opt.tty_resize = value;
    } else if (strcmp(name, "--sandboxed") == 0) {
      opt.sandboxed = 1;
      i--; /* takes no value */
    }
    else die("unknown option %s", name);
  }
  if (argc - i < 4 || strcmp(argv[i + 2], "--") != 0)
    die("usage: durable-bash-supervisor [options] <state-file> <exit-file> -- <program> [args...]");
  if (opt.tty_cols && opt.output_max <= 0) die("--tty needs --output-max (the terminal's output is relayed)");
  return i;
}
