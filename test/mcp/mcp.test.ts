/**
 * `durable-bash mcp` end to end: the SDK's own Client against a spawned `node dist/cli/main.js mcp`
 * process (stdio and Streamable HTTP), a real dev server and a real command worker.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { WorkflowNotFoundError } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS, MCP_MAX_WAIT_MS } from '../../src/shared/limits.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';
import {
  callTool,
  INITIALIZE_REQUEST,
  rawRequest,
  textOf,
  textsOf,
  useMcpServers,
} from '../helpers/mcp-client.js';

const suite = useDevServerWithWorker();
let stateDir: string;

beforeAll(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-'));
});

const mcp = useMcpServers(() => ({
  address: suite.env.address,
  taskQueue: suite.worker.taskQueue,
  stateDir,
}));

/** A background start over MCP; the task's id, from the answer's last block (a due notice comes first). */
async function startOverMcp(
  client: Client,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const answer = textsOf(
    await callTool(client, 'bash', {
      command,
      description: 'Run in background',
      run_in_background: true,
      ...extra,
    }),
  );
  return startedTaskId(answer.at(-1) ?? '');
}

/** Polls bash_output until its text matches `pattern`; returns everything read, in order. */
async function readUntil(
  client: Client,
  taskId: string,
  pattern: RegExp,
  timeoutMs = 20_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let all = '';
  while (Date.now() < deadline) {
    all += `${textOf(await callTool(client, 'bash_output', { task_id: taskId }))}\n`;
    if (pattern.test(all)) return all;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`bash_output never matched ${pattern}: ${all}`);
}

