/**
 * MCP Tasks over Temporal: a task-augmented `bash` call starts a background task, and its workflow
 * is the MCP task (same id). `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` read and
 * kill that workflow through the client, behind the ownership fence, so they hold nothing in memory
 * and answer the same from a restarted server. The texts are the tools' own.
 */
import os from 'node:os';
import {
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { isGrpcServiceError, type WorkflowExecutionDescription } from '@temporalio/client';
import type { BashTasks } from '../client/bash-tasks.js';
import { snapshotFromDescription } from '../client/task-snapshot.js';
import { asClientError } from '../client/temporal-unreachable.js';
import { errorResult } from '../shared/error-result.js';
import { ForeignTaskError, RunFailedError, ToolCallError, UnknownTaskError } from '../shared/errors.js';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';
import { backgroundStarted, renderRun } from '../shared/render.js';
import type { TaskId } from '../shared/task.js';
import { isTaskIdShape } from '../shared/task-id.js';
import { resultText, type Tool, type ToolResult, textResult } from '../shared/tool-types.js';
import { describeValue, parseOutputBudget } from '../tools/arguments.js';
import { namespaceRetentionMs } from './namespace-retention.js';
import { isTerminalStatus, mcpTask } from './task-status.js';

/** The `_meta` key of the text a host may give the model at once for a task-augmented tool call. */
export const MODEL_IMMEDIATE_RESPONSE_KEY = 'io.modelcontextprotocol/model-immediate-response';

/** Tasks a `tasks/list` page holds by default: each is one describe (and a result read once ended). */
export const TASK_LIST_PAGE_SIZE = 50;

/** How many of a page's tasks are described at once. */
const LIST_CONCURRENCY = 8;

/** How long an ended task's status notification waits for its workflow to close. */
const CLOSE_WAIT_MS = 10_000;

/**
 * A refused task request: the JSON-RPC error code and one line (not `McpError`, whose message
 * would carry its `MCP error <code>:` prefix onto the wire).
 */
export class TaskRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The MCP tasks of one agent session: its background tasks, each one workflow. */
export class McpTasks {
  private retention: Promise<number | undefined> | undefined;

  private readonly pageSize: number;
  /**
   * The `max_output_tokens` of task-augmented calls, by task id: their results are cut to it. Held by
   * this server process: after its restart, a result comes whole (the task itself goes on).
   */
  private readonly budgets = new Map<string, number>();

  constructor(
    private readonly tasks: BashTasks,
    private readonly session: { sessionId: string; cwd: string },
    options: { pageSize?: number } = {},
  ) {
    this.pageSize = options.pageSize ?? TASK_LIST_PAGE_SIZE;
  }

  /**
   * Runs a task-augmented call of the `bash` tool as a background task (no timeout), through the
   * tool itself: its validation, permission policy and background quota hold. A call the tool
   * refuses starts nothing and is a JSON-RPC error with the tool's own line.
   */
  async create(bash: Tool, args: unknown, signal: AbortSignal): Promise<CreateTaskResult> {
    // The budget is the result's (`tasks/result`), not the start's: a background start answers only its id.
    let budget: number | undefined;
    try {
      budget = isObject(args) ? parseOutputBudget(args.max_output_tokens) : undefined;
    } catch (err) {
      throw new TaskRequestError(ErrorCode.InvalidParams, (err as Error).message);
    }
    // Left out, not set undefined: Claude Code's Bash arguments (--bash-arguments claude-code) have no such field.
    const { max_output_tokens: _budget, ...rest } = isObject(args) ? args : {};
    const call = isObject(args) ? { ...rest, run_in_background: true } : args;
    const result = await bash.execute(call, { agent: { ...this.session }, signal });
    const text = resultText(result);
    const taskId = result.isError ? undefined : startedTaskId(text);
    if (taskId === undefined) throw new TaskRequestError(ErrorCode.InvalidParams, text);
    if (budget !== undefined) this.budgets.set(taskId, budget);
    // Described once for its start time; a task that started is answered even if that read fails.
    const task = await this.get(taskId).catch(() => startingTask(taskId));
    return { task, _meta: { [MODEL_IMMEDIATE_RESPONSE_KEY]: text } };
  }

  /** `tasks/get`: where the task stands now. */
  async get(taskId: string): Promise<Task> {
    return this.view(await this.describe(taskId));
  }

  /**
   * `tasks/result`: waits for the task to end, then answers what a foreground `bash` call of the
   * same command would have: the output and its status markers, or the run's failure as `isError`.
   */
  async result(taskId: string, signal: AbortSignal): Promise<CallToolResult> {
    await this.describe(taskId);
    let result: ToolResult;
    try {
      result = textResult(
        renderRun(
          await this.tasks.result(taskId as TaskId, undefined, signal),
          os.hostname(),
          this.budgets.get(taskId),
        ),
      );
    } catch (err) {
      // The run's failure is its result; anything else (Temporal unreachable) is this request's.
      if (!(err instanceof RunFailedError)) throw asRequestError(err);
      result = errorResult(err);
    }
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
  }

  /**
   * `tasks/list`: the session's background tasks, running first, a page at a time. The cursor is
   * the visibility store's own page token; the store may lag a moment behind a start.
   */
  async list(cursor: string | undefined): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const { client } = this.tasks;
    const nextPageToken = cursor === undefined ? undefined : pageToken(cursor);
    let page: Awaited<ReturnType<typeof client.workflowService.listWorkflowExecutions>>;
    try {
      page = await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
        client.workflowService.listWorkflowExecutions({
          namespace: client.options.namespace,
          query: this.tasks.listQuery({ owner: this.session.sessionId }),
          pageSize: this.pageSize,
          ...(nextPageToken !== undefined ? { nextPageToken } : {}),
        }),
      );
    } catch (err) {
      if (cursor !== undefined && isGrpcServiceError(err) && err.code === 3) throw invalidCursor(cursor);
      throw asRequestError(asClientError(client, err));
    }
    const ids = page.executions.flatMap((execution) => execution.execution?.workflowId ?? []);
    const tasks = await mapFew(ids, LIST_CONCURRENCY, (taskId) =>
      // A foreground run, or a task deleted since the listing, is no task of this list.
      this.get(taskId).catch((err: unknown) => {
        if (err instanceof TaskRequestError && err.code === ErrorCode.InvalidParams) return undefined;
        throw err;
      }),
    );
    const token = page.nextPageToken;
    return {
      tasks: tasks.filter((task): task is Task => task !== undefined),
      ...(token && token.length > 0 ? { nextCursor: Buffer.from(token).toString('base64url') } : {}),
    };
  }

  /**
   * `tasks/cancel`: kills the task as `bash_kill` does (its process group, SIGTERM then SIGKILL) and
   * answers it cancelled. A kill waiting for the task's host to come back is cancelled already.
   */
  async cancel(taskId: string): Promise<Task> {
    const before = await this.get(taskId);
    if (isTerminalStatus(before.status)) throw cannotCancel(before.status);
    try {
      await this.tasks.kill(taskId, this.session.sessionId);
    } catch (err) {
      throw asRequestError(err);
    }
    const after = await this.get(taskId);
    // The task ended on its own before the kill could be asked for.
    if (after.status !== 'cancelled') throw cannotCancel(after.status);
    return after;
  }

  /** The task once its workflow has closed (waiting a little for it), for its status notification. */
  async ended(taskId: string): Promise<Task | undefined> {
    const { client } = this.tasks;
    await client
      .withAbortSignal(AbortSignal.timeout(CLOSE_WAIT_MS), () => client.workflow.getHandle(taskId).result())
      .catch(() => undefined);
    return this.get(taskId).catch(() => undefined);
  }

  /** The task's workflow behind the ownership fence; a foreground run is no MCP task. */
  private async describe(taskId: string): Promise<WorkflowExecutionDescription> {
    if (!isTaskIdShape(taskId))
      throw new TaskRequestError(
        ErrorCode.InvalidParams,
        `invalid taskId: expected an id that bash returned (bash-<uuid>), got ${describeValue(taskId)}`,
      );
    let description: WorkflowExecutionDescription;
    try {
      description = await this.tasks.describeOwned(taskId, this.session.sessionId);
    } catch (err) {
      throw asRequestError(err);
    }
    if (description.memo?.background === false)
      throw new TaskRequestError(
        ErrorCode.InvalidParams,
        `task ${taskId} is a foreground run, not a background task`,
      );
    return description;
  }

  private async view(description: WorkflowExecutionDescription): Promise<Task> {
    const running = description.status.name === 'RUNNING';
    try {
      const [snapshot, retentionMs] = await Promise.all([
        running ? undefined : snapshotFromDescription(this.tasks.client, description),
        this.retentionMs(),
      ]);
      return mcpTask({
        taskId: description.workflowId,
        workflowStatus: description.status.name,
        killRequested: description.raw.workflowExtendedInfo?.cancelRequested === true,
        state: snapshot?.state ?? { status: 'running' },
        startedAt: description.startTime,
        ...(description.closeTime !== undefined ? { closedAt: description.closeTime } : {}),
        ...(retentionMs !== undefined ? { retentionMs } : {}),
      });
    } catch (err) {
      throw asRequestError(asClientError(this.tasks.client, err));
    }
  }

  /** The namespace's retention, read once per process: it changes only by an operator's hand. */
  private retentionMs(): Promise<number | undefined> {
    this.retention ??= namespaceRetentionMs(this.tasks.client);
    return this.retention;
  }
}

