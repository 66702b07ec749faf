/**
 * Key material given to a worker through its environment or its command line stays out of
 * `/proc/<pid>/environ` and `/proc/<pid>/cmdline`, which any process of its user may read; the
 * worker still uses it (its payloads are encrypted with the key it was given).
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { ENCRYPTED_ENCODING } from '../../src/codec/aes-gcm-codec.js';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CodecKeyring } from '../../src/codec/keyring.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import { useDevServer } from '../helpers/temporal-env.js';
import { startWorkerProcess } from '../helpers/worker-process.js';

const server = useDevServer();

const procFile = (pid: number | undefined, name: string) => readFileSync(`/proc/${pid}/${name}`, 'latin1');

describe('key material', () => {
  it("stays out of a worker's /proc/<pid>/environ, and the worker still encrypts with it", async () => {
    const secret = randomBytes(CODEC_KEY_BYTES);
    const marker = `temporal-secret-${randomUUID()}`;
    const taskQueue = `keys-${randomUUID()}`;
    const worker = await startWorkerProcess(server.env, taskQueue, [], {
      env: { DURABLE_BASH_CODEC_KEYS: `k1=${secret.toString('base64')}`, TEMPORAL_TEST_SECRET: marker },
    });
    try {
      const environ = procFile(worker.child.pid, 'environ');
      expect(environ).not.toContain(secret.toString('base64'));
      expect(environ).not.toContain(marker);
      expect(environ).toContain('PATH=');
      // The key is in use: a task runs, and its payloads are stored encrypted.
      const client = new Client({
        connection: server.env.connection,
        namespace: server.env.namespace ?? 'default',
        dataConverter: encryptingDataConverter(new CodecKeyring([{ id: 'k1', secret }])),
      });
      const tasks = new BashTasks({ client, taskQueue });
      const taskId = await tasks.start({ command: 'echo hi', description: 'Says hi', background: false });
      expect((await tasks.result(taskId)).stdout.tail).toBe('hi\n');
      const { events } = await server.env.client.workflow.getHandle(taskId).fetchHistory();
      const input = events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
      expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe(ENCRYPTED_ENCODING);
    } finally {
      await worker.crash();
    }
  });

  it('stays out of /proc/<pid>/cmdline when given as --api-key, and the process still reads it', async () => {
    const hide = fileURLToPath(new URL('../../dist/worker/hide-key-material.js', import.meta.url));
    const script = `import(${JSON.stringify(hide)}).then(({ hideKeyMaterial }) => {
      const hidden = hideKeyMaterial();
      const seen = { hidden, env: process.env.TEMPORAL_API_KEY, argv: process.argv.slice(1) };
      process.stdout.write(JSON.stringify(seen) + '\\n');
      setTimeout(() => undefined, 30_000);
    })`;
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', script, '--', '--api-key', 'flag-secret', '--api-key=other-secret'],
      {
        env: { PATH: process.env.PATH, TEMPORAL_API_KEY: 'env-secret' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      // The process itself still has every value.
      expect(JSON.parse(line.toString())).toEqual({
        hidden: { variables: ['TEMPORAL_API_KEY'], flagValues: 2 },
        env: 'env-secret',
        argv: ['--api-key', 'flag-secret', '--api-key=other-secret'],
      });
      const cmdline = procFile(child.pid, 'cmdline');
      const environ = procFile(child.pid, 'environ');
      for (const secret of ['flag-secret', 'other-secret', 'env-secret']) {
        expect(cmdline).not.toContain(secret);
        expect(environ).not.toContain(secret);
      }
      expect(cmdline).toContain('--api-key');
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  });

  it('is out of reach of commands when given as a file, even a world-readable one', async () => {
    const secret = randomBytes(CODEC_KEY_BYTES);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-keys-'));
    const keyFile = path.join(dir, 'keys');
    writeFileSync(keyFile, `k1=${secret.toString('base64')}\n`);
    chmodSync(dir, 0o755);
    chmodSync(keyFile, 0o644);
    const taskQueue = `keys-${randomUUID()}`;
    const worker = await startWorkerProcess(server.env, taskQueue, ['--codec-key-file', keyFile]);
    try {
      const client = new Client({
        connection: server.env.connection,
        namespace: server.env.namespace ?? 'default',
        dataConverter: encryptingDataConverter(new CodecKeyring([{ id: 'k1', secret }])),
      });
      const tasks = new BashTasks({ client, taskQueue });
      const taskId = await tasks.start({
        command: `cat ${keyFile} 2>&1; grep -rs ${secret.toString('base64').slice(0, 16)} ${dir}; true`,
        description: 'Reads the key file',
        background: false,
        owner: 'attacker',
      });
      const { stdout } = await tasks.result(taskId);
      expect(stdout.tail).not.toContain(secret.toString('base64').slice(0, 16));
    } finally {
      await worker.crash();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
