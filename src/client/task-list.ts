import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { OwnerHasher } from '../codec/owner-hash.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import {
  NOTICE_UNDELIVERED,
  noticeSearchAttribute,
  ownerSearchAttribute,
  statusSearchAttribute,
} from '../shared/search-attributes.js';
import { TaskStatus } from '../shared/task.js';
import { bashTask } from '../workflows/bash-task.js';
import { completionNotice } from '../workflows/completion-notice.js';
import { monitorNotices } from '../workflows/monitor-notices.js';
import { ownerToken, sessionOfOwner } from './ownership.js';
import { asClientError } from './temporal-unreachable.js';
import { listable } from './unencrypted-payloads.js';

/**
 * Which tasks a listing shows: one session's (by its session id), the tasks no session owns, or
 * every task; the first two only running ones if asked. A session's listing may also ask for its
 * completion notices that were not delivered (`undeliveredNotices`, see notice-marks.ts).
 */
export type TaskFilter =
  | { owner: string; running?: boolean; undeliveredNotices?: boolean }
  | { unowned: true; running?: boolean }
  | { all: true };

/** One line of a task listing, from the server's visibility store. */
export interface TaskSummary {
  taskId: string;
  /**
   * The status search attribute (see `TaskStatus`); for a run closed from outside (terminated, timed
   * out) that never set it, how its workflow closed.
   */
  status: string;
  startedAt: Date;
  closedAt: Date | undefined;
  command: string;
  description: string;
  /** The owning session id; undefined for an unowned task. */
  owner: string | undefined;
  /**
   * Started with `run_in_background`, or moved there; false for a foreground run; undefined for a
   * task started before the memo said (listed as background).
   */
  background: boolean | undefined;
  /** An ended task whose completion notice never reached its session, which has not read its end since. */
  noticeNotDelivered?: true;
  /** How many times its command started again after its host was lost (`on_host_loss: "restart"`). */
  restarts?: number;
}

/**
 * The visibility query for a filter. Values are quoted data, never query text: an owner such as
 * `a' OR BashTaskOwner != '` matches only a task owned by exactly that string.
 */
export function taskListQuery(filter: TaskFilter, hasher?: OwnerHasher): string {
  const running = 'running' in filter && filter.running === true ? ` AND ExecutionStatus = 'Running'` : '';
  const tasks = `WorkflowType = ${quoteQueryValue(bashTask.name)}${running}`;
  if ('all' in filter) return tasks;
  if ('unowned' in filter) return `${tasks} AND ${ownerSearchAttribute.name} IS NULL`;
  const owner = ownerCondition(ownerToken(filter.owner), hasher);
  if (filter.undeliveredNotices !== true) return `${tasks} AND ${owner}`;
  // The same query finds them: an undelivered notice carries its task's owner attribute.
  // A monitored task's completion notice is its notice workflow's (`monitorNotices`), marked the same way.
  const noticeTypes = [completionNotice.name, monitorNotices.name].map(quoteQueryValue).join(', ');
  const notices = `WorkflowType IN (${noticeTypes}) AND ${noticeSearchAttribute.name} = ${quoteQueryValue(NOTICE_UNDELIVERED)}`;
  return `((${tasks}) OR (${notices})) AND ${owner}`;
}

/** The owner attribute's condition for an owner token. */
export function ownerCondition(token: string, hasher: OwnerHasher | undefined): string {
  if (hasher === undefined) return `${ownerSearchAttribute.name} = ${quoteQueryValue(token)}`;
  // Under encryption: the owner's hash under each key still in the keyring (see owner-hash.ts).
  const hashes = hasher.allHashes(token).map(quoteQueryValue).join(', ');
  return `${ownerSearchAttribute.name} IN (${hashes})`;
}

/**
 * Up to `limit` workflow runs matching `query`, in the server's visibility order (running ones first,
 * then the latest to end); one visibility call unless a page holds fewer than asked. Runs whose
 * memo was not encrypted, while the client's codec holds keys, are left out (see `listable`).
 */
export async function listExecutions(
  client: Client,
  query: string,
  limit: number,
): Promise<WorkflowExecutionInfo[]> {
  const executions: WorkflowExecutionInfo[] = [];
  try {
    await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, async () => {
      for await (const execution of client.workflow.list({ query, pageSize: limit })) {
        if (!listable(execution)) continue;
        executions.push(execution);
        if (executions.length >= limit) break;
      }
    });
  } catch (err) {
    throw asClientError(client, err);
  }
  return executions;
}

/** A string literal for a visibility query: single-quoted, with backslashes and quotes escaped. */
export function quoteQueryValue(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

export function toTaskSummary(execution: WorkflowExecutionInfo): TaskSummary {
  const memo = execution.memo ?? {};
  const owner = execution.typedSearchAttributes.get(ownerSearchAttribute);
  return {
    taskId: execution.workflowId,
    status: taskStatusOf(execution),
    startedAt: execution.startTime,
    closedAt: execution.closeTime,
    command: typeof memo.command === 'string' ? memo.command : '',
    description: typeof memo.description === 'string' ? memo.description : '',
    background: typeof memo.background === 'boolean' ? memo.background : undefined,
    // A hashed owner (encryption on) keeps the session id in the encrypted memo.
    owner:
      typeof memo.owner === 'string' ? memo.owner : owner === undefined ? undefined : sessionOfOwner(owner),
    ...(typeof memo.restarts === 'number' && memo.restarts > 0 ? { restarts: memo.restarts } : {}),
  };
}

/**
 * A task's status as a listing shows it: the status its workflow recorded, unless the workflow
 * closed while it still said running: cancelled is a kill before the command started (a run of
 * 0.2.0 killed while it resolved its command recorded nothing), else it was closed from outside
 * (terminated from the Web UI or the CLI, timed out).
 */
function taskStatusOf(execution: WorkflowExecutionInfo): string {
  const recorded = execution.typedSearchAttributes.get(statusSearchAttribute) ?? 'unknown';
  const closedAs = execution.status.name;
  if (recorded !== 'running' || closedAs === 'RUNNING') return recorded;
  if (closedAs === 'CANCELLED') return TaskStatus.killed;
  return closedAs.toLowerCase().replaceAll('_', ' ');
}
