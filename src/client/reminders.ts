/**
 * A session's reminders (`bash_remind`): each a `bashReminder` workflow on the command queue, owned
 * as a task is (the owner search attribute, hashed under encryption), listed from visibility with
 * the session's tasks' query shape, cancelled by workflow cancellation.
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowExecutionInfo,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { type OwnerHasher, ownerHasherOf } from '../codec/owner-hash.js';
import { ReminderError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS, MAX_REMINDERS_PER_SESSION } from '../shared/limits.js';
import type { ReminderInput } from '../shared/reminder.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { markdownLine } from '../shared/shown-markdown.js';
import { statusLine } from '../shared/status-line.js';
import type { NoticeTarget } from '../shared/task.js';
import { bashReminder } from '../workflows/bash-reminder.js';
import { watchEndSignal, watchedEndSignal } from '../workflows/end-watchers.js';
import type { BashTasks } from './bash-tasks.js';
import { mayAccess, ownerToken } from './ownership.js';
import { listExecutions, ownerCondition, quoteQueryValue } from './task-list.js';
import { snapshotFromDescription } from './task-snapshot.js';
import { asClientError } from './temporal-unreachable.js';

/** A pending reminder, as `bash_list` shows it. */
export interface ReminderSummary {
  reminderId: string;
  note: string;
  /** When its timer fires. */
  firesAt: Date;
}

export interface RemindersOptions {
  /** The session's tasks (a reminder may wait for them), and the client and command queue reminders run on. */
  tasks: BashTasks;
  /** Pending reminders a session may have; `Infinity`: no cap, and no count. @default MAX_REMINDERS_PER_SESSION */
  maxPerSession?: number;
  /** Where a session's notices go; none when this host takes no notices. */
  noticeFor(owner: string): NoticeTarget | undefined;
}

export class Reminders {
  private readonly options: Required<RemindersOptions> & {
    client: Client;
    taskQueue: string;
    ownerHasher: OwnerHasher | undefined;
  };

  constructor(options: RemindersOptions) {
    const { client, taskQueue } = options.tasks;
    this.options = {
      maxPerSession: MAX_REMINDERS_PER_SESSION,
      ...options,
      client,
      taskQueue,
      ownerHasher: ownerHasherOf(client),
    };
  }

