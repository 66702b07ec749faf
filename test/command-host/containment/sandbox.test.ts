// The bubblewrap sandbox, for real: a dev server, a worker with `sandbox: 'bwrap'`, and commands that
// try to write outside their workdir, reach the Temporal server, use capabilities or see the host's
// processes. The normal tool tests also run inside it: `npm run test:sandbox`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../../src/client/bash-tasks.js';
import { readRecord } from '../../../src/command-host/supervisor/supervisor-records.js';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import type { Tool } from '../../../src/shared/tool-types.js';
import { createBashTools } from '../../../src/tools/create-bash-tools.js';
import type { BashWorker } from '../../../src/worker/bash-worker.js';
import { type RunningWorker, startBashWorker } from '../../helpers/bash-worker.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import { text } from '../../helpers/tool-calls.js';

let env: TestWorkflowEnvironment;
let worker: RunningWorker;
let bash: Tool;
let root: string;
let workdir: string;
let tasks: BashTasks;

const run = async (command: string) =>
  text(await bash.execute({ command, description: 'Sandboxed', workdir }));

beforeAll(async () => {
  env = await createDevServerEnv();
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sandbox-')));
  workdir = path.join(root, 'work');
  writeFileSync(path.join(root, 'outside.txt'), 'host file\n');
  mkdirSync(workdir);
  worker = await startBashWorker(env, { sandbox: 'bwrap', spillDir: path.join(root, 'spill') });
  [bash] = createBashTools({ client: env.client, taskQueue: worker.taskQueue }) as [Tool];
  tasks = new BashTasks({ client: env.client, taskQueue: worker.taskQueue });
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

describe('the bwrap sandbox', () => {
  it('says at worker start that it is in force', () => {
    expect((worker.worker as BashWorker).containment).toContain(
      'sandbox: bwrap (read-only root, writable workdir, private /tmp, no network, no capabilities, own PID namespace)',
    );
  });

  it('lets a command write its workdir and nothing outside it', async () => {
    expect(await run('echo made > inside.txt && cat inside.txt')).toBe('made\n');
    expect(existsSync(path.join(workdir, 'inside.txt'))).toBe(true);
    expect(await run('touch /etc/durable-bash-sandbox-test')).toBe(
      "[stderr]\ntouch: cannot touch '/etc/durable-bash-sandbox-test': Read-only file system\n[exit code: 1]",
    );
    expect(existsSync('/etc/durable-bash-sandbox-test')).toBe(false);
    expect(await run(`echo x > ${os.homedir()}/durable-bash-sandbox-test`)).toBe(
      `[stderr]\nbash: line 1: ${os.homedir()}/durable-bash-sandbox-test: Read-only file system\n[exit code: 1]`,
    );
  });

  it('gives each command a private /tmp: what it writes there never reaches the host', async () => {
    const name = `durable-bash-private-${process.pid}`;
    expect(await run(`echo x > /tmp/${name} && cat /tmp/${name}`)).toBe('x\n');
    expect(existsSync(`/tmp/${name}`)).toBe(false);
    // The workdir's parent lies in the private /tmp too: the host's file beside it is untouched.
    expect(await run(`echo changed > ${root}/outside.txt`)).toBe('(no output)');
    expect(readFileSync(path.join(root, 'outside.txt'), 'utf8')).toBe('host file\n');
  });

  it("keeps a workdir read-only unless it is the session's own, and refuses one in the spill directory", async () => {
    const inWorkdir = async (dir: string, command: string) =>
      text(await bash.execute({ command, description: 'Escape', workdir: dir }));
    // Not the worker's to hand over (a system directory, one holding the spill directory): there, as read-only as the rest.
    for (const dir of ['/', root, '/etc/ssh'])
      expect(await inWorkdir(dir, 'pwd; touch here')).toBe(
        `${dir}\n[stderr]\ntouch: cannot touch 'here': Read-only file system\n[exit code: 1]`,
      );
    expect(existsSync(path.join(root, 'here'))).toBe(false);
    expect(await inWorkdir(path.join(root, 'spill', '.bin'), 'touch durable-bash-supervisor')).toBe(
      `workdir ${path.join(root, 'spill', '.bin')} cannot be used by a session: it lies in the worker's spill directory`,
    );
  });

  it("hides /run (the host's sockets) and the spill directory", async () => {
    expect(await run('ls -A /run')).toBe('(no output)');
    expect(await run(`ls -A ${path.join(root, 'spill')}`)).toBe('.bin\n');
  });

  it('delivers a kill that comes before the command has started inside', async () => {
    const taskId = await tasks.start({
      command: 'sleep 30',
      description: 'Early kill',
      background: true,
      workdir,
    });
    // The kill comes once the supervisor has launched the sandbox (its record names the launcher),
    // while bwrap is still setting up: it waits for the command inside, then reaches it. (A kill
    // before the launch is a tombstone: the task ends killed before the command started.)
    const state = taskFiles(path.join(root, 'spill'), taskId).state;
    await expect
      .poll(async () => (await readRecord(state))?.pid ?? 0, {
        interval: 5,
        timeout: 30_000,
      })
      .toBeGreaterThan(0);
    expect(await tasks.kill(taskId, undefined)).toBe('killed');
    const result = await tasks.result(taskId);
    expect(result.signal).toBe('SIGTERM');
  });

  it('cannot connect to the Temporal server', async () => {
    const [host, port] = env.address.split(':') as [string, string];
    const address = host === 'localhost' ? '127.0.0.1' : host;
    const output = await run(`exec 3<>/dev/tcp/${address}/${port} && echo connected`);
    expect(output).not.toContain('connected');
    expect(output).toMatch(/\[exit code: 1\]$/);
  });

  it('runs with no effective capabilities, even as root', async () => {
    expect(await run('grep CapEff /proc/self/status')).toBe('CapEff:\t0000000000000000\n');
  });

  it('sees only its own processes, in a PID namespace of its own', async () => {
    // bwrap's init (1), the inner supervisor, bash and ps.
    const output = await run('ps -e -o pid= | wc -l');
    expect(Number(output.trim())).toBeLessThanOrEqual(5);
  });

  it('keeps the texts exact: a trapped TERM, a signal death, an exit code', async () => {
    const timedOut = await bash.execute({
      command: 'trap "echo trapped; exit 0" TERM; sleep 30 & wait',
      description: 'Trap',
      timeoutMs: 500,
      workdir,
    });
    expect(text(timedOut)).toBe('trapped\n[timed out after 500ms]');
    const killed = await bash.execute({ command: 'sleep 30', description: 'Die', timeoutMs: 500, workdir });
    expect(text(killed)).toBe('(no output)\n[timed out after 500ms]\n[killed by signal: SIGTERM]');
    expect(await run('exit 7')).toBe('(no output)\n[exit code: 7]');
  });
});

describe('failing closed', () => {
  it('refuses to start a worker whose sandbox cannot start', async () => {
    const saved = process.env.DURABLE_BASH_BWRAP;
    process.env.DURABLE_BASH_BWRAP = path.join(os.tmpdir(), 'no-such-bwrap');
    try {
      await expect(startBashWorker(env, { sandbox: 'bwrap' })).rejects.toThrow(
        `the bwrap sandbox cannot start on this host: no bwrap at ${process.env.DURABLE_BASH_BWRAP} (install bubblewrap)`,
      );
    } finally {
      if (saved === undefined) delete process.env.DURABLE_BASH_BWRAP;
      else process.env.DURABLE_BASH_BWRAP = saved;
    }
  });

  it('refuses when bwrap is there but cannot make its namespaces', async () => {
    const fake = path.join(root, 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const saved = process.env.DURABLE_BASH_BWRAP;
    process.env.DURABLE_BASH_BWRAP = fake;
    try {
      await expect(startBashWorker(env, { sandbox: 'bwrap' })).rejects.toThrow(
        'the bwrap sandbox cannot start on this host: bwrap: No permissions to create new namespace',
      );
    } finally {
      if (saved === undefined) delete process.env.DURABLE_BASH_BWRAP;
      else process.env.DURABLE_BASH_BWRAP = saved;
    }
  });
});
