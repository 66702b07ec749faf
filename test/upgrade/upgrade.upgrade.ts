/**
 * A rolling upgrade under running tasks (docs/RELEASING.md, "The upgrade test"): tasks started
 * through the last release's client on the last release's worker (built from this repository's
 * history by scripts/build-release.sh), that worker replaced by this tree's while they run and
 * print, once stopped as a rolling upgrade stops it (SIGTERM) and once as a crash (SIGKILL).
 * Everything real: a dev server, both workers as `durable-bash worker` processes on one host id and
 * spill directory, both clients' `createBashTools` in this process, this tree's agent worker.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands, type RunningWorker } from '../helpers/bash-worker.js';
import { NoticeInbox } from '../helpers/notices.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { readToEnd, splitAnswer } from '../helpers/read-to-end.js';
import { removeDir } from '../helpers/remove-dir.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** The last release, built (or found built) by scripts/build-release.sh. */
const release = execFileSync('bash', ['scripts/build-release.sh'], { encoding: 'utf8' }).trim();
const releaseVersion = (
  JSON.parse(readFileSync(path.join(release, 'package.json'), 'utf8')) as { version: string }
).version;

let env: TestWorkflowEnvironment;
let agentWorker: RunningWorker;
const inbox = new NoticeInbox();
const agentQueue = `upgrade-agent-${randomUUID()}`;
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-upgrade-work-'));
const spillDirs: string[] = [];
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  env = await createDevServerEnv();
  agentWorker = await startAgentWorker(env, { taskQueue: agentQueue, agents: inbox });
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.crash()));
  for (const dir of spillDirs) await endLeftCommands(dir);
  await agentWorker?.stop();
  await env?.teardown();
  for (const dir of [workdir, ...spillDirs]) removeDir(dir);
});

/** The tools of a session, through the last release's library or this tree's. */
async function toolsOf(which: 'release' | 'current', taskQueue: string): Promise<Tools> {
  const options = { client: env.client, taskQueue, agentTaskQueue: agentQueue };
  if (which === 'current') return toolsByName(createBashTools(options));
  const library = (await import(path.join(release, 'dist/index.js'))) as {
    createBashTools: (o: typeof options) => Tool[];
  };
  return toolsByName(library.createBashTools(options));
}

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

describe.each([
  { how: 'SIGTERM, as a rolling upgrade stops it', signal: 'SIGTERM' as const },
  { how: 'SIGKILL, as a crash ends it', signal: 'SIGKILL' as const },
])(`a worker of ${releaseVersion} replaced by this tree's while tasks run: $how`, ({ signal }) => {
  it('keeps every output exact and complete, every exit code, kills whole trees, reads across versions, notices once', async () => {
    const taskQueue = `upgrade-${randomUUID()}`;
    const hostId = `upgrade-host-${randomUUID().slice(0, 8)}`;
    const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-upgrade-spill-'));
    spillDirs.push(spillDir);
    const workerArgs = ['--host-id', hostId, '--spill-dir', spillDir, '--workdir', workdir];
    const session = agent(`upgrade-${signal}-${randomUUID().slice(0, 8)}`);
    const marker = `upgrade-sleeper-${randomUUID().slice(0, 8)}`;

    const old = await startWorkerProcess(env, taskQueue, workerArgs, {
      bin: path.join(release, 'dist/cli/main.js'),
    });
    workers.push(old);
    const before = await toolsOf('release', taskQueue);
    // Prints 40 lines over about 8 s, then exits 7: it runs and prints across the replacement.
    const printer = await startBackground(
      before.bash,
      'for i in $(seq 1 40); do echo "line $i"; sleep 0.2; done; exit 7',
      session,
    );
    // A tree: a shell with two sleeping children, all ended by one kill after the upgrade.
    const sleeper = await startBackground(
      before.bash,
      `(exec -a ${marker}-a sleep 600) & (exec -a ${marker}-b sleep 601) & wait # ${marker}`,
      session,
    );
    const short = await startBackground(before.bash, 'echo short; exit 3', session);
    // Killed after the upgrade through the release's client, which does not tell a task that its
    // session's kill answered for the end: its notice comes, as the release sent it.
    const napper = await startBackground(before.bash, 'sleep 602', session);
    // The printer's reader is started by the old client on the old worker, read once already.
    await sleep(1_500);
    const firstRead = text(await before.bash_output.execute({ task_id: printer }, session));
    const shownBefore = splitAnswer(firstRead).shown;
    expect(shownBefore).toMatch(/^(line \d+\n)*$/);
    expect(firstRead.endsWith('[status: running]')).toBe(true);

    if (signal === 'SIGTERM') {
      old.child.kill('SIGTERM');
      await waitFor(() => old.child.exitCode !== null || old.child.signalCode !== null, 60_000);
    } else {
      await old.crash();
    }
    // The old worker's commands outlive it (the sleeper's two children among them), and the printer is
    // still printing: what follows is this tree's worker taking over running commands.
    expect(processesMatching(new RegExp(`^${marker}-`)).sort()).toEqual([
      `${marker}-a 600`,
      `${marker}-b 601`,
    ]);
    expect(processesMatching(/seq 1 40/).length).toBeGreaterThan(0);

    const current = await startWorkerProcess(env, taskQueue, workerArgs);
    workers.push(current);
    const after = await toolsOf('current', taskQueue);

    // The printer: what the first read showed, then the rest, exactly once, and its exit code.
    const rest = await readToEnd(after.bash_output, printer, session, { waitMs: 2_000, timeoutMs: 60_000 });
    expect(shownBefore + rest.output).toBe(numbered(1, 40));
    expect(rest.output).toContain('line 40\n');
    expect(rest.status).toBe('[status: completed, exit code: 7]');

    // The short one ended before the upgrade, unread: all of it, read through the new client.
    const shortRead = await readToEnd(after.bash_output, short, session);
    expect(shortRead.output).toBe('short\n');
    expect(shortRead.status).toBe('[status: completed, exit code: 3]');

    // The sleeper's whole tree ends with a kill sent after the upgrade.
    expect(text(await after.bash_kill.execute({ task_id: sleeper }, session))).toBe(
      `killed background task ${sleeper}`,
    );
    expect(text(await before.bash_kill.execute({ task_id: napper }, session))).toBe(
      `killed background task ${napper}`,
    );
    await waitFor(() => processesMatching(new RegExp(marker)).length === 0, 15_000);
    expect((await readToEnd(after.bash_output, sleeper, session)).status).toBe('[status: killed by SIGTERM]');
    expect((await readToEnd(before.bash_output, napper, session)).status).toBe('[status: killed by SIGTERM]');

    // A task this tree's worker started, read through the last release's client.
    const fresh = await startBackground(after.bash, 'echo fresh; echo more; exit 5', session);
    const freshRead = await readToEnd(before.bash_output, fresh, session, { waitMs: 1_000 });
    expect(freshRead.output).toBe('fresh\nmore\n');
    expect(freshRead.status).toBe('[status: completed, exit code: 5]');

    // Each completion notice reached the session once; the sleeper has none: its session's own kill,
    // through this tree's client, answered for its end.
    for (const taskId of [printer, short, napper, fresh]) {
      await waitFor(() => inbox.notices.some((notice) => notice.content.includes(taskId)), 30_000);
    }
    await sleep(1_000);
    for (const taskId of [printer, short, napper, fresh]) {
      expect(inbox.notices.filter((notice) => notice.content.includes(`task ${taskId} `))).toHaveLength(1);
    }
    expect(inbox.notices.filter((notice) => notice.content.includes(sleeper))).toEqual([]);
    await current.crash();
  });
});
