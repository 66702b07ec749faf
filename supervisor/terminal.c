/* --tty: the command's pseudo-terminal, its size, and the record of its sizes beside the output. */
#include "supervisor.h"
#include <sys/ioctl.h>

/* The slave's path, opened by the command's process once it leads a session of its own. */
static char tty_slave[64];
/* The master, kept for resizes (the relay's copy closes at the terminal's end). */
static int tty_master = -1;

/* Appends `<offset> <cols>x<rows>` to the --tty-events file: from byte `offset` of the stdout file
 * on, the screen had that size (a renderer replays the output with each size where it came). */
static void record_size(long long offset) {
  if (!opt.tty_events) return;
  int fd = open(opt.tty_events, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char line[64];
  int len = snprintf(line, sizeof line, "%lld %dx%d\n", offset, opt.tty_cols, opt.tty_rows);
  (void)!write(fd, line, (size_t)len); /* one short O_APPEND write: whole or not at all */
  close(fd);
}

/* A pseudo-terminal of opt's size: returns the master, and records the first size (offset 0). */
int open_terminal(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
      ptsname_r(master, tty_slave, sizeof tty_slave) != 0)
    die("cannot open a pseudo-terminal: %s", strerror(errno));
  struct winsize size = {.ws_row = (unsigned short)opt.tty_rows, .ws_col = (unsigned short)opt.tty_cols};
  if (ioctl(master, TIOCSWINSZ, &size) < 0) die("cannot size the pseudo-terminal: %s", strerror(errno));
  tty_master = fcntl(master, F_DUPFD_CLOEXEC, 0);
  if (tty_master < 0) die("dup: %s", strerror(errno));
  record_size(0);
  return master;
}

/* The command's side: a session of its own whose controlling terminal is the slave. Returns the
 * slave's fd (for stdin, stdout and stderr), or -1. Under a launcher (--sandboxed) the slave is
 * only passed on: the inner supervisor's child leads the session (`--inner --tty`), and a
 * terminal can be the controlling terminal of one session only. */
int become_terminal_session(void) {
  if (opt.sandboxed) return open(tty_slave, O_RDWR | O_NOCTTY);
  if (setsid() < 0) return -1;
  int fd = open(tty_slave, O_RDWR); /* a session leader's first terminal becomes its own */
  if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0) return -1;
  return fd;
}

/* `--inner --tty`: the command leads a session whose controlling terminal is its stdin. */
int lead_terminal_session(void) {
  if (setsid() < 0 || ioctl(0, TIOCSCTTY, 0) < 0) return -1;
  return 0;
}

/* On SIGWINCH: the size in the --tty-resize file (`<cols>x<rows>`, written by a worker), when it is
 * one and not the terminal's size now; 0 when the file says nothing valid (nothing changes). */
int asked_terminal_size(int *cols, int *rows) {
  if (tty_master < 0 || !opt.tty_resize) return 0;
  char text[32];
  ssize_t n = read_small(opt.tty_resize, text, sizeof text);
  if (n <= 0) return 0;
  return parse_terminal_size(text, cols, rows) && (*cols != opt.tty_cols || *rows != opt.tty_rows);
}

/* The terminal takes this size (the kernel tells the foreground process group: SIGWINCH), recorded
 * from byte `offset` of the stdout file on. */
void resize_terminal(int cols, int rows, long long offset) {
  struct winsize size = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  if (ioctl(tty_master, TIOCSWINSZ, &size) < 0) return;
  opt.tty_cols = cols;
  opt.tty_rows = rows;
  record_size(offset);
}

/* A control sequence the command began in one read and may end in the next: the bytes after ESC. */
static char query[16];
static size_t query_len;

static void reply(const char *answer) {
  (void)!write(tty_master, answer, strlen(answer)); /* a full terminal input drops it, as a line would */
}

/* Answers what a program asks of its terminal and would otherwise wait for (or echo as garbage):
 * device attributes (`CSI c`, `CSI > c`) and device status (`CSI 5 n`), with what an xterm says.
 * The cursor position (`CSI 6 n`) needs the screen, which only the worker's emulator has. Called
 * with each chunk of the terminal's output, in order. */
void answer_terminal_queries(const char *buf, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char b = buf[i];
    if (query_len == 0) {
      if (b == '\x1b') query[query_len++] = b;
      continue;
    }
    if (query_len == 1) {
      if (b == '[') query[query_len++] = b;
      else query_len = b == '\x1b';
      continue;
    }
    if ((b >= '0' && b <= '9') || b == ';' || b == '>' || b == '?') {
      if (query_len < sizeof query - 1) query[query_len++] = b;
      else query_len = 0;
      continue;
    }
    query[query_len] = '\0';
    const char *params = query + 2;
    if (b == 'c' && (strcmp(params, "") == 0 || strcmp(params, "0") == 0)) reply("\x1b[?1;2c");
    else if (b == 'c' && (strcmp(params, ">") == 0 || strcmp(params, ">0") == 0)) reply("\x1b[>0;276;0c");
    else if (b == 'n' && strcmp(params, "5") == 0) reply("\x1b[0n");
    query_len = 0;
    if (b == '\x1b') query[query_len++] = b;
  }
}
