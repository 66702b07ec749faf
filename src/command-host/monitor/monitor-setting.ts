/**
 * `bash_monitor` on the task's host: the new pattern goes to the monitor of the attempt following
 * the command, or, between attempts (a worker restarting), into the task's monitor record, which
 * the next attempt goes on from.
 */
import type { SetMonitorAnswer, SetMonitorRequest } from '../../shared/monitor.js';
import type { AttachedAttempt, AttachedTasks } from '../attached-tasks.js';
import { readEnd, readRecord } from '../supervisor/supervisor-records.js';
import { taskFiles } from '../supervisor/task-files.js';
import { type LineMonitor, lineStartBefore } from './line-monitor.js';
import { readMonitorRecord, writeMonitorRecord } from './monitor-record.js';

export async function setMonitorOnHost(
  spillDir: string,
  attached: AttachedTasks,
  request: SetMonitorRequest,
): Promise<SetMonitorAnswer> {
  const files = taskFiles(spillDir, request.taskId);
  // No claim, a tombstone, or a recorded end: nothing runs here to monitor.
  const claimed = await readRecord(files.state);
  if (claimed === undefined || claimed.tombstone || (await readEnd(files.exit)) !== undefined)
    return { kind: 'ended' };
  const attempt = attached.get(request.taskId);
  if (attempt?.monitorable === false) return { kind: 'unmonitorable' };
  // An attempt that has just attached opens its monitor in a moment.
  const monitor = attempt === undefined ? undefined : await monitorOf(attempt);
  if (monitor !== undefined) {
    await monitor.set(request.pattern);
    return { kind: 'set' };
  }
  // Between attempts: the next one goes on from the record. A monitor that was matching goes on
  // from where it stopped, with the new pattern; one that was not skips to the line being written.
  const record = await readMonitorRecord(files);
  const active = record !== undefined && record.pattern !== null && !record.paused;
  const sentUpTo = active
    ? record.sentUpTo
    : {
        stdout: await lineStartBefore(files.stdout, record?.sentUpTo.stdout ?? 0),
        stderr: await lineStartBefore(files.stderr, record?.sentUpTo.stderr ?? 0),
      };
  await writeMonitorRecord(files, { pattern: request.pattern, paused: false, sentUpTo, channel: true });
  return { kind: 'set' };
}

/** How long a set waits for an attempt that has just attached to open its monitor. */
const MONITOR_OPEN_WAIT_MS = 2_000;

async function monitorOf(attempt: AttachedAttempt): Promise<LineMonitor | undefined> {
  const deadline = Date.now() + MONITOR_OPEN_WAIT_MS;
  while (attempt.monitor === undefined && attempt.monitorable === true && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return attempt.monitor;
}
