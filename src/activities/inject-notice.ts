/** The inject activity: the agent host's side of a completion notice, run by `createAgentWorker`. */
import { Context, type Info } from '@temporalio/activity';
import { type AgentSessions, NOTICE_SOURCE, NoticeOutcome } from '../shared/notice.js';

/** One notice for one session. */
export interface InjectNoticeRequest {
  sessionId: string;
  /** The notice text (see `noticeText`). */
  content: string;
  /** What the session drops repeats by, when not the notice workflow's id (a monitor's notices). */
  noticeId?: string;
}

/** The activities an agent worker registers, bound to the harness's sessions. */
export function createNoticeActivities(agents: AgentSessions) {
  return {
    async injectNotice(
      request: InjectNoticeRequest,
    ): Promise<typeof NoticeOutcome.delivered | typeof NoticeOutcome.sessionGone> {
      const delivered = await agents.inject(request.sessionId, request.content, {
        source: { ...NOTICE_SOURCE },
        noticeId: request.noticeId ?? noticeId(Context.current().info),
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
