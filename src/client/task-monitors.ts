/**
 * Setting a running task's monitor (`bash_monitor`): an update of the task's notice workflow
 * (started by it when the task has none yet), which sets the pattern on the task's host and says
 * how that went. Only the owning session may set one, on a background task that runs on a host.
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
} from '@temporalio/client';
import { MonitorError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { noticeWorkflowId, type SetMonitorAnswer } from '../shared/monitor.js';
import { monitorPatternProblem } from '../shared/monitor-pattern.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import type { NoticeTarget } from '../shared/task.js';
import { monitorNotices } from '../workflows/monitor-notices.js';
import { setMonitorUpdate } from '../workflows/notice-channel-signals.js';
import type { BashTasks } from './bash-tasks.js';
import { asClientError } from './temporal-unreachable.js';
import { refuseUnencrypted } from './unencrypted-payloads.js';

/** How long `bash_monitor` waits for a task just started to reach its host. */
const HOST_WAIT_MS = 5_000;

/** How long `bash_monitor` waits for the task's host: its pick-up of the setting, and the setting. */
const SET_MONITOR_WAIT_MS = 20_000;

export interface TaskMonitorsOptions {
  /** The session's tasks: the client, the command queue, the ownership fence. */
  tasks: BashTasks;
  /** Where the notices of `owner`'s tasks go (its agent host, or its agent workflow). */
  noticeFor: (owner: string) => NoticeTarget | undefined;
}

export class TaskMonitors {
  private readonly tasks: BashTasks;
  private readonly client: Client;
  private readonly noticeFor: TaskMonitorsOptions['noticeFor'];

  constructor(options: TaskMonitorsOptions) {
    this.tasks = options.tasks;
    this.client = options.tasks.client;
    this.noticeFor = options.noticeFor;
  }

  /**
   * Sets the monitor of `taskId`, a running background task of `sessionId`, to `pattern` (null
   * clears it). Throws a `MonitorError` that says why nothing was set.
   */
  async set(sessionId: string, taskId: string, pattern: string | null): Promise<void> {
    const problem = pattern === null ? undefined : monitorPatternProblem(pattern);
    if (problem !== undefined) throw new MonitorError(`invalid notify_on: ${problem}`);
    const target = this.noticeFor(sessionId);
    if (target === undefined)
      throw new MonitorError(
        'a monitor needs a host that takes notices, and this one takes none: nothing was set',
      );
    const description = await this.tasks.describeOwned(taskId, sessionId);
    if (description.status.name !== 'RUNNING')
      throw new MonitorError(`task ${taskId} has ended: nothing was set`);
    if (description.memo?.background === false)
      throw new MonitorError(`task ${taskId} runs in the foreground: only a background task takes a monitor`);
    const hostQueue = await this.tasks.hostQueueOf(description, HOST_WAIT_MS);
    if (hostQueue === undefined)
      throw new MonitorError(
        `task ${taskId} has not reached a host yet: nothing was set; try again in a moment`,
      );
    const ownerAttribute = description.typedSearchAttributes.get(ownerSearchAttribute);
    const start = new WithStartWorkflowOperation(monitorNotices, {
      workflowId: noticeWorkflowId(taskId),
      taskQueue: this.tasks.taskQueue,
      args: [{ taskId, target, ...(ownerAttribute !== undefined ? { ownerAttribute } : {}) }],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      // Its id is the completion notice's: once that went, the task has ended.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      staticSummary: `Notices for ${taskId}`,
    });
    let answer: SetMonitorAnswer;
    // The request names its task and its update: a copy of it sets nothing, there or elsewhere.
    const requestId = randomUUID();
    try {
      answer = await this.client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS + SET_MONITOR_WAIT_MS, () =>
        this.client.workflow.executeUpdateWithStart(setMonitorUpdate, {
          updateId: requestId,
          args: [{ taskId, pattern, hostQueue, requestId }],
          startWorkflowOperation: start,
        }),
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError)
        throw new MonitorError(`task ${taskId} has ended: nothing was set`);
      throw asClientError(this.client, err);
    }
    switch (refuseUnencrypted(answer, `task ${taskId}`, "monitor's answer").kind) {
      case 'set':
        return;
      case 'ended':
        throw new MonitorError(`task ${taskId} has ended: nothing was set`);
      case 'unmonitorable':
        throw new MonitorError(
          `task ${taskId} started without a session to notify: it cannot take a monitor`,
        );
      case 'host-unavailable':
        throw new MonitorError(
          `no worker on task ${taskId}'s host answered: nothing was set; try again once it is back`,
        );
    }
  }
}
