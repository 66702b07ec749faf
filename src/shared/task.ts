/**
 * The shapes that cross the boundary between the tools, the workflow and the command activity.
 * Plain data only: everything here travels as a Temporal payload.
 */
import type { SearchAttributePair } from '@temporalio/common';
import type { TerminalScreen, TerminalSize } from './terminal.js';

/** A task id doubles as its workflow id: `bash-` and a random UUID, unique across restarts and fleets. */
export type TaskId = string & { readonly __brand: 'TaskId' };

export const TaskStatus = {
  running: 'running',
  completed: 'completed',
  killed: 'killed',
  /** The command could not be run (no such workdir, bash would not start). */
  failed: 'failed',
  /** The worker running the command stopped answering. */
  lost: 'lost',
} as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

/** Failure types a run can end with; none is worth a retry. */
export const RunFailureType = {
  /** The workdir cannot be used: missing, not a directory, or one the command's session may not run in. */
  workdirNotFound: 'WorkdirNotFound',
  spawnFailed: 'SpawnFailed',
  /** The foreground timeout fired before any worker took the command. */
  neverStarted: 'NeverStarted',
  /**
   * The command's end cannot be known: its supervisor was killed before recording it, its host
   * rebooted, or no worker on its host came back within the lost window. The message is the reason.
   */
  commandLost: 'CommandLost',
  /**
   * A kill came after the host claimed the command and before its supervisor started it (the kill
   * left a tombstone): it never ran, and the task reads killed before the command started, as one
   * killed before any worker took it does.
   */
  killedBeforeStart: 'KilledBeforeStart',
  /** The worker's deny rules refused the command before anything was spawned. */
  deniedByWorker: 'DeniedByWorker',
  /** The worker's spill directory is not private (a link, another user's, writable by others): nothing ran. */
  unsafeSpillDirectory: 'UnsafeSpillDirectory',
  /** The task id could name a path outside the spill directory (see `isTaskIdShape`): nothing ran. */
  invalidTaskId: 'InvalidTaskId',
  /** The session's files on the host are over its disk cap, and the command is not a plain `rm`: nothing ran. */
  overDiskCap: 'OverDiskCap',
} as const;

/**
 * Failure types of one attempt of the command activity: the workflow goes on with the host queue's
 * attempts (the first two are retried).
 */
export const AttemptFailureType = {
  /** A worker that is not the task's host took the attempt, and started nothing. */
  wrongHost: 'WrongHost',
  /** A restarted worker failed the attempt its crashed predecessor left (it found the supervisor). */
  workerRestarted: 'WorkerRestarted',
  /**
   * A restarted worker failed the attempt its crashed predecessor left before any supervisor
   * claimed the task: nothing started, so the retry starts the command.
   */
  workerRestartedBeforeStart: 'WorkerRestartedBeforeStart',
  /**
   * A foreground attempt let go of its running command because the run moved to the background; an
   * attempt without the foreground deadline re-attaches. Not retried.
   */
  released: 'Released',
  /** A foreground run's deadline (`deadlineAtMs`) passed before any attempt started its command. Not retried. */
  pastDeadline: 'PastDeadline',
} as const;

