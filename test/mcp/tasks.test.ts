/**
 * MCP Tasks end to end: the SDK's own Client (its experimental tasks API) against a spawned
 * `node dist/cli/main.js mcp` process, a real dev server and a real command worker. A task is the
 * background task's workflow, so a second server process answers for what the first one started.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { McpTasks, MODEL_IMMEDIATE_RESPONSE_KEY } from '../../src/mcp/mcp-tasks.js';
import { TASKS_CAPABILITY } from '../../src/mcp/task-requests.js';
import { MCP_TASK_POLL_INTERVAL_MS } from '../../src/shared/limits.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { callTool, textOf, useMcpServers } from '../helpers/mcp-client.js';

const suite = useDevServerWithWorker();
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-tasks-'));
const TASK_ID = /^bash-[0-9a-f-]{36}$/;

afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const mcp = useMcpServers(() => ({
  address: suite.env.address,
  taskQueue: suite.worker.taskQueue,
  stateDir,
}));

const session = () => `mcp-tasks-test-${randomUUID()}`;

/** A task-augmented `tools/call` of `bash`, as a raw request: the whole CreateTaskResult. */
async function startTask(client: Client, command: string, extra: Record<string, unknown> = {}) {
  return client.request(
    {
      method: 'tools/call',
      params: { name: 'bash', arguments: { command, description: 'Run as a task', ...extra }, task: {} },
    },
    CreateTaskResultSchema,
  );
}

/** What `tasks/result` answers for a task that ended with `text`. */
const taskResult = (taskId: string, resultText: string, isError = false) => ({
  content: [{ type: 'text', text: resultText }],
  ...(isError ? { isError: true } : {}),
  _meta: { [RELATED_TASK_META_KEY]: { taskId } },
});

/** How long the dev server keeps a closed workflow: an ended task's ttl counts it from the end. */
async function retentionMs(): Promise<number> {
  const { client } = suite.env;
  const described = await client.workflowService.describeNamespace({ namespace: client.options.namespace });
  const ttl = described.config?.workflowExecutionRetentionTtl;
  return Number(ttl?.seconds?.toString() ?? 0) * 1000 + Math.floor((ttl?.nanos ?? 0) / 1e6);
}

/** Waits until `check` holds, polling. */
async function eventually<T>(what: string, get: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await get();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} never held: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(['stdio', 'http'] as const)('MCP Tasks over %s', (kind) => {
  const connect = (id: string) => mcp.connect(kind, id);

  it('runs a task-augmented bash call as a background task whose workflow is the task', async () => {
    const { client } = await connect(session());
    expect(client.getServerCapabilities()?.tasks).toEqual(TASKS_CAPABILITY);
    const stream = client.experimental.tasks.callToolStream(
      {
        name: 'bash',
        arguments: {
          command: 'echo one; sleep 2; echo two; echo err >&2; exit 3',
          description: 'Print and fail',
        },
      },
      CallToolResultSchema,
      { task: {} },
    );
    const created = await stream.next();
    if (created.done || created.value.type !== 'taskCreated') throw new Error(JSON.stringify(created));
    const { task } = created.value;
    expect(task.taskId).toMatch(TASK_ID);
    expect(task).toEqual({
      taskId: task.taskId,
      status: 'working',
      statusMessage: '[status: running]',
      createdAt: task.createdAt,
      lastUpdatedAt: task.createdAt,
      ttl: null,
      pollInterval: MCP_TASK_POLL_INTERVAL_MS,
    });
    // The MCP task id is the workflow id of a background run.
    const description = await suite.env.client.workflow.getHandle(task.taskId).describe();
    expect(description.startTime.toISOString()).toBe(task.createdAt);
    expect(description.memo?.background).toBe(true);
    expect(await client.experimental.tasks.getTask(task.taskId)).toEqual(task);

    const rest = [];
    for await (const message of stream) rest.push(message);
    const last = rest.at(-1);
    expect(last).toEqual({
      type: 'result',
      result: taskResult(task.taskId, 'one\ntwo\n[stderr]\nerr\n[exit code: 3]'),
    });
    const ended = await client.experimental.tasks.getTask(task.taskId);
    expect(ended).toEqual({
      ...task,
      status: 'completed',
      statusMessage: '[status: completed, exit code: 3]',
      lastUpdatedAt: ended.lastUpdatedAt,
      ttl: Date.parse(ended.lastUpdatedAt) - Date.parse(task.createdAt) + (await retentionMs()),
    });
    // The same text a foreground run of the command gives.
    const foreground = await callTool(client, 'bash', {
      command: 'echo one; sleep 2; echo two; echo err >&2; exit 3',
      description: 'Print and fail',
    });
    expect(textOf(foreground)).toBe('one\ntwo\n[stderr]\nerr\n[exit code: 3]');
  });
});

