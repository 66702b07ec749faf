/**
 * Which of a session's ended tasks it never heard of: the completion notice's window ran out before
 * an agent worker delivered it (the notice then marks its own closed run, see completionNotice), and
 * no `bash_output` read has shown the task's end since (its reader's memo says when one has).
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { LIST_LIMIT, LIST_SCAN_LIMIT } from '../shared/limits.js';
import { outputReaderId, type ReaderMemo } from '../shared/read-position.js';
import { bashTask } from '../workflows/bash-task.js';
import { completionNotice } from '../workflows/completion-notice.js';
import { monitorNotices } from '../workflows/monitor-notices.js';
import { listExecutions, quoteQueryValue, type TaskSummary, toTaskSummary } from './task-list.js';

/** A notice's workflow id is its task's id and this. */
const NOTICE_ID_SUFFIX = '-notice';

/**
 * The tasks of a listing's runs, with its undelivered notices (runs of `completionNotice`, or of
 * `monitorNotices` for a monitored task) turned
 * into marks on their tasks: `noticeNotDelivered` on an ended task whose end no read has shown. A
 * marked task the listing did not hold (it asked for running tasks only) is added after the rest.
 * With no undelivered notice among the runs this asks the server nothing; else one more visibility
 * query for every LIST_LIMIT notices, for their readers and the tasks it lacks.
 */
export async function withNoticeMarks(
  client: Client,
  executions: WorkflowExecutionInfo[],
): Promise<TaskSummary[]> {
  const tasks = executions.filter((execution) => execution.type === bashTask.name).map(toTaskSummary);
  const noticed = [
    ...new Set(
      executions
        .filter(
          (execution) => execution.type === completionNotice.name || execution.type === monitorNotices.name,
        )
        .map((execution) => taskIdOfNotice(execution.workflowId)),
    ),
  ];
  if (noticed.length === 0) return tasks;
  const listed = new Map(tasks.map((task) => [task.taskId, task]));
  const added: TaskSummary[] = [];
  for (let start = 0; start < noticed.length; start += LIST_LIMIT) {
    const batch = noticed.slice(start, start + LIST_LIMIT);
    const { endShown, found } = await lookUp(client, batch, listed);
    for (const taskId of batch) {
      const task = listed.get(taskId) ?? found.get(taskId);
      // A task reset and running again is not ended; one gone from the store cannot be shown.
      if (task === undefined || task.closedAt === undefined || endShown.has(taskId)) continue;
      task.noticeNotDelivered = true;
      if (!listed.has(taskId)) added.push(task);
    }
  }
  return [...tasks, ...added];
}

/**
 * One visibility query for the readers of `taskIds` and those of the tasks that `listed` lacks:
 * which tasks a read has shown the end of, and the missing tasks' summaries.
 */
async function lookUp(
  client: Client,
  taskIds: string[],
  listed: ReadonlyMap<string, TaskSummary>,
): Promise<{ endShown: Set<string>; found: Map<string, TaskSummary> }> {
  const readers = new Map(taskIds.map((taskId) => [outputReaderId(taskId), taskId]));
  const ids = [...readers.keys(), ...taskIds.filter((taskId) => !listed.has(taskId))];
  const query = `WorkflowId IN (${ids.map(quoteQueryValue).join(', ')})`;
  const endShown = new Set<string>();
  const found = new Map<string, TaskSummary>();
  // A reader has a run per continue-as-new: the latest come first, and any one that says so will do.
  for (const execution of await listExecutions(client, query, LIST_SCAN_LIMIT)) {
    const readerOf = readers.get(execution.workflowId);
    if (readerOf !== undefined) {
      if ((execution.memo as Partial<ReaderMemo> | undefined)?.endShown === true) endShown.add(readerOf);
    } else if (execution.type === bashTask.name && !found.has(execution.workflowId)) {
      found.set(execution.workflowId, toTaskSummary(execution));
    }
  }
  return { endShown, found };
}

function taskIdOfNotice(noticeId: string): string {
  return noticeId.endsWith(NOTICE_ID_SUFFIX) ? noticeId.slice(0, -NOTICE_ID_SUFFIX.length) : noticeId;
}
