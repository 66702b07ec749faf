import fs from 'node:fs/promises';
import path from 'node:path';
import { SPILL_SWEEP_INTERVAL_MS } from '../shared/limits.js';
import type { ExecutorConfig } from './executor-config.js';

/** Spill files as `runCommand` names them: `<task id>.stdout` / `.stderr`. */
const SPILL_FILE = /^bash-[0-9a-f-]+\.(stdout|stderr)$/;

/**
 * Keeps the spill directory from growing without end: background runs keep their files (reads
 * name them), so files untouched for longer than the retention go, except those of commands this
 * worker still runs. Sweeps at most once per SPILL_SWEEP_INTERVAL_MS, when a command starts.
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

/** Removes the spill files in `dir` last written before `nowMs - retentionMs`, except `active` ones. */
export async function sweepSpillDir(
  dir: string,
  retentionMs: number,
  active: ReadonlySet<string>,
  nowMs = Date.now(),
): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const file = path.join(dir, entry.name);
    if (!entry.isFile() || !SPILL_FILE.test(entry.name) || active.has(file)) continue;
    const stat = await fs.lstat(file).catch(() => undefined);
    if (stat !== undefined && nowMs - stat.mtimeMs > retentionMs) await fs.rm(file, { force: true });
  }
}