/** What the tool asks for; the worker's executor config fills in what is left open. */
export interface BashTaskInput {
  taskId: TaskId;
  command: string;
  description: string;
  /** Absolute, or undefined to use the worker's default workdir (else the worker's cwd). */
  workdir?: string;
  /**
   * Requested foreground timeout; the worker applies its default and cap. Ignored in the background,
   * unless the run keeps it (`keepTimeout`).
   */
  timeoutMs?: number;
  background: boolean;
  /**
   * A background run that keeps a foreground call's timeout (`timeoutMs`, else the worker's default,
   * within its cap): the call approved after its caller stopped waiting (shared/approval.ts). Its
   * workflow's timer ends it, as a foreground run's; it is never moved, so nothing cancels that.
   */
  keepTimeout?: boolean;
  /**
   * How long a background run may go on before it is stopped (Claude Code's Bash `timeout` with
   * `run_in_background`): the workflow's timer ends it, as it ends one that keeps a foreground
   * timeout, and the worker's foreground cap does not apply. Absent: it runs until it ends. A
   * worker of a release before it ignores it.
   */
  backgroundTimeoutMs?: number;
  /** Set for a background task with an owning session whose agent host serves notices. */
  notice?: NoticeTarget;
  /** A monitor's pattern (`notify_on`): each matching line of output comes to the session as a notice. */
  notifyOn?: string;
  /**
   * The task's stdin stays open for `bash_input` (else stdin is /dev/null): a background task's that
   * asked, and a sandbox session's command without a terminal (its `writeStdin`).
   */
  keepStdinOpen?: boolean;
  /**
   * A foreground caller shows at most this many bytes of the output (its `max_output_tokens`): a
   * longer output's result names its spill files, so they stay (as a background task's do) for the
   * line that names them where the middle was cut.
   */
  shownOutputBytes?: number;
  /**
   * The owning session's key on worker hosts (`sessionKey`): its commands share an identity there,
   * apart from other sessions'. Absent: no owner (or a client from before keys), one shared key.
   */
  session?: string;
  /** Run the command on a pseudo-terminal of this size (`tty: true`), held by its supervisor. */
  terminal?: TerminalSize;
  /**
   * Run the command on this host (a sandbox session's, where its workspace is) rather than on
   * whichever worker of the command queue answers. Absent: any worker's.
   */
  host?: CommandHost;
  /**
   * A background run whose host is declared lost (no worker there within the lost window) runs its
   * command again from the start on another host, at most MAX_HOST_RESTARTS times
   * (`on_host_loss: "restart"`). Absent: it ends lost.
   */
  restartOnHostLoss?: boolean;
}

/**
 * Where a background task's completion notice goes: the owning session, through its agent host's
 * queue; or the agent workflow that started the task, as a signal.
 */
export type NoticeTarget = SessionNoticeTarget | WorkflowNoticeTarget;

/** The owning session, reached through the inject activity on its agent host's queue. */
export interface SessionNoticeTarget {
  sessionId: string;
  /** The task queue the owning agent host's worker serves (the inject activity). */
  taskQueue: string;
  /** How long the notice waits for an agent worker before it is dropped. */
  windowMs: number;
}

/** An agent workflow (its id: whichever run is current when the task ends), reached by `bashNoticeSignal`. */
export interface WorkflowNoticeTarget {
  workflowId: string;
}

/** Where a task's monitor sends its notices (shared/monitor.ts), as the host learns it from the spec. */
export interface MonitorTarget {
  target: NoticeTarget;
  /** The task's owner search attribute, for a completion notice that must mark itself undelivered. */
  ownerAttribute?: string;
}

/** A background task's monitor as its command's spec carries it: where notices go, and `notify_on`. */
export interface CommandMonitor extends MonitorTarget {
  notifyOn?: string;
}

