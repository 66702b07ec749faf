/**
 * The completion notice an agent workflow gets for a background task it started (through
 * `durable-bash/workflow`): a signal to the workflow's id, so it reaches whichever run is current,
 * one continued as new included.
 */
import { defineSignal } from '@temporalio/workflow';

export interface BashNotice {
  taskId: string;
  /**
   * The agent workflow it is for: another agent workflow ignores it (a copy of another session's
   * notice). Tasks of 0.2.0 send none.
   */
  agentWorkflowId?: string;
  /** The same text a session's notice carries (`noticeText`). */
  text: string;
  /**
   * Set on a monitor's notices (`<task id>-match-<n>`): a task sends several. A completion notice
   * has none: its task's id is its id.
   */
  noticeId?: string;
}

export const bashNoticeSignal = defineSignal<[BashNotice]>('durableBashNotice');
