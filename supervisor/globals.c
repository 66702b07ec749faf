/* The state more than one part reads or writes (one process, single-threaded); what only one part
 * uses stays static in its file, and the parsed command line is `opt`. */
#include "supervisor.h"

int report_open;
pid_t group;
volatile sig_atomic_t got_chld;
volatile sig_atomic_t got_sig[NSIG];
volatile sig_atomic_t got_close_stdin;
volatile sig_atomic_t got_winch;
int sent_kill;
int inner_status_fd = -1;
const int kill_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
struct stdin_pipe in = {-1, -1, 0};

/* The one buffer every cgroup file path is built in (we are single-threaded, and no caller holds a
 * path across another's call): each page a long-lived supervisor touches stays private to it. */
char path[PATH_MAX];

long long oom_kills, pids_max_hits;
