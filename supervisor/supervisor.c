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
 * Its options (containment and limits) are parsed in options.c, which lists them.
 *
 *   durable-bash-supervisor --inner [--tty] [--as <uid>] [--workdir-inode <dev>:<ino>] -- <program> [args...]
 *
 * runs inside the sandbox as the command's parent and writes its raw wait status to fd 3 (inner.c).
 *
 *   durable-bash-supervisor --nursery [--cgroup-parent DIR]... [--warm N] [limits] --output-max BYTES
 *
 * starts supervisors for a worker, so the worker never forks itself (a fork of a large process
 * blocks its event loop for milliseconds), and keeps N of them warm: forked, their cgroups made
 * and their command's process already in them, waiting for a task (a first write to a v1
 * cgroup's cgroup.procs waits for an RCU grace period, about 20 ms here). docs/SUPERVISOR.md has
 * its protocol on stdin and stdout (nursery.c; the warm supervisors, warm.c).
 *
 *   durable-bash-supervisor --session-net [--userns <file>] [--refuse <address>[/<bits>]]... <netns file> [port]...
 *   durable-bash-supervisor --session-holder [--net-only]
 *   durable-bash-supervisor --session-launch --net <netns> [op]... <program> [args...]
 *
 * ready a session's network namespace (its loopback up, the addresses it refuses routed away:
 * session-routes.c) and relay the host loopback ports an operator allows it; hold a session's namespaces: its network's alone for a worker with root, a user
 * namespace around it for one without (session-net.c); launch a command in its session's
 * namespaces for a worker with root, as bubblewrap would (session-launch.c).
 *
 * Exit codes: 0 = the exit file was written; 100 = the state file already existed (nothing ran);
 * 101 = a setup error (no exit file; reported as "error <message>" on fd 3 and on fd 2).
 */
#include "supervisor.h"

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--inner") == 0) return inner_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--nursery") == 0) return nursery_main(argc, argv);
  if (argc > 1 && (strcmp(argv[1], "--signal") == 0 || strcmp(argv[1], "--signal-group") == 0))
    return signal_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--kill-cgroup") == 0) return kill_cgroup_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--session-net") == 0) return session_net_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--session-launch") == 0) return session_launch_main(argc, argv);
  if (argc > 1 && strcmp(argv[1], "--session-holder") == 0) {
    if (argc == 2) return session_holder_main(false);
    if (argc == 3 && strcmp(argv[2], "--net-only") == 0) return session_holder_main(true);
    fprintf(stderr, "durable-bash-supervisor: usage: --session-holder [--net-only]\n");
    return 1;
  }
  hold_low_fds();
  int first = parse_options(argc, argv);
  const char *state_file = argv[first], *exit_file = argv[first + 1];

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
