/**
 * A worker host cut off from the Temporal server while its tasks run and print, for twice the
 * heartbeat timeout, then joined again (docs/OPERATIONS.md, "Partitions"). The host is a network
 * namespace of the test's own, held by a process of its own, whose only way out is a slirp4netns
 * of the test's (its 10.0.2.2 is this machine's loopback, where the dev server listens): the cut
 * is that slirp4netns stopped (SIGSTOP), so every packet either way is silently lost, as in a
 * partition; no address, route or firewall of the machine changes. Real processes throughout.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { readToEnd } from '../helpers/read-to-end.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** The command attempts' heartbeat timeout on the cut-off host: short, so the cut outlasts it twice. */
const HEARTBEAT_TIMEOUT_MS = 10_000;
/** How long the host is cut off: twice the heartbeat timeout, so its attempts time out on the server. */
const CUT_MS = 2 * HEARTBEAT_TIMEOUT_MS;

let env: TestWorkflowEnvironment;
let holder: ChildProcess | undefined;
let slirp: ChildProcess | undefined;
let worker: WorkerProcess | undefined;
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-partition-spill-'));
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-partition-work-'));
const taskQueue = `partition-${randomUUID()}`;

/** A network namespace held by a process of the test's, by its /proc path. */
async function heldNamespace(): Promise<{ netns: string; holder: ChildProcess }> {
  const child = spawn('unshare', ['--net', '--', 'sh', '-c', 'echo up; exec sleep infinity'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(child.stdout as NodeJS.ReadableStream, 'data');
  return { netns: `/proc/${child.pid}/ns/net`, holder: child };
}

beforeAll(async () => {
  env = await createDevServerEnv();
  const held = await heldNamespace();
  holder = held.holder;
  // The namespace's way out: 10.0.2.100 on tap0, the machine's loopback at 10.0.2.2.
  slirp = spawn('slirp4netns', ['--configure', '--mtu=65520', '--netns-type=path', held.netns, 'tap0'], {
    stdio: 'ignore',
  });
  await waitFor(
    () =>
      spawnSync('nsenter', [`--net=${held.netns}`, 'ip', '-4', 'addr', 'show', 'tap0'], {
        encoding: 'utf8',
      }).stdout.includes('10.0.2.100'),
    10_000,
  );
  const port = env.address.split(':').at(-1);
  worker = await startWorkerProcess(
    { address: `10.0.2.2:${port}` },
    taskQueue,
    [
      ...['--host-id', `partitioned-${randomUUID().slice(0, 8)}`, '--spill-dir', spillDir],
      ...['--heartbeat-timeout-ms', String(HEARTBEAT_TIMEOUT_MS), '--workdir', workdir],
      // The cut is between the worker and the server; how commands are kept apart is not the subject.
      ...['--isolation', 'none'],
    ],
    { wrapper: ['nsenter', `--net=${held.netns}`] },
  );
});

afterAll(async () => {
  if (slirp?.pid) process.kill(slirp.pid, 'SIGCONT');
  await worker?.crash();
  await endLeftCommands(spillDir);
  slirp?.kill('SIGKILL');
  holder?.kill('SIGKILL');
  await env?.teardown();
  for (const dir of [spillDir, workdir]) rmSync(dir, { recursive: true, force: true });
});

describe('a worker host cut off from the server for twice the heartbeat timeout', () => {
  it('runs each command once, loses and repeats no output, keeps exit codes, and a kill sent during the cut ends its tree after it', async () => {
    const tools = toolsByName(createBashTools({ client: env.client, taskQueue }));
    const session = agent(`partition-${randomUUID().slice(0, 8)}`);
    const runs = path.join(workdir, 'runs');
    writeFileSync(runs, '');
    const marker = `partition-sleeper-${randomUUID().slice(0, 8)}`;
    // Prints for about 30 s, across the whole cut, then exits 7; each run of it marks the file.
    const printer = await startBackground(
      tools.bash,
      `echo run >> ${runs}; for i in $(seq 1 60); do echo "line $i"; sleep 0.5; done; exit 7`,
      session,
    );
    const sleeper = await startBackground(tools.bash, `(exec -a ${marker} sleep 600) & wait`, session);
    await sleep(1_500);
    const firstRead = text(await tools.bash_output.execute({ task_id: printer }, session));
    const shownBefore = firstRead
      .slice(0, firstRead.lastIndexOf('[status: '))
      .replace('(no new output)\n', '');
    await waitFor(() => processesMatching(new RegExp(`^${marker}`)).length === 1, 10_000);

    process.kill(slirp?.pid as number, 'SIGSTOP');
    const cutAt = Date.now();
    // The kill can reach the host only through the server: it is recorded, and waits for the host.
    expect(text(await tools.bash_kill.execute({ task_id: sleeper }, session))).toBe(
      `kill of background task ${sleeper} is pending: no worker on its host is answering; it takes effect as soon as one is back`,
    );
    await sleep(Math.max(0, CUT_MS - (Date.now() - cutAt)));
    // Cut off, the host ran on: the sleeper lives still, the printer printed on.
    expect(processesMatching(new RegExp(`^${marker}`))).toHaveLength(1);
    process.kill(slirp?.pid as number, 'SIGCONT');

    await waitFor(() => processesMatching(new RegExp(`^${marker}`)).length === 0, 60_000);
    const rest = await readToEnd(tools.bash_output, printer, session, { waitMs: 2_000, timeoutMs: 90_000 });
    expect(shownBefore + rest.output).toBe(Array.from({ length: 60 }, (_, i) => `line ${i + 1}\n`).join(''));
    expect(rest.status).toBe('[status: completed, exit code: 7]');
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    // The cut outlasted the heartbeat timeout: the server gave up on the attempt the host was
    // following, and the command's end came through a later one, which re-attached to it.
    const { events } = await env.client.workflow.getHandle(printer).fetchHistory();
    const timedOut = (events ?? []).flatMap(
      (event) => event.activityTaskTimedOutEventAttributes?.failure?.message ?? [],
    );
    expect(timedOut).toEqual(['activity Heartbeat timeout']);
    expect((events ?? []).filter((event) => event.activityTaskCompletedEventAttributes)).toHaveLength(1);
    expect((await readToEnd(tools.bash_output, sleeper, session, { timeoutMs: 30_000 })).status).toBe(
      '[status: killed by SIGTERM]',
    );
  }, 180_000);
});
