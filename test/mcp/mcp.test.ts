/**
 * `durable-bash mcp` end to end: the SDK's own Client against a spawned `node dist/cli/main.js mcp`
 * process (stdio and Streamable HTTP), a real dev server and a real command worker.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS, MCP_MAX_WAIT_MS } from '../../src/shared/limits.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';

const suite = useDevServerWithWorker();
const mainJs = path.resolve('dist/cli/main.js');
let stateDir: string;

beforeAll(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mcp-'));
});

interface Connected {
  client: Client;
  /** The data of every logging notification received, in order. */
  logs: unknown[];
  /** SIGKILLs the MCP server process. */
  kill(): void;
}

const connected: Connected[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(connected.splice(0).map(({ client }) => client.close().catch(() => undefined)));
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

afterAll(() => {
  for (const { kill } of connected) kill();
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function serverArgs(session: string, extra: string[] = []): string[] {
  return [
    mainJs,
    'mcp',
    '--address',
    suite.env.address,
    '--task-queue',
    suite.worker.taskQueue,
    '--session',
    session,
    '--state-dir',
    stateDir,
    ...extra,
  ];
}

function newClient(logs: unknown[]): Client {
  const client = new Client({ name: 'durable-bash-test', version: '0.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params.data);
  });
  return client;
}

/** A `durable-bash mcp` process over stdio, and the SDK client connected to it. */
async function connectStdio(session: string, extra: string[] = []): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: serverArgs(session, extra),
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  });
  const logs: unknown[] = [];
  const client = newClient(logs);
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error('no MCP server process');
  const running = { client, logs, kill: () => killQuietly(pid) };
  connected.push(running);
  return running;
}

/** A `durable-bash mcp --http 127.0.0.1:0` process; resolves with its URL once it listens. */
async function startHttpServer(
  session: string,
  extra: string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, serverArgs(session, ['--http', '127.0.0.1:0', ...extra]), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = / on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', () => reject(new Error(`mcp --http exited: ${stderr}`)));
  });
  return { child, url };
}

async function connectHttp(
  url: string,
  kill: () => void = () => undefined,
): Promise<Connected & { transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const logs: unknown[] = [];
  const client = newClient(logs);
  await client.connect(transport);
  const running = { client, logs, kill, transport };
  connected.push(running);
  return running;
}

type TransportKind = 'stdio' | 'http';

/** A fresh `durable-bash mcp` process for `session` over `kind`, and a client connected to it. */
async function connectTo(kind: TransportKind, session: string, extra: string[] = []): Promise<Connected> {
  if (kind === 'stdio') return connectStdio(session, extra);
  const { child, url } = await startHttpServer(session, extra);
  return connectHttp(url, () => child.kill('SIGKILL'));
}

const texts = (result: unknown) =>
  (result as CallToolResult).content.map((block) => (block as { text: string }).text);
const text = (result: unknown) => texts(result).join('\n');

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function startBackground(
  client: Client,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const started = text(
    await call(client, 'bash', {
      command,
      description: 'Run in background',
      run_in_background: true,
      ...extra,
    }),
  );
  const match = /started background task (bash-[0-9a-f-]{36})/.exec(started);
  if (!match?.[1]) throw new Error(`unexpected start text: ${started}`);
  return match[1];
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
    all += `${text(await call(client, 'bash_output', { task_id: taskId }))}\n`;
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

/** POSTs `body` with extra headers (node:http, which lets a test set Host); resolves the status. */
function postStatus(url: string, body: unknown, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    request.end(JSON.stringify(body));
  });
}

const session = () => `mcp-test-${randomUUID()}`;

