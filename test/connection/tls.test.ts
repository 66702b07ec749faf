/**
 * Real TLS end to end: a dev server behind a TLS proxy that demands a client certificate from a
 * certificate authority made for this file. The worker and the clients reach it only through
 * the proxy, configured the ways users configure them (TEMPORAL_* variables, a temporal.toml
 * profile, CLI flags).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectClient } from '../../src/connection/connect.js';
import { resolveConnectionConfig } from '../../src/connection/connection-config.js';
import { connectNativeConnection } from '../../src/connection/native-connection.js';
import { TemporalUnreachableError } from '../../src/shared/errors.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { type BashWorker, createBashWorker } from '../../src/worker/bash-worker.js';
import { CLI_BIN, cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';
import {
  type Certificates,
  makeCertificates,
  SERVER_NAME,
  startTlsProxy,
  type TlsProxy,
} from './tls-fixture.js';

const withoutTemporalVariables = () =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')));

/** The CLI with only the variables given (no TEMPORAL_* from this process). */
const cliWithOnly = (args: string[], env: Record<string, string>) =>
  cli(args, env, withoutTemporalVariables());

let env: TestWorkflowEnvironment;
let certs: Certificates;
let proxy: TlsProxy;
let worker: BashWorker;
let running: Promise<void>;
const taskQueue = `tls-${Date.now()}`;

/** The standard variables for mTLS through the proxy. */
const mtlsEnv = (): Record<string, string> => ({
  TEMPORAL_ADDRESS: proxy.address,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.caCertPath,
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
  TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clientCertPath,
  TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clientKeyPath,
});

beforeAll(async () => {
  certs = makeCertificates();
  env = await createDevServerEnv();
  proxy = await startTlsProxy(certs, env.address);
  // The worker also connects over mTLS, configured by the same variables.
  const config = resolveConnectionConfig({ env: mtlsEnv() });
  worker = await createBashWorker({
    connection: await connectNativeConnection(config),
    namespace: config.namespace,
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    executor: { workdirRoots: TEST_WORKDIR_ROOTS },
  });
  running = worker.run();
});

afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await proxy?.close();
  await env?.teardown();
  certs?.remove();
});

