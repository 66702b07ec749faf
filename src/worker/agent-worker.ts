import { log } from '@temporalio/activity';
import type { DataConverter } from '@temporalio/common';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { createNoticeActivities } from '../activities/inject-notice.js';
import { type AgentSessions, type NoticeSource, REMEMBERED_NOTICE_IDS } from '../shared/notice.js';
import { RecentIds } from '../shared/recent-ids.js';

export interface AgentWorkerOptions {
  connection: NativeConnection;
  /** The namespace the tools' client uses. @default 'default' */
  namespace?: string;
  /**
   * The task queue of this agent host: the `agentTaskQueue` given to `createBashTools`. Give each
   * agent host its own (a notice taken by a host that lacks the session counts as the session gone).
   */
  taskQueue: string;
  /** The harness's sessions, which receive the notices. */
  agents: AgentSessions;
  /**
   * Called once for each notice `agents` took (a completion notice, a reminder), after it did: a
   * host that can start a turn on its own wakes the idle session here. Return quickly (schedule
   * the turn, do not run it): the inject's answer waits for it. A throw is logged; the notice stays
   * delivered. @default none
   */
  onNotice?: (sessionId: string, notice: DeliveredNotice) => void | Promise<void>;
  /** @default Temporal's `<pid>@<hostname>` */
  identity?: string;
  /** The tools' client's data converter, e.g. `encryptingDataConverter(keyring)`. @default Temporal's */
  dataConverter?: DataConverter;
}

/**
 * A Temporal worker for the agent host: it serves only the inject activity that delivers completion
 * notices into the host's sessions. No workflows, so no bundle; the notice workflow itself runs on
 * the command workers.
 */
export function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities: createNoticeActivities(
      options.onNotice ? announcing(options.agents, options.onNotice) : options.agents,
    ),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
  });
}

/** A notice an agent host's sessions took, as `onNotice` gets it. */
export interface DeliveredNotice {
  content: string;
  /** The same on every attempt to deliver it: `<task id>-notice`, or the reminder's id. */
  noticeId: string;
  source: NoticeSource;
}

/** `agents` that tell `onNotice` of each notice they took, once per notice id (a retried inject repeats it). */
function announcing(
  agents: AgentSessions,
  onNotice: NonNullable<AgentWorkerOptions['onNotice']>,
): AgentSessions {
  const told = new RecentIds(REMEMBERED_NOTICE_IDS);
  return {
    async inject(sessionId, content, options) {
      const delivered = await agents.inject(sessionId, content, options);
      if (delivered && told.add(options.noticeId)) {
        try {
          await onNotice(sessionId, { content, noticeId: options.noticeId, source: options.source });
        } catch (err) {
          log.warn('onNotice failed; the notice was delivered', {
            sessionId,
            noticeId: options.noticeId,
            error: String(err),
          });
        }
      }
      return delivered;
    },
  };
}
