import { readFileSync, statSync } from 'node:fs';
import proto from '@temporalio/proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import type { OutputRead } from '../../src/client/output-reader-client.js';
import { readerState } from '../../src/client/reader-history.js';
import { DEFAULT_OUTPUT_LIMIT_BYTES, HEARTBEAT_TAIL_BYTES } from '../../src/shared/limits.js';
import { outputReaderId, START_OF_OUTPUT } from '../../src/shared/read-position.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { processesMatching } from '../helpers/processes.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;
let tasks: BashTasks;

beforeAll(async () => {
  tools = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
  tasks = new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue });
});

const { temporal } = proto;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const output = (taskId: string, exec: ToolExecContext = {}, using = tools) =>
  (using.bash_output as Tool).execute({ task_id: taskId }, exec);

async function finished(taskId: string): Promise<void> {
  await suite.env.client.workflow.getHandle(taskId).result();
}

/** Reads until the task has ended and everything is read, collecting each stream's text. */
async function readAll(
  taskId: string,
  sessionId?: string,
): Promise<{ stdout: string; stderr: string; reads: OutputRead[] }> {
  const reads: OutputRead[] = [];
  for (;;) {
    const read = await tasks.read(taskId, sessionId);
    reads.push(read);
    if (read.state.status !== 'running' && read.stdout.text === '' && read.stderr.text === '') break;
    await sleep(150);
  }
  return {
    stdout: reads.map((read) => read.stdout.text).join(''),
    stderr: reads.map((read) => read.stderr.text).join(''),
    reads,
  };
}

