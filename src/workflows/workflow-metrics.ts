/**
 * What the bashTask and completionNotice workflows count, once per task and notice: the workflow's
 * metric meter emits nothing while a run replays, so a run that a worker picks up again is not
 * counted twice. The SDK adds the
 * namespace, task queue and workflow type as labels; ours are bounded (no task ids, no owners).
 * Names: docs/OPERATIONS.md.
 */
import { metricMeter } from '@temporalio/workflow';
import { NoticeOutcome } from '../shared/notice.js';
import type { TaskState } from '../shared/status-line.js';
import type { BashTaskResult } from '../shared/task.js';

export function countStarted(background: boolean): void {
  metricMeter
    .createCounter('durable_bash_tasks_started', 'tasks', 'Tasks started (bash calls)')
    .add(1, { background: String(background) });
}

/** `status`: completed, killed, timed_out, failed or lost. Also counts the output a finished task printed. */
export function countEnded(state: TaskState, result: BashTaskResult | undefined): void {
  const status = result?.timedOutAfterMs !== undefined ? 'timed_out' : state.status;
  metricMeter.createCounter('durable_bash_tasks_ended', 'tasks', 'Tasks ended, by status').add(1, { status });
  if (result === undefined) return;
  const bytes = metricMeter.createCounter('durable_bash_output_bytes', 'bytes', 'Bytes ended tasks printed');
  bytes.add(result.stdout.bytes, { stream: 'stdout' });
  bytes.add(result.stderr.bytes, { stream: 'stderr' });
}

/** A task's command started again on another host after its host was lost (`on_host_loss: "restart"`). */
export function countHostRestart(): void {
  metricMeter
    .createCounter(
      'durable_bash_host_restarts',
      'restarts',
      'Commands started again on another host after theirs was lost',
    )
    .add(1);
}

/** A kill (bash_kill) that came while the task's command ran. */
export function countKill(): void {
  metricMeter.createCounter('durable_bash_kills', 'kills', 'Kills that reached a running command').add(1);
}

/** A completion notice's end: delivered, or dropped (`reason`: session_gone, expired). */
export function countNotice(outcome: NoticeOutcome): void {
  if (outcome === NoticeOutcome.delivered) {
    metricMeter
      .createCounter('durable_bash_notices_delivered', 'notices', 'Completion notices delivered')
      .add(1);
    return;
  }
  metricMeter
    .createCounter('durable_bash_notices_dropped', 'notices', 'Completion notices dropped, by reason')
    .add(1, { reason: outcome === NoticeOutcome.sessionGone ? 'session_gone' : 'expired' });
}
