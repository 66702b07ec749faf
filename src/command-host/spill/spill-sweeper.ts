/** Removes the spill files of tasks past their retention, or over the directory's quota, oldest first. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { SPILL_SWEEP_INTERVAL_MS } from '../../shared/limits.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import { ATTEMPT_SPARE } from '../supervisor/attempt-records.js';
import { processStart } from '../supervisor/process-identity.js';
import { isNewerTaskFiles, isSameProcess, readRecord } from '../supervisor/supervisor-records.js';
import { isMarkedDone } from '../supervisor/task-files.js';

/**
 * A task's files as `runCommand` names them: `<task id>.stdout` / `.stderr` / `.state` / `.exit` /
 * `.attempt` / `.stdin`, a terminal task's `.tty` / `.tty-size` / `.screen` (and a checkpoint
 * left half-written), the `.foreground-done` mark of a foreground run whose result holds all (from
 * workers of 0.2.0; now its `.exit` made read-only), a monitored task's `.monitor` record, and an
 * `.attempt` record half-made by a worker that died (`.attempt.tmp.<pid>`).
 */
const TASK_FILE =
  /^(bash-[0-9a-f-]+)\.(stdout|stderr|state|exit|attempt|stdin|tty|tty-size|screen|screen-marks|monitor|(?:screen|screen-marks|tty-size|monitor)\.[\w.]+\.tmp|attempt\.tmp\.\d+|foreground-done)$/;

/** How long past the lost window a foreground run's files stay, for an attempt still on its way. */
const FOREGROUND_KEEP_MARGIN_MS = 5 * 60_000;

/**
 * Keeps the spill directory from growing without end: background runs keep their files (reads
 * name them), so a task's files go once all of them are untouched for longer than the retention,
 * or sooner when the directory holds more than its quota (the tasks that ended longest ago
 * first), except those of commands this worker still runs and of commands whose supervisor still
 * runs (their record must stay for a re-attach). Sweeps at most once per SPILL_SWEEP_INTERVAL_MS,
 * when a command starts.
 */
export class SpillSweeper {
  /** The spill files of commands running in this worker. */
  readonly active = new Set<string>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: Pick<
      CompiledExecutorOptions,
      'spillDir' | 'spillRetentionMs' | 'spillQuotaBytes' | 'lostAfterMs'
    >,
  ) {}

  /** Sweeps if the last sweep is an interval old; a failed sweep is retried at the next interval. */
  sweepIfDue(nowMs = Date.now()): Promise<void> {
    if (nowMs - this.lastSweepMs < SPILL_SWEEP_INTERVAL_MS) return Promise.resolve();
    this.lastSweepMs = nowMs;
    const { spillDir, spillRetentionMs, spillQuotaBytes, lostAfterMs } = this.config;
    // A foreground run's files serve an attempt after a crash until its run is lost, no longer.
    const foregroundKeepMs = Math.min(spillRetentionMs, lostAfterMs + FOREGROUND_KEEP_MARGIN_MS);
    return sweepSpillDir(spillDir, spillRetentionMs, this.active, nowMs, spillQuotaBytes, foregroundKeepMs);
  }
}

/**
 * Removes the files of each task in `dir` whose files were all last written before
 * `nowMs - retentionMs` (`foregroundKeepMs` for a foreground run marked done), then, while the directory holds more than `quotaBytes`, the files of the
 * task that ended longest ago; never a task with an `active` file or a live supervisor.
 */
export async function sweepSpillDir(
  dir: string,
  retentionMs: number,
  active: ReadonlySet<string>,
  nowMs = Date.now(),
  quotaBytes = Number.POSITIVE_INFINITY,
  foregroundKeepMs = retentionMs,
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
  const ended: Array<{ files: string[]; bytes: number; lastWriteMs: number }> = [];
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
      ended.push({ files, bytes, lastWriteMs });
    }
  }
  ended.sort((a, b) => a.lastWriteMs - b.lastWriteMs);
  for (const task of ended) {
    if (totalBytes <= quotaBytes) break;
    await removeTask(task.files);
    totalBytes -= task.bytes;
  }
}

function removeTask(files: readonly string[]): Promise<unknown> {
  return Promise.all(files.map((file) => fs.rm(file, { force: true })));
}
