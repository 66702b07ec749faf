/* The addresses a session's network refuses (docs/CONTAINMENT.md, "The network"): the Temporal
 * server's, the host's own, link-local and metadata ones. Each is a route of type `prohibit` in the
 * session's namespace, so a connection there fails at once with EACCES ("Permission denied"), a
 * failure a person reads as a refusal (`unreachable` says "No route to host", `blackhole` EINVAL).
 * --session-net installs them over rtnetlink with the namespace owner's rights (CAP_NET_ADMIN
 * there); a command has no capability over that namespace, so it cannot remove them. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include "supervisor.h"

/* Reads "<address>[/<bits>]" (IPv4 or IPv6; a whole address without bits). Bits 0 would refuse
 * everything, the session's way out included: not accepted. */
int parse_refusal(const char *text, struct refusal *out) {
  char address[INET6_ADDRSTRLEN];
  const char *slash = strchr(text, '/');
  size_t len = slash ? (size_t)(slash - text) : strlen(text);
  if (len == 0 || len >= sizeof address) return -1;
  memcpy(address, text, len);
  address[len] = '\0';
  memset(out, 0, sizeof *out);
  if (inet_pton(AF_INET, address, out->addr) == 1) {
    out->family = AF_INET;
    out->bits = 32;
  } else if (inet_pton(AF_INET6, address, out->addr) == 1) {
    out->family = AF_INET6;
    out->bits = 128;
  } else {
    return -1;
  }
  if (slash) {
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    if (*end || end == slash + 1 || bits < 1 || bits > out->bits) return -1;
    out->bits = (unsigned char)bits;
  }
  return 0;
}

/* This namespace's own addresses (the host's, where --session-net starts), each whole. Not its
 * loopback (slirp4netns's --disable-host-loopback keeps that out), nor IPv6 link-local ones (fe80::/10
 * lies on a link, and a session's one link is its own tap). Returns how many, or -1 (E2BIG when
 * more than `max`). */
int own_addresses(struct refusal *out, int max) {
  struct ifaddrs *all;
  if (getifaddrs(&all) < 0) return -1;
  int n = 0;
  for (struct ifaddrs *a = all; a; a = a->ifa_next) {
    if (!a->ifa_addr || (a->ifa_flags & IFF_LOOPBACK)) continue;
    struct refusal r = {0};
    if (a->ifa_addr->sa_family == AF_INET) {
      r.family = AF_INET;
      r.bits = 32;
      memcpy(r.addr, &((struct sockaddr_in *)a->ifa_addr)->sin_addr, 4);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const struct in6_addr *six = &((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(six) || IN6_IS_ADDR_LOOPBACK(six)) continue;
      r.family = AF_INET6;
      r.bits = 128;
      memcpy(r.addr, six, 16);
    } else {
      continue;
    }
    if (n == max) {
      freeifaddrs(all);
      errno = E2BIG;
      return -1;
    }
    out[n++] = r;
  }
  freeifaddrs(all);
  return n;
}

static void format_refusal(const struct refusal *r, char *out, size_t size) {
  char address[INET6_ADDRSTRLEN] = "?";
  inet_ntop(r->family, r->addr, address, sizeof address);
  snprintf(out, size, "%s/%u", address, r->bits);
}

/* Inside a session, 10.0.2.0/24 is slirp4netns's own network: its gateway (the host's loopback,
 * which --disable-host-loopback refuses), its DNS forwarder (10.0.2.3), and no one else (a
 * connection to another of its addresses times out). A host address there is not reached through
 * it, and a route over its forwarder would cut the session's DNS. */
static bool in_slirp_network(const struct refusal *r) {
  static const unsigned char slirp[3] = {10, 0, 2};
  return r->family == AF_INET && r->bits >= 24 && memcmp(r->addr, slirp, 3) == 0;
}

/* One route of type prohibit for `r` in this namespace's main table, replacing any route of that
 * prefix (so a second call changes nothing). 0, or -1 with errno. */
static int prohibit(int nl, const struct refusal *r, unsigned seq) {
  struct {
    struct nlmsghdr n;
    struct rtmsg r;
    char attrs[64];
  } req;
  memset(&req, 0, sizeof req);
  size_t alen = r->family == AF_INET ? 4 : 16;
  unsigned char dst[16] = {0};
  /* The kernel refuses a prefix with bits set past its length. */
  for (unsigned i = 0; i < alen; i++) {
    int keep = (int)r->bits - (int)(i * 8);
    dst[i] = keep >= 8 ? r->addr[i] : keep <= 0 ? 0 : (unsigned char)(r->addr[i] & (0xff << (8 - keep)));
  }
  req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
  req.n.nlmsg_type = RTM_NEWROUTE;
  req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
  req.n.nlmsg_seq = seq;
  req.r.rtm_family = r->family;
  req.r.rtm_dst_len = r->bits;
  req.r.rtm_table = RT_TABLE_MAIN;
  req.r.rtm_protocol = RTPROT_STATIC;
  req.r.rtm_scope = RT_SCOPE_UNIVERSE;
  req.r.rtm_type = RTN_PROHIBIT;
  struct rtattr *attr = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
  attr->rta_type = RTA_DST;
  attr->rta_len = (unsigned short)RTA_LENGTH(alen);
  memcpy(RTA_DATA(attr), dst, alen);
  req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(attr->rta_len);
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(nl, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) return -1;
  char answer[1024];
  for (;;) {
    ssize_t got = recv(nl, answer, sizeof answer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -1;
    for (struct nlmsghdr *h = (struct nlmsghdr *)answer; NLMSG_OK(h, (size_t)got); h = NLMSG_NEXT(h, got)) {
      if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_ERROR) continue;
      int error = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
      if (error == 0) return 0;
      errno = -error;
      return -1;
    }
  }
}

/* Installs a prohibit route for each refusal in this (the session's) namespace. A kernel without
 * IPv6 has no IPv6 way out to refuse. 0, or -1 with errno and the refusal that failed in `failed`. */
int refuse_routes(const struct refusal *refusals, int n, char *failed, size_t size) {
  int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0) {
    snprintf(failed, size, "rtnetlink");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (in_slirp_network(&refusals[i])) continue;
    if (prohibit(nl, &refusals[i], (unsigned)i + 1) == 0) continue;
    if (refusals[i].family == AF_INET6 && errno == EAFNOSUPPORT) continue;
    int saved = errno;
    format_refusal(&refusals[i], failed, size);
    close(nl);
    errno = saved;
    return -1;
  }
  close(nl);
  return 0;
}
