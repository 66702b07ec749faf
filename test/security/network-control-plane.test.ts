// Issue 48, "No command reaches the control plane": a session's commands must not reach the
// Temporal server (on another host, by the address the worker connects to), a service on the
// worker host's own address, or the cloud metadata addresses, while an allowed host port and the
// rest of the network stay reachable. On a worker host's network made for the test
// (test/helpers/test-networks.ts): `durable-bash worker` runs in "host" (198.51.100.1), keeping
// sessions apart; the Temporal server runs on another host ("internet", at 198.51.100.3), with a
// metadata service at 169.254.169.254; tasks start with `durable-bash run`, as an operator's
// agent would, from "host". And the sandbox no longer gives commands the host's network: a worker
// asked for it refuses to start. Needs root, bwrap and slirp4netns (scripts/provision-sandbox.sh).
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSessionNetworks } from '../../src/command-host/containment/session-isolation.js';
import { compileExecutorOptions, SANDBOX_NETWORK_REFUSED } from '../../src/command-host/executor-config.js';
import { CLI_BIN } from '../helpers/cli.js';
import {
  connectCommand,
  HOST_ADDRESS,
  INTERNET_ADDRESS,
  inNs,
  makeTestNetworks,
  startTemporalIn,
  type TestNetworks,
} from '../helpers/test-networks.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** The Temporal server's host: another machine of the worker host's network. */
const TEMPORAL_HOST = '198.51.100.3';
const TEMPORAL_ADDRESS = `${TEMPORAL_HOST}:7233`;
const METADATA_ADDRESS = '169.254.169.254';
const ALLOWED_PORT = 5432;
const taskQueue = `network-control-plane-${process.pid}`;

let nets: TestNetworks;
let temporal: ChildProcess | undefined;
let worker: WorkerProcess | undefined;
let root: string;
let spillDir: string;
let workdir: string;

/** What `durable-bash run --owner mallory -- <command>` prints, run from the worker's host. */
async function runAsSession(command: string): Promise<string> {
  const { stdout } = await promisify(execFile)('nsenter', [
    `--net=${nets.hostNs}`,
    process.execPath,
    CLI_BIN,
    'run',
    '--address',
    TEMPORAL_ADDRESS,
    '--task-queue',
    taskQueue,
    '--owner',
    'mallory',
    '--workdir',
    workdir,
    '--',
    command,
  ]);
  return stdout;
}

beforeAll(async () => {
  nets = await makeTestNetworks();
  // Another host of the network: the Temporal server's, and a metadata service as clouds give one.
  inNs(
    nets.internetNs,
    `ip addr add ${TEMPORAL_HOST}/24 dev v1 && ip addr add ${METADATA_ADDRESS}/32 dev lo`,
  );
  inNs(nets.hostNs, `ip route add ${METADATA_ADDRESS}/32 via ${INTERNET_ADDRESS}`);
  temporal = await startTemporalIn(nets.internetNs, TEMPORAL_HOST, 7233);
  await nets.serve(nets.internetNs, METADATA_ADDRESS, 80, 'the metadata service');
  await nets.serve(nets.internetNs, INTERNET_ADDRESS, 8080, 'the internet');
  await nets.serve(nets.hostNs, HOST_ADDRESS, 8081, 'the host address service');
  await nets.serve(nets.hostNs, '127.0.0.1', ALLOWED_PORT, 'the allowed database');
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-control-plane-')));
  spillDir = path.join(root, 'spill');
  // A directory any session may enter: the commands only connect.
  workdir = mkdtempSync(path.join(root, 'work-'));
  chmodSync(root, 0o755);
  chmodSync(workdir, 0o755);
  worker = await startWorkerProcess(
    { address: TEMPORAL_ADDRESS },
    taskQueue,
    [
      '--isolation',
      'session',
      '--spill-dir',
      spillDir,
      '--workdir',
      workdir,
      '--allow-host-port',
      String(ALLOWED_PORT),
    ],
    { wrapper: ['nsenter', `--net=${nets.hostNs}`] },
  );
}, 180_000);

afterAll(async () => {
  await worker?.crash();
  if (spillDir) endSessionNetworks(spillDir);
  temporal?.kill('SIGKILL');
  await nets?.end();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("a session's network and the control plane", () => {
  it('says at the worker start what sessions cannot reach', () => {
    expect(worker?.stderr()).toContain(
      `isolation: sessions apart (a uid per session from 1879048192, own PID namespace, the session's own network reaching the host's loopback only at port ${ALLOWED_PORT}, without the host's own addresses, the Temporal server's (${TEMPORAL_HOST}) or link-local and metadata addresses, private /tmp and home)`,
    );
  });

  it('refuses the Temporal server at the address the worker connects to, on another host', async () => {
    expect(await runAsSession(connectCommand(TEMPORAL_HOST, 7233))).toBe('EACCES\n');
    // Every port of it: a session has no business with that host.
    expect(await runAsSession(connectCommand(TEMPORAL_HOST, 7243))).toBe('EACCES\n');
  });

  it("refuses a service on the worker host's own address", async () => {
    expect(await runAsSession(connectCommand(HOST_ADDRESS, 8081))).toBe('EACCES\n');
  });

  it('refuses link-local and metadata addresses', async () => {
    expect(await runAsSession(connectCommand(METADATA_ADDRESS, 80))).toBe('EACCES\n');
    // A session has no IPv6 way out at all (slirp4netns carries none); the refusal is there anyway.
    expect(await runAsSession(connectCommand('fd00:ec2::254', 80))).toBe('EACCES\n');
  });

  it('still reaches the host port the operator allows, and the rest of the network', async () => {
    expect(await runAsSession(connectCommand('127.0.0.1', ALLOWED_PORT))).toBe(
      'hello from the allowed database\n',
    );
    expect(await runAsSession(connectCommand(INTERNET_ADDRESS, 8080))).toBe('hello from the internet\n');
  });

  it('cannot take a refusal away', async () => {
    expect(await runAsSession('ip route del 169.254.0.0/16 2>&1; echo $?')).toBe(
      'RTNETLINK answers: Operation not permitted\n2\n',
    );
    expect(await runAsSession(connectCommand(METADATA_ADDRESS, 80))).toBe('EACCES\n');
  });
});

describe("the sandbox and the host's network", () => {
  it('is refused: a sandboxed command would share the network where the Temporal server is', async () => {
    expect(() => compileExecutorOptions({ sandbox: 'bwrap', sandboxNetwork: true }, taskQueue)).toThrow(
      SANDBOX_NETWORK_REFUSED,
    );
    const started = await promisify(execFile)(
      'nsenter',
      [
        `--net=${nets.hostNs}`,
        process.execPath,
        CLI_BIN,
        'worker',
        '--address',
        TEMPORAL_ADDRESS,
        '--task-queue',
        `${taskQueue}-sandbox`,
        '--spill-dir',
        path.join(root, 'sandbox-spill'),
        '--sandbox',
        'bwrap',
        '--sandbox-network',
      ],
      { timeout: 30_000 },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number | null; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(started).toEqual({
      code: 1,
      stderr:
        "durable-bash: sandboxNetwork (--sandbox-network) is refused: the host's network gives commands the Temporal server; for commands with a network, keep sessions apart (--isolation session), whose networks refuse it\n",
    });
  });
});
