/* A session's network namespace (docs/CONTAINMENT.md, "Sessions apart"): its holder, for a worker
 * without root, the addresses it refuses, and the relay of the host loopback ports an operator
 * allows it (--allow-host-port).
 *
 *   durable-bash-supervisor --session-net [--userns <file>] [--refuse <address>[/<bits>]]... <netns file> [port]...
 *
 * readies the namespace: brings its loopback up (a new namespace's is down, and a session with no
 * way out still needs localhost), and refuses each --refuse address and every address of the
 * namespace it was started in (the host's own), by a route of type prohibit (session-routes.c).
 * Given ports, it then relays each connection to 127.0.0.1:<port> inside it to 127.0.0.1:<port> of
 * the namespace it was started in (the host's). A forked child enters the session's namespaces
 * (its user namespace first, when a worker without root owns it: its owner's rights there are what
 * a route needs), readies it, listens there and passes the sockets back over a socket pair: a
 * socket keeps the namespace it was made in, so the relay itself never leaves the host's. Once
 * listening it drops to nobody when it is root, writes `1` on fd 3, and forks one relay per
 * connection until it is signalled (its process group: the relays go with it). Without ports it
 * exits 0 once the namespace is ready; run again on a ready namespace, it changes nothing (a
 * restarted worker readies each network it finds, as one from before the refusals had none).
 *
 *   durable-bash-supervisor --session-holder [--net-only]
 *
 * makes a network namespace, brings its loopback up, writes `1` on fd 3 and waits to be signalled:
 * this process keeps the namespace, and commands join it through /proc/<pid>/ns. Without
 * --net-only (a worker without root) the network namespace lies in a user namespace of its own,
 * this user its root and nothing else mapped. A worker with root used to keep the namespace in a
 * file (a bind mount of its nsfs entry) instead; every such mount is one more that each session's
 * bubblewrap copies and remounts, and one that, unmounted while another session's bubblewrap
 * copies the host's mounts, fails that launch. Exit 1: a setup error, said on stderr. */
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "supervisor.h"

/* MAX_REFUSALS: the Temporal server's addresses, link-local and metadata ones, and every address of
 * the host (a host with many containers has one per bridge). */
enum { MAX_PORTS = 32, MAX_REFUSALS = 1024, NOBODY = 65534 };

static struct refusal refusals[MAX_REFUSALS];

static int fail(const char *what) {
  fprintf(stderr, "durable-bash-supervisor: %s: %s\n", what, strerror(errno));
  return 1;
}

static int loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr = {0};
  strcpy(ifr.ifr_name, "lo");
  int done = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (done == 0) {
    ifr.ifr_flags |= IFF_UP;
    done = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  close(s);
  return done;
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return at;
}

/* Copies both ways until both sides have ended; a side's end becomes a half-close of the other. */
static void relay_connection(int a, int b) {
  static char buf[65536];
  int fds[2] = {a, b}, open_in[2] = {1, 1};
  while (open_in[0] || open_in[1]) {
    struct pollfd p[2] = {{.fd = open_in[0] ? a : -1, .events = POLLIN}, {.fd = open_in[1] ? b : -1, .events = POLLIN}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < 2; i++) {
      if (!open_in[i] || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open_in[i] = 0;
        shutdown(fds[1 - i], SHUT_WR);
      } else if (write_all(fds[1 - i], buf, (size_t)n) < 0) {
        return;
      }
    }
  }
}

