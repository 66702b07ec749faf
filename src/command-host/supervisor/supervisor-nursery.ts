/**
 * The worker's supervisor nursery: one `durable-bash-supervisor --nursery` process that starts
 * every command's supervisor, so the worker itself never forks (a fork of a worker-sized process
 * blocks its event loop for milliseconds: about 7 ms here), and that keeps a few supervisors warm,
 * their cgroups made and their command's process already in them (a first write to a v1 cgroup's
 * cgroup.procs waits for an RCU grace period: about 20 ms here). docs/SUPERVISOR.md "The nursery".
 *
 * Protocol, one task at a time on its stdin: `<id> <length>\n` and that many bytes of
 * NUL-terminated fields (their count, state file, exit file, stdout file, stderr file, stdin FIFO
 * or empty, workdir, argc, argv, environment). On its stdout, per id: the supervisor's report lines, then
 * `<id> reported` when its report ended and `<id> exited` when it exited.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import type { TaskLimits } from '../containment/cgroups.js';
import type { ExitWatch } from './command-end.js';
import { launcherProgram, limitFlags, reportOf, type SpawnReport } from './supervisor.js';
import type { TaskFiles } from './task-files.js';

/** An environment as the nursery's protocol carries it: `KEY=VALUE` fields, each NUL-terminated. */
interface EncodedEnv {
  bytes: Buffer;
  count: number;
  hasNul: boolean;
}

/** Each environment encoded once: a worker's commands share one (`ExecutorConfig.commandEnvs`). */
const encodedEnvs = new WeakMap<NodeJS.ProcessEnv, EncodedEnv>();

function encodedEnv(env: NodeJS.ProcessEnv): EncodedEnv {
  let encoded = encodedEnvs.get(env);
  if (encoded === undefined) {
    const fields = Object.entries(env)
      .filter((entry): entry is [string, string] => entry[1] !== undefined)
      .map(([key, value]) => `${key}=${value}`);
    encoded = {
      bytes: Buffer.from(fields.map((field) => `${field}\0`).join('')),
      count: fields.length,
      hasNul: fields.some((field) => field.includes('\0')),
    };
    // Only a frozen one (the worker's own) is known not to change.
    if (Object.isFrozen(env)) encodedEnvs.set(env, encoded);
  }
  return encoded;
}

/** How long a closing nursery may take to let its warm supervisors go before it is killed: they only exit. */
const CLOSE_TIMEOUT_MS = 5_000;

/** What a launch needs: the same as a spawned supervisor, with the spill files named, not opened. */
export interface NurseryLaunch {
  files: TaskFiles;
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  keepStdinOpen?: boolean;
  /** A sandbox launcher (the sandbox's, or a session's) the command runs in, under an inner supervisor. */
  launcher?: readonly string[];
  /** The inner supervisor's options (a session's `--as` and `--idmap`). */
  inner?: readonly string[];
  /** The inner supervisor's binary, as the launcher shows it. */
  innerBinary?: string;
}

export interface NurseryOptions {
  binary: string;
  /** The hierarchies' parents, under which each warm supervisor makes its task's cgroups. */
  cgroupParents: readonly string[];
  limits: TaskLimits;
  /** Supervisors kept warm. */
  warm: number;
  /** Where tasks' files are: a warm supervisor makes them there, unnamed, before its task names them. */
  spillDir?: string;
}

interface Pending {
  /** The nursery it was sent to. */
  child: ChildProcess;
  launch: NurseryLaunch;
  lines: string[];
  reported: (report: SpawnReport) => void;
  exited: () => void;
  exitedPromise: Promise<void>;
  done: { reported: boolean; exited: boolean };
}

/** How a watch of a supervisor's exit ended: it exited, or the nursery cannot tell (poll instead). */
export type WatchOutcome = 'exited' | 'unwatched';

interface Watch {
  child: ChildProcess;
  settle: (outcome: WatchOutcome) => void;
}

export class SupervisorNursery {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly watches = new Map<number, Watch>();
  private closed = false;
  /** Launches whose report has not come yet. */
  private awaited = 0;

  constructor(private readonly options: NurseryOptions) {}

  /** Whether the nursery can start this host's supervisors (else the worker spawns them). */
  static serves(limits: TaskLimits): boolean {
    // Its supervisors always relay output (the cap).
    return limits.outputBytesPerStream > 0;
  }

  /** Starts the command's supervisor; resolves with its report, as `spawnSupervisor` does. */
  launch(launch: NurseryLaunch): Promise<SpawnReport> {
    const child = this.running();
    const id = this.nextId++;
    const { files } = launch;
    const env = encodedEnv(launch.env);
    const argv = [...launcherProgram(launch), 'bash', '-c', launch.command];
    const task = [
      files.state,
      files.exit,
      files.stdout,
      files.stderr,
      launch.keepStdinOpen ? files.stdin : '',
      launch.launcher ? 's' : '',
      launch.cwd,
      String(argv.length),
      ...argv,
    ];
    // The count first: a task cut short (its nursery killed while passing it on) is refused whole.
    const fields = [String(task.length + env.count + 1), ...task];
    // A NUL inside a field would split it: bash would never see such a command anyway.
    if (env.hasNul || fields.some((field) => field.includes('\0')))
      return Promise.resolve({
        kind: 'error',
        message: 'spawn: a NUL byte in the command or its environment',
      });
    const head = Buffer.from(`${fields.join('\0')}\0`);
    let exited = () => {};
    const exitedPromise = new Promise<void>((resolve) => {
      exited = resolve;
    });
    return new Promise<SpawnReport>((resolve) => {
      this.pending.set(id, {
        child,
        launch,
        lines: [],
        reported: resolve,
        exited,
        exitedPromise,
        done: { reported: false, exited: false },
      });
      this.holdWhileAwaited(1);
      const stdin = child.stdin as Socket;
      // One write: the nursery wakes once for the whole task.
      const length = head.length + env.bytes.length;
      stdin.write(Buffer.concat([Buffer.from(`${id} ${length}\n`), head, env.bytes]));
    });
  }

