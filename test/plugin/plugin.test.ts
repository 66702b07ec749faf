/**
 * `durableBashPlugin` in a worker and client the test creates, as a user who runs Temporal would:
 * the worker also runs a workflow and an activity of the test's own, payloads are encrypted, and
 * the tools over the plugin's client run commands on the worker's host.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { ENCRYPTED_ENCODING } from '../../src/codec/aes-gcm-codec.js';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import { durableBashPlugin } from '../../src/plugin/index.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { useDevServer } from '../helpers/temporal-env.js';
import { text, toolsByName } from '../helpers/tool-calls.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';

const server = useDevServer();

describe('durableBashPlugin', () => {
  it("runs durable-bash beside the worker's own workflow and activity, encrypted, and tells the client", async () => {
    const taskQueue = `plugin-${randomUUID()}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-plugin-'));
    const dataConverter = encryptingDataConverter(
      new CodecKeyring([{ id: 'plugin-key', secret: randomBytes(CODEC_KEY_BYTES) }]),
    );
    const plugin = durableBashPlugin({
      taskQueue,
      executor: { spillDir, workdirRoots: TEST_WORKDIR_ROOTS },
      dataConverter,
    });
    const worker = await Worker.create({
      connection: server.env.nativeConnection,
      namespace: server.env.namespace ?? 'default',
      taskQueue,
      workflowsPath: fileURLToPath(new URL('./own-workflows.ts', import.meta.url)),
      activities: { shout: async (line: string) => line.toUpperCase() },
      plugins: [plugin],
    });
    const client = new Client({
      connection: server.env.connection,
      namespace: server.env.namespace ?? 'default',
      plugins: [plugin],
    });
    const tools = toolsByName(createBashTools({ client, taskQueue }));
    try {
      await worker.runUntil(async () => {
        // The worker's own workflow and activity.
        expect(
          await client.workflow.execute('greet', { taskQueue, workflowId: randomUUID(), args: ['plugin'] }),
        ).toBe('HELLO PLUGIN');
        // durable-bash's, in the foreground and in the background.
        const call = { description: 'Plugin test' };
        expect(text(await tools.bash.execute({ ...call, command: 'echo in the foreground' }))).toBe(
          'in the foreground\n',
        );
        const taskId = await startBackground(tools.bash, 'sleep 0.2; echo in the background', {}, call);
        const read = text(await tools.bash_output.execute({ task_id: taskId, wait_ms: 10_000 }));
        expect(read).toContain('in the background');
        // Stored encrypted: the task's input in its history is an encrypted payload.
        const history = await client.workflow.getHandle(taskId).fetchHistory();
        const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe(ENCRYPTED_ENCODING);
        expect(Buffer.from(input?.data ?? []).toString()).not.toContain('in the background');
      });
    } finally {
      await endLeftCommands(spillDir);
    }
  }, 120_000);

  it('refuses, in one line, a worker that has an activity of a name durable-bash records', async () => {
    const taskQueue = `plugin-${randomUUID()}`;
    await expect(
      Worker.create({
        connection: server.env.nativeConnection,
        namespace: server.env.namespace ?? 'default',
        taskQueue,
        activities: { runCommand: async () => undefined },
        plugins: [durableBashPlugin({ taskQueue })],
      }),
    ).rejects.toThrow(
      /^durable-bash: this worker already has an activity named runCommand, a name durable-bash records in its histories; rename yours$/,
    );
  });

  it('leaves a worker of another task queue as it is', async () => {
    const worker = await Worker.create({
      connection: server.env.nativeConnection,
      namespace: server.env.namespace ?? 'default',
      taskQueue: `other-${randomUUID()}`,
      activities: { runCommand: async () => 'theirs' },
      plugins: [durableBashPlugin({ taskQueue: 'somewhere-else' })],
    });
    expect(worker.options.taskQueue).toMatch(/^other-/);
    await worker.runUntil(async () => {
      // Its own activity of that name stands: durable-bash added nothing to this worker.
      expect(worker.options.activities.get('runCommand')).toBeDefined();
      expect(worker.options.activities.has('stopCommand')).toBe(false);
    });
  });
});
