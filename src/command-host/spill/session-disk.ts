/**
 * Each session's disk use on this host, with sessions apart: its /tmp, /var/tmp and home, and its
 * tasks' output, held against its disk cap. Measured, not enforced by the kernel: a worker cannot
 * count on a quota (here the spill directory's ext4 is mounted without usrquota or prjquota, and
 * a session's directories lie in it), so a session may pass its cap by what it writes between two
 * measurements. Measured at a launch of the session's command when the last measurement is older
 * than SESSION_DISK_CHECK_INTERVAL_MS (so the cost grows with the commands asked), every interval
 * while a task of it runs here (a background writer asks nothing more), and at the spill sweep
 * (which counts sessions' directories toward the spill quota too).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { diskCapText } from '../../shared/render.js';
import type { CommandSpec } from '../../shared/task.js';
import {
  type SessionFiles,
  type SessionIsolation,
  UNOWNED_SESSION,
} from '../containment/session-isolation.js';
import { killOrphanedGroup, signalSupervisor } from '../supervisor/process-groups.js';
import { readRecord } from '../supervisor/supervisor-records.js';
import { taskFiles } from '../supervisor/task-files.js';
import { type DiskCapLimit, markDiskCapped } from './disk-cap-mark.js';
import { diskUsage } from './disk-usage.js';

/** Thrown at a launch when the session's files are over its disk cap: the message is the task's one line. */
export class DiskCapRefusedError extends Error {
  override readonly name = 'DiskCapRefusedError';
}

/**
 * How old a session's measurement may be at its next launch, and how often a session with a task
 * running here is measured: a session passes its cap by at most what it writes in this long (plus
 * a walk), and a walk of a session's few hundred files costs about a millisecond, so at this
 * cadence one running session takes a fraction of a percent of the worker's main thread.
 */
const SESSION_DISK_CHECK_INTERVAL_MS = 5_000;

/**
 * A session's measurement is not repeated sooner than this many times the walk it took, so that
 * walking a huge tree takes at most a twentieth of the worker's main thread (a walk of 1,000,000
 * files took about 3.5 s here: it is then repeated every 70 s).
 */
const WALK_COST_FACTOR = 20;

/**
 * Entries (files, directories, links) a session's directories and output may hold before the walk
 * stops and the session counts as over its cap: the bound on what one measurement costs (about
 * 3.5 s of walking in slices here), and on the inodes one session takes from the filesystem.
 * Package caches in a home hold tens of thousands.
 */
const SESSION_MAX_FILES = 1_000_000;

/**
 * How long after a launch its session stays measured every interval though nothing of it is seen
 * running, and a plain `rm` admitted over the cap stays spared though not seen running: the launch
 * marks its task milliseconds after it is admitted, and a measurement may stand for an interval,
 * so three intervals see the mark.
 */
const LAUNCH_SETTLE_MS = 3 * SESSION_DISK_CHECK_INTERVAL_MS;

/** What a session's files on this host held when they were last measured. */
export interface SessionUse {
  session: string;
  /** Bytes its /tmp, /var/tmp and home hold on disk (what the spill quota counts of it). */
  areaBytes: number;
  /** Bytes its tasks' stdout and stderr spill files hold on disk. */
  outputBytes: number;
  /** Entries counted: at most the bound, or one past it when `complete` is false. */
  files: number;
  /** False when the walk stopped at SESSION_MAX_FILES: the session holds more. */
  complete: boolean;
  /** Its tasks that may still run here. */
  running: string[];
  /** When its task marks last changed (`SessionFiles.changedAtMs`): its idle time, for the quota. */
  changedAtMs: number;
  measuredAtMs: number;
  walkMs: number;
}

export interface SessionDiskOptions {
  spillDir: string;
  /** The cap on one session's files on this host, in bytes (`sessionDiskCapBytes`). */
  capBytes: number;
  /** Sessions apart on this host: where each session's files are, and how an idle one is removed. */
  isolation: Pick<SessionIsolation, 'sessionFiles' | 'retire'>;
  /**
   * The walker may open a directory closed to its owner (u+rx): a worker without root, whose
   * sessions run as its own uid and could otherwise hide files from the count behind a mode 0.
   * @default false
   */
  ownerMayOpen?: boolean;
  /** @default SESSION_MAX_FILES */
  maxFiles?: number;
}

