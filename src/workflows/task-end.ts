/** What an ended background task tells others: its output reader, and its owner's completion notice. */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  CancellationScope,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  startChild,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import { NoticeOutcome, noticeText } from '../shared/notice.js';
import { outputReaderId } from '../shared/read-position.js';
import { renderNoticeOutput } from '../shared/render-notice.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { statusLine, type TaskState } from '../shared/status-line.js';
import type { BashTaskResult, NoticeTarget, TaskId, WorkflowNoticeTarget } from '../shared/task.js';
import { completionNotice } from './completion-notice.js';
import { bashNoticeSignal } from './notice-signal.js';
import { taskEndedSignal } from './reader-signals.js';
import { countNotice } from './workflow-metrics.js';

/** Tells the task's output reader that the task ended, so it can end once idle. */
export async function tellReader(taskId: TaskId): Promise<void> {
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(outputReaderId(taskId))
      .signal(taskEndedSignal)
      .catch(() => undefined),
  );
}

/**
 * Starts the notice as an abandoned child and waits only for its start (a child not yet started
 * when its parent closes may never start). A run that ended with a result carries its last output.
 * It runs on this task queue; only its inject activity goes to the agent host. A notice that
 * cannot start is logged, never the task's failure.
 */
export async function startNotice(
  taskId: TaskId,
  target: NoticeTarget,
  state: TaskState,
  result: BashTaskResult | undefined,
): Promise<void> {
  const text = noticeText(taskId, statusLine(state), result && renderNoticeOutput(result));
  if ('workflowId' in target) return signalNotice(taskId, target, text);
  // The owner as this task holds it, for a notice that must mark itself undelivered.
  const ownerAttribute = workflowInfo().typedSearchAttributes.get(ownerSearchAttribute);
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
      log.info('completion notice already sent', { taskId });
    } else {
      log.warn('completion notice could not start', { taskId, error: String(err) });
    }
  }
}

/**
 * Signals the notice to the agent workflow that started the task (no child, no activity: the
 * workflow is there or it is not). One that has closed is not told, as a disposed session is not.
 */
async function signalNotice(taskId: TaskId, target: WorkflowNoticeTarget, text: string): Promise<void> {
  try {
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(target.workflowId).signal(bashNoticeSignal, {
        taskId,
        text,
      }),
    );
    countNotice(NoticeOutcome.delivered);
  } catch (err) {
    countNotice(NoticeOutcome.sessionGone);
    log.info('completion notice not delivered: the agent workflow is closed', { taskId, error: String(err) });
  }
}