/** The run as the worker resolved it against its executor config. */
export interface CommandSpec {
  taskId: TaskId;
  command: string;
  workdir: string;
  /** Undefined for a background run: no timeout applies. */
  timeoutMs?: number;
  /**
   * A foreground run's end: its start on its host's queue plus `timeoutMs`, by the workflow's (the
   * server's) clock. The host enforces it by its own (an attempt that would start the command later
   * refuses, `pastDeadline`; a running command is ended then, also by an attempt that re-attaches),
   * so the workflow needs no timer of its own. Set for a run whose spec says `hostKeepsDeadline`.
   */
  deadlineAtMs?: number;
  /**
   * Set by `resolveCommand` of a worker that keeps foreground deadlines on the host: the run then
   * sets `deadlineAtMs` instead of starting a timer (one action less a run). Said in the spec, which
   * the local activity's marker records, rather than by a patch: a patch costs a marker and a search
   * attribute upsert of its own. Runs resolved by 0.2.0 time out by the workflow's timer, and replay so.
   */
  hostKeepsDeadline?: boolean;
  background: boolean;
  /** Where the command activity runs (a worker there picks the host). */
  taskQueue: string;
  /**
   * The chosen host's own task queue: every attempt, kill and re-attach after the start goes there.
   * Absent until a worker of `taskQueue` picks the host (`chooseHost`), unless the caller named it.
   */
  hostQueue?: string;
  /** The chosen host's identity, set with `hostQueue`. */
  hostId?: string;
  /**
   * The first attempt goes on the workflow's own queue, eagerly dispatched: `resolveCommand` sets
   * it when its worker is the host (the spec says so rather than a patch: see bashTask).
   */
  eagerFirstAttempt?: boolean;
  /** How long the task waits for a worker on its host before it ends lost. */
  lostAfterMs: number;
  /** Without a heartbeat for this long a command's worker counts as gone. @default HEARTBEAT_TIMEOUT_MS */
  heartbeatTimeoutMs?: number;
  /** An earlier attempt (the eager one) had started the command: never start it again. */
  commandStarted?: boolean;
  /** The command's stdin is a pipe its supervisor feeds from the task's FIFO (see `writeStdin`). */
  keepStdinOpen?: boolean;
  /** `BashTaskInput.shownOutputBytes`: a longer output's result names its spill files, which then stay. */
  shownOutputBytes?: number;
  /** The owning session's key (`BashTaskInput.session`), whose identity the command runs under. */
  session?: string;
  /** The command runs on a pseudo-terminal of this size (`BashTaskInput.terminal`). */
  terminal?: TerminalSize;
  /** A background task with a notice target: its monitor's target, and `notify_on` when it started with one. */
  monitor?: CommandMonitor;
  /**
   * This run of the command is a restart after its host was lost (`restartOnHostLoss`): the new
   * host writes `[restarted on <host> after <lost host> was lost]` to its stdout before the command.
   */
  restart?: HostRestart;
}

/** A command started again on another host after its host was lost. */
export interface HostRestart {
  /** How many times the task's command has been started again, this one included. */
  count: number;
  /** The host that was lost. */
  lostHostId: string;
}

/** The host a command runs on, as its worker names it. */
export interface CommandHost {
  hostId: string;
  hostQueue: string;
}

/** Whether `value` names a host (both fields non-empty strings): what a handle or state brought from outside must. */
export function isCommandHost(value: unknown): value is CommandHost {
  if (typeof value !== 'object' || value === null) return false;
  const { hostId, hostQueue } = value as Record<string, unknown>;
  return typeof hostId === 'string' && hostId !== '' && typeof hostQueue === 'string' && hostQueue !== '';
}

/** What stopping a command on its host found: its outcome, or that no attempt ever started it. */
export type StopResult =
  | {
      kind: 'ended';
      outcome: CommandOutcome;
      /**
       * No attempt of the host's worker process follows the command or did: one still open
       * belongs to a worker process that is gone, so this end settles the run (the stand-ins and
       * hosts before it leave it out, and the run waits for its attempt).
       */
      unattended?: true;
    }
  | { kind: 'never-started' };

/** The end of one output stream, plus where its complete copy lives when the tail is not all of it. */
export interface StreamTail {
  /** Total bytes the command wrote to this stream. */
  bytes: number;
  /**
   * The stream's last bytes (at most the limit) as text, when they are valid UTF-8 (a tail cut inside
   * a character starts after it), so the Temporal Web UI and CLI show what the command printed.
   * Readers slice by byte offset: `Buffer.from(tail)` gives the bytes back exactly.
   */
  tail?: string;
  /** The same bytes base64-encoded, in place of `tail` when they are not valid UTF-8 (binary output). */
  tailBase64?: string;
  /**
   * The complete stream on the worker host. In a result, set only when the tail is not the whole
   * stream; in progress, always.
   */
  spillPath?: string;
}