/**
 * The sessions' disk caps on this host: a launch of a session over its cap is refused (a plain
 * `rm` alone runs, so the session can get back under), and its running tasks here are ended, each
 * end saying why (`TaskFiles.diskCap`).
 */
export class SessionDisk {
  private readonly uses = new Map<string, SessionUse>();
  private readonly measuring = new Map<string, Promise<SessionUse>>();
  /** Sessions measured every interval, by when one of their commands was last admitted. */
  private readonly watched = new Map<string, number>();
  /** Plain `rm` commands admitted over their session's cap (what gets it back under is not ended): their session, and when. */
  private readonly cleaning = new Map<string, { session: string; admittedAtMs: number }>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  private readonly maxFiles: number;

  constructor(private readonly options: SessionDiskOptions) {
    this.maxFiles = options.maxFiles ?? SESSION_MAX_FILES;
  }

  /**
   * Admits the launch of `spec`'s command, before anything of it is made: measured again when the
   * last measurement is stale, or was over the cap (the session may have removed files since).
   * Over the cap, its running tasks are ended and the launch is refused (`DiskCapRefusedError`),
   * unless the command is a plain `rm` (`cleanup`: it runs with the system's PATH, see `cleanupEnv`).
   */
  async admit(spec: Pick<CommandSpec, 'taskId' | 'command' | 'session'>): Promise<{
    cleanup: boolean;
  }> {
    const session = spec.session ?? UNOWNED_SESSION;
    const last = this.uses.get(session);
    const use =
      last !== undefined && this.fresh(last) && this.passedCap(last) === undefined
        ? last
        : await this.measure(session);
    this.watch(session);
    const passed = this.passedCap(use);
    if (passed === undefined) return { cleanup: false };
    if (PLAIN_RM.test(spec.command)) {
      this.cleaning.set(spec.taskId, { session, admittedAtMs: Date.now() });
      return { cleanup: true };
    }
    throw new DiskCapRefusedError(refusalLine(use, passed));
  }

  /**
   * Every session with directories here, measured (again when it may have changed since: a task of
   * it ran, or its marks moved), each one over its cap having its running tasks ended: for the spill
   * sweep, which counts their directories toward the quota.
   */
  async measureAll(): Promise<SessionUse[]> {
    const all = this.options.isolation.sessionFiles();
    const here = new Set(all.map((files) => files.session));
    for (const session of this.uses.keys()) if (!here.has(session)) this.uses.delete(session);
    const uses: SessionUse[] = [];
    for (const files of all) {
      const last = this.uses.get(files.session);
      const unchanged =
        last !== undefined &&
        last.running.length === 0 &&
        files.running.length === 0 &&
        last.changedAtMs === files.changedAtMs;
      const use =
        last !== undefined && (unchanged || this.fresh(last))
          ? last
          : await this.measure(files.session, files);
      if (use.running.length > 0) this.watch(files.session);
      uses.push(use);
    }
    return uses;
  }

  /** Removes an idle session's directories (over the spill quota): false when a task of it runs here. */
  async retire(session: string): Promise<boolean> {
    const retired = await this.options.isolation.retire(session);
    if (retired) this.uses.delete(session);
    return retired;
  }

  /** The cap a session's measurement passed (in files when it held more than the walk counts), or undefined. */
  private passedCap(use: SessionUse): DiskCapLimit | undefined {
    if (!use.complete) return { files: this.maxFiles };
    const { capBytes } = this.options;
    return use.areaBytes + use.outputBytes > capBytes ? { bytes: capBytes } : undefined;
  }

  /** Whether a measurement may stand for now (see SESSION_DISK_CHECK_INTERVAL_MS and WALK_COST_FACTOR). */
  private fresh(use: SessionUse): boolean {
    return (
      Date.now() - use.measuredAtMs < Math.max(SESSION_DISK_CHECK_INTERVAL_MS, WALK_COST_FACTOR * use.walkMs)
    );
  }

  /** One measurement of a session at a time: a launch and the interval's check share it. */
  private measure(session: string, files?: SessionFiles): Promise<SessionUse> {
    let pending = this.measuring.get(session);
    if (pending === undefined) {
      pending = this.walk(session, files).finally(() => this.measuring.delete(session));
      this.measuring.set(session, pending);
    }
    return pending;
  }

