/**
 * The mark a task ended for its session's disk cap leaves beside its files (`TaskFiles.diskCap`):
 * written just before the worker SIGKILLs its group, read where its end's limits are made, so the
 * end says why, whichever worker reports it (one restarted since, too).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { LimitsReached } from '../../shared/task.js';
import type { EndRecord } from '../supervisor/supervisor-records.js';
import type { TaskFiles } from '../supervisor/task-files.js';

/** The disk cap a session passed, as the task's end carries it. */
export type DiskCapLimit = NonNullable<LimitsReached['disk']>;

/** Marks the task as ended for its session's disk cap (before the kill). */
export function markDiskCapped(files: TaskFiles, limit: DiskCapLimit): void {
  writeFileSync(files.diskCap, JSON.stringify(limit), { mode: 0o600 });
}

/**
 * The cap an end was for, when the worker ended it for one: its command was SIGKILLed and the mark
 * is there. Read only for such an end, so every other end costs nothing more.
 */
export function diskCapOf(end: EndRecord, files: TaskFiles): DiskCapLimit | undefined {
  if (end.signal !== constants.signals.SIGKILL) return undefined;
  let limit: Partial<{ bytes: unknown; files: unknown }>;
  try {
    limit = JSON.parse(readFileSync(files.diskCap, 'utf8'));
  } catch {
    // No mark (a kill of its own), or one a worker died writing.
    return undefined;
  }
  if (typeof limit.bytes === 'number') return { bytes: limit.bytes };
  if (typeof limit.files === 'number') return { files: limit.files };
  return undefined;
}
