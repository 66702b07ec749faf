// Issue 48, "No command reaches the control plane": a worker whose sessions cannot be kept apart
// used to start anyway under `--isolation auto` (the default), every command then running as the
// worker's user and reaching the Temporal server (the shipped container image did exactly that).
// Now a worker without isolation starts only when told `--isolation none`; `auto` and `session`
// refuse to start, with one line naming what is missing and how to install it. `durable-bash dev`
// alone goes on without, and says so. The host here lacks slirp4netns: the worker runs with a PATH
// that holds every program of this machine's but it (and apt-get, so dev's provisioning cannot
// install it).

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isSessionsApartUnavailableError } from '../../src/shared/errors.js';
import { createBashWorker } from '../../src/worker/bash-worker.js';
import { CLI_BIN, cli } from '../helpers/cli.js';
import { waitFor } from '../helpers/processes.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';

let env: TestWorkflowEnvironment;
let root: string;
/** A PATH with every program of this machine's PATH but slirp4netns and apt-get. */
let pathWithoutSlirp: string;

/** Links every program of `PATH` into one directory, but the ones named. */
function pathWithout(names: string[], dir: string): string {
  mkdirSync(dir);
  for (const from of (process.env.PATH ?? '').split(':')) {
    let entries: string[];
    try {
      entries = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of entries) {
      if (names.includes(name)) continue;
      try {
        symlinkSync(path.join(from, name), path.join(dir, name));
      } catch {
        // An earlier PATH entry had it: that one wins, as in a shell.
      }
    }
  }
  return dir;
}

const PROVISION_SCRIPT = path.resolve('scripts/provision-sandbox.sh');
const REFUSAL = `durable-bash: sessions cannot be kept apart on this host: no slirp4netns on PATH (install it: apt-get install slirp4netns, or bash ${PROVISION_SCRIPT}); --isolation none runs commands without isolation\n`;
const NONE =
  "isolation: none (--isolation none): every command runs as the worker's user, sees its processes and reaches the host's loopback (the Temporal server)";

beforeAll(async () => {
  env = await createDevServerEnv();
  root = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-auto-refuses-'));
  pathWithoutSlirp = pathWithout(['slirp4netns', 'apt-get'], path.join(root, 'bin'));
});

afterAll(async () => {
  await env?.teardown();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** `durable-bash worker` on this file's server, on a host without slirp4netns, to its end. */
const workerWithoutSlirp = (taskQueue: string, args: string[] = []) =>
  cli(
    [
      'worker',
      '--address',
      env.address,
      '--task-queue',
      taskQueue,
      '--spill-dir',
      mkdtempSync(path.join(root, 'spill-')),
      ...args,
    ],
    { PATH: pathWithoutSlirp },
  );

describe('a worker on a host where sessions cannot be kept apart', () => {
  it('refuses to start by default (--isolation auto), naming what is missing and how to install it', async () => {
    expect(await workerWithoutSlirp(`auto-${process.pid}`)).toEqual({ code: 1, stdout: '', stderr: REFUSAL });
  });

  it('refuses to start with --isolation auto and --isolation session alike', async () => {
    for (const mode of ['auto', 'session'])
      expect(await workerWithoutSlirp(`${mode}-${process.pid}`, ['--isolation', mode])).toEqual({
        code: 1,
        stdout: '',
        stderr: REFUSAL,
      });
  });

  it('starts with --isolation none, and says what that leaves open', async () => {
    const taskQueue = `none-${process.pid}`;
    const worker = spawn(
      'node',
      [
        CLI_BIN,
        'worker',
        '--address',
        env.address,
        '--task-queue',
        taskQueue,
        '--spill-dir',
        mkdtempSync(path.join(root, 'spill-')),
        '--isolation',
        'none',
      ],
      { env: { ...process.env, PATH: pathWithoutSlirp }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    worker.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      await waitFor(() => stderr.includes('worker polling') || worker.exitCode !== null, 60_000);
      const [start, polling] = stderr.split('\n');
      expect(start?.startsWith('durable-bash: containment: ')).toBe(true);
      expect(start?.endsWith(`; ${NONE}`)).toBe(true);
      expect(polling).toBe(`durable-bash: worker polling ${taskQueue} on ${env.address} (default)`);
    } finally {
      worker.kill('SIGKILL');
    }
  });

  it("createBashWorker keeps the same rule: isolation 'auto' refuses with SessionsApartUnavailableError", async () => {
    const saved = process.env.PATH;
    process.env.PATH = pathWithoutSlirp;
    let refusal: unknown;
    try {
      await createBashWorker({
        connection: env.nativeConnection,
        taskQueue: `library-${process.pid}`,
        executor: { isolation: 'auto', spillDir: mkdtempSync(path.join(root, 'spill-')) },
        workflowBundle: { codePath: inject('workflowBundlePath') },
      });
    } catch (err) {
      refusal = err;
    } finally {
      process.env.PATH = saved;
    }
    expect(isSessionsApartUnavailableError(refusal)).toBe(true);
    expect((refusal as Error).message).toBe(REFUSAL.slice('durable-bash: '.length, -1));
  });
});

describe('durable-bash dev on a host where sessions cannot be kept apart', () => {
  let dev: ChildProcess | undefined;

  afterAll(async () => {
    if (dev?.exitCode === null) {
      dev.kill('SIGINT');
      await new Promise((resolve) => dev?.once('exit', resolve));
    }
  });

  it('goes on without isolation, and says so', async () => {
    const dir = mkdtempSync(path.join(root, 'dev-'));
    dev = spawn('node', [CLI_BIN, 'dev', '--port', '0', '--db', path.join(dir, 'temporal.db')], {
      cwd: dir,
      env: { ...process.env, PATH: pathWithoutSlirp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    dev.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    dev.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitFor(() => stdout.includes('Ctrl-C stops') || dev?.exitCode !== null, 90_000);
    expect(stderr.split('\n')).toEqual([
      `durable-bash: no slirp4netns to keep sessions apart; provisioning with ${PROVISION_SCRIPT}`,
      'provision-sandbox: sessions apart need slirp4netns, missing here; install it: apt-get install -y slirp4netns',
      'durable-bash: starting the Temporal dev server',
      `durable-bash: sessions cannot be kept apart on this host: no slirp4netns on PATH (install it: apt-get install slirp4netns, or bash ${PROVISION_SCRIPT}); dev runs commands without isolation, as with --isolation none`,
      '',
    ]);
    const containment = stdout.split('\n').find((line) => line.startsWith('  containment: '));
    expect(containment?.endsWith(`; ${NONE}`)).toBe(true);
  });
});
