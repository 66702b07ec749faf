/** The inject activity: the agent host's side of a completion notice, run by `createAgentWorker`. */
import { Context, type Info } from '@temporalio/activity';
import { NOTICE_SOURCE, NoticeOutcome, type NoticeSource } from '../shared/notice.js';

/** The harness's agent sessions, as far as a completion notice needs them. */
export interface AgentSessions {
  /**
   * Adds `content` to the session's context for its next model request (not a wake-up). Resolves
   * true once delivered into a live session, false when the session no longer exists (disposed).
   * A throw is a transient failure: the notice is retried within its window. A retry after an
   * inject whose answer was lost (the agent host died) repeats `noticeId`: drop a repeat to keep
   * the notice exactly once.
   */
  inject(
    sessionId: string,
    content: string,
    options: { source: NoticeSource; noticeId: string },
  ): Promise<boolean>;
}

/** One notice for one session. */
export interface InjectNoticeRequest {
  sessionId: string;
  /** The notice text (see `noticeText`). */
  content: string;
}

/** The activities an agent worker registers, bound to the harness's sessions. */
export function createNoticeActivities(agents: AgentSessions) {
  return {
    async injectNotice(
      request: InjectNoticeRequest,
    ): Promise<typeof NoticeOutcome.delivered | typeof NoticeOutcome.sessionGone> {
      const delivered = await agents.inject(request.sessionId, request.content, {
        source: { ...NOTICE_SOURCE },
        noticeId: noticeId(Context.current().info),
      });
      return delivered ? NoticeOutcome.delivered : NoticeOutcome.sessionGone;
    },
  };
}

export type NoticeActivities = ReturnType<typeof createNoticeActivities>;

/** The notice workflow's id (`<task id>-notice`): the same on every attempt of its inject. */
function noticeId(info: Info): string {
  return info.workflowExecution?.workflowId ?? info.activityId;
}
