/**
 * What an ended background task tells others: its output reader, and its owner's completion notice
 * (sent by the reader when reads have seen the task, since only it knows what they showed).
 */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  patched,
  startChild,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import { noticeWorkflowId } from '../shared/monitor.js';
import { noticeText } from '../shared/notice.js';
import { NOTICE_CHANNEL_PATCH } from '../shared/patches.js';
import { outputReaderId } from '../shared/read-position.js';
import { renderNoticeOutput } from '../shared/render-notice.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { statusLine, type TaskState } from '../shared/status-line.js';
import type { BashTaskResult, NoticeTarget, TaskId, WorkflowNoticeTarget } from '../shared/task.js';
import { completionNotice, signalAgentWorkflow } from './completion-notice.js';
import { completionNoticeSignal } from './notice-channel-signals.js';
import { type ReaderNotice, taskEndedSignal } from './reader-signals.js';
import { countNotice } from './workflow-metrics.js';

/**
 * Tells the task's output reader that the task ended, so it can end once idle, and hands it the
 * completion notice when there is one; false when the reader could not take the signal (gone).
 */
export async function tellReader(taskId: TaskId, notice?: ReaderNotice): Promise<boolean> {
  const reader = getExternalWorkflowHandle(outputReaderId(taskId));
  return CancellationScope.nonCancellable(() =>
    (notice === undefined ? reader.signal(taskEndedSignal) : reader.signal(taskEndedSignal, notice)).then(
      () => true,
      () => false,
    ),
  );
}

/**
 * Hands the completion notice of a task that reads have seen to its reader, which sends it with only
 * the output they did not show, in turn with them. A reader that cannot take it (gone) leaves the
 * notice to the task, with all of its output.
 */
export async function leaveNoticeToReader(
  taskId: TaskId,
  target: NoticeTarget,
  state: TaskState,
  result: BashTaskResult,
  viaChannel = false,
): Promise<void> {
  const ownerAttribute = workflowInfo().typedSearchAttributes.get(ownerSearchAttribute);
  const notice: ReaderNotice = {
    taskId,
    target,
    statusLine: statusLine(state),
    stdout: result.stdout,
    stderr: result.stderr,
    ...(ownerAttribute !== undefined ? { ownerAttribute } : {}),
    ...(viaChannel ? { viaChannel } : {}),
    ...(result.hostQueue !== undefined ? { hostQueue: result.hostQueue } : {}),
    ...(result.timedOutAfterMs !== undefined ? { timedOutAfterMs: result.timedOutAfterMs } : {}),
  };
  if (!(await tellReader(taskId, notice))) await startNotice(taskId, target, state, result, viaChannel);
}

/**
 * Sends the notice of a task no read has seen: a run that ended with a result carries its last
 * output. A notice that cannot start is logged, never the task's failure.
 */
export async function startNotice(
  taskId: TaskId,
  target: NoticeTarget,
  state: TaskState,
  result: BashTaskResult | undefined,
  viaChannel = false,
): Promise<void> {
  const text = noticeText(taskId, statusLine(state), result && renderNoticeOutput(result));
  // The owner as this task holds it, for a notice that must mark itself undelivered.
  const ownerAttribute =
    'workflowId' in target ? undefined : workflowInfo().typedSearchAttributes.get(ownerSearchAttribute);
  await sendNotice(taskId, target, text, ownerAttribute, viaChannel);
}

/**
 * Sends a task's notice, from its run or from its reader: to an agent workflow as a signal; to a
 * session as an abandoned child, waiting only for its start (a child not yet started when its
 * parent closes may never start). The child runs on this task queue; only its inject activity goes
 * to the agent host.
 */
export async function sendNotice(
  taskId: string,
  target: NoticeTarget,
  text: string,
  ownerAttribute: string | undefined,
  viaChannel = false,
): Promise<void> {
  // A monitored task's notice workflow delivers it, after the monitor's notices.
  if (viaChannel && (await handToChannel(taskId, text, ownerAttribute))) return;
  if ('workflowId' in target) return signalNotice(taskId, target, text);
  try {
    // A kill cancels this workflow; the notice must still start.
    await CancellationScope.nonCancellable(() =>
      startChild(completionNotice, {
        workflowId: `${taskId}-notice`,
        args: [{ ...target, content: text, ...(ownerAttribute !== undefined ? { ownerAttribute } : {}) }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        // A task reset and run again must not notify twice: its notice id is taken.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `Completion notice for ${taskId}`,
      }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      // A monitor's notice workflow holds the id (it started as this task ended): hand it there.
      if (patched(NOTICE_CHANNEL_PATCH) && (await handToChannel(taskId, text, ownerAttribute))) return;
      log.info('completion notice already sent', { taskId });
    } else {
      log.warn('completion notice could not start', { taskId, error: String(err) });
    }
  }
}

/**
 * Ends a task whose owning session's own kill answered for its end (`sessionKillSignal`): the
 * session gets no completion notice. Its reader is told of the end, as for a task without a notice;
 * a monitor's notice workflow, which closes once it has the completion notice, gets it marked as
 * answered, and closes after the monitor's notices without delivering it (a notice workflow of 0.2.0
 * delivers it, the text it would have had). One that started while the task was ending is found
 * after the reader was told.
 */
export async function endAnswered(
  taskId: TaskId,
  state: TaskState,
  result: BashTaskResult | undefined,
  tell: { hasReader: boolean; viaChannel: () => boolean },
): Promise<void> {
  let handed = false;
  const handOff = () => {
    handed = true;
    const text = noticeText(taskId, statusLine(state), result && renderNoticeOutput(result));
    const ownerAttribute = workflowInfo().typedSearchAttributes.get(ownerSearchAttribute);
    return handToChannel(taskId, text, ownerAttribute, true);
  };
  await Promise.all([
    tell.viaChannel() ? handOff() : undefined,
    tell.hasReader ? tellReader(taskId) : undefined,
  ]);
  if (!handed && tell.viaChannel()) await handOff();
}

/** Hands the completion notice to the task's notice workflow; false when none takes it. */
async function handToChannel(
  taskId: string,
  content: string,
  ownerAttribute: string | undefined,
  answered = false,
): Promise<boolean> {
  return CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(noticeWorkflowId(taskId)).signal(completionNoticeSignal, {
      taskId,
      content,
      ...(ownerAttribute !== undefined ? { ownerAttribute } : {}),
      ...(answered ? { answered } : {}),
    }),
  ).then(
    () => true,
    () => false,
  );
}

/**
 * Signals the notice to the agent workflow that started the task. One that has closed is not
 * told, as a disposed session is not.
 */
async function signalNotice(taskId: string, target: WorkflowNoticeTarget, text: string): Promise<void> {
  countNotice(await signalAgentWorkflow(target, { taskId, text }, 'completion notice'));
}
