import { type AgentSessions, REMEMBERED_NOTICE_IDS } from '../shared/notice.js';
import { RecentIds } from '../shared/recent-ids.js';
import { countRepeatDropped } from './repeat-metrics.js';

/**
 * `sessions` that drop a notice already delivered: an inject retried after its answer was lost
 * repeats its `noticeId`. Remembers the last REMEMBERED_NOTICE_IDS delivered ids, in memory.
 */
export function dropRepeatedNotices(sessions: AgentSessions): AgentSessions {
  const delivered = new RecentIds(REMEMBERED_NOTICE_IDS);
  return {
    async inject(sessionId, content, options) {
      if (delivered.has(options.noticeId)) {
        countRepeatDropped();
        return true;
      }
      const injected = await sessions.inject(sessionId, content, options);
      if (!injected) return false;
      delivered.add(options.noticeId);
      return true;
    },
  };
}
