/** Starting a task: its `bashTask` workflow, with the owner and status search attributes and a memo the Web UI shows. */

import {
  type Client,
  type InternalConnectionLike,
  InternalConnectionLikeSymbol,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
} from '@temporalio/client';
import type { OwnerHasher } from '../codec/owner-hash.js';
import { MonitorError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../shared/search-attributes.js';
import { markdownCodeBlock, markdownLine } from '../shared/shown-markdown.js';
import type { BashTaskInput, CommandHost, NoticeTarget, TaskId, TaskStart } from '../shared/task.js';
import { TaskStatus } from '../shared/task.js';
import type { TerminalSize } from '../shared/terminal.js';
import { bashTask } from '../workflows/bash-task.js';
import { newTaskId } from './new-task-id.js';
import { ownerToken, sessionKey } from './ownership.js';
import { asClientError } from './temporal-unreachable.js';

export interface StartRequest {
  command: string;
  description: string;
  /** Absolute, or relative to the worker's default workdir; absent for the worker's default. */
  workdir?: string;
  timeoutMs?: number;
  background: boolean;
  /** A background run that keeps the foreground timeout (`BashTaskInput.keepTimeout`). */
  keepTimeout?: boolean;
  /** A background run's time limit (`BashTaskInput.backgroundTimeoutMs`). */
  backgroundTimeoutMs?: number;
  /** The agent session that owns the task; undefined for a task with no owner. */
  owner?: string;
  /** The run's stdin stays open for `writeStdin` (a background run's, or a sandbox command's). */
  keepStdinOpen?: boolean;
  /** Run on a pseudo-terminal of this size. */
  terminal?: TerminalSize;
  /** A background run's monitor pattern (`notify_on`): needs a notice target. */
  notifyOn?: string;
  /** A foreground caller shows at most this many bytes (`BashTaskInput.shownOutputBytes`). */
  shownOutputBytes?: number;
  /** Run on this host (a sandbox session's); absent for whichever worker of the queue answers. */
  host?: CommandHost;
  /** A background run whose host is lost for good starts again on another (`on_host_loss: "restart"`). */
  restartOnHostLoss?: boolean;
}

/** What a start needs of its client. */
export interface StartContext {
  client: Client;
  taskQueue: string;
  eagerStart: boolean;
  /** Set when the client encrypts with durable-bash's codec: owners are then stored hashed. */
  ownerHasher: OwnerHasher | undefined;
  /** Where a background task of `owner` sends its completion notice. */
  noticeFor(owner: string | undefined): { notice?: NoticeTarget };
}

export type { TaskStart } from '../shared/task.js';

/**
 * What a run's workflow starts with: its input, the owner and status search attributes (the owner
 * hashed when the client encrypts), and the memo and summary the Web UI shows.
 */
export function taskStart(
  context: Pick<StartContext, 'ownerHasher'>,
  request: StartRequest,
  taskId: TaskId,
  notice: { notice?: NoticeTarget },
): TaskStart {
  if (request.notifyOn !== undefined && (!request.background || notice.notice === undefined))
    throw new MonitorError(
      'notify_on needs a background run of an agent session whose host takes notices: nothing was started',
    );
  const input: BashTaskInput = {
    taskId,
    command: request.command,
    description: request.description,
    background: request.background,
    ...(request.workdir !== undefined ? { workdir: request.workdir } : {}),
    // A background run has no timeout (the worker applies none), so its input carries none, unless
    // it keeps a foreground call's.
    ...(request.timeoutMs !== undefined && (!request.background || request.keepTimeout)
      ? { timeoutMs: request.timeoutMs }
      : {}),
    ...(request.background && request.keepTimeout ? { keepTimeout: true } : {}),
    ...(request.background && request.backgroundTimeoutMs !== undefined
      ? { backgroundTimeoutMs: request.backgroundTimeoutMs }
      : {}),
    ...(request.background ? notice : {}),
    ...(request.notifyOn !== undefined ? { notifyOn: request.notifyOn } : {}),
    ...(request.keepStdinOpen ? { keepStdinOpen: true } : {}),
    ...(request.shownOutputBytes !== undefined && !request.background
      ? { shownOutputBytes: request.shownOutputBytes }
      : {}),
    ...(request.owner !== undefined ? { session: sessionKey(request.owner) } : {}),
    ...(request.terminal ? { terminal: { cols: request.terminal.cols, rows: request.terminal.rows } } : {}),
    ...(request.host ? { host: { hostId: request.host.hostId, hostQueue: request.host.hostQueue } } : {}),
    ...(request.restartOnHostLoss && request.background ? { restartOnHostLoss: true } : {}),
  };
  const owner = request.owner === undefined ? undefined : ownerToken(request.owner);
  return {
    input,
    typedSearchAttributes: [
      { key: statusSearchAttribute, value: TaskStatus.running },
      ...(owner !== undefined
        ? [{ key: ownerSearchAttribute, value: context.ownerHasher?.hash(owner) ?? owner }]
        : []),
    ],
    memo: {
      command: request.command,
      description: request.description,
      workdir: request.workdir ?? null,
      // bash_list shows background tasks only; a run moved there says so again.
      background: request.background,
      // Reads of a terminal task wait for its host, where its screen is rendered.
      ...(request.terminal ? { terminal: { cols: request.terminal.cols, rows: request.terminal.rows } } : {}),
      // The search attribute holds only a hash then: listings show the owner from here.
      ...(context.ownerHasher !== undefined && request.owner !== undefined ? { owner: request.owner } : {}),
    },
    // Markdown the Web UI renders: the texts in the shown form, where they cannot write their own.
    staticSummary: markdownLine(request.description),
    staticDetails: markdownCodeBlock(request.command, 'bash'),
  };
}

/** Starts a run; resolves once the server has accepted it. */
export async function startTask(context: StartContext, request: StartRequest): Promise<TaskId> {
  const taskId = newTaskId();
  await startPrepared(context, taskStart(context, request, taskId, context.noticeFor(request.owner)));
  return taskId;
}

/**
 * Starts a run prepared earlier (`taskStart`): a run its client prepared when it asked for approval,
 * started by the approval's activity. Resolves once the server has accepted it; an id already taken
 * is refused (`WorkflowExecutionAlreadyStartedError`).
 */
export async function startPrepared(
  context: Pick<StartContext, 'client' | 'taskQueue' | 'eagerStart'>,
  start: TaskStart,
): Promise<void> {
  const { client } = context;
  try {
    await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      client.workflow.start(bashTask, {
        workflowId: start.input.taskId,
        taskQueue: context.taskQueue,
        args: [start.input],
        typedSearchAttributes: start.typedSearchAttributes,
        memo: start.memo,
        staticSummary: start.staticSummary,
        staticDetails: start.staticDetails,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        ...(context.eagerStart ? { requestEagerStart: true } : {}),
      }),
    );
  } catch (err) {
    throw asClientError(client, err);
  }
}

/** Whether the client's connection can start workflows eagerly (it is a worker's `NativeConnection`). */
export function supportsEagerStart(client: Client): boolean {
  const connection = client.connection as InternalConnectionLike;
  return connection[InternalConnectionLikeSymbol]?.supportsEagerStart === true;
}
