/**
 * The scripted host's command activities: `runCommand`, `stopCommand`, `readOutput`, `writeStdin`
 * and `setMonitor` played from scripts, on the test server's clock. Everything they return has the
 * shape the real activities return, so the workflows, the reader and the tools above them run as
 * they do on a real host.
 *
 * How a scripted command goes on without an activity running (the test server skips time only
 * while nothing holds it): each attempt of `runCommand` looks at the script at the server's time,
 * heartbeats the output so far (as a real attempt does at attach), and then returns the end if the
 * command has ended, or fails with a retry due at the script's next event. Between events no
 * activity runs, so the server's clock jumps to the next one as soon as the test waits on a result.
 * A kill finds no attempt running: its stop activity (which a real host gets too) ends the command.
 *
 * A command whose host dies (`hostDies()`) is the exception: it plays in one attempt, until the
 * death and past it (see `playUntilHostDies`).
 */
import os from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { streamReadOf } from '../command-host/spill/host-reads.js';
import { namedTail } from '../command-host/spill/spill-files.js';
import { taskFiles } from '../command-host/supervisor/task-files.js';
import { lateStartRefusal } from '../shared/foreground-deadline.js';
import {
  HEARTBEAT_TAIL_BYTES,
  HEARTBEAT_TIMEOUT_MS,
  KILL_GRACE_MS,
  MONITOR_LINE_SCAN_BYTES,
  MONITOR_NOTICE_LINES,
} from '../shared/limits.js';
import type { MonitorBatch, MonitorLine, SetMonitorAnswer, SetMonitorRequest } from '../shared/monitor.js';
import { compileMonitorPattern } from '../shared/monitor-pattern.js';
import type { HostRead, HostReadRequest } from '../shared/read-position.js';
import { KILLED_BEFORE_START } from '../shared/status-line.js';
import type { StdinWriteResult, StdinWriteTask } from '../shared/stdin.js';
import { readableEnd } from '../shared/stream-text.js';
import {
  AttemptFailureType,
  type CommandOutcome,
  type CommandProgress,
  type CommandSpec,
  type MonitorTarget,
  RunFailureType,
  type StopResult,
  type StreamTail,
} from '../shared/task.js';
import {
  type CommandScript,
  nextEventAfter,
  type ScriptPlan,
  type ScriptStream,
  writtenBy,
} from './command-script.js';

/** The failure type of a scripted attempt that ends before its command does (retried at the next event). */
export const SCRIPT_RUNS_ON = 'ScriptedCommandRunsOn';

/** How a scripted command ended: at `atMs` after its start. */
interface ScriptedEnd {
  atMs: number;
  exitCode: number | null;
  signal: string | null;
  /** A kill or timeout reached it while it ran. */
  stopped: boolean;
}

/** One task's scripted command, from its first attempt on. */
interface ScriptedRun {
  taskId: string;
  plan: ScriptPlan;
  /** On the server's clock. */
  startedAtMs: number;
  pid: number;
  /** The end a kill or timeout gave it. */
  stoppedEnd?: ScriptedEnd;
  /** That end was the run's deadline (`CommandSpec.deadlineAtMs`), which the host keeps. */
  timedOut?: true;
  /** What a SIGTERM trap printed, and when. */
  trapWrite?: { atMs: number; text: string };
  stdin: string;
  stdinClosed: boolean;
  /** A kill came before any attempt: nothing may start the command (a real host's tombstone). */
  tombstone?: true;
  /** The task's monitor: its pattern, and where each stream's unscanned lines start. */
  monitor?: { pattern: string | null; scanned: { stdout: number; stderr: number }; target: MonitorTarget };
}

/** An attempt of a command whose host dies, and the host queue its next attempt goes to. */
export interface AttemptOf {
  workflowId: string;
  activityId: string;
  hostQueue: string;
}

