/**
 * `bash_monitor` on the task's host: the new pattern goes to the monitor of the attempt following
 * the command, or, between attempts (a worker restarting), into the task's monitor record, which
 * the next attempt goes on from.
 */
import fs from 'node:fs/promises';
import type { SetMonitorAnswer, SetMonitorRequest } from '../../shared/monitor.js';
import type { AttachedTasks } from '../attached-tasks.js';
import { taskFiles } from '../supervisor/task-files.js';
import { readMonitorRecord, writeMonitorRecord } from './monitor-record.js';

export async function setMonitorOnHost(
  spillDir: string,
  attached: AttachedTasks,
  request: SetMonitorRequest,
): Promise<SetMonitorAnswer> {
  const files = taskFiles(spillDir, request.taskId);
  if (!(await exists(files.state)) || (await exists(files.exit))) return { kind: 'ended' };
  const attempt = attached.get(request.taskId);
  if (attempt !== undefined) {
    if (attempt.monitor === undefined) return { kind: 'unmonitorable' };
    await attempt.monitor.set(request.pattern);
    return { kind: 'set' };
  }
  const record = await readMonitorRecord(files);
  const sentUpTo = record?.sentUpTo ?? {
    stdout: await sizeOf(files.stdout),
    stderr: await sizeOf(files.stderr),
  };
  await writeMonitorRecord(files, { pattern: request.pattern, paused: false, sentUpTo, channel: true });
  return { kind: 'set' };
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function sizeOf(file: string): Promise<number> {
  return fs.stat(file).then(
    (stat) => stat.size,
    () => 0,
  );
}
