/*
 * durable-bash-supervisor: the real parent of one command, outliving the worker that started it.
 *
 *   durable-bash-supervisor [options] <state-file> <exit-file> -- <program> [args...]
 *
 * It claims <state-file> exclusively, records who it is and who the command is (pids, start
 * times, boot id) before the command may run, forwards kill signals to every process the command
 * started, ends whatever is left once the command ends, and writes the command's real wait status
 * to <exit-file>. The worker (or a restarted one) reads both files; docs/SUPERVISOR.md is the
 * protocol.
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
 *
 *   durable-bash-supervisor --inner [--tty] [--as <uid>] [--idmap <dir>]... -- <program> [args...]
 *
 * runs inside the sandbox as the command's parent and writes its raw wait status to fd 3.
 *
 *   durable-bash-supervisor --nursery [--cgroup-parent DIR]... [--warm N] [limits] --output-max BYTES
 *
 * starts supervisors for a worker, so the worker never forks itself (a fork of a large process
 * blocks its event loop for milliseconds), and keeps N of them warm: forked, their cgroups made
 * and their command's process already in them, waiting for a task (a first write to a v1
 * cgroup's cgroup.procs waits for an RCU grace period, about 20 ms here). docs/SUPERVISOR.md has
 * its protocol on stdin and stdout.
 *
 *   durable-bash-supervisor --session-net [--userns <file>] <netns file> [port]...
 *   durable-bash-supervisor --session-holder
 *
 * bring a session's network namespace's loopback up and relay the host loopback ports an operator
 * allows it; hold a session's namespaces for a worker without root (session-net.c).
 *
 * Exit codes: 0 = the exit file was written; 100 = the state file already existed (nothing ran);
 * 101 = a setup error (no exit file; reported as "error <message>" on fd 3 and on fd 2).
 */
#include "supervisor.h"

struct options opt = {.grace_ms = 2000};

long long number_arg(const char *name, const char *value) {
  char *end;
  errno = 0;
  long long n = value ? strtoll(value, &end, 10) : -1;
  if (!value || errno || *end || n < 0) die("%s needs a non-negative number, got %s", name, value ? value : "nothing");
  return n;
}

/* Options come before <state-file>; returns the index of <state-file>. */
static int parse_options(int argc, char **argv) {
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
  return i;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--inner") == 0) return inner_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--nursery") == 0) return nursery_main(argc, argv);
  if (argc > 1 && (strcmp(argv[1], "--signal") == 0 || strcmp(argv[1], "--signal-group") == 0))
    return signal_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--kill-cgroup") == 0) return kill_cgroup_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--session-net") == 0) return session_net_main(argc, argv);
  if (argc == 2 && strcmp(argv[1], "--session-holder") == 0) return session_holder_main();
  hold_low_fds();
  int first = parse_options(argc, argv);
  if (argc - first < 4 || strcmp(argv[first + 2], "--") != 0)
    die("usage: durable-bash-supervisor [options] <state-file> <exit-file> -- <program> [args...]");
  const char *state_file = argv[first], *exit_file = argv[first + 1];
  if (opt.tty_cols && opt.output_max <= 0) die("--tty needs --output-max (the terminal's output is relayed)");

  sigset_t waiting_mask;
  struct identity id;
  become_supervisor(&waiting_mask, &id);

  /* The claim: from here on the state file exists; a second supervisor (or a tombstone left by a
   * worker that gave up on this task) makes us run nothing. */
  if (write_state(state_file, &id, 0, 0, 1) < 0) {
    if (errno != EEXIST) die("cannot claim %s: %s", state_file, strerror(errno));
    report("claimed\n");
    return EXIT_CLAIMED;
  }
  make_cgroups();

  struct relay relays[2] = {{.name = "stdout", .from = -1, .to = 1}, {.name = "stderr", .from = -1, .to = 2}};
  int exec_errno;
  pid_t child = start_command(argv + first + 3, state_file, &id, relays, &exec_errno);
  return supervise(child, relays, exec_errno, exit_file, &waiting_mask);
}