/** What the scripted activities need of their host. */
export interface ScriptedHostSide {
  hostQueue: string;
  spillDir: string;
  outputLimitBytes: number;
  /** The test server's time. */
  now(): Promise<number>;
  /** The test server's `unlockTimeSkippingWithSleep`: lets its clock move on by `ms` while this waits. */
  sleep(ms: number): Promise<void>;
  /**
   * Lets the calling attempt, silent since its heartbeat landed at `landedAtMs`, time out as a dead
   * worker's does, and the host queue's attempt after it wait out the lost window; resolves then.
   */
  outlive(attempt: AttemptOf, landedAtMs: number, heartbeatTimeoutMs: number): Promise<void>;
  /** When the server had the attempt's heartbeat sent at `sentAtMs` (its time) or a later one. */
  heartbeatLanded(attempt: AttemptOf, sentAtMs: number): Promise<number>;
  /** The command's script, or undefined when there is none. */
  scriptFor(command: string): CommandScript | undefined;
  /** Sends a monitor's batch to the task's notice workflow, as a real host's sink does. */
  sendMonitorBatch(taskId: string, target: MonitorTarget, batch: MonitorBatch): Promise<void>;
}

/** The scripted runs of one host, and its four command activities. */
export class ScriptedRuns {
  private readonly runs = new Map<string, ScriptedRun>();
  private nextPid = 4200;

  constructor(private readonly host: ScriptedHostSide) {}

  /** The script of a command line, if there is one. */
  scriptFor(command: string): CommandScript | undefined {
    return this.host.scriptFor(command);
  }

  /** What the command of `taskId` has read from its stdin (every write that went in, in order). */
  stdinOf(taskId: string): string | undefined {
    return this.runs.get(taskId)?.stdin;
  }

  /** The activities a real host runs on a command, played from the scripts. */
  activities() {
    return {
      runCommand: (spec: CommandSpec) => this.runCommand(spec),
      stopCommand: (spec: CommandSpec) => this.stopCommand(spec),
      readOutput: (request: HostReadRequest) => this.readOutput(request),
      writeStdin: (request: StdinWriteTask) => this.writeStdin(request),
      setMonitor: (request: SetMonitorRequest) => this.setMonitor(request),
    };
  }

  private async runCommand(spec: CommandSpec): Promise<CommandOutcome> {
    const context = Context.current();
    if (context.info.taskQueue !== this.host.hostQueue) {
      // A command whose host dies runs in its first attempt, the one on the command queue.
      if (this.host.scriptFor(spec.command)?.plan.hostDiesAtMs !== undefined)
        return this.playUntilHostDies(spec, context);
      // Any other's first attempt (eager, on the command queue) is left to the host queue's attempts.
      throw ApplicationFailure.retryable(
        `the scripted host runs task ${spec.taskId} on its own queue`,
        AttemptFailureType.wrongHost,
      );
    }
    let now = await this.host.now();
    // As a real host, never start a foreground command past its run's deadline (and its grace).
    const refusal = this.runs.has(spec.taskId) ? undefined : lateStartRefusal(spec, now);
    if (refusal !== undefined) throw refusal;
    const run = this.runs.get(spec.taskId) ?? this.start(spec, now);
    // As a real host fails an attempt that meets its tombstone: the task reads killed before the start.
    if (run.tombstone) {
      throw ApplicationFailure.create({
        type: RunFailureType.killedBeforeStart,
        message: KILLED_BEFORE_START,
        nonRetryable: true,
      });
    }
    // The run's deadline, kept as a real host keeps it: a SIGTERM then, played under the script.
    const deadlineAt = spec.deadlineAtMs === undefined ? undefined : spec.deadlineAtMs - run.startedAtMs;
    if (
      deadlineAt !== undefined &&
      now - run.startedAtMs >= deadlineAt &&
      this.endBy(run, deadlineAt) === undefined
    ) {
      run.timedOut = true;
      await this.stop(run, deadlineAt);
      now = await this.host.now();
    }
    const atMs = now - run.startedAtMs;
    const end = this.endBy(run, atMs);
    // The lines printed since the last attempt (each event's its own), before the end is reported.
    await this.sendMatches(run, end?.atMs ?? atMs, end !== undefined);
    if (end !== undefined) {
      const outcome = this.outcome(run, end);
      return run.timedOut === true && end === run.stoppedEnd ? { ...outcome, timedOut: true } : outcome;
    }
    // What a real attempt heartbeats at attach: the command started, where to read it, its output.
    context.heartbeat(this.progress(run, atMs));
    const next = Math.min(
      nextEventAfter(run.plan, atMs) ?? Number.POSITIVE_INFINITY,
      deadlineAt ?? Number.POSITIVE_INFINITY,
    );
    throw ApplicationFailure.create({
      type: SCRIPT_RUNS_ON,
      message: `the scripted command of task ${spec.taskId} runs on`,
      // A command that never ends still gets an attempt now and then, as a real one heartbeats.
      nextRetryDelay: next === Number.POSITIVE_INFINITY ? IDLE_ATTEMPT_INTERVAL_MS : next - atMs,
    });
  }

