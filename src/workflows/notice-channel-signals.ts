/**
 * The signals and the update of a monitored task's notice workflow (`<task id>-notice`,
 * monitor-notices.ts), in a module of their own because the task, its reader and the host's sink
 * send them, and the notice workflow handles them.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import {
  COMPLETION_NOTICE_SIGNAL,
  MONITOR_LINES_SIGNAL,
  type MonitorBatch,
  SET_MONITOR_UPDATE,
  type SetMonitorAnswer,
  type SetMonitorRequest,
} from '../shared/monitor.js';

/** To the notice workflow, from the task's host: lines that matched. */
export const monitorLinesSignal = defineSignal<[MonitorBatch]>(MONITOR_LINES_SIGNAL);

/** A monitored task's completion notice, to be delivered after the monitor's notices. */
export interface CompletionHandoff {
  /** The task whose notice it is: another task's notice workflow ignores it. */
  taskId: string;
  content: string;
  ownerAttribute?: string;
  /**
   * The owning session's own kill ended the task, and its answer told the session so: the notice
   * workflow closes without delivering `content` (see SESSION_KILL_PATCH). Absent: deliver it.
   */
  answered?: true;
}

/** To the notice workflow, from the task (or its reader) at the task's end. */
export const completionNoticeSignal = defineSignal<[CompletionHandoff]>(COMPLETION_NOTICE_SIGNAL);

/** To the task, from its notice workflow when it starts: the completion notice must come to it. */
export const noticeChannelStartedSignal = defineSignal('noticeChannelStarted');

/** To the notice workflow, from `bash_monitor`: set or clear the pattern on the task's host. */
export const setMonitorUpdate = defineUpdate<SetMonitorAnswer, [SetMonitorRequest]>(SET_MONITOR_UPDATE);