describe.each(['stdio', 'http'] as const)('durable-bash mcp over %s', (kind) => {
  const connect = (session: string, extra: string[] = []) => connectTo(kind, session, extra);

  it('lists every tool createBashTools makes, with the same descriptions and schemas', async () => {
    const { client } = await connect(session());
    const listed = await client.listTools();
    // The library's tools with the MCP server's defaults (auto-background on, the shorter wait cap).
    const library = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      autoBackgroundAfterMs: DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS,
      maxWaitMs: MCP_MAX_WAIT_MS,
    });
    expect(
      listed.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    ).toEqual(library.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
    expect(listed.tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['bash', 'bash_output', 'bash_kill']),
    );
  });

  it('runs a foreground command and answers with the text the library gives', async () => {
    const { client } = await connect(session());
    const result = await call(client, 'bash', {
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
    expect(await call(client, 'bash', args)).toEqual(expected);
  });

  it('runs a background task, reads it with wait_ms, and kills another', async () => {
    const { client } = await connect(session());
    const taskId = await startBackground(client, 'sleep 1; echo done');
    const read = text(await call(client, 'bash_output', { task_id: taskId, wait_ms: 10_000 }));
    expect(read).toContain('done');
    const sleeper = await startBackground(client, 'sleep 600');
    const killed = text(await call(client, 'bash_kill', { task_id: sleeper }));
    expect(killed).toContain(sleeper);
    expect(text(await call(client, 'bash_output', { task_id: sleeper }))).toMatch(/killed/);
  });

  it("fences one session off from another's tasks", async () => {
    const owner = await connect(session());
    const other = await connect(session());
    const taskId = await startBackground(owner.client, 'sleep 600');
    const expected = {
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    };
    expect(await call(other.client, 'bash_output', { task_id: taskId })).toEqual(expected);
    expect(await call(other.client, 'bash_kill', { task_id: taskId })).toEqual(expected);
    await call(owner.client, 'bash_kill', { task_id: taskId });
  });

  it('lists the session tasks with bash_list', async () => {
    const { client } = await connect(session());
    const taskId = await startBackground(client, 'sleep 600');
    expect(text(await call(client, 'bash_list', {}))).toContain(taskId);
    await call(client, 'bash_kill', { task_id: taskId });
  });

  it("writes a program's stdin with bash_input, before and after a restart of the MCP server", async () => {
    const id = session();
    const first = await connect(id);
    const taskId = await startBackground(
      first.client,
      'while read -r line; do echo "got $line"; done; echo eof',
      {
        keep_stdin_open: true,
      },
    );
    expect(await call(first.client, 'bash_input', { task_id: taskId, text: 'a\n' })).toEqual({
      content: [{ type: 'text', text: `wrote 2 bytes to the stdin of task ${taskId}` }],
    });
    expect(await readUntil(first.client, taskId, /got a/)).toContain('got a');
    first.kill();
    const second = await connect(id);
    expect(text(await call(second.client, 'bash_input', { task_id: taskId, text: 'b\n', close: true }))).toBe(
      `wrote 2 bytes to the stdin of task ${taskId} and closed it`,
    );
    // The read that takes `eof` may come before the exit (`[status: running]`); a later one has it.
    expect(
      await readUntil(second.client, taskId, /eof\n[\s\S]*\[status: completed, exit code: 0\]/),
    ).toContain('got b');
  });

  it('moves a long foreground call to the background after --auto-background', async () => {
    const { client } = await connect(session(), ['--auto-background', '1000']);
    const result = text(
      await call(client, 'bash', { command: 'sleep 3; echo late', description: 'Sleep a while' }),
    );
    const marker =
      /^\(no output\)\n\[still running after 1000ms; moved to background task (bash-[0-9a-f-]{36})\. Read its output with bash_output\.\]$/;
    const taskId = marker.exec(result)?.[1];
    expect(taskId, result).toBeDefined();
    expect(await readUntil(client, taskId as string, /late/)).toContain('late');
  });

  it('delivers a completion notice once as a logging notification and once atop the next tool result', async () => {
    const { client, logs } = await connect(session());
    const taskId = await startBackground(client, 'exit 3');
    // The notice's exact text: its first line, then the output it ended with.
    const notice = `background bash task ${taskId} finished [status: completed, exit code: 3]. Read its output with bash_output.\n(no output)`;
    await waitForLog(logs, notice);
    const next = await call(client, 'bash', { command: 'echo next', description: 'Print next' });
    expect(texts(next)).toEqual([notice, 'next\n']);
    const after = await call(client, 'bash', { command: 'echo after', description: 'Print after' });
    expect(texts(after)).toEqual(['after\n']);
    expect(logs.filter((data) => data === notice)).toHaveLength(1);
  });

  it('keeps the task, its read position and its notice across a restart of the MCP server', async () => {
    const id = session();
    const first = await connect(id);
    const sleeper = await startBackground(first.client, 'sleep 600');
    const taskId = await startBackground(first.client, 'echo one; sleep 4; echo two');
    expect(await readUntil(first.client, taskId, /one/)).toContain('one');
    first.kill();
    // The task ends, and its notice falls due, while no MCP server runs.
    await suite.env.client.workflow.getHandle(taskId).result();

    const second = await connect(id);
    // It leaves out what the first server's read showed (one).
    const notice = `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output since the last read]\ntwo`;
    // It fell due while no server ran: the logging notification comes with the first request.
    const read = texts(await call(second.client, 'bash_output', { task_id: taskId }));
    expect(second.logs).toEqual([notice]);
    expect(read[0]).toBe(notice);
    expect(read.slice(1).join('\n')).toContain('two');
    // The read moved past what the first server's read showed; the notice moved nothing, so this
    // read, made after the notice was written, shows two again (docs/NOTICES.md).
    expect(read.slice(1).join('\n')).not.toContain('one');
    // It sees and kills what the old server started.
    expect(text(await call(second.client, 'bash_list', {}))).toContain(sleeper);
    expect(text(await call(second.client, 'bash_kill', { task_id: sleeper }))).toContain(sleeper);

    // A third server of the session repeats the notice neither way.
    second.kill();
    const third = await connect(id);
    const thirdResult = texts(
      await call(third.client, 'bash', { command: 'echo three', description: 'Print three' }),
    );
    // The killed sleeper's own notice may come now (it fell due as the second server stopped).
    expect(thirdResult.at(-1)).toBe('three\n');
    expect(thirdResult).not.toContain(notice);
    expect(third.logs).not.toContain(notice);
  });
});

describe('durable-bash mcp over Streamable HTTP', () => {
  it('serves the tools to two clients, each its own MCP session, for one agent session', async () => {
    const { url } = await startHttpServer(session());
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const a = await connectHttp(url);
    const b = await connectHttp(url);
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    expect((await a.client.listTools()).tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['bash', 'bash_output', 'bash_kill']),
    );
    expect(await call(a.client, 'bash', { command: 'echo hi', description: 'Print hi' })).toEqual({
      content: [{ type: 'text', text: 'hi\n' }],
    });
    const taskId = await startBackground(a.client, 'echo shared; sleep 600');
    expect(await readUntil(b.client, taskId, /shared/)).toContain('shared');
    await call(b.client, 'bash_kill', { task_id: taskId });
  });

  it('stops on SIGTERM, exiting 0', async () => {
    const { child } = await startHttpServer(session());
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('refuses a request whose Host is not the server (DNS rebinding)', async () => {
    const { url } = await startHttpServer(session());
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
    };
    expect(await postStatus(url, initialize, { host: 'evil.example' })).toBe(403);
    expect(await postStatus(url, initialize, { origin: 'http://evil.example' })).toBe(403);
    expect(await postStatus(url, initialize, {})).toBe(200);
  });
});
