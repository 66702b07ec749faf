import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDurableBashSandbox,
  DurableBashProcess,
  DurableBashSandbox,
  registerDurableBashClient,
  WORKFLOW_DESERIALIZE,
  WORKFLOW_SERIALIZE,
} from '../../../src/ai-sdk/index.js';
import { WORKSPACE_TRANSFER_MAX_BYTES } from '../../../src/shared/limits.js';
import { useDevServerWithWorker } from '../../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../../helpers/processes.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process.js';

const suite = useDevServerWithWorker();
const execFileAsync = promisify(execFile);
let sandbox: DurableBashSandbox;

beforeAll(async () => {
  registerDurableBashClient(suite.env.client);
  sandbox = await createDurableBashSandbox({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

const decoder = new TextDecoder();

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text;
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

describe('AI SDK 7 sandbox session over durable-bash', () => {
  it('gives a tool of generateText the sandbox, whose spawned process streams its output', async () => {
    let toolOutput: unknown;
    const model = new MockLanguageModelV3({
      async doGenerate(options) {
        const last = options.prompt.at(-1);
        if (last?.role === 'tool') {
          for (const part of last.content) if (part.type === 'tool-result') toolOutput = part.output;
          return {
            content: [{ type: 'text', text: 'done' }],
            finishReason: { unified: 'stop', raw: undefined },
            usage,
            warnings: [],
          };
        }
        return {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call-1',
              toolName: 'watch',
              input: JSON.stringify({ command: 'for i in 1 2 3; do echo tick-$i; sleep 0.2; done' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage,
          warnings: [],
        };
      },
    });
    const watch = tool({
      description: 'Runs a command in the sandbox and returns what it printed.',
      inputSchema: jsonSchema<{ command: string }>({
        type: 'object',
        properties: { command: { type: 'string' } },
        required: ['command'],
      }),
      async execute({ command }, { experimental_sandbox }) {
        if (experimental_sandbox === undefined) throw new Error('no sandbox');
        const child = await experimental_sandbox.spawn({ command });
        const stdout = await readAll(child.stdout);
        const { exitCode } = await child.wait();
        return `${stdout}exit ${exitCode}`;
      },
    });
    const result = await generateText({
      model,
      tools: { watch },
      prompt: 'watch it',
      stopWhen: stepCountIs(3),
      experimental_sandbox: sandbox,
    });
    expect(result.text).toBe('done');
    expect(toolOutput).toEqual({ type: 'text', value: 'tick-1\ntick-2\ntick-3\nexit 0' });
  });

  it('streams output far over the output limit, read slowly, every byte once and in order', async () => {
    const child = await sandbox.spawn({ command: 'seq 1 200000' });
    // The command ends long before its reader starts: every read is far behind.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    let text = '';
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const expected = Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join('');
    expect(text.length).toBe(expected.length);
    expect(text === expected).toBe(true);
    await expect(child.wait()).resolves.toEqual({ exitCode: 0 });
  });

  it('streams binary output as its bytes exactly, while the command still writes it', async () => {
    const child = await sandbox.spawn({
      command: 'for i in 1 2 3 4 5 6; do head -c 500000 /dev/urandom; sleep 0.2; done | tee random.bin',
    });
    const hash = createHash('sha256');
    let length = 0;
    for await (const chunk of child.stdout) {
      hash.update(chunk);
      length += chunk.length;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(child.wait()).resolves.toEqual({ exitCode: 0 });
    expect(length).toBe(3_000_000);
    const sum = await sandbox.run({ command: 'sha256sum random.bin' });
    expect(hash.digest('hex')).toBe(sum.stdout.split(' ')[0]);
  });

  it('runs a command in the foreground: its output, its exit code, its workdir in the workspace', async () => {
    await expect(sandbox.run({ command: 'echo hi; echo oops >&2; pwd; exit 3' })).resolves.toEqual({
      exitCode: 3,
      stdout: `hi\n${sandbox.root}\n`,
      stderr: 'oops\n',
    });
    await sandbox.writeTextFile({ path: 'sub/x.txt', content: 'x' });
    const inSub = await sandbox.run({
      command: 'pwd; echo $GREETING',
      workingDirectory: 'sub',
      env: { GREETING: "it's" },
    });
    expect(inSub).toEqual({ exitCode: 0, stdout: `${path.join(sandbox.root, 'sub')}\nit's\n`, stderr: '' });
  });

  it('spawns a process with stdin: what the writer writes reaches it, closing it ends the input', async () => {
    const child = await sandbox.spawn({
      command: 'while read -r line; do echo "got $line"; done; echo bye',
      stdin: true,
    });
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode('one\ntwo\n'));
    await writer.close();
    await expect(readAll(child.stdout)).resolves.toBe('got one\ngot two\nbye\n');
    await expect(child.wait()).resolves.toEqual({ exitCode: 0 });
    expect(child.pid).toBeUndefined();
  });

  it('kills a spawned process tree: nothing is left, and wait() gives the signal exit', async () => {
    const marker = `ai-sdk-7-kill-${process.pid}`;
    const child = await sandbox.spawn({ command: `sleep 300 & sleep 301; : ${marker}` });
    await waitFor(() => processesMatching(new RegExp(marker)).length > 0, 15_000);
    await child.kill();
    await child.kill(); // idempotent
    await expect(child.wait()).resolves.toEqual({ exitCode: 143 });
    await waitFor(() => processesMatching(new RegExp(marker)).length === 0, 10_000);
  });

  it('reads, writes, stats, lists and deletes files inside the workspace', async () => {
    await sandbox.writeTextFile({ path: 'dir/a.txt', content: 'l1\nl2\nl3\n' });
    await sandbox.writeBinaryFile({
      path: path.join(sandbox.root, 'dir/b.bin'),
      content: new Uint8Array([0, 255]),
    });
    await sandbox.writeFile({
      path: 'dir/c.txt',
      content: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('str'));
          controller.enqueue(new TextEncoder().encode('eam'));
          controller.close();
        },
      }),
    });
    await expect(sandbox.readTextFile({ path: 'dir/a.txt', startLine: 2, endLine: 9 })).resolves.toBe(
      'l2\nl3\n',
    );
    await expect(sandbox.readBinaryFile({ path: 'dir/b.bin' })).resolves.toEqual(new Uint8Array([0, 255]));
    const stream = await sandbox.readFile({ path: 'dir/c.txt' });
    await expect(readAll(stream as ReadableStream<Uint8Array>)).resolves.toBe('stream');
    await expect(sandbox.readTextFile({ path: 'dir/missing' })).resolves.toBeNull();
    symlinkSync('a.txt', path.join(sandbox.root, 'dir/link'));
    await expect(sandbox.stat({ path: 'dir/link' })).resolves.toEqual({ type: 'file', size: 9 });
    await expect(sandbox.stat({ path: 'dir' })).resolves.toMatchObject({ type: 'directory' });
    await expect(sandbox.stat({ path: 'nothing' })).resolves.toBeNull();
    const entries = await sandbox.listDirectory({ path: 'dir' });
    expect(entries?.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: 'a.txt', type: 'file' },
      { name: 'b.bin', type: 'file' },
      { name: 'c.txt', type: 'file' },
      { name: 'link', type: 'symlink' },
    ]);
    await expect(sandbox.listDirectory({ path: 'nowhere' })).resolves.toBeNull();
    await expect(sandbox.deleteFile({ path: 'dir/link' })).resolves.toBe(true);
    await expect(sandbox.readTextFile({ path: 'dir/a.txt' })).resolves.toBe('l1\nl2\nl3\n');
    await expect(sandbox.deleteFile({ path: 'dir/link' })).resolves.toBe(false);
    await expect(sandbox.deleteFile({ path: 'dir' })).rejects.toThrow(/is a directory/);
  });

  it('writes a stream and reads a file larger than one operation carries: its stream yields the pieces as pulled', async () => {
    const data = randomBytes(2 * WORKSPACE_TRANSFER_MAX_BYTES + 777);
    await sandbox.writeFile({
      path: 'large.bin',
      content: new ReadableStream({
        start(controller) {
          for (let at = 0; at < data.length; at += 100_000)
            controller.enqueue(data.subarray(at, at + 100_000));
          controller.close();
        },
      }),
    });
    const stream = (await sandbox.readFile({ path: 'large.bin' })) as ReadableStream<Uint8Array>;
    const pieces: Uint8Array[] = [];
    for await (const piece of stream) pieces.push(piece);
    expect(pieces.map((piece) => piece.length)).toEqual([
      WORKSPACE_TRANSFER_MAX_BYTES,
      WORKSPACE_TRANSFER_MAX_BYTES,
      777,
    ]);
    expect(Buffer.compare(Buffer.concat(pieces), data)).toBe(0);
    expect(Buffer.compare((await sandbox.readBinaryFile({ path: 'large.bin' })) as Uint8Array, data)).toBe(0);
  });

  it('refuses paths outside the workspace with one line: .., an absolute path elsewhere, a link that points out', async () => {
    symlinkSync('/etc', path.join(sandbox.root, 'out'));
    for (const attempt of [
      () => sandbox.readTextFile({ path: '../x' }),
      () => sandbox.readTextFile({ path: '/etc/passwd' }),
      () => sandbox.readTextFile({ path: 'out/passwd' }),
      () => sandbox.writeTextFile({ path: '../x', content: 'no' }),
      () => sandbox.listDirectory({ path: '/etc' }),
      () => sandbox.stat({ path: 'out/passwd' }),
      () => sandbox.deleteFile({ path: '/etc/passwd' }),
    ]) {
      await expect(attempt()).rejects.toThrow(/^path .* is outside the workspace: [^\n]*$/);
    }
  });

  it('refuses bad input with one line and starts nothing', async () => {
    const fresh = await createDurableBashSandbox({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
    });
    await expect(fresh.run({ command: 'true', workingDirectory: '/etc' })).rejects.toThrow(
      /^invalid workdir: "\/etc" is outside the session's workspace/,
    );
    await expect(fresh.spawn({ command: ' ' })).rejects.toThrow(/^invalid command/);
    await expect(fresh.run({ command: 'true', env: { 'A B': 'x' } })).rejects.toThrow(
      /^invalid env: "A B" is not a variable name$/,
    );
    await expect(sandbox.readTextFile({ path: 'x', startLine: -1 })).rejects.toThrow(
      'invalid startLine: expected a positive integer, got -1',
    );
    expect(() => DurableBashProcess[WORKFLOW_DESERIALIZE]({ kind: 'durable-bash-process' })).toThrow(
      'invalid serialized process: expected a durable-bash process of version 2',
    );
    // A moment for the visibility store: a start would be listed by now.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await sessionTasks(fresh.sessionId)).toBe(0);
    const handle = (taskId: string, sessionId = sandbox.sessionId) =>
      DurableBashProcess[WORKFLOW_DESERIALIZE]({
        kind: 'durable-bash-process',
        version: 2,
        taskId,
        sessionId,
        taskQueue: suite.worker.taskQueue,
        host: sandbox.host,
        stdin: false,
        delivered: { stdout: 0, stderr: 0 },
      });
    expect(() => handle('../../etc')).toThrow('invalid serialized process: "../../etc" is not a task id');
    await expect(handle('bash-00000000-0000-0000-0000-000000000000').wait()).rejects.toThrow(
      'unknown bash task bash-00000000-0000-0000-0000-000000000000',
    );
    const mine = await sandbox.spawn({ command: 'echo mine' });
    await mine.wait();
    await expect(handle(mine.taskId, 'another-session').stdout.getReader().read()).rejects.toThrow(
      `task ${mine.taskId} belongs to another session`,
    );
  });
});

