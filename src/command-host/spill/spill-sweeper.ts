/** Removes the spill files of tasks past their retention, or over the directory's quota, oldest first. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { SPILL_SWEEP_INTERVAL_MS } from '../../shared/limits.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import { ATTEMPT_SPARE } from '../supervisor/attempt-records.js';
import { processStart } from '../supervisor/process-identity.js';
import { isNewerTaskFiles, isSameProcess, readRecord } from '../supervisor/supervisor-records.js';
import { isMarkedDone } from '../supervisor/task-files.js';
import type { SessionUse } from './session-disk.js';

/**
 * A task's files as `runCommand` names them: `<task id>.stdout` / `.stderr` / `.state` / `.exit` /
 * `.attempt` / `.stdin`, a terminal task's `.tty` / `.tty-size` / `.screen` (and a checkpoint
 * left half-written), the `.foreground-done` mark of a foreground run whose result holds all (from
 * workers of 0.2.0; now its `.exit` made read-only), a monitored task's `.monitor` record, and an
 * `.attempt` record half-made by a worker that died (`.attempt.tmp.<pid>`), and the `.disk-cap` mark
 * of a task the worker ended for its session's disk cap.
 */
const TASK_FILE =
  /^(bash-[0-9a-f-]+)\.(stdout|stderr|state|exit|attempt|stdin|tty|tty-size|screen|screen-marks|monitor|(?:screen|screen-marks|tty-size|monitor)\.[\w.]+\.tmp|attempt\.tmp\.\d+|foreground-done|disk-cap)$/;

/** How long past the lost window a foreground run's files stay, for an attempt still on its way. */
const FOREGROUND_KEEP_MARGIN_MS = 5 * 60_000;

/**
 * The sessions' side of a sweep, with sessions apart (`SessionDisk`): their own directories,
 * measured (each session over its disk cap having its running tasks ended), and how one that is
 * idle here is removed.
 */
export interface SweptSessions {
  measureAll(): Promise<ReadonlyArray<Pick<SessionUse, 'session' | 'areaBytes' | 'running' | 'changedAtMs'>>>;
  retire(session: string): Promise<boolean>;
}

/**
 * Keeps the spill directory from growing without end: background runs keep their files (reads
 * name them), so a task's files go once all of them are untouched for longer than the retention,
 * or sooner when the directory holds more than its quota (the tasks that ended longest ago
 * first), except those of commands this worker still runs and of commands whose supervisor still
 * runs (their record must stay for a re-attach). With sessions apart, the sessions' /tmp, /var/tmp
 * and homes count toward the quota, and those of sessions with nothing running here go too,
 * longest idle first, in one order with the tasks' files. Sweeps at most once per
 * SPILL_SWEEP_INTERVAL_MS, when a command starts.
 */
export class SpillSweeper {
  /** The spill files of commands running in this worker. */
  readonly active = new Set<string>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: Pick<
      CompiledExecutorOptions,
      'spillDir' | 'spillRetentionMs' | 'spillQuotaBytes' | 'lostAfterMs'
    > & { sessionDisk?: SweptSessions | undefined },
  ) {}

  /** Sweeps if the last sweep is an interval old; a failed sweep is retried at the next interval. */
  sweepIfDue(nowMs = Date.now()): Promise<void> {
    if (nowMs - this.lastSweepMs < SPILL_SWEEP_INTERVAL_MS) return Promise.resolve();
    this.lastSweepMs = nowMs;
    const { spillDir, spillRetentionMs, spillQuotaBytes, lostAfterMs, sessionDisk } = this.config;
    // A foreground run's files serve an attempt after a crash until its run is lost, no longer.
    const foregroundKeepMs = Math.min(spillRetentionMs, lostAfterMs + FOREGROUND_KEEP_MARGIN_MS);
    return sweepSpillDir(
      spillDir,
      spillRetentionMs,
      this.active,
      nowMs,
      spillQuotaBytes,
      foregroundKeepMs,
      sessionDisk,
    );
  }
}

