import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CODEC_KEYS_ENV, type CodecKey, CodecKeyring } from '../../src/codec/keyring.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { createAgentWorker } from '../../src/worker/agent-worker.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { cli } from '../helpers/cli.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { text } from '../helpers/tool-calls.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

const canary = `CANARY-${randomUUID()}`;
const session = `session-${canary}`;
const keyA: CodecKey = { id: 'key-a', secret: randomBytes(CODEC_KEY_BYTES) };
const keyB: CodecKey = { id: 'key-b', secret: randomBytes(CODEC_KEY_BYTES) };
const keysText = (...keys: CodecKey[]) => keys.map((k) => `${k.id}=${k.secret.toString('base64')}`).join(',');

const taskQueue = `codec-${randomUUID()}`;
const agentTaskQueue = `codec-agent-${randomUUID()}`;
const injections: { sessionId: string; content: string }[] = [];

let env: TestWorkflowEnvironment;
let worker: BashWorker;
let agentWorker: Worker;
let running: Promise<unknown>;
/** The agent host's client: encrypts under key A. */
let client: Client;
let tools: Tool[];
const taskIds: string[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
  const namespace = env.namespace ?? 'default';
  // The workers already know key B (decrypt only), as a rotation starts.
  const workerConverter = encryptingDataConverter(new CodecKeyring([keyA, keyB]));
  worker = await createBashWorker({
    connection: env.nativeConnection,
    namespace,
    taskQueue,
    dataConverter: workerConverter,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    // Heartbeats a second apart (a 2.5 s heartbeat timeout), so a running task's soon carry its output.
    executor: { heartbeatTimeoutMs: 2_500, workdirRoots: TEST_WORKDIR_ROOTS },
  });
  agentWorker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace,
    taskQueue: agentTaskQueue,
    dataConverter: workerConverter,
    agents: {
      inject: async (sessionId, content) => {
        injections.push({ sessionId, content });
        return true;
      },
    },
  });
  running = Promise.all([worker.run(), agentWorker.run()]);
  client = new Client({
    connection: env.connection,
    namespace,
    dataConverter: encryptingDataConverter(new CodecKeyring([keyA])),
  });
  tools = createBashTools({ client, taskQueue, agentTaskQueue });
});

afterAll(async () => {
  worker?.shutdown();
  if (agentWorker?.getState() === 'RUNNING') agentWorker.shutdown();
  await running;
  await env?.teardown();
});

