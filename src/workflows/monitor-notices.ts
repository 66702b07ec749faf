/**
 * A monitored task's notice workflow (`<task id>-notice`): the one place its session's notices
 * about it leave from, in order. Its host starts it (signal-with-start) with the first batch of
 * matching lines, or `bash_monitor` does (update-with-start) to set a pattern on the host. It drops
 * lines it already has (a batch sent again after a crash), delivers each batch as a notice (the
 * inject activity on the agent host, or the signal to an agent workflow), and at the task's end
 * takes its completion notice, delivers it after them, and closes. Nothing waits on a timer: an
 * idle monitor costs the server nothing.
 */
import { TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { HOST_READ_START_MS, MONITOR_LINE_CHARS } from '../shared/limits.js';
import {
  type MonitorBatch,
  type MonitorNoticesInput,
  monitorNoticeText,
  type SetMonitorAnswer,
  type SetMonitorRequest,
} from '../shared/monitor.js';
import { NoticeOutcome } from '../shared/notice.js';
import { SESSION_KILL_PATCH } from '../shared/patches.js';
import { controlTaskQueue } from '../shared/task-queues.js';
import {
  ignoredSignalForOther,
  refuseArgumentForOther,
  refuseArgumentOfOtherUpdate,
} from './addressed-payloads.js';
import { injectWithinWindow, markUndelivered, signalAgentWorkflow } from './completion-notice.js';
import {
  type CompletionHandoff,
  completionNoticeSignal,
  monitorLinesSignal,
  noticeChannelStartedSignal,
  setMonitorUpdate,
} from './notice-channel-signals.js';
import {
  ignoredUnencryptedSignal,
  refuseUnencryptedArgument,
  refuseUnencryptedInput,
} from './unencrypted-payloads.js';
import { countNotice } from './workflow-metrics.js';

/** A history this long goes on in a new run (a chatty monitor's notices are ~10 events each). */
const MAX_HISTORY_EVENTS = 5_000;

/**
 * How long a notice workflow whose task had closed waits for the task's reader to hand it the
 * completion notice (one timer, only on that race).
 */
const CLOSED_TASK_NOTICE_WAIT_MS = 60_000;

/** How long the host's control worker may take to set a pattern, once it took the activity. */
const SET_MONITOR_TIMEOUT_MS = 10_000;

export async function monitorNotices(input: MonitorNoticesInput): Promise<NoticeOutcome | undefined> {
  refuseUnencryptedInput(input);
  const { taskId, target } = input;
  const upTo = { ...(input.carried?.upTo ?? { stdout: 0, stderr: 0 }) };
  const queue: MonitorBatch[] = [...(input.carried?.pending ?? [])];
  let sent = input.carried?.sent ?? 0;
  let completion: CompletionHandoff | undefined;
  // Whether the task can still hand its completion notice here: false once it had closed when this
  // workflow told it (or its host says it never could: no notice target).
  let taskClosed = input.carried?.taskClosed ?? false;
  let received = input.carried !== undefined;
  // A session gone (disposed, or an agent workflow closed) takes no more notices.
  let gone = input.carried?.gone ?? false;

  setHandler(monitorLinesSignal, (batch) => {
    if (ignoredUnencryptedSignal(monitorLinesSignal.name, batch)) return;
    if (ignoredSignalForOther(monitorLinesSignal.name, 'taskId', taskId, batch?.taskId)) return;
    received = true;
    // A line at or past where its stream's delivered lines end is new; the rest came before.
    const lines = batch.lines.filter((line) => line.offset >= upTo[line.stream]);
    if (lines.length === 0 && batch.lines.length > 0) return;
    for (const line of lines) upTo[line.stream] = line.offset + 1;
    queue.push({ ...batch, lines });
  });
  setHandler(completionNoticeSignal, (handoff) => {
    if (ignoredUnencryptedSignal(completionNoticeSignal.name, handoff)) return;
    if (ignoredSignalForOther(completionNoticeSignal.name, 'taskId', taskId, handoff?.taskId)) return;
    completion ??= handoff;
  });
  setHandler(
    setMonitorUpdate,
    async (request) => {
      const answer = await setOnHost(request);
      // A task that can take no monitor sends nothing here, its end included: nothing to wait for.
      if (answer.kind === 'unmonitorable' && !received) taskClosed = true;
      return answer;
    },
    {
      validator: (request) => {
        refuseUnencryptedArgument(setMonitorUpdate.name, request);
        refuseArgumentForOther(setMonitorUpdate.name, 'taskId', taskId, request?.taskId);
        refuseArgumentOfOtherUpdate(setMonitorUpdate.name, 'requestId', request?.requestId);
        if (
          typeof request.hostQueue !== 'string' ||
          !(request.pattern === null || typeof request.pattern === 'string')
        )
          throw new Error('setMonitor: bad request');
      },
    },
  );

  if (input.carried === undefined) {
    // The task sends its completion notice here from now on; a task already closed sent it elsewhere.
    try {
      await CancellationScope.nonCancellable(() =>
        getExternalWorkflowHandle(taskId).signal(noticeChannelStartedSignal),
      );
    } catch {
      taskClosed = true;
    }
  }

  for (;;) {
    await condition(() => queue.length > 0 || completion !== undefined || taskClosed);
    for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
      sent++;
      if (gone) continue;
      const outcome = await deliver(
        monitorNoticeText(taskId, batch, MONITOR_LINE_CHARS),
        `${taskId}-match-${sent}`,
      );
      if (outcome === NoticeOutcome.sessionGone) gone = true;
    }
    if (completion === undefined && taskClosed) {
      // Closed before it heard of this workflow: its reader may still hand the notice here (its
      // start found this workflow's id taken), moments after the task closed.
      await condition(() => completion !== undefined || queue.length > 0, CLOSED_TASK_NOTICE_WAIT_MS);
      if (queue.length > 0) continue;
    }
    if (completion !== undefined) {
      // The session's own kill ended the task, and its answer said so: nothing more to deliver.
      if (completion.answered === true && patched(SESSION_KILL_PATCH)) {
        await condition(allHandlersFinished);
        return undefined;
      }
      const outcome = gone ? NoticeOutcome.sessionGone : await deliver(completion.content);
      countNotice(outcome);
      if (outcome === NoticeOutcome.expired) markUndelivered(completion);
      await condition(allHandlersFinished);
      return outcome;
    }
    if (taskClosed) {
      await condition(allHandlersFinished);
      if (queue.length === 0 && completion === undefined) return undefined;
      continue;
    }
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > MAX_HISTORY_EVENTS) {
      await condition(allHandlersFinished);
      // What came while the handlers finished is taken here first: nothing may be left behind.
      if (queue.length > 0 || completion !== undefined || taskClosed) continue;
      await continueAsNew<typeof monitorNotices>({
        ...input,
        carried: { upTo, sent, pending: queue, taskClosed, gone },
      });
    }
  }

  /** One notice to the session, in turn: the inject within the window, or the agent workflow's signal. */
  async function deliver(text: string, noticeId?: string): Promise<NoticeOutcome> {
    if ('workflowId' in target)
      return signalAgentWorkflow(
        target,
        { taskId, text, ...(noticeId !== undefined ? { noticeId } : {}) },
        noticeId === undefined ? 'completion notice' : 'monitor notice',
      );
    return injectWithinWindow(target, text, noticeId);
  }
}

/** Sets the pattern on the task's host, through its control queue; a host with no worker now says so. */
async function setOnHost(request: SetMonitorRequest): Promise<SetMonitorAnswer> {
  const { setMonitor } = proxyActivities<CommandActivities>({
    taskQueue: controlTaskQueue(request.hostQueue),
    scheduleToStartTimeout: HOST_READ_START_MS,
    startToCloseTimeout: SET_MONITOR_TIMEOUT_MS,
    retry: { maximumAttempts: 1 },
  });
  try {
    return await setMonitor(request);
  } catch (err) {
    if (
      err instanceof ActivityFailure &&
      err.cause instanceof TimeoutFailure &&
      err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
    )
      return { kind: 'host-unavailable' };
    throw err;
  }
}
