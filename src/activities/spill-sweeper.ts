import fs from 'node:fs/promises';
import path from 'node:path';
import { SPILL_SWEEP_INTERVAL_MS } from '../shared/limits.js';
import type { ExecutorConfig } from './executor-config.js';
import { isSameProcess, readRecord } from './supervisor.js';

/** A task's files as `runCommand` names them: `<task id>.stdout` / `.stderr` / `.state` / `.exit` / `.attempt`. */
const TASK_FILE = /^(bash-[0-9a-f-]+)\.(stdout|stderr|state|exit|attempt)$/;

/**
 * Keeps the spill directory from growing without end: background runs keep their files (reads
 * name them), so a task's files go once all of them are untouched for longer than the retention,
 * except those of commands this worker still runs and of commands whose supervisor still runs
 * (their record must stay for a re-attach). Sweeps at most once per SPILL_SWEEP_INTERVAL_MS, when a
 * command starts.
 */
export class SpillSweeper {
  /** The spill files of commands running in this worker. */
  readonly active = new Set<string>();
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly config: Pick<ExecutorConfig, 'spillDir' | 'spillRetentionMs'>) {}

  /** Sweeps if the last sweep is an interval old; a failed sweep is retried at the next interval. */
  sweepIfDue(nowMs = Date.now()): Promise<void> {
    if (nowMs - this.lastSweepMs < SPILL_SWEEP_INTERVAL_MS) return Promise.resolve();
    this.lastSweepMs = nowMs;
    return sweepSpillDir(this.config.spillDir, this.config.spillRetentionMs, this.active, nowMs);
  }
}

/**
 * Removes the files of each task in `dir` whose files were all last written before
 * `nowMs - retentionMs`, except tasks with an `active` file or a live supervisor.
 */
export async function sweepSpillDir(
  dir: string,
  retentionMs: number,
  active: ReadonlySet<string>,
  nowMs = Date.now(),
): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const tasks = new Map<string, string[]>();
  for (const entry of entries) {
    const taskId = TASK_FILE.exec(entry.name)?.[1];
    if (!entry.isFile() || taskId === undefined) continue;
    tasks.set(taskId, [...(tasks.get(taskId) ?? []), path.join(dir, entry.name)]);
  }
  for (const [taskId, files] of tasks) {
    if (files.some((file) => active.has(file))) continue;
    const stats = await Promise.all(files.map((file) => fs.lstat(file).catch(() => undefined)));
    if (stats.some((stat) => stat !== undefined && nowMs - stat.mtimeMs <= retentionMs)) continue;
    const record = await readRecord(path.join(dir, `${taskId}.state`)).catch(() => undefined);
    if (record !== undefined && !record.tombstone && isSameProcess(record, 'supervisor')) continue;
    await Promise.all(files.map((file) => fs.rm(file, { force: true })));
  }
}
