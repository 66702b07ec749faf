/**
 * The programs that run the rest of their arguments as a command (`sudo`, `nice`, `chrt`, ...),
 * each with the options it takes before that command, read from its own `--help` and source; and
 * the programs known to run a command whose options are not read here. The rule: a wrapper's
 * command is found only through options this table knows, so an option it does not know (one that
 * could take the next word, and make another word the command) makes the line uncertain, and so
 * does a program of `UNREAD_RUNNERS`. A program on neither list is taken to run no command of its
 * own: no text rule can know what any program does (docs/PERMISSIONS.md). `wrapperSpec` and
 * `UNREAD_RUNNERS` are read by command-wrappers.ts.
 */
import type { Word } from './shell-words.js';

export interface OptionSpec {
  /** Short options that take an argument, attached (`-uroot`) or as the next word. */
  short: string;
  /** Short options that take none. */
  flags: string;
  /** Short options whose argument, if any, is attached (`-m/proc/1/ns/mnt`). */
  optional?: string;
  /** Long options that take an argument, as `--name=value` or the next word. */
  long?: readonly string[];
  /** Long options that take none, or only an attached `=value`. */
  longFlags?: readonly string[];
  /** `nice -10`: a number as an option. */
  numeric?: boolean;
  /** Every option is one word (`--tool=memcheck`), whatever its name. */
  oneWord?: boolean;
  /** Operands before the command (`timeout DURATION`, `chrt PRIORITY`). */
  operands?: number;
  /** Options with which it runs no command (`taskset -p PID`, `command -v NAME`). */
  noCommand?: readonly string[];
  /** Options with which it runs another program the words do not show (`faketime --date-prog`). */
  runsOther?: readonly string[];
  /** Options that take no operand when given (`runcon -t TYPE COMMAND` has no CONTEXT). */
  noOperandWith?: readonly string[];
  /** Options whose `NAME=VALUE` goes into the command's environment (`systemd-run -E`). */
  environment?: readonly string[];
  /**
   * Options that give the command another `argv[0]` (`exec -a NAME`): a multi-call program such as
   * busybox runs the applet that name says, which the words do not show.
   */
  renames?: readonly string[];
  /**
   * GNU getopt without `+`: it reads options after the command too, up to `--`, so which words the
   * command gets depends on the C library and `POSIXLY_CORRECT` (tini, choom).
   */
  permutes?: true;
  /**
   * Given no command, it starts a shell, which reads its commands from standard input: always, or
   * with one of these options (`sudo -s`).
   */
  shell?: true | readonly string[];
}

const GNU = ['help', 'version'];