  /**
   * Plays a command whose host dies in one attempt, as a real one runs: it heartbeats its output at
   * each event (and often enough in between), sleeping in workflow time, until the death. From then
   * on it is silent, so the server times it out as it does the attempt of a worker that died, and
   * the host queue's attempt that follows finds no worker: the lost window runs. That host queue is
   * one of the command's own that nothing ever polls (a queue once polled keeps a stopped worker's
   * poll on the test server; TEMPORAL-NOTES.md), so the host's reads and stops never answer either.
   */
  private async playUntilHostDies(spec: CommandSpec, context: Context): Promise<CommandOutcome> {
    const now = await this.host.now();
    const run = this.runs.get(spec.taskId) ?? this.start(spec, now);
    const heartbeatTimeoutMs = spec.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS;
    const diesAtMs = run.plan.hostDiesAtMs ?? 0;
    const attempt: AttemptOf = {
      workflowId: context.info.workflowExecution?.workflowId ?? spec.taskId,
      activityId: context.info.activityId,
      hostQueue: spec.hostQueue ?? '',
    };
    let landedAtMs: number;
    for (;;) {
      const sentAtMs = await this.host.now();
      const atMs = sentAtMs - run.startedAtMs;
      const end = this.endBy(run, atMs);
      if (end !== undefined) return this.outcome(run, end);
      if (context.cancellationSignal.aborted) return this.outcome(run, await this.stop(run, atMs));
      context.heartbeat(this.progress(run, atMs));
      landedAtMs = await this.host.heartbeatLanded(attempt, sentAtMs);
      if (atMs >= diesAtMs) break;
      // Well within the heartbeat timeout, so the attempt lives until the death.
      const next = Math.min(nextEventAfter(run.plan, atMs) ?? diesAtMs, atMs + heartbeatTimeoutMs / 2);
      await this.host.sleep(next - atMs);
    }
    // Dead: no heartbeat comes, and the server times the attempt out. What it returns is dropped.
    await this.host.outlive(attempt, landedAtMs, heartbeatTimeoutMs);
    throw ApplicationFailure.create({
      type: SCRIPT_RUNS_ON,
      message: `the host of task ${spec.taskId} died`,
      nonRetryable: true,
    });
  }

  /** Ends the command as a SIGTERM (and SIGKILL after the grace) ends it under its script. */
  private async stopCommand(spec: CommandSpec): Promise<StopResult> {
    const run = this.runs.get(spec.taskId);
    if (run === undefined) {
      // As a real host leaves a tombstone: no attempt starts it later.
      this.runs.set(spec.taskId, {
        ...this.newRun(spec, { writes: [], sigterm: { kind: 'dies' } }, 0),
        tombstone: true,
      });
      return { kind: 'never-started' };
    }
    if (run.tombstone) return { kind: 'never-started' };
    const atMs = (await this.host.now()) - run.startedAtMs;
    const end = this.endBy(run, atMs) ?? (await this.stop(run, atMs));
    await this.sendMatches(run, end.atMs, true);
    // No attempt of this host follows the command between events: the stop's end settles the run.
    return { kind: 'ended', outcome: this.outcome(run, end), unattended: true };
  }

  /** The end a SIGTERM at `atMs` (and a SIGKILL after the grace) gives the command under its script. */
  private async stop(run: ScriptedRun, atMs: number): Promise<ScriptedEnd> {
    const { sigterm, exit } = run.plan;
    let end: ScriptedEnd;
    if (sigterm.kind === 'dies') end = { atMs, exitCode: null, signal: 'SIGTERM', stopped: true };
    else if (sigterm.kind === 'traps') {
      run.trapWrite = { atMs, text: sigterm.prints };
      end = { atMs, exitCode: sigterm.exitCode, signal: null, stopped: true };
    } else {
      // Ignored: SIGKILL once the grace is over, unless the command exits first.
      const killAtMs = atMs + KILL_GRACE_MS;
      end =
        exit !== undefined && exit.atMs <= killAtMs
          ? { atMs: exit.atMs, exitCode: exit.exitCode, signal: null, stopped: true }
          : { atMs: killAtMs, exitCode: null, signal: 'SIGKILL', stopped: true };
      await this.host.sleep(end.atMs - atMs);
    }
    run.stoppedEnd = end;
    return end;
  }