async function waitForLog(logs: unknown[], expected: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!logs.includes(expected)) {
    if (Date.now() > deadline)
      throw new Error(`no logging notification ${expected}; got ${JSON.stringify(logs)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const session = () => `mcp-test-${randomUUID()}`;

describe.each(['stdio', 'http'] as const)('durable-bash mcp over %s', (kind) => {
  const connect = (session: string, extra: string[] = []) => mcp.connect(kind, session, extra);

  it('lists every tool createBashTools makes, with the same descriptions and schemas', async () => {
    const { client } = await connect(session());
    const listed = await client.listTools();
    // The library's tools with the MCP server's defaults (auto-background on, the shorter wait cap,
    // and its sessions' notice queue, which offers bash_remind and bash_monitor).
    const library = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      autoBackgroundAfterMs: DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS,
      maxWaitMs: MCP_MAX_WAIT_MS,
      agentTaskQueue: 'any-agent-queue',
    });
    expect(
      listed.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    ).toEqual(library.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
    expect(listed.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['bash', 'bash_output', 'bash_kill', 'bash_remind', 'bash_monitor']),
    );
  });

  it('runs a foreground command and answers with the text the library gives', async () => {
    const { client } = await connect(session());
    const result = await callTool(client, 'bash', {
      command: 'echo hi; echo err >&2; exit 3',
      description: 'Print and fail',
    });
    expect(result).toEqual({ content: [{ type: 'text', text: 'hi\n[stderr]\nerr\n[exit code: 3]' }] });
  });

  it("answers a bad call with the library's own error, not the SDK's validation message", async () => {
    const { client } = await connect(session());
    const args = { command: '   ', description: 'Nothing' };
    const [bash] = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
    const expected = await bash?.execute(args, { agent: { sessionId: 'x' } });
    expect(await callTool(client, 'bash', args)).toEqual(expected);
  });

  it('runs a background task, reads it with wait_ms, and kills another', async () => {
    const { client } = await connect(session());
    const taskId = await startOverMcp(client, 'sleep 1; echo done');
    const read = textOf(await callTool(client, 'bash_output', { task_id: taskId, wait_ms: 10_000 }));
    expect(read).toContain('done');
    const sleeper = await startOverMcp(client, 'sleep 600');
    const killed = textOf(await callTool(client, 'bash_kill', { task_id: sleeper }));
    expect(killed).toContain(sleeper);
    expect(textOf(await callTool(client, 'bash_output', { task_id: sleeper }))).toMatch(/killed/);
  });

  it("fences one session off from another's tasks", async () => {
    const owner = await connect(session());
    const other = await connect(session());
    const taskId = await startOverMcp(owner.client, 'sleep 600');
    const expected = {
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    };
    expect(await callTool(other.client, 'bash_output', { task_id: taskId })).toEqual(expected);
    expect(await callTool(other.client, 'bash_kill', { task_id: taskId })).toEqual(expected);
    await callTool(owner.client, 'bash_kill', { task_id: taskId });
  });

  it('lists the session tasks with bash_list', async () => {
    const { client } = await connect(session());
    const taskId = await startOverMcp(client, 'sleep 600');
    expect(textOf(await callTool(client, 'bash_list', {}))).toContain(taskId);
    await callTool(client, 'bash_kill', { task_id: taskId });
  });

  it("writes a program's stdin with bash_input, before and after a restart of the MCP server", async () => {
    const id = session();
    const first = await connect(id);
    const taskId = await startOverMcp(
      first.client,
      'while read -r line; do echo "got $line"; done; echo eof',
      {
        keep_stdin_open: true,
      },
    );
    expect(await callTool(first.client, 'bash_input', { task_id: taskId, text: 'a\n' })).toEqual({
      content: [{ type: 'text', text: `wrote 2 bytes to the stdin of task ${taskId}` }],
    });
    expect(await readUntil(first.client, taskId, /got a/)).toContain('got a');
    first.kill();
    const second = await connect(id);
    expect(
      textOf(await callTool(second.client, 'bash_input', { task_id: taskId, text: 'b\n', close: true })),
    ).toBe(`wrote 2 bytes to the stdin of task ${taskId} and closed it`);
    // The read that takes `eof` may come before the exit (`[status: running]`); a later one has it.
    expect(
      await readUntil(second.client, taskId, /eof\n[\s\S]*\[status: completed, exit code: 0\]/),
    ).toContain('got b');
  });

  it('moves a long foreground call to the background after --auto-background', async () => {
    const { client } = await connect(session(), ['--auto-background', '1000']);
    const result = textOf(
      await callTool(client, 'bash', { command: 'sleep 3; echo late', description: 'Sleep a while' }),
    );
    const marker =
      /^\(no output\)\n\[still running after 1000ms; moved to background task (bash-[0-9a-f-]{36})\. Read its output with bash_output\.\]$/;
    const taskId = marker.exec(result)?.[1];
    expect(taskId, result).toBeDefined();
    expect(await readUntil(client, taskId as string, /late/)).toContain('late');
  });

  it('delivers a completion notice once as a logging notification and once atop the next tool result', async () => {
    const { client, logs } = await connect(session());
    const taskId = await startOverMcp(client, 'exit 3');
    // The notice's exact text: its first line, then the output it ended with.
    const notice = `background bash task ${taskId} finished [status: completed, exit code: 3]. Read its output with bash_output.\n(no output)`;
    await waitForLog(logs, notice);
    const next = await callTool(client, 'bash', { command: 'echo next', description: 'Print next' });
    expect(textsOf(next)).toEqual([notice, 'next\n']);
    const after = await callTool(client, 'bash', { command: 'echo after', description: 'Print after' });
    expect(textsOf(after)).toEqual(['after\n']);
    expect(logs.filter((data) => data === notice)).toHaveLength(1);
  });

  it("answers the session's own bash_kill with no notice before it, and sends the task no notice after", async () => {
    const { client, logs } = await connect(session());
    const taskId = await startOverMcp(client, 'echo up; sleep 600');
    expect(await readUntil(client, taskId, /up/)).toContain('up');
    // Exactly the kill's line: no notice atop it telling the model to read what it just killed.
    expect(await callTool(client, 'bash_kill', { task_id: taskId })).toEqual({
      content: [{ type: 'text', text: `killed background task ${taskId}` }],
    });
    await suite.env.client.workflow.getHandle(taskId).result();
    // A notice starts before its task closes: a closed task without one never gets one.
    await expect(suite.env.client.workflow.getHandle(`${taskId}-notice`).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(textsOf(await callTool(client, 'bash_output', { task_id: taskId }))).toEqual([
      '(no new output)\n[status: killed by SIGTERM]',
    ]);
    expect(logs.filter((data) => String(data).includes(taskId))).toEqual([]);
  });

  it('still notifies the session of a task an operator killed with durable-bash kill', async () => {
    const id = session();
    const { client, logs } = await connect(id);
    const taskId = await startOverMcp(client, 'sleep 600');
    const killed = await cli([
      'kill',
      ...['--address', suite.env.address, '--task-queue', suite.worker.taskQueue, '--owner', id],
      taskId,
    ]);
    expect(killed).toEqual({ code: 0, stdout: `killed background task ${taskId}\n`, stderr: '' });
    const notice = `background bash task ${taskId} finished [status: killed by SIGTERM]. Read its output with bash_output.\n(no output)`;
    await waitForLog(logs, notice);
    expect(
      textsOf(await callTool(client, 'bash', { command: 'echo next', description: 'Print next' })),
    ).toEqual([notice, 'next\n']);
  });

  it('keeps the task, its read position and its notice across a restart of the MCP server', async () => {
    const id = session();
    const first = await connect(id);
    const sleeper = await startOverMcp(first.client, 'sleep 600');
    const taskId = await startOverMcp(first.client, 'echo one; sleep 4; echo two');
    expect(await readUntil(first.client, taskId, /one/)).toContain('one');
    first.kill();
    // The task ends, and its notice falls due, while no MCP server runs.
    await suite.env.client.workflow.getHandle(taskId).result();

    const second = await connect(id);
    // It leaves out what the first server's read showed (one).
    const notice = `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output since the last read]\ntwo`;
    // It fell due while no server ran: the logging notification comes as the new server's agent
    // worker takes it, or with the first request (here tools/list) if that is sooner.
    await second.client.listTools();
    await waitForLog(second.logs, notice);
    const read = textsOf(await callTool(second.client, 'bash_output', { task_id: taskId }));
    expect(second.logs).toEqual([notice]);
    expect(read[0]).toBe(notice);
    // The notice atop this result shows two, so it is this call's read of two: the read itself
    // shows neither two (the notice has it) nor one (the first server's read had it).
    expect(read.slice(1)).toEqual(['(no new output)\n[status: completed, exit code: 0]']);
    // It sees and kills what the old server started.
    expect(textOf(await callTool(second.client, 'bash_list', {}))).toContain(sleeper);
    expect(textOf(await callTool(second.client, 'bash_kill', { task_id: sleeper }))).toContain(sleeper);

    // A third server of the session repeats the notice neither way.
    second.kill();
    const third = await connect(id);
    const thirdResult = textsOf(
      await callTool(third.client, 'bash', { command: 'echo three', description: 'Print three' }),
    );
    // Nor does the sleeper get one: the session killed it, and the kill's answer said so.
    expect(thirdResult).toEqual(['three\n']);
    expect(third.logs).toEqual([]);
  });
});

describe('durable-bash mcp over Streamable HTTP', () => {
  it('serves the tools to two clients, each its own MCP session, for one agent session', async () => {
    const server = await mcp.startHttp(session());
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const a = await mcp.http(server);
    const b = await mcp.http(server);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    expect((await a.client.listTools()).tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['bash', 'bash_output', 'bash_kill']),
    );
    expect(await callTool(a.client, 'bash', { command: 'echo hi', description: 'Print hi' })).toEqual({
      content: [{ type: 'text', text: 'hi\n' }],
    });
    const taskId = await startOverMcp(a.client, 'echo shared; sleep 600');
    expect(await readUntil(b.client, taskId, /shared/)).toContain('shared');
    await callTool(b.client, 'bash_kill', { task_id: taskId });
  });

  it('stops on SIGTERM, exiting 0', async () => {
    const { child } = await mcp.startHttp(session());
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses a request whose Host is not the server (DNS rebinding)', async () => {
    const { url, token } = await mcp.startHttp(session());
    const initialize = (headers: Record<string, string>) =>
      rawRequest(url, {
        headers: { authorization: `Bearer ${token}`, ...headers },
        body: INITIALIZE_REQUEST,
      });
    expect((await initialize({ host: 'evil.example' })).status).toBe(403);
    expect((await initialize({ origin: 'http://evil.example' })).status).toBe(403);
    expect((await initialize({})).status).toBe(200);
  });
});