/** The task id in the `bash` tool's `started background task <id>`, if that is what it said. */
function startedTaskId(text: string): string | undefined {
  const prefix = backgroundStarted('');
  const taskId = text.startsWith(prefix) ? text.slice(prefix.length) : '';
  return isTaskIdShape(taskId) ? taskId : undefined;
}

/** A task that has just started, as far as this process knows without asking. */
function startingTask(taskId: string): Task {
  return mcpTask({
    taskId,
    workflowStatus: 'RUNNING',
    killRequested: false,
    state: { status: 'running' },
    startedAt: new Date(),
  });
}

/** The JSON-RPC error for a failed task request: an unknown or foreign task is a bad task id. */
function asRequestError(err: unknown): unknown {
  if (err instanceof UnknownTaskError || err instanceof ForeignTaskError)
    return new TaskRequestError(ErrorCode.InvalidParams, err.message);
  if (err instanceof ToolCallError) return new TaskRequestError(ErrorCode.InternalError, err.message);
  return err;
}

function cannotCancel(status: Task['status']): TaskRequestError {
  return new TaskRequestError(
    ErrorCode.InvalidParams,
    `Cannot cancel task: already in terminal status '${status}'`,
  );
}

function invalidCursor(cursor: string): TaskRequestError {
  return new TaskRequestError(ErrorCode.InvalidParams, `invalid cursor ${describeValue(cursor)}`);
}

/** The visibility store's page token a cursor carries. */
function pageToken(cursor: string): Uint8Array {
  const token = Buffer.from(cursor, 'base64url');
  if (token.length === 0 || token.toString('base64url') !== cursor) throw invalidCursor(cursor);
  return token;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `work` over `items`, at most `limit` at a time, answers in the items' order. */
async function mapFew<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