/**
 * Removes the files of each task in `dir` whose files were all last written before
 * `nowMs - retentionMs` (`foregroundKeepMs` for a foreground run marked done), then, while the
 * directory (with `sessions`' own directories) holds more than `quotaBytes`, the files of the task
 * that ended longest ago or the directories of the session idle longest; never a task with an
 * `active` file or a live supervisor, nor a session with a task that may run here.
 */
export async function sweepSpillDir(
  dir: string,
  retentionMs: number,
  active: ReadonlySet<string>,
  nowMs = Date.now(),
  quotaBytes = Number.POSITIVE_INFINITY,
  foregroundKeepMs = retentionMs,
  sessions?: SweptSessions,
): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const tasks = new Map<string, string[]>();
  for (const entry of entries) {
    const sparePid = ATTEMPT_SPARE.exec(entry.name)?.[1];
    if (sparePid !== undefined && entry.isFile() && processStart(Number(sparePid)) === undefined) {
      // A spare attempt record (attempt-records.ts) its worker left when it ended.
      await fs.rm(path.join(dir, entry.name), { force: true });
      continue;
    }
    const taskId = TASK_FILE.exec(entry.name)?.[1];
    // A stdin FIFO a killed supervisor left goes with its task's files.
    if (!(entry.isFile() || entry.isFIFO()) || taskId === undefined) continue;
    tasks.set(taskId, [...(tasks.get(taskId) ?? []), path.join(dir, entry.name)]);
  }
  let totalBytes = 0;
  /** What may go over the quota, each with when it was last used, and what removes it. */
  const removable: Array<{ bytes: number; lastUseMs: number; remove: () => Promise<boolean> }> = [];
  for (const [taskId, files] of tasks) {
    const stats = await Promise.all(files.map((file) => fs.lstat(file).catch(() => undefined)));
    const bytes = stats.reduce((sum, stat) => sum + (stat?.size ?? 0), 0);
    totalBytes += bytes;
    if (files.some((file) => active.has(file))) continue;
    let record: Awaited<ReturnType<typeof readRecord>>;
    try {
      record = await readRecord(path.join(dir, `${taskId}.state`));
    } catch (err) {
      // A newer release's task: not this worker's to judge, let alone remove.
      if (isNewerTaskFiles(err)) continue;
      record = undefined;
    }
    if (record !== undefined && !record.tombstone && isSameProcess(record, 'supervisor')) continue;
    const lastWriteMs = Math.max(...stats.map((stat) => stat?.mtimeMs ?? 0));
    const done = files.some(
      (file, i) =>
        file.endsWith('.foreground-done') ||
        (file.endsWith('.exit') && isMarkedDone(stats[i] ?? { mode: 0 })),
    );
    const keepMs = done ? foregroundKeepMs : retentionMs;
    if (nowMs - lastWriteMs > keepMs) {
      await removeTask(files);
      totalBytes -= bytes;
    } else {
      removable.push({ bytes, lastUseMs: lastWriteMs, remove: () => removeTask(files).then(() => true) });
    }
  }
  for (const use of (await sessions?.measureAll()) ?? []) {
    totalBytes += use.areaBytes;
    if (use.running.length > 0) continue;
    removable.push({
      bytes: use.areaBytes,
      lastUseMs: use.changedAtMs,
      remove: () => sessions?.retire(use.session) ?? Promise.resolve(false),
    });
  }
  removable.sort((a, b) => a.lastUseMs - b.lastUseMs);
  for (const candidate of removable) {
    if (totalBytes <= quotaBytes) break;
    if (await candidate.remove()) totalBytes -= candidate.bytes;
  }
}

function removeTask(files: readonly string[]): Promise<unknown> {
  return Promise.all(files.map((file) => fs.rm(file, { force: true })));
}