  /**
   * Sets a reminder for `owner`: its notice comes `afterMs` from now. Refused in one line when the
   * session has no notice path, or has `maxPerSession` pending (counted in visibility, which may
   * lag a moment behind a start).
   */
  async set(owner: string, request: { afterMs: number; note: string; taskIds?: string[] }): Promise<string> {
    const { client, taskQueue, tasks } = this.options;
    const taskIds = request.taskIds ?? [];
    const notice = this.options.noticeFor(owner);
    if (notice === undefined)
      throw new ReminderError(
        'reminders need an agent host that takes notices (agentTaskQueue); none is set here, so nothing was set',
      );
    const limit = this.options.maxPerSession;
    const pending = limit === Number.POSITIVE_INFINITY ? 0 : await this.count(owner);
    if (pending >= limit)
      throw new ReminderError(
        `this session has ${pending} reminders pending (the limit is ${limit}); cancel one with bash_remind { cancel: <id> }`,
      );
    // Each task must be the session's (one line for an unknown or a foreign one, before anything starts).
    const watched = await Promise.all(taskIds.map((taskId) => tasks.describeOwned(taskId, owner)));
    const ended: Record<string, string> = {};
    await Promise.all(
      watched.map(async (description, i) => {
        if (description.status.name !== 'RUNNING') ended[taskIds[i] ?? ''] = await this.endOf(description);
      }),
    );
    const reminderId = `remind-${randomUUID()}`;
    const token = ownerToken(owner);
    const ownerAttribute = this.options.ownerHasher?.hash(token) ?? token;
    const input: ReminderInput = {
      reminderId,
      note: request.note,
      afterMs: request.afterMs,
      notice,
      ...('workflowId' in notice ? {} : { ownerAttribute }),
      ...(taskIds.length > 0 ? { taskIds, ended } : {}),
    };
    try {
      await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        client.workflow.start(bashReminder, {
          workflowId: reminderId,
          taskQueue,
          args: [input],
          typedSearchAttributes: [{ key: ownerSearchAttribute, value: ownerAttribute }],
          // The listing's columns, and (under encryption) the session id the hashed attribute hides.
          memo: { note: request.note, firesAtMs: Date.now() + request.afterMs, owner },
          // The Web UI renders it as markdown: the model's note in the shown form (shown-markdown.ts).
          staticSummary: `Reminder: ${markdownLine(request.note.split('\n', 1)[0] ?? '')}`,
        }),
      );
    } catch (err) {
      throw asClientError(client, err);
    }
    await Promise.all(
      taskIds
        .filter((taskId) => ended[taskId] === undefined)
        .map((taskId) => this.watch(owner, reminderId, taskId)),
    );
    return reminderId;
  }

  /**
   * Asks a running task to tell the reminder of its end. A task that ends before it takes the
   * request (the signal finds it closed), or right after (a request that reached its last workflow
   * task goes unheard), is told to the reminder here, from its result: told twice, an end counts once.
   */
  private async watch(owner: string, reminderId: string, taskId: string): Promise<void> {
    const { client, tasks } = this.options;
    try {
      await client.workflow.getHandle(taskId).signal(watchEndSignal, { workflowId: reminderId });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw asClientError(client, err);
    }
    const description = await tasks.describeOwned(taskId, owner);
    if (description.status.name === 'RUNNING') return;
    const end = { taskId, statusLine: await this.endOf(description) };
    await client.workflow
      .getHandle(reminderId)
      .signal(watchedEndSignal, end)
      .catch((err: unknown) => {
        throw asClientError(client, err);
      });
  }

  /** An ended task's status line, from its result (or its failure). */
  private async endOf(description: WorkflowExecutionDescription): Promise<string> {
    const snapshot = await snapshotFromDescription(this.options.client, description);
    return statusLine(snapshot.state);
  }

  /**
   * Cancels a pending reminder of `owner`. An id that names no reminder, another session's, or one
   * that has fired or was cancelled is refused in one line.
   */
  async cancel(owner: string, reminderId: string): Promise<void> {
    const description = await this.describeOwned(owner, reminderId);
    const status = description.status.name;
    if (status === 'COMPLETED') throw new ReminderError(`reminder ${reminderId} has already fired`);
    if (status === 'CANCELLED') throw new ReminderError(`reminder ${reminderId} was already cancelled`);
    if (status !== 'RUNNING')
      throw new ReminderError(`reminder ${reminderId} has ended (${status.toLowerCase()})`);
    try {
      await this.options.client.workflow.getHandle(reminderId).cancel();
    } catch (err) {
      throw asClientError(this.options.client, err);
    }
  }

  /** The pending reminders of `owner`, the soonest first. */
  async list(owner: string, limit: number): Promise<ReminderSummary[]> {
    const executions = await listExecutions(this.options.client, this.query(owner), limit);
    return executions.map(reminderSummary).sort((a, b) => a.firesAt.getTime() - b.firesAt.getTime());
  }

  private async count(owner: string): Promise<number> {
    const { client } = this.options;
    try {
      const { count } = await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        client.workflow.count(this.query(owner)),
      );
      return count;
    } catch (err) {
      throw asClientError(client, err);
    }
  }

  /** The visibility query for the pending reminders of `owner`. */
  private query(owner: string): string {
    return `WorkflowType = ${quoteQueryValue(bashReminder.name)} AND ExecutionStatus = 'Running' AND ${ownerCondition(ownerToken(owner), this.options.ownerHasher)}`;
  }

  private async describeOwned(owner: string, reminderId: string): Promise<WorkflowExecutionDescription> {
    const { client } = this.options;
    const description = await client
      .withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () => client.workflow.getHandle(reminderId).describe())
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw new ReminderError(`unknown reminder ${reminderId}`);
        throw asClientError(client, err);
      });
    if (description.type !== bashReminder.name) throw new ReminderError(`unknown reminder ${reminderId}`);
    const stored = description.typedSearchAttributes.get(ownerSearchAttribute);
    // A reminder always has an owner: unlike a task, none is anyone's.
    if (stored === undefined || !mayAccess(stored, owner, this.options.ownerHasher))
      throw new ReminderError(`reminder ${reminderId} belongs to another session`);
    return description;
  }
}

function reminderSummary(execution: WorkflowExecutionInfo): ReminderSummary {
  const memo = execution.memo ?? {};
  return {
    reminderId: execution.workflowId,
    note: typeof memo.note === 'string' ? memo.note : '',
    firesAt: new Date(typeof memo.firesAtMs === 'number' ? memo.firesAtMs : execution.startTime.getTime()),
  };
}
