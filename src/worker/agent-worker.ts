import type { DataConverter } from '@temporalio/common';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { createNoticeActivities } from '../activities/inject-notice.js';
import type { AgentSessions } from '../shared/notice.js';

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
    activities: createNoticeActivities(options.agents),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
  });
}
