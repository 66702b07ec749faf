import { existsSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { createRulePolicy } from '../../src/policy/rules.js';
import { CommandDeniedError, InvalidArgumentsError } from '../../src/shared/errors.js';
import { hostTaskQueue } from '../../src/shared/task-queues.js';
import { SandboxCommands, type SandboxScope, workspaceWorkdir } from '../../src/tools/sandbox-commands.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';

let env: TestWorkflowEnvironment;
const workers: RunningWorker[] = [];
const spillDirs: string[] = [];
const connections: NativeConnection[] = [];
let taskQueue: string;
let root: string;

beforeAll(async () => {
  env = await createDevServerEnv();
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sandbox-commands-')));
  mkdirSync(path.join(root, 'sub'));
  taskQueue = `test-sandbox-commands-${process.pid}`;
  // Two hosts of one command queue: a run goes to whichever answers, unless it is pinned.
  for (const hostId of ['host-a', 'host-b']) {
    const spillDir = mkdtempSync(path.join(os.tmpdir(), `durable-bash-spill-${hostId}-`));
    spillDirs.push(spillDir);
    const connection = await NativeConnection.connect({ address: env.address });
    connections.push(connection);
    workers.push(await startBashWorker(env, { hostId, spillDir }, taskQueue, connection));
  }
});

afterAll(async () => {
  for (const worker of workers) await worker.stop();
  for (const connection of connections) await connection.close();
  await env?.teardown();
});

const scopeOn = (hostId: string): SandboxScope => ({
  sessionId: 'sandbox-session',
  host: { hostId, hostQueue: hostTaskQueue(taskQueue, hostId) },
  root,
});

describe('sandbox commands', () => {
  it('runs every command of a session on its pinned host', async () => {
    const commands = new SandboxCommands({ client: env.client, taskQueue });
    for (const [index, hostId] of ['host-a', 'host-b'].entries()) {
      for (let run = 0; run < 3; run += 1) {
        const scope = scopeOn(hostId);
        const taskId = await commands.start(scope, { command: 'pwd', description: 'Print the workdir' });
        const outcome = await commands.foreground(scope, taskId);
        expect(outcome.kind).toBe('ended');
        if (outcome.kind !== 'ended') return;
        expect(outcome.result.stdout.tail).toBe(`${root}\n`);
        // The run's files are on its host's spill directory, and nowhere else.
        expect(existsSync(taskFiles(spillDirs[index] as string, taskId).stdout)).toBe(true);
        expect(existsSync(taskFiles(spillDirs[1 - index] as string, taskId).stdout)).toBe(false);
      }
    }
  });

  it("keeps a command's workdir inside the workspace", async () => {
    expect(workspaceWorkdir(root, 'sub')).toBe(path.join(root, 'sub'));
    expect(workspaceWorkdir(root, `${root}/sub/..`)).toBe(root);
    expect(workspaceWorkdir(root, undefined)).toBe(root);
    const commands = new SandboxCommands({ client: env.client, taskQueue });
    for (const workdir of ['..', '/etc', `${root}-other`, 'sub/../../x']) {
      await expect(
        commands.start(scopeOn('host-a'), { command: 'true', description: 'Stay inside', workdir }),
      ).rejects.toThrow(
        new InvalidArgumentsError(
          `invalid workdir: ${JSON.stringify(workdir)} is outside the session's workspace ${root}`,
        ),
      );
    }
  });

  it("applies the bash tool's argument checks and permission policy", async () => {
    const commands = new SandboxCommands({
      client: env.client,
      taskQueue,
      policy: createRulePolicy({
        rules: [{ prefix: 'rm', action: 'deny', reason: 'deleting files is not allowed' }],
        defaultAction: 'allow',
      }),
    });
    await expect(commands.start(scopeOn('host-a'), { command: ' ', description: 'Blank' })).rejects.toThrow(
      InvalidArgumentsError,
    );
    await expect(
      commands.start(scopeOn('host-a'), { command: 'rm -rf /tmp/x', description: 'Remove' }),
    ).rejects.toThrow(CommandDeniedError);
  });

  it("kills every running task of the session, listed or known, and no other session's", async () => {
    const commands = new SandboxCommands({ client: env.client, taskQueue });
    const scope = { ...scopeOn('host-a'), sessionId: 'sandbox-kill-all' };
    const other = { ...scopeOn('host-a'), sessionId: 'sandbox-kill-all-other' };
    const sleep = { command: 'echo up; sleep 600', description: 'Sleep', run_in_background: true };
    const mine = [await commands.start(scope, sleep), await commands.start(scope, sleep)];
    const theirs = await commands.start(other, sleep);
    // Running, each: a kill before the command starts ends it otherwise (killed before it started).
    for (const taskId of mine) await commands.tasks.read(taskId, scope.sessionId, { waitMs: 10_000 });
    await commands.tasks.read(theirs, other.sessionId, { waitMs: 10_000 });
    expect(await commands.killAll(scope, mine)).toBe(2);
    for (const taskId of mine)
      expect((await commands.tasks.snapshot(taskId, scope.sessionId)).state.status).toBe('killed');
    expect((await commands.tasks.snapshot(theirs, other.sessionId)).state.status).toBe('running');
    expect(await commands.killAll(other, [theirs])).toBe(1);
    expect(await commands.killAll(scope, mine)).toBe(0);
  });
});
