/**
 * Worker Versioning (docs/OPERATIONS.md): `durable-bash worker --deployment-name --build-id` as two
 * versions of one Worker Deployment on a dev server, each a host of its own, and the Temporal CLI's
 * `worker deployment set-current-version` to v2 while tasks started under v1 run and print. Real
 * processes throughout: the dev server, both workers, the CLI.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerDeploymentOptions } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { durableBashPlugin } from '../../src/plugin/index.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { deploymentVersion } from '../../src/worker/deployment-version.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { readToEnd, splitAnswer } from '../helpers/read-to-end.js';
import { removeDir } from '../helpers/remove-dir.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { TEST_WORKDIR_ROOTS } from '../helpers/workdir-roots.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

const execFileAsync = promisify(execFile);
const AUTO_UPGRADE = temporal.api.enums.v1.VersioningBehavior.VERSIONING_BEHAVIOR_AUTO_UPGRADE;
const temporalCli = findTemporalBinary(TemporalBinary.cli);

let env: TestWorkflowEnvironment;
const spillDirs: string[] = [];
const workers: WorkerProcess[] = [];
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-versioning-work-'));

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.crash()));
  for (const dir of spillDirs) await endLeftCommands(dir);
  await env?.teardown();
  for (const dir of [workdir, ...spillDirs]) removeDir(dir);
});

/** `temporal worker deployment <args>` against the test's server; its stdout. */
async function deployment(...args: string[]): Promise<string> {
  if (temporalCli.kind === 'download') throw new Error('no Temporal CLI: run npm run provision');
  const { stdout } = await execFileAsync(temporalCli.path, [
    'worker',
    'deployment',
    ...args,
    '--address',
    env.address,
    '--namespace',
    env.namespace ?? 'default',
  ]);
  return stdout;
}

/** The Worker Deployment version a task's workflow last ran on, and its versioning behavior. */
async function versionOf(taskId: string): Promise<{ version?: string | null; behavior?: unknown }> {
  const { raw } = await env.client.workflow.getHandle(taskId).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  const version = info?.deploymentVersion;
  return {
    version: version ? `${version.deploymentName}.${version.buildId}` : null,
    behavior: info?.behavior,
  };
}

