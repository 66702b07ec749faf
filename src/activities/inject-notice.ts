/** The inject activity: the agent host's side of a completion notice, run by `createAgentWorker`. */
import { NOTICE_SOURCE, NoticeOutcome, type NoticeSource } from '../shared/notice.js';

/** The harness's agent sessions, as far as a completion notice needs them. */
export interface AgentSessions {
  /**
   * Adds `content` to the session's context for its next model request (not a wake-up). Resolves
   * true once delivered into a live session, false when the session no longer exists (disposed).
   * A throw is a transient failure: the notice is retried within its window.
   */
  inject(sessionId: string, content: string, options: { source: NoticeSource }): Promise<boolean>;
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
      });
      return delivered ? NoticeOutcome.delivered : NoticeOutcome.sessionGone;
    },
  };
}

export type NoticeActivities = ReturnType<typeof createNoticeActivities>;