function tool(name: string): Tool {
  const found = tools.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** Whether these bytes (a protobuf message as stored or sent) hold the canary anywhere. */
const holdsCanary = (bytes: Uint8Array) => Buffer.from(bytes).includes(Buffer.from(canary, 'utf8'));

const { workflowservice, history } = proto.temporal.api;

/** The CLI with `keys` as its codec keys. */
const cliWithKeys = (args: string[], keys: string) => cli(args, { [CODEC_KEYS_ENV]: keys });

const server = () => ['--address', env.address, '--task-queue', taskQueue];

describe('encryption at rest', () => {
  it('the canary check finds a canary in plain stored data (the check can fail)', () => {
    const plain = history.v1.History.encode({
      events: [
        {
          workflowExecutionStartedEventAttributes: {
            input: { payloads: [defaultPayloadConverter.toPayload({ command: `echo ${canary}` })] },
          },
        },
      ],
    }).finish();
    expect(holdsCanary(plain)).toBe(true);
  });

  it('the bash tool shows the real text of a failing foreground command', async () => {
    const result = await tool('bash').execute(
      { command: `echo ${canary}; echo ${canary} >&2; exit 3`, description: `print ${canary}` },
      { agent: { sessionId: session } },
    );
    expect(result).toEqual({
      content: [{ type: 'text', text: `${canary}\n[stderr]\n${canary}\n[exit code: 3]` }],
    });
  });

  it('a running background task’s heartbeat details are encrypted; bash_output shows the text', async () => {
    const taskId = await startBackground(
      tool('bash'),
      `echo ${canary}; echo ${canary} >&2; sleep 3; exit 3`,
      { agent: { sessionId: session } },
      { description: `background ${canary}` },
    );
    taskIds.push(taskId);
    const tasks = new BashTasks({ client, taskQueue });
    // Wait for a heartbeat that carries both streams (decoded through the codec client).
    await expect
      .poll(
        async () => {
          const snapshot = await tasks.snapshot(taskId, session);
          return snapshot.stdout.bytes > 0 && snapshot.stderr.bytes > 0;
        },
        { timeout: 2_500 },
      )
      .toBe(true);
    const raw = await env.connection.workflowService.describeWorkflowExecution({
      namespace: env.namespace ?? 'default',
      execution: { workflowId: taskId },
    });
    expect(raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.length).toBe(1);
    expect(holdsCanary(workflowservice.v1.DescribeWorkflowExecutionResponse.encode(raw).finish())).toBe(
      false,
    );
    expect(
      text(await tool('bash_output').execute({ task_id: taskId }, { agent: { sessionId: session } })),
    ).toBe(`${canary}\n[stderr]\n${canary}\n[status: running]`);
    await client.workflow.getHandle(taskId).result();
    expect(
      text(await tool('bash_output').execute({ task_id: taskId }, { agent: { sessionId: session } })),
    ).toBe('(no new output)\n[status: completed, exit code: 3]');
    // The completion notice went through the encrypted notice workflow to the agent worker.
    await expect.poll(() => injections.filter((i) => i.content.includes(taskId)).length).toBe(1);
    expect(injections.find((i) => i.content.includes(taskId))?.sessionId).toBe(session);
  });

  it('a failure message that quotes the canary reaches the tool in full', async () => {
    const result = await tool('bash').execute(
      { command: 'true', description: 'no such workdir', workdir: `/nonexistent/${canary}` },
      { agent: { sessionId: session } },
    );
    expect(result).toEqual({
      content: [
        { type: 'text', text: `workdir does not exist or is not a directory: /nonexistent/${canary}` },
      ],
      isError: true,
    });
  });

  it('durable-bash run, logs and ps show the real text with the keys', async () => {
    const keys = keysText(keyA);
    expect(await cliWithKeys(['run', ...server(), '--', `echo ${canary}; exit 3`], keys)).toEqual({
      code: 0,
      stdout: `${canary}\n[exit code: 3]\n`,
      stderr: '',
    });
    const [taskId] = taskIds;
    await client.workflow.getHandle(taskId as string).result();
    expect(await cliWithKeys(['logs', ...server(), '--owner', session, taskId as string], keys)).toEqual({
      code: 0,
      stdout: `${canary}\n`,
      stderr: `${canary}\n[status: completed, exit code: 3]\n`,
    });
    await expect
      .poll(async () => (await cliWithKeys(['ps', ...server(), '--owner', session], keys)).stdout)
      .toContain(`${taskId}  completed`);
    expect((await cliWithKeys(['ps', ...server(), '--owner', session], keys)).stdout).toContain(
      `echo ${canary}`,
    );
  });

  it('after the current key becomes B, tasks stored under A are still listed, read and fenced', async () => {
    const rotated = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      dataConverter: encryptingDataConverter(new CodecKeyring([keyB, keyA])),
    });
    const rotatedTools = createBashTools({ client: rotated, taskQueue });
    const bash = rotatedTools.find((t) => t.name === 'bash') as Tool;
    const newer = await startBackground(
      bash,
      `echo ${canary}-b`,
      { agent: { sessionId: session } },
      { description: 'under key b' },
    );
    taskIds.push(newer);
    await rotated.workflow.getHandle(newer).result();
    const tasks = new BashTasks({ client: rotated, taskQueue });
    // The session's four tasks: three stored under key A (foreground, background, failed), one under B.
    await expect.poll(async () => (await tasks.list({ owner: session })).length).toBe(4);
    const listed = await tasks.list({ owner: session });
    expect(listed.map((task) => task.taskId)).toEqual(expect.arrayContaining(taskIds));
    expect(listed.map((task) => task.owner)).toEqual([session, session, session, session]);
    expect(listed.find((task) => task.taskId === newer)?.command).toBe(`echo ${canary}-b`);
    expect(await tasks.list({ owner: `other-${canary}` })).toEqual([]);
    const older = taskIds[0] as string;
    expect((await tasks.snapshot(older, session)).state).toEqual({
      status: 'completed',
      exitCode: 3,
    });
    await expect(tasks.snapshot(older, `other-${canary}`)).rejects.toThrow(
      `task ${older} belongs to another session`,
    );
    // The CLI with the rotated keys lists both.
    const listing = (await cliWithKeys(['ps', ...server(), '--owner', session], keysText(keyB, keyA))).stdout;
    for (const taskId of taskIds) expect(listing).toContain(taskId);
  });

  it('no canary byte is in any history, description or listing the server gives a client without the keys', async () => {
    const namespace = env.namespace ?? 'default';
    const service = env.connection.workflowService;
    const query = `TaskQueue = '${taskQueue}'`;
    // Every workflow the tests ran: runs, output readers, notices.
    let listings: Uint8Array[] = [];
    let ids: string[] = [];
    await expect
      .poll(async () => {
        const listed = await service.listWorkflowExecutions({ namespace, query, pageSize: 1000 });
        listings = [workflowservice.v1.ListWorkflowExecutionsResponse.encode(listed).finish()];
        ids = listed.executions.map((execution) => execution.execution?.workflowId ?? '');
        return ids.length;
      })
      .toBeGreaterThanOrEqual(7);
    const byOwner = await service.listWorkflowExecutions({
      namespace,
      query: `${query} AND BashTaskOwner IS NOT NULL`,
    });
    listings.push(workflowservice.v1.ListWorkflowExecutionsResponse.encode(byOwner).finish());
    expect(byOwner.executions.length).toBeGreaterThanOrEqual(taskIds.length);
    for (const listing of listings) expect(holdsCanary(listing)).toBe(false);

    const plain = new Client({ connection: env.connection, namespace });
    for (const workflowId of ids) {
      const events = await plain.workflow.getHandle(workflowId).fetchHistory();
      expect(events.events?.length).toBeGreaterThan(0);
      expect(holdsCanary(history.v1.History.encode(events).finish()), workflowId).toBe(false);
      const described = await service.describeWorkflowExecution({ namespace, execution: { workflowId } });
      expect(
        holdsCanary(workflowservice.v1.DescribeWorkflowExecutionResponse.encode(described).finish()),
        workflowId,
      ).toBe(false);
    }
    // The failure of the run with the missing workdir is stored as `Encoded failure`.
    const failedRuns = await service.listWorkflowExecutions({
      namespace,
      query: `${query} AND ExecutionStatus = 'Failed'`,
    });
    expect(failedRuns.executions.length).toBe(1);
    const failedId = failedRuns.executions[0]?.execution?.workflowId as string;
    const failedHistory = await plain.workflow.getHandle(failedId).fetchHistory();
    const failure = failedHistory.events?.at(-1)?.workflowExecutionFailedEventAttributes?.failure;
    expect(failure?.cause?.message).toBe('Encoded failure');
  });
});