describe('a spawned process handed to another process', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ai-sdk-7-handoff-'));
  const dbFilename = path.join(dir, 'temporal.db');
  const spillDir = mkdtempSync(path.join(os.tmpdir(), 'ai-sdk-7-handoff-spill-'));
  const taskQueue = `test-ai-sdk-7-handoff-${process.pid}`;
  const workerArgs = ['--host-id', `ai-sdk-7-handoff-${process.pid}`, '--spill-dir', spillDir];
  let env: TestWorkflowEnvironment;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    env = await createDevServerEnv({}, { dbFilename });
    worker = await startWorkerProcess(env, taskQueue, workerArgs);
  });
  afterAll(async () => {
    await worker?.crash();
    await env?.teardown();
    for (const scratch of [dir, spillDir]) rmSync(scratch, { recursive: true, force: true });
  });

  it('reads the rest of its output once, with its exit code, after the worker was SIGKILLed and the server restarted', async () => {
    const handoff = await createDurableBashSandbox({ client: env.client, taskQueue });
    const seq = (from: number, to: number, prefix = '') =>
      Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}\n`).join('');
    const first = path.join(dir, 'first.json');
    // Far more than the worker's output limit (30 KiB) a read brings, on both streams, the first
    // process stopping mid-stream: what its reads fetched but it never gave comes by range.
    writeFileSync(
      first,
      JSON.stringify({
        sandbox: DurableBashSandbox[WORKFLOW_SERIALIZE](handoff),
        command: 'seq 1 60000; seq 1 30000 | sed s/^/e/ >&2; sleep 2; seq 60001 120000; exit 7',
      }),
    );
    const script = path.resolve('test/frameworks/ai-sdk-7/handoff.mjs');
    const a = await execFileAsync(process.execPath, [script, 'first', first, '\n30000\n'], {
      env: { ...process.env, TEMPORAL_ADDRESS: env.address },
      maxBuffer: 64 * 1024 * 1024,
    });
    const handed = JSON.parse(a.stdout) as {
      consumed: string;
      handle: { delivered: { stdout: number; stderr: number } };
    };
    expect(handed.consumed).toMatch(/^1\n2\n[\s\S]*\n30000\n/);
    expect(handed.consumed.length).toBeLessThan(seq(1, 120000).length);
    // The handle carries offsets, never bytes: each stream goes on from what its consumer was given.
    expect(handed.handle.delivered).toEqual({ stdout: Buffer.byteLength(handed.consumed), stderr: 0 });
    expect(handed.handle).not.toHaveProperty('unread');

    // The first process has ended; the worker dies, the server stops, and both start again on
    // their state (the server's database, the worker's host identity and spill directory).
    await worker?.crash();
    worker = undefined;
    await env.teardown();
    env = await createDevServerEnv({}, { dbFilename });
    worker = await startWorkerProcess(env, taskQueue, workerArgs);

    const second = path.join(dir, 'second.json');
    writeFileSync(second, JSON.stringify(handed.handle));
    const b = await execFileAsync(process.execPath, [script, 'second', second], {
      env: { ...process.env, TEMPORAL_ADDRESS: env.address },
      maxBuffer: 64 * 1024 * 1024,
    });
    const rest = JSON.parse(b.stdout) as { stdout: string; stderr: string; exitCode: number };
    expect(handed.consumed + rest.stdout === seq(1, 120000)).toBe(true);
    expect(rest.stderr === seq(1, 30000, 'e')).toBe(true);
    expect(rest.exitCode).toBe(7);
  }, 180_000);
});

/** How many tasks of the session the server lists (running or ended). */
async function sessionTasks(sessionId: string): Promise<number> {
  const { SandboxCommands } = await import('../../../src/tools/sandbox-commands.js');
  const commands = new SandboxCommands({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
  return (await commands.tasks.list({ owner: sessionId }, 1000)).length;
}