  /** What a `bash_output` read gets from the host: output past `from`, waiting up to `waitMs` for more. */
  private async readOutput(request: HostReadRequest): Promise<HostRead> {
    const run = this.runs.get(request.taskId);
    let atMs = run === undefined ? 0 : (await this.host.now()) - run.startedAtMs;
    let read = this.readAt(run, request, atMs);
    const grew = read.upTo.stdout > request.from.stdout || read.upTo.stderr > request.from.stderr;
    if (run !== undefined && !grew && !read.ended && request.waitMs > 0) {
      const next = nextEventAfter(run.plan, atMs);
      const waitMs = Math.min(request.waitMs, next === undefined ? Number.POSITIVE_INFINITY : next - atMs);
      await this.host.sleep(waitMs);
      atMs += waitMs;
      read = this.readAt(run, request, atMs);
    }
    return read;
  }

  /**
   * A real host's monitor, played: the lines written by `atMs` that match the pattern and that no
   * batch carried yet, sent as one batch (at most MONITOR_NOTICE_LINES shown, the rest counted).
   */
  private async sendMatches(run: ScriptedRun, atMs: number, ended: boolean): Promise<void> {
    const monitor = run.monitor;
    if (monitor === undefined || monitor.pattern === null) return;
    const matches = compileMonitorPattern(monitor.pattern);
    const lines: MonitorLine[] = [];
    let more = 0;
    const scanned = { ...monitor.scanned };
    for (const stream of ['stdout', 'stderr'] as const) {
      const bytes = this.written(run, stream, atMs);
      let start = scanned[stream];
      while (start < bytes.length) {
        const newline = bytes.indexOf(0x0a, start);
        if (newline < 0 && !ended) break;
        const end = newline < 0 ? bytes.length : newline;
        const text = bytes.subarray(start, Math.min(end, start + MONITOR_LINE_SCAN_BYTES)).toString('utf8');
        if (matches(text)) {
          if (lines.length < MONITOR_NOTICE_LINES) lines.push({ stream, offset: start, text });
          else more++;
        }
        start = end + 1;
      }
      scanned[stream] = Math.min(start, bytes.length);
    }
    // The place moves once the batch went: a refused send is made again by the next attempt.
    if (lines.length > 0)
      await this.host.sendMonitorBatch(run.taskId, monitor.target, { pattern: monitor.pattern, lines, more });
    monitor.scanned = scanned;
  }

  /** `bash_monitor` on the scripted host: the pattern, for the lines written from now on. */
  private async setMonitor(request: SetMonitorRequest): Promise<SetMonitorAnswer> {
    const run = this.runs.get(request.taskId);
    if (run === undefined || run.tombstone) return { kind: 'ended' };
    const atMs = (await this.host.now()) - run.startedAtMs;
    if (this.endBy(run, atMs) !== undefined) return { kind: 'ended' };
    if (run.monitor === undefined) return { kind: 'unmonitorable' };
    await this.sendMatches(run, atMs, false);
    run.monitor.pattern = request.pattern;
    run.monitor.scanned = {
      stdout: this.written(run, 'stdout', atMs).length,
      stderr: this.written(run, 'stderr', atMs).length,
    };
    return { kind: 'set' };
  }

  /** Takes a write at once (a scripted command always reads its stdin); `stdinOf` shows what went in. */
  private async writeStdin(request: StdinWriteTask): Promise<StdinWriteResult> {
    const run = this.runs.get(request.taskId);
    if (run === undefined) return { kind: 'not-started' };
    if (run.tombstone || this.endBy(run, (await this.host.now()) - run.startedAtMs) !== undefined)
      return { kind: 'ended' };
    if (run.stdinClosed) return { kind: 'closed' };
    run.stdin += request.text;
    if (request.close) run.stdinClosed = true;
    return { kind: 'written', bytes: Buffer.byteLength(request.text), closed: request.close };
  }

  private start(spec: CommandSpec, now: number): ScriptedRun {
    const found = this.host.scriptFor(spec.command);
    if (found === undefined) {
      throw ApplicationFailure.create({
        type: 'NoScript',
        message: `no script for the command ${JSON.stringify(spec.command)}`,
        nonRetryable: true,
      });
    }
    const run = this.newRun(spec, found.plan, now);
    this.runs.set(spec.taskId, run);
    return run;
  }

