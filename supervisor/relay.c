/* The command's output relayed from its pipes to the spill files (capped, never blocking), and its stdin fed from a FIFO. */
#include "supervisor.h"

void close_relay(struct relay *r) {
  if (r->from >= 0) close(r->from);
  r->from = -1;
}

/* Moves what the pipe holds now into the file; closes the pipe at EOF or at the cap. */
void pump(struct relay *r) {
  while (r->from >= 0) {
    long long room = opt.output_max - r->written;
    if (room <= 0) {
      /* At the cap: a byte more means the command wrote past it; EOF means it ended exactly. */
      char more;
      ssize_t n = read(r->from, &more, 1);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      r->capped = n > 0;
      close_relay(r);
      return;
    }
    size_t want = room < 65536 ? (size_t)room : 65536;
    ssize_t n;
    if (!r->copy) {
      n = splice(r->from, NULL, r->to, NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && errno == EINVAL) {
        r->copy = 1;
        continue;
      }
    } else {
      char buf[4096];
      n = read(r->from, buf, want < sizeof buf ? want : sizeof buf);
      /* A terminal's master reads EIO once no process holds its slave: the terminal's EOF. */
      if (n < 0 && errno == EIO && r->terminal) n = 0;
      if (n > 0 && r->terminal) answer_terminal_queries(buf, (size_t)n);
      if (n > 0 && write_all(r->to, buf, (size_t)n) < 0) n = -1;
    }
    if (n > 0) {
      r->written += n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) r->failed = errno; /* the spill file cannot take more (a full disk): stop reading */
    close_relay(r);
    return;
  }
}


void close_stdin(void) {
  if (in.fifo >= 0) close(in.fifo);
  if (in.to >= 0) close(in.to);
  in.fifo = in.to = -1;
  if (opt.stdin_fifo) unlink(opt.stdin_fifo);
}

/* Moves what the FIFO holds into the command's stdin; returns 1 when the FIFO is empty now. */
int pump_stdin(void) {
  in.blocked = 0;
  while (in.fifo >= 0) {
    ssize_t n = splice(in.fifo, NULL, in.to, NULL, 65536, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      /* Either side: an empty FIFO, or a full stdin pipe (the command is not reading). */
      struct pollfd probe = {.fd = in.fifo, .events = POLLIN};
      in.blocked = poll(&probe, 1, 0) > 0;
      return !in.blocked;
    }
    /* EPIPE: the command closed its stdin; nothing more can go in. */
    close_stdin();
    return 1;
  }
  return 1;
}
