/**
 * The harness plugin in an encrypted fleet: its command worker encrypts what it stores (the codec,
 * docs/ENCRYPTION.md), and the plugin, given the same key file, runs a background task, reads its
 * output, and gets its completion notice (which the notice workflow stores encrypted too) in the
 * owning agent's session. The server holds no byte of the task's text.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context, Fiber } from '@deepseek-ai/cordis';
import type { Agent } from '@deepseek-ai/dsh-agent';
import { CallId } from '@deepseek-ai/dsh-llm';
import { SessionId, type UserMessage } from '@deepseek-ai/dsh-session';
import type { ToolExecutionResult } from '@deepseek-ai/dsh-tools';
import { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import durableBash from '../../src/dsh/index.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { startedTaskId } from '../helpers/background-task.js';
import { createHarness } from '../helpers/dsh-harness.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

const canary = `CANARY-${randomUUID()}`;
const key = { id: 'fleet-key', secret: randomBytes(CODEC_KEY_BYTES) };
const taskQueue = `dsh-encrypted-${randomUUID()}`;

let env: TestWorkflowEnvironment;
let worker: BashWorker;
let running: Promise<void>;
let app: Context;
const fibers: Fiber[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
  worker = await createBashWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    dataConverter: encryptingDataConverter(new CodecKeyring([key])),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    executor: { workdirRoots: TEST_WORKDIR_ROOTS },
  });
  running = worker.run();
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-dsh-keys-')));
  const keyFile = path.join(dir, 'keys');
  writeFileSync(keyFile, `${key.id}=${key.secret.toString('base64')}\n`, { mode: 0o600 });
  app = await createHarness(fibers);
  const plugin = app.plugin(
    durableBash as never,
    {
      address: env.address,
      namespace: env.namespace ?? 'default',
      taskQueue,
      agentTaskQueue: `dsh-encrypted-agent-${randomUUID()}`,
      codecKeyFile: keyFile,
    } as never,
  );
  fibers.push(plugin);
  await plugin.await();
});

afterAll(async () => {
  for (const fiber of fibers.reverse()) await fiber.dispose();
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const text = (result: ToolExecutionResult) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
const userText = (message: UserMessage) =>
  message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

function call(name: string, args: unknown, agent: Agent) {
  return app.tools.execute({
    callId: CallId(randomUUID()),
    name,
    arguments: args,
    signal: new AbortController().signal,
    agent,
  });
}

it('runs, reads and announces a background task of an encrypted fleet; the server holds none of its text', async () => {
  const agent = app.agentLoop.create(SessionId(`session-${randomUUID()}`), undefined, { cwd: os.tmpdir() });
  const started = text(
    await call(
      'bash',
      { command: `echo ${canary}; exit 3`, description: `print ${canary}`, run_in_background: true },
      agent,
    ),
  );
  const id = startedTaskId(started);
  await new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    dataConverter: encryptingDataConverter(new CodecKeyring([key])),
  }).workflow
    .getHandle(id)
    .result();
  expect(text(await call('bash_output', { task_id: id }, agent))).toBe(
    `${canary}\n[status: completed, exit code: 3]`,
  );
  // The notice, decrypted by the plugin's agent worker, lands in the agent's session.
  await waitFor(() => agent.inbox.nextStep.some((message) => userText(message).includes(id)), 30_000);
  expect(agent.inbox.nextStep.map(userText)).toContain(
    `background bash task ${id} finished [status: completed, exit code: 3]. Read its output with bash_output.\n[output]\n${canary}`,
  );
  // A client without the key sees no byte of the command or its output, in the task or its notice.
  const plain = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
  for (const workflowId of [id, `${id}-notice`]) {
    const events = await plain.workflow.getHandle(workflowId).fetchHistory();
    const bytes = proto.temporal.api.history.v1.History.encode(events).finish();
    expect(Buffer.from(bytes).includes(Buffer.from(canary)), workflowId).toBe(false);
  }
});