static _Noreturn void serve(const int *listeners, const int *ports, int n) {
  struct pollfd p[MAX_PORTS];
  for (int i = 0; i < n; i++) p[i] = (struct pollfd){.fd = listeners[i], .events = POLLIN};
  for (;;) {
    if (poll(p, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    for (int i = 0; i < n; i++) {
      if (!(p[i].revents & POLLIN)) continue;
      int in = accept4(listeners[i], NULL, NULL, SOCK_CLOEXEC);
      if (in < 0) continue;
      pid_t relay = fork();
      if (relay == 0) {
        for (int j = 0; j < n; j++) close(listeners[j]);
        /* Made here, in the host's namespace. */
        int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in to = loopback(ports[i]);
        if (out >= 0 && connect(out, (struct sockaddr *)&to, sizeof to) == 0) relay_connection(in, out);
        _exit(0);
      }
      close(in);
    }
  }
}

/* The child's part: into the session's namespaces, the loopback up, the refusals routed, the
 * listening sockets made and sent back on `back`. Exits 0 when done, 1 with what failed on stderr. */
static _Noreturn void listen_inside(const char *userns, const char *netns, int n_refused, const int *ports, int n, int back) {
  if (userns) {
    int fd = open(userns, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWUSER) < 0) _exit(fail("cannot enter the session's user namespace"));
    close(fd);
  }
  int fd = open(netns, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) < 0) _exit(fail("cannot enter the session's network"));
  close(fd);
  if (loopback_up() < 0) _exit(fail("cannot bring the session's loopback up"));
  char failed[64], what[128];
  if (refuse_routes(refusals, n_refused, failed, sizeof failed) < 0) {
    snprintf(what, sizeof what, "cannot refuse %s in the session's network", failed);
    _exit(fail(what));
  }
  int listeners[MAX_PORTS];
  for (int i = 0; i < n; i++) {
    int one = 1;
    struct sockaddr_in at = loopback(ports[i]);
    listeners[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listeners[i] < 0 || setsockopt(listeners[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(listeners[i], (struct sockaddr *)&at, sizeof at) < 0 || listen(listeners[i], 128) < 0)
      _exit(fail("cannot listen in the session's network"));
  }
  if (n == 0) _exit(0);
  char byte = 0, control[CMSG_SPACE(sizeof(int) * MAX_PORTS)];
  memset(control, 0, sizeof control);
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
  memcpy(CMSG_DATA(c), listeners, sizeof(int) * (size_t)n);
  if (sendmsg(back, &msg, 0) != 1) _exit(fail("cannot pass the sockets on"));
  _exit(0);
}

int session_net_main(int argc, char **argv) {
  static const char usage[] =
      "usage: durable-bash-supervisor --session-net [--userns <file>] [--refuse <address>[/<bits>]]... <netns file> [port]...\n";
  int first = 2, n_refused = 0;
  const char *userns = NULL;
  for (; first + 1 < argc; first += 2) {
    if (strcmp(argv[first], "--userns") == 0) {
      userns = argv[first + 1];
    } else if (strcmp(argv[first], "--refuse") == 0) {
      if (n_refused == MAX_REFUSALS || parse_refusal(argv[first + 1], &refusals[n_refused]) < 0) {
        fprintf(stderr, "durable-bash-supervisor --session-net: not an address to refuse: %s\n", argv[first + 1]);
        return 2;
      }
      n_refused++;
    } else {
      break;
    }
  }
  if (argc < first + 1 || argv[first][0] == '-') {
    fputs(usage, stderr);
    return 2;
  }
  /* Read here, in the namespace it was started in: the host's. */
  int own = own_addresses(refusals + n_refused, MAX_REFUSALS - n_refused);
  if (own < 0) return fail("cannot read the host's addresses");
  n_refused += own;
  const char *netns = argv[first];
  int n = argc - first - 1, ports[MAX_PORTS], listeners[MAX_PORTS];
  if (n > MAX_PORTS) {
    fprintf(stderr, "durable-bash-supervisor --session-net: at most %d ports\n", MAX_PORTS);
    return 2;
  }
  for (int i = 0; i < n; i++) {
    char *end;
    long port = strtol(argv[first + 1 + i], &end, 10);
    if (*end || port < 1 || port > 65535) {
      fprintf(stderr, "durable-bash-supervisor --session-net: not a port: %s\n", argv[first + 1 + i]);
      return 2;
    }
    ports[i] = (int)port;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) return fail("socketpair");
  pid_t child = fork();
  if (child < 0) return fail("fork");
  if (child == 0) {
    close(pair[0]);
    listen_inside(userns, netns, n_refused, ports, n, pair[1]);
  }
  close(pair[1]);
  if (n > 0) {
    char byte, control[CMSG_SPACE(sizeof(int) * MAX_PORTS)];
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t got;
    do got = recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    struct cmsghdr *c = got == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int) * (size_t)n)) {
      waitpid(child, NULL, 0);
      fprintf(stderr, "durable-bash-supervisor --session-net: the session's sockets did not come\n");
      return 1;
    }
    memcpy(listeners, CMSG_DATA(c), sizeof(int) * (size_t)n);
  }
  close(pair[0]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) continue;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  if (n == 0) return 0;
  /* Relays only copy bytes: they need nothing of root's. */
  if (getuid() == 0 && (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0))
    return fail("cannot drop privileges");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return fail("no_new_privs");
  signal(SIGCHLD, SIG_IGN); /* relays are reaped by the kernel */
  signal(SIGPIPE, SIG_IGN);
  if (write(3, "1", 1) != 1 && errno != EBADF) return fail("cannot say it is ready");
  close(3);
  serve(listeners, ports, n);
}

int session_holder_main(bool net_only) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(net_only ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET) < 0)
    return fail("cannot make the session's namespaces");
  if (!net_only) {
    char map[64];
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) < 0) return fail("uid_map");
    if (write_file("/proc/self/setgroups", "deny") < 0) return fail("setgroups");
    snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) < 0) return fail("gid_map");
  }
  if (loopback_up() < 0) return fail("cannot bring the session's loopback up");
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (write(3, "1", 1) != 1) return fail("cannot say it is ready");
  close(3);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGTERM, SIG_DFL);
  for (;;) pause();
}
