/**
 * A task's monitor as its host keeps it, in the task's `.monitor` file: the pattern, whether it
 * paused itself, how far each stream's matches were sent, and whether the task's notice workflow
 * exists. The file, not the worker's memory, is what an attempt after a crash goes on from: lines
 * past `sentUpTo` are scanned again, and a batch sent twice is dropped by the notice workflow.
 */
import fs from 'node:fs/promises';
import { readJson, type TaskFiles } from '../supervisor/task-files.js';

export interface MonitorRecord {
  /** The pattern lines are matched against; null when the monitor was cleared. */
  pattern: string | null;
  /** The monitor paused itself (it matched too often); `bash_monitor` sets it again. */
  paused: boolean;
  /** Each stream's offset before which every line was matched and its matches sent. */
  sentUpTo: { stdout: number; stderr: number };
  /** The task's notice workflow was started (a batch was sent, or `bash_monitor` set the pattern). */
  channel: boolean;
}

export const readMonitorRecord = (files: TaskFiles) => readJson<MonitorRecord>(files.monitor);

/** Temp files of this process: each write its own, so two writers never rename each other's. */
let writes = 0;

/** Writes the record whole (renamed into place), so a crash leaves the old one or the new one. */
export async function writeMonitorRecord(files: TaskFiles, record: MonitorRecord): Promise<void> {
  const tmp = `${files.monitor}.${process.pid}.${writes++}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(record), { mode: 0o600 });
  await fs.rename(tmp, files.monitor);
}