describe('durable-bash worker as a Worker Deployment version', () => {
  it('keeps tasks of v1 running, exact, when v2 becomes current: they move to v2, their commands stay on their host', async () => {
    const taskQueue = `versioning-${randomUUID()}`;
    const name = `durable-bash-${randomUUID().slice(0, 8)}`;
    const start = async (buildId: string) => {
      const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-versioning-spill-'));
      spillDirs.push(spillDir);
      const worker = await startWorkerProcess(env, taskQueue, [
        ...['--deployment-name', name, '--build-id', buildId],
        ...['--host-id', `versioning-${buildId}-${randomUUID().slice(0, 8)}`, '--spill-dir', spillDir],
        ...['--workdir', workdir],
      ]);
      workers.push(worker);
      // A version exists once its worker polled (set-current-version refuses one that does not),
      // and holds only the command queue: the host's own queues stay unversioned.
      await expect
        .poll(() =>
          deployment('describe-version', '--deployment-name', name, '--build-id', buildId).catch(() => ''),
        )
        .toContain(taskQueue);
      const described = await deployment(
        'describe-version',
        '--deployment-name',
        name,
        '--build-id',
        buildId,
      );
      expect(described).not.toContain('@');
      return worker;
    };
    await start('v1');
    await deployment('set-current-version', '--deployment-name', name, '--build-id', 'v1', '--yes');

    const session = agent(`versioning-${randomUUID().slice(0, 8)}`);
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
    const marker = `versioning-sleeper-${randomUUID().slice(0, 8)}`;
    const printer = await startBackground(
      tools.bash,
      'for i in $(seq 1 30); do echo "line $i"; sleep 0.2; done; exit 7',
      session,
    );
    const sleeper = await startBackground(tools.bash, `(exec -a ${marker} sleep 600) & wait`, session);
    await expect.poll(() => versionOf(printer)).toEqual({ version: `${name}.v1`, behavior: AUTO_UPGRADE });
    const firstRead = text(await tools.bash_output.execute({ task_id: printer }, session));
    const shownBefore = splitAnswer(firstRead).shown;

    await start('v2');
    await deployment('set-current-version', '--deployment-name', name, '--build-id', 'v2', '--yes');

    // The printer's end comes after the switch: its workflow takes it on v2, its command on v1's host.
    const rest = await readToEnd(tools.bash_output, printer, session, { waitMs: 2_000, timeoutMs: 60_000 });
    expect(shownBefore + rest.output).toBe(Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(rest.status).toBe('[status: completed, exit code: 7]');
    expect(await versionOf(printer)).toEqual({ version: `${name}.v2`, behavior: AUTO_UPGRADE });

    // A kill after the switch: taken by v2's workflow code, carried out on the sleeper's host (v1's).
    expect(text(await tools.bash_kill.execute({ task_id: sleeper }, session))).toBe(
      `killed background task ${sleeper}`,
    );
    await waitFor(() => processesMatching(new RegExp(`^${marker}`)).length === 0, 15_000);
    expect(await versionOf(sleeper)).toMatchObject({ version: `${name}.v2` });

    // A new task starts on v2.
    const fresh = await startBackground(tools.bash, 'echo fresh; exit 4', session);
    const freshRead = await readToEnd(tools.bash_output, fresh, session, { waitMs: 1_000 });
    expect(freshRead).toMatchObject({ output: 'fresh\n', status: '[status: completed, exit code: 4]' });
    expect(await versionOf(fresh)).toEqual({ version: `${name}.v2`, behavior: AUTO_UPGRADE });
  });

  it('runs a worker that carries the plugin as a version of its own options, and refuses a pinned default in one line', async () => {
    const taskQueue = `versioning-plugin-${randomUUID()}`;
    const name = `durable-bash-plugin-${randomUUID().slice(0, 8)}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-versioning-spill-'));
    spillDirs.push(spillDir);
    const create = (workerDeploymentOptions: WorkerDeploymentOptions) =>
      Worker.create({
        connection: env.nativeConnection,
        namespace: env.namespace ?? 'default',
        taskQueue,
        workerDeploymentOptions,
        plugins: [
          durableBashPlugin({
            taskQueue,
            executor: { spillDir, defaultWorkdir: workdir, workdirRoots: TEST_WORKDIR_ROOTS },
          }),
        ],
      });
    await expect(
      create({
        version: { deploymentName: name, buildId: 'p0' },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'PINNED',
      }),
    ).rejects.toThrow(
      /^durable-bash: a versioned worker of its workflows needs defaultVersioningBehavior 'AUTO_UPGRADE', got "PINNED": /,
    );
    expect(() => deploymentVersion('a.b', 'p1')).toThrow(/^invalid deployment name: /);
    const worker = await create(deploymentVersion(name, 'p1'));
    await worker.runUntil(async () => {
      await expect
        .poll(() =>
          deployment('describe-version', '--deployment-name', name, '--build-id', 'p1').catch(() => ''),
        )
        .toContain(taskQueue);
      await deployment('set-current-version', '--deployment-name', name, '--build-id', 'p1', '--yes');
      const tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
      const session = agent(`versioning-plugin-${randomUUID().slice(0, 8)}`);
      const taskId = await startBackground(tools.bash, 'echo from the plugin', session);
      const read = await readToEnd(tools.bash_output, taskId, session, { waitMs: 1_000 });
      expect(read).toMatchObject({
        output: 'from the plugin\n',
        status: '[status: completed, exit code: 0]',
      });
      expect(await versionOf(taskId)).toEqual({ version: `${name}.p1`, behavior: AUTO_UPGRADE });
    });
  });
});