const lines = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${i + 1}\n`).join('');

describe('bash_output', () => {
  it('returns each byte once over reads taken while the task runs, stderr included', async () => {
    const taskId = await startBackground(
      tools.bash,
      'for i in $(seq 1 25); do echo out$i; echo err$i >&2; sleep 0.08; done',
    );
    const { stdout, stderr, reads } = await readAll(taskId);
    expect(stdout).toBe(lines('out', 25));
    expect(stderr).toBe(lines('err', 25));
    expect(reads.filter((read) => read.stdout.text !== '').length).toBeGreaterThan(2);
    expect(reads.at(-1)?.state).toEqual({ status: 'completed', exitCode: 0 });
  });

  it('shows new output, a [stderr] section and the status line, then (no new output)', async () => {
    const taskId = await startBackground(tools.bash, 'echo first; echo oops >&2; exit 3');
    await finished(taskId);
    expect(text(await output(taskId))).toBe('first\n[stderr]\noops\n[status: completed, exit code: 3]');
    expect(text(await output(taskId))).toBe('(no new output)\n[status: completed, exit code: 3]');
  });

  it('says [status: running] while the command runs', async () => {
    const taskId = await startBackground(tools.bash, 'echo started; sleep 30');
    await expect
      .poll(async () => text(await output(taskId)), { timeout: 5_000 })
      .toBe('started\n[status: running]');
    expect(text(await output(taskId))).toBe('(no new output)\n[status: running]');
    await tasks.kill(taskId, undefined);
    expect(text(await output(taskId))).toBe('(no new output)\n[status: killed by SIGTERM]');
  });

  it('reports a task that could not start with its reason', async () => {
    const taskId = await startBackground(
      tools.bash,
      'true',
      {},
      {
        description: 'Run nowhere',
        workdir: '/nonexistent-workdir',
      },
    );
    await suite.env.client.workflow
      .getHandle(taskId)
      .result()
      .catch(() => undefined);
    expect(text(await output(taskId))).toBe(
      '(no new output)\n[status: failed: workdir does not exist or is not a directory: /nonexistent-workdir]',
    );
  });

  it('continues the read position in a new agent host (a second set of tools)', async () => {
    const taskId = await startBackground(tools.bash, 'echo one; sleep 1; echo two', agent('host-move'));
    await expect
      .poll(async () => text(await output(taskId, agent('host-move'))), { timeout: 5_000 })
      .toBe('one\n[status: running]');
    const restarted = toolsByName(
      createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
    );
    await finished(taskId);
    expect(text(await output(taskId, agent('host-move'), restarted))).toBe(
      'two\n[status: completed, exit code: 0]',
    );
  });

  it('never gives the same bytes to two concurrent reads', async () => {
    const taskId = await startBackground(
      tools.bash,
      'for i in $(seq 1 40); do echo line$i; sleep 0.02; done',
    );
    const reads: OutputRead[] = [];
    for (let round = 0; round < 8; round++) {
      reads.push(...(await Promise.all([1, 2, 3].map(() => tasks.read(taskId, undefined)))));
      await sleep(100);
    }
    await finished(taskId);
    reads.push(...(await readAll(taskId)).reads);
    // Reads of one round may come back in any order: every line once, none missing, none twice.
    const seen = reads.flatMap((read) => read.stdout.text.split('\n').filter((line) => line !== ''));
    expect(seen.sort()).toEqual(lines('line', 40).trimEnd().split('\n').sort());
    for (const read of reads) expect(read.stdout.text === '' || read.stdout.text.endsWith('\n')).toBe(true);
  });

  it('keeps whole characters together when a read falls inside one', async () => {
    // Each euro sign is 3 bytes, written one byte at a time with pauses between.
    const taskId = await startBackground(
      tools.bash,
      "for i in 1 2 3 4 5 6; do printf '\\xe2'; sleep 0.15; printf '\\x82'; sleep 0.15; printf '\\xac'; done",
    );
    const { stdout } = await readAll(taskId);
    expect(stdout).toBe('€'.repeat(6));
  });

  it('says what was dropped and names the complete spill file, while running and after the end', async () => {
    const bytes = HEARTBEAT_TAIL_BYTES * 4;
    const taskId = await startBackground(tools.bash, `head -c ${bytes} /dev/zero | tr '\\0' x; sleep 30`);
    // The first heartbeat names the spill file; wait (without reading) until it holds all of it:
    // a read from the host then returns the newest output limit's worth and says what it left out.
    await expect.poll(async () => (await tasks.snapshot(taskId, undefined)).stdout.spillPath).toBeDefined();
    const spillPath = (await tasks.snapshot(taskId, undefined)).stdout.spillPath;
    expect(spillPath).toMatch(new RegExp(`/${taskId}\\.stdout$`));
    await expect.poll(() => statSync(spillPath ?? '').size).toBe(bytes);
    expect(text(await output(taskId))).toBe(
      `${'x'.repeat(DEFAULT_OUTPUT_LIMIT_BYTES)}\n[some output was dropped from memory; full output: ${spillPath}]\n[status: running]`,
    );
    expect(readFileSync(spillPath ?? '', 'utf8')).toBe('x'.repeat(bytes));
    await tasks.kill(taskId, undefined);
    expect(text(await output(taskId))).toBe('(no new output)\n[status: killed by SIGTERM]');

    const done = await startBackground(tools.bash, `head -c ${bytes} /dev/zero | tr '\\0' y`);
    await finished(done);
    expect(text(await output(done))).toBe(
      `${'y'.repeat(DEFAULT_OUTPUT_LIMIT_BYTES)}\n[some output was dropped from memory; full output: ${spillPath?.replace(taskId, done)}]\n[status: completed, exit code: 0]`,
    );
  });

  it('keeps its reader open while the task runs, across continue-as-new, and ends it once idle after the end', async () => {
    const shortReader = new BashTasks({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      reader: { claimsPerRun: 3, idleMs: 1_000 },
    });
    const taskId = await startBackground(
      tools.bash,
      'for i in $(seq 1 12); do echo n$i; sleep 0.1; done; sleep 2',
    );
    const chunks: string[] = [];
    for (let i = 0; i < 9; i++) {
      chunks.push((await shortReader.read(taskId, undefined)).stdout.text);
      await sleep(120);
    }
    const reader = suite.env.client.workflow.getHandle(outputReaderId(taskId));
    const runs = new Set<string>();
    for await (const execution of suite.env.client.workflow.list({
      query: `WorkflowId = '${outputReaderId(taskId)}'`,
    })) {
      runs.add(execution.runId);
    }
    expect(runs.size).toBeGreaterThan(1);
    // Longer than idleMs without a claim, but the task runs: the reader must hold on.
    await sleep(1_500);
    expect((await reader.describe()).status.name).toBe('RUNNING');
    // The task's end tells the reader; idle after that, it ends with its position in its memo.
    await finished(taskId);
    await reader.result();
    chunks.push((await shortReader.read(taskId, undefined)).stdout.text);
    chunks.push((await shortReader.read(taskId, undefined)).stdout.text);
    expect(chunks.join('')).toBe(lines('n', 12));
  });
});

describe('the output reader and its task', () => {
  it('are told of each other only when the task is read: an unread task signals nothing', async () => {
    const unread = await startBackground(tools.bash, 'echo unread');
    await finished(unread);
    const events = (await suite.env.client.workflow.getHandle(unread).fetchHistory()).events ?? [];
    expect(events.map((event) => event.eventType)).not.toContain(
      temporal.api.enums.v1.EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
    );
  });

  it('lets a reader find out by itself that its task ended without telling it (terminated)', async () => {
    const probing = new BashTasks({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      reader: { idleMs: 300, probeIntervalMs: 300 },
    });
    const marker = 6000 + Math.floor(Math.random() * 1000);
    const taskId = await startBackground(tools.bash, `echo started; sleep ${marker}`);
    await expect.poll(async () => (await probing.read(taskId, undefined)).stdout.text).toBe('started\n');
    await suite.env.client.workflow.getHandle(taskId).terminate('test: ends without telling its reader');
    await suite.env.client.workflow.getHandle(outputReaderId(taskId)).result();
    // A terminated run ends its command too: the worker's closed-run check (every 5 s) finds it.
    await expect
      .poll(() => processesMatching(new RegExp(`^sleep ${marker}$`)), { timeout: 10_000 })
      .toEqual([]);
  });

  it('keeps the position in its history: reads start no timer and write no memo until one shows the end', async () => {
    const taskId = await startBackground(
      tools.bash,
      // The last sleep outlasts the six reads below even on a loaded machine: none may show the end.
      'for i in 1 2 3 4 5; do echo n$i; sleep 0.3; done; sleep 5',
    );
    let read = 0;
    for (let i = 0; i < 6; i++) {
      read += Buffer.byteLength((await tasks.read(taskId, undefined)).stdout.text);
      await tasks.peek(taskId, undefined, START_OF_OUTPUT, 0);
      await sleep(250);
    }
    const reader = suite.env.client.workflow.getHandle(outputReaderId(taskId));
    const eventsOf = async (type: proto.temporal.api.enums.v1.EventType) =>
      ((await reader.fetchHistory()).events ?? []).filter((event) => event.eventType === type).length;
    const { EventType } = temporal.api.enums.v1;
    // The probe's one timer; none started again for a read, and the position in no memo.
    expect(await eventsOf(EventType.EVENT_TYPE_TIMER_STARTED)).toBe(1);
    expect(await eventsOf(EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED)).toBe(0);
    // What the server holds for a client with no worker to ask: where the reads left it.
    expect(await readerState(suite.env.client, taskId)).toMatchObject({
      position: { stdout: read, stderr: 0 },
    });

    await finished(taskId);
    const rest = await readAll(taskId);
    expect(read + Buffer.byteLength(rest.stdout)).toBe(Buffer.byteLength(lines('n', 5)));
    // The read that showed the end says so in the memo, once (listings look for it there).
    expect(await eventsOf(EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED)).toBe(1);
    expect((await reader.describe()).memo).toMatchObject({ endShown: true });
    expect(await readerState(suite.env.client, taskId)).toMatchObject({
      position: { stdout: Buffer.byteLength(lines('n', 5)), stderr: 0 },
      endShown: true,
    });
  });

  it('ends a reader first made after its task ended, once idle', async () => {
    const idleReader = new BashTasks({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      reader: { idleMs: 500 },
    });
    const taskId = await startBackground(tools.bash, 'echo late');
    await finished(taskId);
    expect((await idleReader.read(taskId, undefined)).stdout.text).toBe('late\n');
    await suite.env.client.workflow.getHandle(outputReaderId(taskId)).result();
    expect((await idleReader.read(taskId, undefined)).stdout.text).toBe('');
  });
});

describe('bash_output ownership and bad input', () => {
  it('refuses a task owned by another session, and a caller with no agent', async () => {
    const taskId = await startBackground(tools.bash, 'echo private', agent('owner-a'));
    await finished(taskId);
    const refused = {
      content: [{ type: 'text', text: `task ${taskId} belongs to another session` }],
      isError: true,
    };
    expect(await output(taskId, agent('owner-b'))).toEqual(refused);
    expect(await output(taskId)).toEqual(refused);
    // Nothing was read by the refused calls.
    expect(text(await output(taskId, agent('owner-a')))).toBe('private\n[status: completed, exit code: 0]');
  });

  it('opens an unowned task to anyone, and keeps an empty session id as a real owner', async () => {
    const open = await startBackground(tools.bash, 'echo open');
    await finished(open);
    expect(text(await output(open, agent('anyone')))).toBe('open\n[status: completed, exit code: 0]');
    const empty = await startBackground(tools.bash, 'echo empty', agent(''));
    await finished(empty);
    expect(await output(empty)).toEqual({
      content: [{ type: 'text', text: `task ${empty} belongs to another session` }],
      isError: true,
    });
    expect(text(await output(empty, agent('')))).toBe('empty\n[status: completed, exit code: 0]');
  });

  it('answers an unknown id and bad arguments with one-line errors', async () => {
    expect(await output('bash-00000000-0000-0000-0000-000000000000')).toEqual({
      content: [{ type: 'text', text: 'unknown bash task bash-00000000-0000-0000-0000-000000000000' }],
      isError: true,
    });
    expect(await (tools.bash_output as Tool).execute({ task_id: '' })).toEqual({
      content: [{ type: 'text', text: 'invalid task_id: expected a non-blank task id, got ""' }],
      isError: true,
    });
    expect(await (tools.bash_output as Tool).execute({ id: 'x' })).toEqual({
      content: [
        {
          type: 'text',
          text: 'invalid task_id: expected a non-blank task id, got nothing; unknown argument: id',
        },
      ],
      isError: true,
    });
  });

  it('does not take a reader workflow id for a task', async () => {
    const taskId = await startBackground(tools.bash, 'echo x');
    await finished(taskId);
    await output(taskId);
    expect(text(await output(outputReaderId(taskId)))).toBe(`unknown bash task ${outputReaderId(taskId)}`);
  });
});