  /**
   * Settles when the supervisor with this pid and start time (one an earlier worker started) has
   * exited: the nursery holds a pidfd on it, so nothing polls. `unwatched` when the nursery cannot
   * (a kernel without pidfd_open, or the nursery died or closed): the caller then polls.
   */
  watchExit(pid: number, start: number): Promise<WatchOutcome> {
    if (this.closed) return Promise.resolve('unwatched');
    const child = this.running();
    const id = this.nextId++;
    return new Promise<WatchOutcome>((resolve) => {
      this.watches.set(id, {
        child,
        settle: (outcome) => {
          this.watches.delete(id);
          resolve(outcome);
        },
      });
      (child.stdin as Socket).write(`${id} watch ${pid} ${start}\n`);
    });
  }

  /** Lets the warm supervisors go (they end, and their cgroups with them) and waits for the nursery's exit. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
  }

  private running(): ChildProcess {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return this.child;
    if (this.closed) throw new Error('the supervisor nursery is closed');
    const { options } = this;
    const args = [
      '--nursery',
      ...options.cgroupParents.flatMap((dir) => ['--cgroup-parent', dir]),
      '--warm',
      String(options.warm),
      ...limitFlags(options.limits),
      ...(options.spillDir !== undefined ? ['--spill-dir', options.spillDir] : []),
    ];
    const child = spawn(options.binary, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child = child;
    // Never keeps the worker alive: its end closes the nursery's stdin, and the nursery ends.
    child.unref();
    const stdin = child.stdin as Socket;
    const stdout = child.stdout as Socket;
    stdin.on('error', () => undefined); // A dead nursery: its launches settle in onExit.
    createInterface({ input: stdout }).on('line', (line) => this.onLine(line));
    child.once('exit', () => this.onExit(child));
    child.once('error', () => this.onExit(child));
    stdin.unref();
    stdout.unref();
    return child;
  }

  /** A launch whose report is awaited keeps the process alive; supervisors that run on do not. */
  private holdWhileAwaited(change: 1 | -1): void {
    this.awaited += change;
    const stdout = this.child?.stdout as Socket | undefined;
    if (this.awaited > 0) stdout?.ref();
    else stdout?.unref();
  }

  /** Starts the nursery now, so the first commands find supervisors warm. */
  warmUp(): void {
    if (!this.closed) this.running();
  }

  private onLine(line: string): void {
    const space = line.indexOf(' ');
    const id = Number(line.slice(0, space));
    const text = line.slice(space + 1);
    const watch = this.watches.get(id);
    if (watch && (text === 'exited' || text === 'unwatched')) {
      watch.settle(text);
      return;
    }
    const launch = this.pending.get(id);
    if (!launch) return;
    // The two ends come in either order (the nursery may reap the supervisor before its report's EOF).
    if (text === 'reported') {
      launch.reported(reportOf(launch.lines.join('\n'), launch.exitedPromise));
      launch.done.reported = true;
      this.holdWhileAwaited(-1);
    } else if (text === 'exited') {
      launch.exited();
      launch.done.exited = true;
    } else {
      launch.lines.push(text);
    }
    if (launch.done.reported && launch.done.exited) this.pending.delete(id);
  }

  /**
   * The nursery died (killed with its worker's group, or by hand). A launch it had not answered is
   * made again through a new one: if the first supervisor did get the task, its claim stands and
   * the second answers `claimed` (the caller then attaches to the first). A supervisor that did
   * answer lives on in its own session; its exit is not known any more (the caller polls).
   */
  private onExit(child: ChildProcess): void {
    if (this.child === child) this.child = undefined;
    // Its watches end unanswered: their callers poll.
    for (const watch of [...this.watches.values()]) if (watch.child === child) watch.settle('unwatched');
    // Only what was sent to this nursery; a launch made again below goes to the next one.
    const orphans = [...this.pending].filter(([, pending]) => pending.child === child);
    for (const [id, pending] of orphans) {
      this.pending.delete(id);
      if (!pending.done.reported) this.holdWhileAwaited(-1);
      if (pending.done.reported) {
        pending.exited();
        continue;
      }
      const again = this.closed
        ? Promise.resolve<SpawnReport>({ kind: 'error', message: 'the supervisor nursery closed' })
        : this.launch(pending.launch);
      void again.then((report) => {
        pending.reported(report);
        if (report.kind === 'started') void report.exited.then(pending.exited);
        else pending.exited();
      });
    }
  }
}

/** The nursery's watch of a supervisor's exit, as `waitForEnd` takes it. */
export function exitWatchOf(nursery: SupervisorNursery): ExitWatch {
  return (pid, start) => nursery.watchExit(pid, start);
}