  private async walk(session: string, known?: SessionFiles): Promise<SessionUse> {
    const started = performance.now();
    const measuredAtMs = Date.now();
    const files = known ?? this.options.isolation.sessionFiles(session)[0];
    if (files === undefined) throw new Error(`no files of session ${session} on this host`);
    const { spillDir, ownerMayOpen = false } = this.options;
    const areas = await diskUsage(files.areas, this.maxFiles, ownerMayOpen);
    const outputs = files.tasks.flatMap((taskId) => {
      const task = taskFiles(spillDir, taskId);
      return [task.stdout, task.stderr];
    });
    const output = areas.complete
      ? await diskUsage(outputs, this.maxFiles - areas.files)
      : { bytes: 0, files: 0, complete: false };
    const use: SessionUse = {
      session,
      areaBytes: areas.bytes,
      outputBytes: output.bytes,
      files: areas.files + output.files,
      complete: output.complete,
      running: files.running,
      changedAtMs: files.changedAtMs,
      measuredAtMs,
      walkMs: performance.now() - started,
    };
    this.uses.set(session, use);
    for (const [taskId, { session: of, admittedAtMs }] of this.cleaning) {
      const settled = measuredAtMs - admittedAtMs > LAUNCH_SETTLE_MS;
      if (of === session && settled && !files.running.includes(taskId)) this.cleaning.delete(taskId);
    }
    const passed = this.passedCap(use);
    if (passed !== undefined) await this.endRunning(use, passed);
    return use;
  }

  /**
   * Ends the session's running tasks here (a plain `rm` admitted over the cap aside), each as a
   * kill does (its supervisor SIGKILLs its group: SIGUSR1), after marking why.
   */
  private async endRunning(use: SessionUse, passed: DiskCapLimit): Promise<void> {
    for (const taskId of use.running) {
      if (this.cleaning.has(taskId)) continue;
      const files = taskFiles(this.options.spillDir, taskId);
      if (existsSync(files.exit)) continue;
      const record = await readRecord(files.state).catch(() => undefined);
      // Not claimed yet (its launch is under way): the next measurement finds it running.
      if (record === undefined || record.tombstone) continue;
      try {
        markDiskCapped(files, passed);
      } catch {
        // A disk full to the last block refuses even the mark: the task ends all the same, its end
        // without the line.
      }
      if (!signalSupervisor(record, 'SIGUSR1')) killOrphanedGroup(record);
    }
  }

  /** Measures the session every interval while a task of it may run here. */
  private watch(session: string): void {
    this.watched.set(session, Date.now());
    this.timer ??= setInterval(() => void this.check(), SESSION_DISK_CHECK_INTERVAL_MS).unref();
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [session, admittedAtMs] of this.watched) {
        const last = this.uses.get(session);
        const use =
          last !== undefined && this.fresh(last) ? last : await this.measure(session).catch(() => undefined);
        if (use?.running.length === 0 && Date.now() - admittedAtMs > LAUNCH_SETTLE_MS)
          this.watched.delete(session);
      }
    } finally {
      this.checking = false;
    }
    if (this.watched.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/**
 * A command line that is one `rm` and nothing else bash could run or write: `rm`, then words of
 * plain characters, quoted strings without expansions, and globs (which only name files). No
 * operator, redirection, substitution, variable, brace or assignment.
 */
const PLAIN_RM = /^[ \t]*rm(?:[ \t]+(?:[\w./*?+,:=@%~^[\]-]|'[^'\n]*'|"[^"$`\\!\n]*")+)*[ \t]*$/;

/**
 * Where a plain `rm` admitted over the cap finds `rm`: the system's own directories, never a
 * directory of the commands' PATH that lies in a session's home or /tmp (`~/.cargo/bin`, an nvm
 * node's), where the session could have left a program of its own named `rm`.
 */
const SYSTEM_PATH = '/usr/bin:/bin';

/** The environment of a plain `rm` admitted over its session's disk cap (`admit`'s `cleanup`). */
export function cleanupEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PATH: SYSTEM_PATH };
}

/** The line a launch over the cap ends with: what the session holds, its cap, and how to get back under it. */
function refusalLine(use: SessionUse, passed: DiskCapLimit): string {
  const held =
    'bytes' in passed ? `${use.areaBytes + use.outputBytes} bytes` : `more than ${passed.files} files`;
  return `this session's files on its host hold ${held}, over its disk cap of ${diskCapText(passed)}: remove some from /tmp, /var/tmp or its home with rm (until then only a plain rm command runs)`;
}