  private newRun(spec: CommandSpec, plan: ScriptPlan, startedAtMs: number): ScriptedRun {
    const { taskId } = spec;
    const run: ScriptedRun = {
      taskId,
      plan,
      startedAtMs,
      pid: this.nextPid++,
      stdin: '',
      stdinClosed: false,
    };
    if (spec.background && spec.monitor !== undefined) {
      const { notifyOn, ...target } = spec.monitor;
      run.monitor = { pattern: notifyOn ?? null, scanned: { stdout: 0, stderr: 0 }, target };
    }
    return run;
  }

  /** The command's end if it has come by `atMs`: its own exit, or a stop's. */
  private endBy(run: ScriptedRun, atMs: number): ScriptedEnd | undefined {
    const { exit } = run.plan;
    const own: ScriptedEnd | undefined =
      exit === undefined
        ? undefined
        : { atMs: exit.atMs, exitCode: exit.exitCode, signal: null, stopped: false };
    const stopped = run.stoppedEnd;
    const first = stopped !== undefined && (own === undefined || stopped.atMs <= own.atMs) ? stopped : own;
    return first !== undefined && first.atMs <= atMs ? first : undefined;
  }

  /** What a stream holds `atMs` after the start: the script's writes, and a trap's. */
  private written(run: ScriptedRun, stream: ScriptStream, atMs: number): Buffer {
    const upTo = Math.min(atMs, run.stoppedEnd?.atMs ?? atMs);
    const bytes = writtenBy(run.plan, stream, upTo);
    const trap = run.trapWrite;
    return stream === 'stdout' && trap !== undefined && trap.atMs <= atMs
      ? Buffer.concat([bytes, Buffer.from(trap.text)])
      : bytes;
  }

  private tail(
    run: ScriptedRun,
    stream: ScriptStream,
    atMs: number,
    limit: number,
    namePath: boolean,
  ): StreamTail {
    const bytes = this.written(run, stream, atMs);
    const file = taskFiles(this.host.spillDir, run.taskId)[stream];
    return namedTail(bytes.length, bytes.subarray(Math.max(0, bytes.length - limit)), file, namePath);
  }

  private outcome(run: ScriptedRun, end: ScriptedEnd): CommandOutcome {
    return {
      exitCode: end.exitCode,
      signal: end.signal,
      stdout: this.tail(run, 'stdout', end.atMs, this.host.outputLimitBytes, false),
      stderr: this.tail(run, 'stderr', end.atMs, this.host.outputLimitBytes, false),
      host: os.hostname(),
      stoppedWhileRunning: end.stopped,
    };
  }

  private progress(run: ScriptedRun, atMs: number): CommandProgress {
    return {
      pid: run.pid,
      startedAtMs: run.startedAtMs,
      host: os.hostname(),
      hostQueue: this.host.hostQueue,
      stdout: this.tail(run, 'stdout', atMs, HEARTBEAT_TAIL_BYTES, true),
      stderr: this.tail(run, 'stderr', atMs, HEARTBEAT_TAIL_BYTES, true),
    };
  }

  /** A read of `[from, ...)` at `atMs`, as the real host's `readOutput` cuts and decodes it. */
  private readAt(run: ScriptedRun | undefined, request: HostReadRequest, atMs: number): HostRead {
    const ended = run !== undefined && this.endBy(run, atMs) !== undefined;
    const limit = this.host.outputLimitBytes;
    const files = taskFiles(this.host.spillDir, request.taskId);
    const upTo = { stdout: 0, stderr: 0 };
    const reads = (['stdout', 'stderr'] as const).map((stream) => {
      const bytes = run === undefined ? Buffer.alloc(0) : this.written(run, stream, atMs);
      const from = request.from[stream];
      let end = from;
      if (bytes.length > from) {
        const start = Math.max(from, bytes.length - limit);
        end = ended ? bytes.length : readableEnd(bytes.subarray(start), start, from, request.wholeLines);
      }
      upTo[stream] = end;
      const start = Math.max(from, end - limit);
      return streamReadOf(bytes.subarray(start, Math.max(start, end)), start, from, files[stream]);
    });
    const [stdout, stderr] = reads as [HostRead['stdout'], HostRead['stderr']];
    return { upTo, stdout, stderr, host: os.hostname(), ended };
  }
}

/** How often a command with nothing more to happen gets an attempt (a real one heartbeats this often). */
const IDLE_ATTEMPT_INTERVAL_MS = 24 * 60 * 60_000;