export const WRAPPERS: Record<string, OptionSpec> = {
  sudo: {
    short: 'aCcDgpRrTtUu',
    flags: 'ABbEeHiKklNnPSsVv',
    optional: 'h',
    long: [
      'auth-type',
      'close-from',
      'login-class',
      'chdir',
      'group',
      'host',
      'prompt',
      'chroot',
      'role',
      'type',
      'command-timeout',
      'other-user',
      'user',
    ],
    longFlags: [
      'askpass',
      'background',
      'bell',
      'preserve-env',
      'edit',
      'set-home',
      'help',
      'login',
      'remove-timestamp',
      'reset-timestamp',
      'list',
      'non-interactive',
      'no-update',
      'preserve-groups',
      'stdin',
      'shell',
      'version',
      'validate',
    ],
    noCommand: [
      '-e',
      '--edit',
      '-l',
      '--list',
      '-K',
      '--remove-timestamp',
      '-V',
      '--version',
      '-v',
      '--validate',
    ],
    shell: ['-s', '--shell', '-i', '--login'],
  },
  doas: { short: 'Cu', flags: 'Lns', noCommand: ['-C'], shell: ['-s'] },
  pkexec: {
    short: '',
    flags: '',
    long: ['user'],
    longFlags: ['disable-internal-agent', 'keep-cwd', ...GNU],
    shell: true,
  },
  nohup: { short: '', flags: '', longFlags: GNU },
  time: {
    short: 'fo',
    flags: 'apqvV',
    long: ['format', 'output'],
    longFlags: ['append', 'portability', 'quiet', 'verbose', ...GNU],
  },
  nice: { short: 'n', flags: '', long: ['adjustment'], longFlags: GNU, numeric: true },
  ionice: {
    short: 'cnpPu',
    flags: 'thV',
    long: ['class', 'classdata', 'pid', 'pgid', 'uid'],
    longFlags: ['ignore', ...GNU],
    noCommand: ['-p', '--pid', '-P', '--pgid', '-u', '--uid'],
  },
  timeout: {
    short: 'ks',
    flags: 'v',
    long: ['kill-after', 'signal'],
    longFlags: ['preserve-status', 'foreground', 'verbose', ...GNU],
    operands: 1,
  },
  stdbuf: { short: 'ioe', flags: '', long: ['input', 'output', 'error'], longFlags: GNU },
  command: { short: '', flags: 'pvV', noCommand: ['-v', '-V'] },
  chroot: {
    short: '',
    flags: '',
    long: ['userspec', 'groups'],
    longFlags: ['skip-chdir', ...GNU],
    operands: 1,
    shell: true,
  },
  toybox: { short: '', flags: '', longFlags: GNU },
  busybox: {
    short: '',
    flags: '',
    longFlags: ['list', 'list-full', 'install', 'help'],
    noCommand: ['--install'],
  },
  builtin: { short: '', flags: '' },
  exec: { short: 'a', flags: 'cl', renames: ['-a'] },
  coproc: { short: '', flags: '' },
  setsid: { short: '', flags: 'cfwhV', longFlags: ['ctty', 'fork', 'wait', ...GNU] },
  unbuffer: { short: '', flags: 'p' },
  chronic: { short: '', flags: 'ehv' },
  xargs: {
    short: 'adEILnPs',
    flags: '0oprtx',
    optional: 'eil',
    long: ['arg-file', 'delimiter', 'max-lines', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
    longFlags: [
      'null',
      'open-tty',
      'interactive',
      'no-run-if-empty',
      'verbose',
      'exit',
      'show-limits',
      'eof',
      'replace',
      ...GNU,
    ],
  },
  // util-linux: each stops at its first operand ("+" in its getopt string).
  chrt: {
    short: 'DPT',
    flags: 'abdfhimoprRvV',
    long: ['sched-runtime', 'sched-period', 'sched-deadline'],
    longFlags: [
      'all-tasks',
      'batch',
      'deadline',
      'fifo',
      'idle',
      'max',
      'other',
      'pid',
      'rr',
      'reset-on-fork',
      'verbose',
      ...GNU,
    ],
    operands: 1,
    noCommand: ['-p', '--pid', '-m', '--max'],
  },
  taskset: {
    short: '',
    flags: 'apchV',
    longFlags: ['all-tasks', 'pid', 'cpu-list', ...GNU],
    operands: 1,
    noCommand: ['-p', '--pid'],
  },
  setpriv: {
    short: '',
    flags: 'dhV',
    long: [
      'ambient-caps',
      'inh-caps',
      'bounding-set',
      'ruid',
      'euid',
      'rgid',
      'egid',
      'reuid',
      'regid',
      'groups',
      'securebits',
      'pdeathsig',
      'selinux-label',
      'apparmor-profile',
      'landlock-access',
      'landlock-rule',
    ],
    longFlags: [
      'dump',
      'nnp',
      'no-new-privs',
      'clear-groups',
      'keep-groups',
      'init-groups',
      'reset-env',
      ...GNU,
    ],
    noCommand: ['-d', '--dump'],
  },
  unshare: {
    short: 'RwSG',
    flags: 'fhVmuinpCTUrc',
    long: [
      'root',
      'wd',
      'setuid',
      'setgid',
      'propagation',
      'setgroups',
      'monotonic',
      'boottime',
      'map-user',
      'map-group',
      'map-users',
      'map-groups',
    ],
    longFlags: [
      'mount',
      'uts',
      'ipc',
      'net',
      'pid',
      'user',
      'cgroup',
      'time',
      'fork',
      'kill-child',
      'mount-proc',
      'map-root-user',
      'map-current-user',
      'map-auto',
      'keep-caps',
      ...GNU,
    ],
    shell: true,
  },
  nsenter: {
    short: 'tSGW',
    flags: 'aeFZhV',
    optional: 'muinpCUTrw',
    long: ['target', 'setuid', 'setgid', 'wdns'],
    longFlags: [
      'all',
      'mount',
      'uts',
      'ipc',
      'net',
      'pid',
      'cgroup',
      'user',
      'time',
      'root',
      'wd',
      'env',
      'no-fork',
      'follow-context',
      'preserve-credentials',
      'user-parent',
      'keep-caps',
      'join-cgroup',
      ...GNU,
    ],
    shell: true,
  },
  prlimit: {
    short: 'po',
    flags: 'hV',
    optional: 'cdefilmnqrstuvxy',
    long: ['pid', 'output'],
    longFlags: [
      'noheadings',
      'raw',
      'verbose',
      'core',
      'data',
      'nice',
      'fsize',
      'sigpending',
      'memlock',
      'rss',
      'nofile',
      'msgqueue',
      'rtprio',
      'stack',
      'cpu',
      'nproc',
      'as',
      'locks',
      'rttime',
      ...GNU,
    ],
    noCommand: ['-p', '--pid'],
  },
  'systemd-run': {
    short: 'HMupE',
    flags: 'hrdtPqGS',
    long: [
      'host',
      'machine',
      'unit',
      'property',
      'description',
      'slice',
      'service-type',
      'uid',
      'gid',
      'nice',
      'working-directory',
      'setenv',
      'path-property',
      'socket-property',
      'on-active',
      'on-boot',
      'on-startup',
      'on-unit-active',
      'on-unit-inactive',
      'on-calendar',
      'timer-property',
    ],
    environment: ['-E', '--setenv'],
    longFlags: [
      'no-ask-password',
      'user',
      'system',
      'scope',
      'slice-inherit',
      'no-block',
      'remain-after-exit',
      'wait',
      'send-sighup',
      'same-dir',
      'pty',
      'pipe',
      'quiet',
      'collect',
      'shell',
      'on-timezone-change',
      'on-clock-change',
      ...GNU,
    ],
    shell: ['-S', '--shell'],
  },
  numactl: {
    short: 'ipcNCmSfoLMIPw',
    flags: 'slHtduTVabDh',
    long: [
      'interleave',
      'preferred',
      'cpubind',
      'cpunodebind',
      'physcpubind',
      'membind',
      'shm',
      'file',
      'offset',
      'length',
      'shmmode',
      'shmid',
      'preferred-many',
      'weighted-interleave',
    ],
    longFlags: [
      'show',
      'localalloc',
      'hardware',
      'strict',
      'dump',
      'huge',
      'touch',
      'verify',
      'all',
      'balancing',
      'dump-nodes',
      ...GNU,
    ],
    noCommand: ['-s', '--show', '-H', '--hardware', '-S', '--shm', '-f', '--file'],
  },
  // `setarch [ARCH] [options] [program]`; its other names (linux64, i386, ...) take no ARCH.
  setarch: {
    short: '',
    flags: 'BFILRSTXZ3vhV',
    longFlags: [
      '32bit',
      'fdpic-funcptrs',
      'short-inode',
      'addr-compat-layout',
      'addr-no-randomize',
      'whole-seconds',
      'sticky-timeouts',
      'read-implies-exec',
      'mmap-page-zero',
      '3gb',
      '4gb',
      'uname-2.6',
      'verbose',
      'list',
      ...GNU,
    ],
    noCommand: ['--list'],
    shell: true,
  },
  // fakeroot's getopt string starts with "+": it stops at the command.
  fakeroot: {
    short: 'lfisb',
    flags: 'uvh',
    long: ['lib', 'faked', 'fd-base'],
    longFlags: ['unknown-is-real', ...GNU],
    shell: true,
  },
  eatmydata: { short: '', flags: '', longFlags: GNU },
  faketime: {
    short: '',
    flags: 'mfhv',
    long: ['date-prog'],
    longFlags: ['exclude-monotonic', 'disable-shm', ...GNU],
    operands: 1,
    runsOther: ['--date-prog'],
  },
  valgrind: { short: '', flags: '', oneWord: true, runsOther: ['--db-command'] },
  proot: {
    short: 'rbmwvkiqRSp',
    flags: '0Vhnl',
    long: ['rootfs', 'bind', 'mount', 'pwd', 'cwd', 'verbose', 'kernel-release', 'change-id', 'qemu', 'port'],
    longFlags: [
      'root-id',
      'netcoop',
      'kill-on-exit',
      'link2symlink',
      'sysvipc',
      'ashmem-memfd',
      'usage',
      ...GNU,
    ],
    runsOther: ['-q', '--qemu'],
    shell: true,
  },
  // firejail's options are single words (`--private`, `--net=none`); `-c` runs a string through its shell.
  firejail: {
    short: '',
    flags: '',
    oneWord: true,
    runsOther: ['-c'],
    environment: ['--env'],
    shell: true,
  },
  // OpenSSH's getopt stops at the command: `ssh-agent [options] [command [arg ...]]`.
  'ssh-agent': { short: 'aEOPt', flags: 'cDdks', noCommand: ['-k'] },
  // dbus-launch reads its own words: each option is one of these, `--config-file` and
  // `--autolaunch` take the next word or `=value`, and any other word is the program.
  'dbus-launch': {
    short: '',
    flags: 'csh',
    long: ['autolaunch', 'config-file'],
    longFlags: [
      'auto-syntax',
      'csh-syntax',
      'sh-syntax',
      'binary-syntax',
      'exit-with-session',
      'exit-with-x11',
      'close-stderr',
      ...GNU,
    ],
    noCommand: ['-h', '--help', '--version'],
  },
  'dbus-run-session': {
    short: '',
    flags: 'h',
    long: ['config-file', 'dbus-daemon'],
    longFlags: GNU,
    noCommand: ['-h', '--help', '--version'],
    runsOther: ['--dbus-daemon'],
  },
  // systemd's getopt string is "+h".
  'systemd-inhibit': {
    short: '',
    flags: 'h',
    long: ['what', 'who', 'why', 'mode'],
    longFlags: ['list', 'no-pager', 'no-legend', 'no-ask-password', ...GNU],
    noCommand: ['--list', '-h', '--help', '--version'],
  },
  // coreutils: "+r:t:u:l:c"; CONTEXT comes first unless one of these options is given.
  runcon: {
    short: 'rtul',
    flags: 'c',
    long: ['role', 'type', 'user', 'range'],
    longFlags: ['compute', ...GNU],
    operands: 1,
    noOperandWith: ['-r', '--role', '-t', '--type', '-u', '--user', '-l', '--range', '-c', '--compute'],
    noCommand: GNU.map((option) => `--${option}`),
  },
  tini: {
    short: 'peR',
    flags: 'hvwgls',
    longFlags: ['version'],
    noCommand: ['-h', '-l', '--version'],
    permutes: true,
  },
  'dumb-init': {
    short: 'r',
    flags: 'hvVc',
    long: ['rewrite'],
    longFlags: ['single-child', 'verbose', ...GNU],
    noCommand: ['-h', '-V', '--help', '--version'],
  },
  // `gosu USER-SPEC COMMAND...`, `su-exec USER-SPEC COMMAND...`: no options but help and version.
  gosu: {
    short: '',
    flags: 'hv?',
    longFlags: GNU,
    operands: 1,
    noCommand: ['-h', '-v', '-?', '--help', '--version'],
  },
  'su-exec': { short: '', flags: '', operands: 1 },
  // runit's getopt stops at the program; the union of its versions' options.
  chpst: { short: 'uUbemdopfcrt/CnlL', flags: 'vP012V', noCommand: ['-V'], renames: ['-b'] },
  choom: {
    short: 'np',
    flags: 'hV',
    long: ['adjust', 'pid'],
    longFlags: GNU,
    noCommand: ['-p', '--pid', '-h', '-V', '--help', '--version'],
    permutes: true,
  },
  // rlwrap's getopt string starts with "+"; -a, -A, -d, -m and -p take an attached argument only.
  rlwrap: {
    short: 'bCDefFgHlMOPqsStwz',
    flags: 'cEhiInNorRTUvW',
    optional: 'aAdmp',
    long: [
      'break-chars',
      'command-name',
      'extra-char-after-completion',
      'history-no-dupes',
      'file',
      'history-format',
      'forget-matching',
      'history-filename',
      'logfile',
      'multi-line-ext',
      'only-cook',
      'pre-given',
      'quote-characters',
      'histsize',
      'substitute-prompt',
      'set-terminal-name',
      'wait-before-prompt',
      'filter',
    ],
    longFlags: [
      'always-readline',
      'ansi-colour-aware',
      'complete-filenames',
      'debug',
      'always-echo',
      'case-insensitive',
      'pass-sigint-as-sigterm',
      'multi-line',
      'no-warnings',
      'no-children',
      'one-shot',
      'prompt-colour',
      'remember',
      'renice',
      'test-terminal',
      'mirror-arguments',
      'polling',
      ...GNU,
    ],
    noCommand: ['-h', '-v', '--help', '--version'],
    runsOther: ['-z', '--filter'],
  },
  // moreutils: lckdo's getopt string is "+wW:neE:sxtq"; ifne reads only a first `-n`.
  lckdo: { short: 'WE', flags: 'wnesxtq', operands: 1, noCommand: ['-t'] },
  ifne: { short: '', flags: 'n' },
  // nq's getopt string is "+hqtw"; with -w or -t it waits for queued jobs and runs none.
  nq: { short: '', flags: 'hqtw', noCommand: ['-h', '-t', '-w'] },
  // glibc's catchsegv script: `catchsegv PROGRAM [ARGS]`.
  catchsegv: { short: '', flags: '', longFlags: GNU, noCommand: ['--help', '--version'] },
};

/** The table's entry for `name`, if it has one (a lookup that no name such as `constructor` can reach past). */
export function wrapperSpec(name: string): OptionSpec | undefined {
  return Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;
}

/** setarch's other names: each runs setarch for its architecture, which it takes as no operand. */
export const SETARCH_NAMES = new Set(['linux32', 'linux64', 'i386', 'x86_64']);

/**
 * Programs that run a command given in their arguments (or read from their input), with options
 * not read here: what they run cannot be told from their words, so they make a line uncertain.
 */
export const UNREAD_RUNNERS = new Set([
  'strace',
  'ltrace',
  'gdb',
  'perf',
  'parallel',
  'sem',
  'tmux',
  'screen',
  'ssh',
  'sshpass',
  'bwrap',
  'capsh',
  'xvfb-run',
  'torsocks',
  'proxychains',
  'proxychains4',
  'cgexec',
  'setuidgid',
  'softlimit',
  'envdir',
  'srun',
  'mpirun',
  'mpiexec',
  'tsp',
  'daemonize',
  'start-stop-daemon',
  'schroot',
  'systemd-nspawn',
  'entr',
  'cpulimit',
  'trickle',
]);

/** An option's argument: `-p VALUE`, `-pVALUE`, `--name VALUE`, `--name=VALUE`. */
export interface OptionValue {
  option: string;
  value: Word;
}

export type ReadOptions =
  | { start: number; seen: ReadonlySet<string>; values: readonly OptionValue[] }
  | { reason: string };

/**
 * Reads a wrapper's options from `from`: the index of its first operand, the options given (`-p`,
 * `--pid`) with their arguments, or why they cannot be read (computed at run time, or one `spec`
 * does not know).
 */
export function readOptions(name: string, words: Word[], from: number, spec: OptionSpec): ReadOptions {
  const seen = new Set<string>();
  const values: OptionValue[] = [];
  const unknown = (text: string) => ({ reason: `${name} has an option this check does not know: ${text}` });
  let i = from;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return { reason: `the options of ${name} are computed at run time` };
    const text = word.text;
    if (text === '--') return { start: i + 1, seen, values };
    if (!text.startsWith('-') || text === '-') break;
    const eq = text.indexOf('=');
    const attached = (at: number) => ({ ...word, text: text.slice(at) });
    if (spec.numeric && /^-\d+$/.test(text)) {
      i++;
    } else if (spec.oneWord) {
      const option = eq === -1 ? text : text.slice(0, eq);
      seen.add(option);
      if (eq !== -1) values.push({ option, value: attached(eq + 1) });
      i++;
    } else if (text.startsWith('--')) {
      const long = eq === -1 ? text.slice(2) : text.slice(2, eq);
      const option = `--${long}`;
      seen.add(option);
      if (spec.long?.includes(long)) {
        const value = eq === -1 ? words[i + 1] : attached(eq + 1);
        if (value !== undefined) values.push({ option, value });
        i += eq === -1 ? 2 : 1;
      } else if (spec.longFlags?.includes(long)) {
        i++;
      } else {
        return unknown(text);
      }
    } else {
      const cluster = shortOptions(text, spec, seen);
      if (cluster === undefined) return unknown(text);
      const value =
        cluster.at === undefined ? undefined : cluster.at < text.length ? attached(cluster.at) : words[i + 1];
      if (cluster.option !== undefined && value !== undefined) values.push({ option: cluster.option, value });
      i += cluster.at === text.length && cluster.takesNext ? 2 : 1;
    }
  }
  return { start: i, seen, values };
}

/**
 * A cluster of short options (`-un`, `-uroot`, `-u root`): the letters given, and the option that
 * takes an argument, with where that argument starts in the cluster (its end: the next word, for
 * an option whose argument may be the next word).
 */
function shortOptions(
  cluster: string,
  spec: OptionSpec,
  seen: Set<string>,
): { option?: string; at?: number; takesNext?: boolean } | undefined {
  for (let j = 1; j < cluster.length; j++) {
    const letter = cluster[j] as string;
    seen.add(`-${letter}`);
    if (spec.short.includes(letter)) return { option: `-${letter}`, at: j + 1, takesNext: true };
    // An optional argument is attached, or there is none.
    if (spec.optional?.includes(letter))
      return j + 1 < cluster.length ? { option: `-${letter}`, at: j + 1 } : {};
    if (!spec.flags.includes(letter)) return undefined;
  }
  return {};
}