describe('mTLS through TEMPORAL_* variables', () => {
  it('lets connectClient and a worker with the client certificate run a command', async () => {
    const client = await connectClient({ env: mtlsEnv() });
    try {
      const [bash] = createBashTools({ client, taskQueue }) as [Tool];
      expect(
        await bash.execute({ command: 'echo over mtls; echo err >&2; exit 3', description: 'tls' }),
      ).toEqual({
        content: [{ type: 'text', text: 'over mtls\n[stderr]\nerr\n[exit code: 3]' }],
      });
    } finally {
      await client.connection.close();
    }
  });

  it('fails connectClient at once, in one line, without the client certificate', async () => {
    const { TEMPORAL_TLS_CLIENT_CERT_PATH: _cert, TEMPORAL_TLS_CLIENT_KEY_PATH: _key, ...noCert } = mtlsEnv();
    const started = Date.now();
    const failure = await connectClient({ env: noCert }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(TemporalUnreachableError);
    expect((failure as Error).message).toBe(
      `Temporal is unreachable at ${proxy.address}: TLS handshake failed: tlsv13 alert certificate required`,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('fails a worker connection in one line with a certificate from another authority', async () => {
    const failure = await connectNativeConnection({
      env: {
        ...mtlsEnv(),
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.strangerCertPath,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.strangerKeyPath,
      },
    }).catch((err: unknown) => err);
    expect((failure as Error).message).toBe(
      `Temporal is unreachable at ${proxy.address}: TLS handshake failed: the server closed the connection after the handshake (does it trust this client certificate?)`,
    );
  });

  it("fails in one line when the server's certificate does not carry the name checked", async () => {
    const { TEMPORAL_TLS_SERVER_NAME: _name, ...noName } = mtlsEnv();
    const failure = await connectClient({ env: noName }).catch((err: unknown) => err);
    expect((failure as Error).message).toBe(
      `Temporal is unreachable at ${proxy.address}: TLS handshake failed: the server's certificate is not valid for 127.0.0.1`,
    );
  });
});

describe('API keys', () => {
  it('reach the server as a bearer token from the client and the worker connection', async () => {
    const apiKeyEnv = { ...mtlsEnv(), TEMPORAL_API_KEY: 'test-api-key' };
    proxy.firstRequestHeaders.length = 0;
    const client = await connectClient({ env: apiKeyEnv });
    await client.workflowService.getSystemInfo({});
    await client.connection.close();
    const native = await connectNativeConnection({ env: apiKeyEnv });
    await native.close();
    expect(
      proxy.firstRequestHeaders.map((headers) => [
        headers['user-agent']?.split('/')[0],
        headers.authorization,
      ]),
    ).toEqual([
      ['grpc-node-js', 'Bearer test-api-key'],
      ['tonic', 'Bearer test-api-key'],
    ]);
  });
});

describe('the CLI', () => {
  let configFile: string;
  beforeAll(() => {
    configFile = path.join(certs.dir, 'temporal.toml');
    writeFileSync(
      configFile,
      [
        '[profile.default]',
        'address = "127.0.0.1:1"',
        '',
        '[profile.secure]',
        `address = "${proxy.address}"`,
        '[profile.secure.tls]',
        `server_ca_cert_path = "${certs.caCertPath}"`,
        `client_cert_path = "${certs.clientCertPath}"`,
        `client_key_path = "${certs.clientKeyPath}"`,
        `server_name = "${SERVER_NAME}"`,
        '',
      ].join('\n'),
    );
  });

  it('runs a command with the temporal.toml profile TEMPORAL_PROFILE selects', async () => {
    const result = await cliWithOnly(['run', '--task-queue', taskQueue, '--', 'echo from profile'], {
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'secure',
    });
    expect(result).toEqual({ code: 0, stdout: 'from profile\n', stderr: '' });
  });

  it('runs a command with TLS flags, and says in one line that it cannot without the client certificate', async () => {
    const flags = [
      '--address',
      proxy.address,
      '--tls-ca-path',
      certs.caCertPath,
      '--tls-server-name',
      SERVER_NAME,
    ];
    const withCert = ['--tls-cert-path', certs.clientCertPath, '--tls-key-path', certs.clientKeyPath];
    expect(
      await cliWithOnly(
        ['run', ...flags, ...withCert, '--task-queue', taskQueue, '--', 'echo from flags'],
        {},
      ),
    ).toEqual({
      code: 0,
      stdout: 'from flags\n',
      stderr: '',
    });
    expect(await cliWithOnly(['run', ...flags, '--task-queue', taskQueue, '--', 'echo never'], {})).toEqual({
      code: 1,
      stdout: '',
      stderr: `durable-bash: Temporal is unreachable at ${proxy.address}: TLS handshake failed: tlsv13 alert certificate required\n`,
    });
  });

  it('runs `worker` over mTLS from TEMPORAL_* variables, which its commands never see', async () => {
    const workerQueue = `${taskQueue}-cli-worker`;
    const roots = TEST_WORKDIR_ROOTS.flatMap((root) => ['--workdir-root', root]);
    const child = spawn('node', [CLI_BIN, 'worker', '--task-queue', workerQueue, ...roots], {
      env: { ...withoutTemporalVariables(), ...mtlsEnv(), TEMPORAL_API_KEY: 'worker-secret' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let banner = '';
      child.stderr.on('data', (chunk: Buffer) => {
        banner += chunk.toString();
      });
      await waitFor(() => /worker polling [^\n]*\n/.test(banner) || child.exitCode !== null, 30_000);
      expect(banner).toContain(`durable-bash: worker polling ${workerQueue} on ${proxy.address} (default)\n`);
      const result = await cliWithOnly(
        ['run', '--task-queue', workerQueue, '--', 'env | grep -c ^TEMPORAL_; true'],
        mtlsEnv(),
      );
      expect(result).toEqual({ code: 0, stdout: '0\n', stderr: '' });
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
  });

  it('says in one line that a profile does not exist', async () => {
    expect(await cliWithOnly(['ps', '--profile', 'nope'], { TEMPORAL_CONFIG_FILE: configFile })).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "durable-bash: cannot use the Temporal connection settings: Profile 'nope' not found in config data\n",
    });
  });
});