describe('MCP Tasks', () => {
  it('lists bash as the one tool that may run as a task, and refuses a task of another', async () => {
    const { client } = await mcp.stdio(session());
    const { tools } = await client.listTools();
    expect(tools.map(({ name, execution }) => ({ name, execution }))).toEqual([
      { name: 'bash', execution: { taskSupport: 'optional' } },
      { name: 'bash_output', execution: { taskSupport: 'forbidden' } },
      { name: 'bash_kill', execution: { taskSupport: 'forbidden' } },
      { name: 'bash_list', execution: { taskSupport: 'forbidden' } },
      { name: 'bash_input', execution: { taskSupport: 'forbidden' } },
      { name: 'bash_remind', execution: { taskSupport: 'forbidden' } },
      { name: 'bash_monitor', execution: { taskSupport: 'forbidden' } },
    ]);
    await expect(
      client.request(
        { method: 'tools/call', params: { name: 'bash_list', arguments: {}, task: {} } },
        CreateTaskResultSchema,
      ),
    ).rejects.toMatchObject({
      code: ErrorCode.MethodNotFound,
      message: 'MCP error -32601: Tool bash_list does not run as a task',
    });
  });

  it('answers a client that asks for no task exactly as before', async () => {
    const { client } = await mcp.stdio(session());
    expect(await callTool(client, 'bash', { command: 'echo hi; exit 2', description: 'Print hi' })).toEqual({
      content: [{ type: 'text', text: 'hi\n[exit code: 2]' }],
    });
    expect(
      textOf(
        await callTool(client, 'bash', { command: 'true', description: 'Nothing', run_in_background: true }),
      ),
    ).toMatch(/^started background task bash-[0-9a-f-]{36}$/);
  });

  it('tells the model the task id at once, and tasks/result waits for the end', async () => {
    const { client } = await mcp.stdio(session());
    const created = await startTask(client, 'sleep 1; echo late', {
      timeoutMs: 10,
      run_in_background: false,
    });
    const { taskId } = created.task;
    expect(created._meta).toEqual({ [MODEL_IMMEDIATE_RESPONSE_KEY]: `started background task ${taskId}` });
    // No timeout: a background run, whatever timeoutMs the call named.
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(
      taskResult(taskId, 'late\n'),
    );
  });

  it("cuts a task's result to the call's max_output_tokens, and refuses a bad one in one line", async () => {
    const { client } = await mcp.stdio(session());
    const created = await startTask(client, 'seq 1 3000', { max_output_tokens: 60 });
    const { taskId } = created.task;
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toMatch(
      /^1\n[\d\n]*\n\[\d+ tokens cut from the middle to fit max_output_tokens; full output: \S+\.stdout\]\n[\d\n]*3000\n$/,
    );
    await expect(startTask(client, 'true', { max_output_tokens: 0 })).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message:
        'MCP error -32602: invalid max_output_tokens: expected a whole number of tokens from 1 to 1000000, got 0',
    });
  });

  it('runs a terminal task as a task: typed into with bash_input, its result the last screen', async () => {
    const { client } = await mcp.stdio(session());
    const created = await startTask(client, `read -p 'name? ' name; echo "hello $name"`, {
      tty: true,
      cols: 30,
      rows: 4,
    });
    const { taskId } = created.task;
    await eventually(
      'the prompt',
      async () => textOf(await callTool(client, 'bash_output', { task_id: taskId, wait_ms: 2_000 })),
      (screen) => screen.startsWith('name?'),
    );
    await callTool(client, 'bash_input', { task_id: taskId, text: 'ada', keys: ['Enter'] });
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(
      taskResult(taskId, 'name? ada\nhello ada\n[screen: 30x4, cursor at row 3, column 1]'),
    );
  });

  it('refuses, as a JSON-RPC error with the tool line, a task-augmented call the tool refuses', async () => {
    const { client } = await mcp.stdio(session());
    await expect(startTask(client, '   ')).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'MCP error -32602: invalid command: expected a non-blank string, got "   "',
    });
  });

  it('fails a task whose command could not run, with the foreground error as its result', async () => {
    const { client } = await mcp.stdio(session());
    const workdir = path.join(stateDir, 'no-such-dir');
    const foreground = await callTool(client, 'bash', { command: 'true', description: 'Nothing', workdir });
    expect(foreground.isError).toBe(true);
    const { taskId } = (await startTask(client, 'true', { workdir })).task;
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toEqual(taskResult(taskId, textOf(foreground), true));
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      status: 'failed',
      statusMessage: `[status: failed: ${textOf(foreground)}]`,
    });
  });

  it('cancels a task as bash_kill does: the command is killed, the task cancelled', async () => {
    const { client } = await mcp.stdio(session());
    const { taskId } = (await startTask(client, 'echo started; sleep 600')).task;
    expect(textOf(await callTool(client, 'bash_output', { task_id: taskId, wait_ms: 20_000 }))).toBe(
      'started\n[status: running]',
    );
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({
      taskId,
      status: 'cancelled',
      statusMessage: '[status: killed by SIGTERM]',
    });
    expect(await client.experimental.tasks.getTask(taskId)).toEqual(cancelled);
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(
      taskResult(taskId, 'started\n[killed by signal: SIGTERM]'),
    );
    expect(textOf(await callTool(client, 'bash_output', { task_id: taskId }))).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    );
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: "MCP error -32602: Cannot cancel task: already in terminal status 'cancelled'",
    });
    // A task killed with bash_kill is cancelled too.
    const { taskId: other } = (await startTask(client, 'sleep 600')).task;
    // The kill's answer alone: the session's own kill has no notice, and the cancelled task's was
    // settled when its result was fetched.
    expect(await callTool(client, 'bash_kill', { task_id: other })).toEqual({
      content: [{ type: 'text', text: `killed background task ${other}` }],
    });
    expect(await client.experimental.tasks.getTask(other)).toMatchObject({ status: 'cancelled' });
  });

  it("lists the session's background tasks, and fences off another session's", async () => {
    const mine = await mcp.stdio(session());
    const other = await mcp.stdio(session());
    const sleeper = (await startTask(mine.client, 'sleep 600')).task.taskId;
    const done = (await startTask(mine.client, 'true')).task.taskId;
    await mine.client.experimental.tasks.getTaskResult(done, CallToolResultSchema);
    // A background run started without a task is one of the session's tasks as well.
    const plain = /bash-[0-9a-f-]{36}/.exec(
      textOf(
        await callTool(mine.client, 'bash', {
          command: 'sleep 600',
          description: 'Sleep',
          run_in_background: true,
        }),
      ),
    )?.[0];
    const listed = await eventually(
      'the list has all three',
      () => mine.client.experimental.tasks.listTasks(),
      ({ tasks }) => tasks.length === 3,
    );
    expect(listed.nextCursor).toBeUndefined();
    // Running first, then ended ones; each as tasks/get answers it.
    expect(listed.tasks.map((task) => task.taskId).slice(2)).toEqual([done]);
    expect(new Set(listed.tasks.map((task) => task.taskId).slice(0, 2))).toEqual(new Set([sleeper, plain]));
    for (const task of listed.tasks)
      expect(await mine.client.experimental.tasks.getTask(task.taskId)).toEqual(task);

    expect(await other.client.experimental.tasks.listTasks()).toEqual({ tasks: [] });
    const foreign = {
      code: ErrorCode.InvalidParams,
      message: `MCP error -32602: task ${sleeper} belongs to another session`,
    };
    await expect(other.client.experimental.tasks.getTask(sleeper)).rejects.toMatchObject(foreign);
    await expect(
      other.client.experimental.tasks.getTaskResult(sleeper, CallToolResultSchema),
    ).rejects.toMatchObject(foreign);
    await expect(other.client.experimental.tasks.cancelTask(sleeper)).rejects.toMatchObject(foreign);
    await expect(other.client.experimental.tasks.getTask('nonsense')).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message:
        'MCP error -32602: invalid taskId: expected an id that bash returned (bash-<uuid>), got "nonsense"',
    });
    await expect(other.client.experimental.tasks.listTasks('not a cursor')).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'MCP error -32602: invalid cursor "not a cursor"',
    });
    for (const taskId of [sleeper, plain as string]) await mine.client.experimental.tasks.cancelTask(taskId);
  });

  it("pages tasks/list with the visibility store's own page token", async () => {
    const owner = session();
    const bashTasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    const start = () =>
      bashTasks.start({ command: 'sleep 600', description: 'Sleep', background: true, owner });
    const ids = [await start(), await start(), await start()];
    const tasks = new McpTasks(bashTasks, { sessionId: owner, cwd: '/' }, { pageSize: 2 });
    const allPages = async () => {
      const pages = [];
      let cursor: string | undefined;
      do {
        const page = await tasks.list(cursor);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return pages;
    };
    const pages = await eventually(
      'three tasks listed',
      allPages,
      (found) => found.flatMap((page) => page.tasks).length === 3,
    );
    expect(pages.map((page) => page.tasks.length)).toEqual([2, 1]);
    expect(new Set(pages.flatMap((page) => page.tasks.map((task) => task.taskId)))).toEqual(new Set(ids));
    for (const taskId of ids) await bashTasks.kill(taskId, owner);
  });

  it('announces the end with notifications/tasks/status, and a fetched result settles the notice', async () => {
    const { client, statuses } = await mcp.stdio(session());
    const { taskId } = (await startTask(client, 'echo hi')).task;
    const announced = await eventually(
      'the status notification',
      async () => statuses.filter((task) => task.taskId === taskId),
      (found) => found.length > 0,
    );
    expect(announced).toEqual([await client.experimental.tasks.getTask(taskId)]);
    expect(announced[0]).toMatchObject({
      status: 'completed',
      statusMessage: '[status: completed, exit code: 0]',
    });
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(
      taskResult(taskId, 'hi\n'),
    );
    // The client has the result: its completion notice does not come again atop a tool result.
    expect(await callTool(client, 'bash', { command: 'echo next', description: 'Print next' })).toEqual({
      content: [{ type: 'text', text: 'next\n' }],
    });
  });

  it('answers tasks/get and tasks/result from a new server process for a task the old one started', async () => {
    const id = session();
    const first = await mcp.stdio(id);
    const { taskId } = (await startTask(first.client, 'echo one; sleep 6; echo two')).task;
    expect(await first.client.experimental.tasks.getTask(taskId)).toMatchObject({ status: 'working' });
    first.kill();

    const second = await mcp.stdio(id);
    expect(await second.client.experimental.tasks.getTask(taskId)).toMatchObject({
      taskId,
      status: 'working',
      statusMessage: '[status: running]',
    });
    expect(await second.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(
      taskResult(taskId, 'one\ntwo\n'),
    );
    expect(await second.client.experimental.tasks.getTask(taskId)).toMatchObject({
      status: 'completed',
      statusMessage: '[status: completed, exit code: 0]',
    });
    const { tasks } = await eventually(
      'the list has the task',
      () => second.client.experimental.tasks.listTasks(),
      (list) => list.tasks.length === 1,
    );
    expect(tasks.map((task) => task.taskId)).toEqual([taskId]);
  });
});
