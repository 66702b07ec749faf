/* `--session-net <netns> [port]...`: readies a session's network namespace (docs/CONTAINMENT.md,
 * "Sessions apart") and, given ports, serves the host loopback services an operator allows it by
 * port (--allow-host-port).
 *
 * It brings the namespace's loopback up (a new namespace's is down, and a session with no way out
 * still needs localhost). With ports, it listens on 127.0.0.1:<port> inside the namespace and
 * relays each connection to 127.0.0.1:<port> of the namespace it was started in (the host's): a
 * socket keeps the namespace it was made in, so one process holds both sides. Once listening it
 * drops to nobody, with no capabilities and no_new_privs, writes `1` on fd 3, and forks one relay
 * per connection until it is signalled (its process group: the relays go with it). Without ports
 * it exits 0 once the loopback is up. Exit 1: a setup error, said on stderr. */
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <grp.h>

#include "supervisor.h"

enum { MAX_PORTS = 32, NOBODY = 65534 };

static int fail(const char *what) {
  fprintf(stderr, "durable-bash-supervisor --session-net: %s: %s\n", what, strerror(errno));
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
        /* Made now, after the switch back: a socket of the host's namespace. */
        int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in to = loopback(ports[i]);
        if (out >= 0 && connect(out, (struct sockaddr *)&to, sizeof to) == 0) relay_connection(in, out);
        _exit(0);
      }
      close(in);
    }
  }
}

int session_net_main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: durable-bash-supervisor --session-net <netns file> [port]...\n");
    return 2;
  }
  int n = argc - 3, ports[MAX_PORTS], listeners[MAX_PORTS];
  if (n > MAX_PORTS) {
    fprintf(stderr, "durable-bash-supervisor --session-net: at most %d ports\n", MAX_PORTS);
    return 2;
  }
  for (int i = 0; i < n; i++) {
    char *end;
    long port = strtol(argv[3 + i], &end, 10);
    if (*end || port < 1 || port > 65535) {
      fprintf(stderr, "durable-bash-supervisor --session-net: not a port: %s\n", argv[3 + i]);
      return 2;
    }
    ports[i] = (int)port;
  }
  int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  int session = open(argv[2], O_RDONLY | O_CLOEXEC);
  if (host < 0 || session < 0) return fail("cannot open the network namespaces");
  if (setns(session, CLONE_NEWNET) < 0) return fail("cannot enter the session's network");
  if (loopback_up() < 0) return fail("cannot bring the session's loopback up");
  for (int i = 0; i < n; i++) {
    int one = 1;
    struct sockaddr_in at = loopback(ports[i]);
    listeners[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listeners[i] < 0 || setsockopt(listeners[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(listeners[i], (struct sockaddr *)&at, sizeof at) < 0 || listen(listeners[i], 128) < 0)
      return fail("cannot listen in the session's network");
  }
  if (setns(host, CLONE_NEWNET) < 0) return fail("cannot go back to the host's network");
  close(host);
  close(session);
  if (n == 0) return 0;
  /* Relays only copy bytes: they need nothing of root's. */
  if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return fail("cannot drop privileges");
  signal(SIGCHLD, SIG_IGN); /* relays are reaped by the kernel */
  signal(SIGPIPE, SIG_IGN);
  if (write(3, "1", 1) != 1 && errno != EBADF) return fail("cannot say it is ready");
  close(3);
  serve(listeners, ports, n);
}