/** How a command's process ended, as the command activity observed it. */
export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: StreamTail;
  stderr: StreamTail;
  /** The worker's hostname, so a reader on another host knows a spill path is not for it. */
  host: string;
  /**
   * The host's own task queue: whose spill files the byte counts are of. A read position counted on
   * another host's files (a restart's lost host) starts again at 0. Absent from hosts before it said.
   */
  hostQueue?: string;
  /** Set when the activity's own copy of the foreground timeout ended the command. */
  timedOut?: boolean;
  /**
   * Whether a kill or stop reached the command before it ended, as its supervisor saw it: false
   * when the command had ended on its own first. Absent from supervisors before it said so.
   */
  stoppedWhileRunning?: boolean;
  /** The task's limits that the command ran into, when any did. */
  limits?: LimitsReached;
  /** A terminal task's last screen, and what scrolled off it, rendered on its host from the whole log. */
  terminal?: TerminalEnd;
  /**
   * The spill files, kept (as a background task's are) because the output is longer than its caller
   * shows (`CommandSpec.shownOutputBytes`): the line where the answer's middle was cut names them.
   */
  spillFiles?: { stdout: string; stderr: string };
  /**
   * The task's monitor sent notices through its notice workflow (`<task id>-notice`): the completion
   * notice goes there too, after them. The host knows it first; the workflow hears it from it too.
   */
  noticeChannel?: true;
}

/**
 * Where all of a stream of a run's result is on its host: the file a cut tail names, else the one
 * kept for a caller that shows less (`spillFiles`); undefined when the result holds all of it.
 */
export function streamFileOf(
  result: Pick<CommandOutcome, 'stdout' | 'stderr' | 'spillFiles'>,
  stream: 'stdout' | 'stderr',
): string | undefined {
  return result[stream].spillPath ?? result.spillFiles?.[stream];
}

/** What a terminal task's terminal showed when it ended. */
export interface TerminalEnd {
  screen: TerminalScreen;
  /** The lines that scrolled off the screen, oldest first (the last of them, at most the output limit). */
  scrolledOff: string;
  /** How many of the lines that scrolled off `scrolledOff` leaves out (it holds the newest). */
  scrolledOffDropped: number;
}

/** Which of its limits a task ran into, with each limit's value as its supervisor enforced it. */
export interface LimitsReached {
  /** Streams whose spill file stopped at `bytes` (the command's later writes to them failed). */
  output?: { streams: Array<'stdout' | 'stderr'>; bytes: number };
  /** Streams whose spill file refused a write (a full disk), with the error (the command's later writes to them failed). */
  outputFailed?: { stdout?: string; stderr?: string };
  /** The kernel killed processes of the task at its memory limit. */
  memory?: { bytes: number; kills: number };
  /** Forks failed at the task's process limit. */
  processes?: { limit: number };
  /**
   * The worker ended the task (SIGKILL) because its session's files on its host (its /tmp,
   * /var/tmp and home, and its tasks' output: sessions apart) passed their disk cap: in bytes, or
   * in files when the session held more than the worker counts.
   */
  disk?: { bytes: number } | { files: number };
}

/** The workflow's result: the outcome plus why the run was stopped, if it was. */
export interface BashTaskResult extends Omit<CommandOutcome, 'timedOut' | 'stoppedWhileRunning'> {
  /** Set when the foreground timeout fired, whatever the process did afterwards. */
  timedOutAfterMs?: number;
  /**
   * Set when the run was killed: true when the kill reached its command while it ran, so this end
   * is the kill's (a command that traps SIGTERM and exits 0 too); false when the command had ended
   * on its own before the kill reached it (sent while its host's worker was down, say). Absent when
   * no kill came, and in runs recorded before results said so.
   */
  killed?: boolean;
  /**
   * A run restarted after its host was lost (`restartOnHostLoss`): how many times. Absent for a run
   * never restarted.
   */
  restarts?: number;
}

/**
 * What the command activity heartbeats while the command runs: cumulative, never deltas, so the
 * latest details alone tell a reader everything (the server keeps only the latest).
 */
export interface CommandProgress {
  pid: number;
  startedAtMs: number;
  host: string;
  /**
   * The host's own task queue, where readers send their reads (its control queue, see
   * `controlTaskQueue`). The heartbeat at attach carries it, so no workflow command names it.
   */
  hostQueue?: string;
  stdout: StreamTail;
  stderr: StreamTail;
}

/**
 * A run's workflow start, as a client, an agent workflow or an approval (a child) starts it: its
 * input, search attributes, and the memo and summary the Web UI shows.
 */
export interface TaskStart {
  input: BashTaskInput;
  typedSearchAttributes: SearchAttributePair[];
  memo: Record<string, unknown>;
  staticSummary: string;
  staticDetails: string;
}
