/**
 * A worker host cut off from the Temporal server while its tasks run and print, for twice the
 * heartbeat timeout, then joined again (docs/OPERATIONS.md, "Partitions"). The host is a network
 * namespace of the test's own, held by a process of its own, whose only way out is a slirp4netns
 * of the test's (its 10.0.2.2 is this machine's loopback, where the dev server listens): the cut
 * is that slirp4netns stopped (SIGSTOP), so every packet either way is silently lost, as in a
 * partition; no address, route or firewall of the machine changes. Real processes throughout.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground, startedTaskId } from '../helpers/background-task.js';
import { endLeftCommands } from '../helpers/bash-worker.js';
import { NoticeInbox, noticeOutcome } from '../helpers/notices.js';
import { processesMatching, waitFor } from '../helpers/processes.js';
import { readToEnd, splitAnswer } from '../helpers/read-to-end.js';
import { removeDir } from '../helpers/remove-dir.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { heldNamespace } from '../helpers/test-networks.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

/** The command attempts' heartbeat timeout on the cut-off host: short, so the cut outlasts it twice. */
const HEARTBEAT_TIMEOUT_MS = 10_000;
/** How long the host is cut off: twice the heartbeat timeout, so its attempts time out on the server. */
const CUT_MS = 2 * HEARTBEAT_TIMEOUT_MS;

let env: TestWorkflowEnvironment;
let hostNetwork: CutOffNetwork | undefined;
let worker: WorkerProcess | undefined;
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-partition-spill-'));
const workdir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-partition-work-'));
const taskQueue = `partition-${randomUUID()}`;

/** A network namespace of the test's own whose only way to the server is a slirp4netns it can stop. */
interface CutOffNetwork {
  netns: string;
  /** The dev server's address as seen from inside (the machine's loopback is 10.0.2.2 there). */
  serverAddress: string;
  cut(): void;
  restore(): void;
  end(): void;
}

async function cutOffNetwork(): Promise<CutOffNetwork> {
  const { netns, holder } = await heldNamespace();
  // 10.0.2.100 on tap0 inside; the machine's loopback, where the dev server listens, at 10.0.2.2.
  const slirp = spawn('slirp4netns', ['--configure', '--mtu=65520', '--netns-type=path', netns, 'tap0'], {
    stdio: 'ignore',
  });
  await waitFor(
    () =>
      spawnSync('nsenter', [`--net=${netns}`, 'ip', '-4', 'addr', 'show', 'tap0'], {
        encoding: 'utf8',
      }).stdout.includes('10.0.2.100'),
    10_000,
  );
  const signal = (name: NodeJS.Signals) => {
    if (slirp.pid !== undefined && slirp.exitCode === null) process.kill(slirp.pid, name);
  };
  return {
    netns,
    serverAddress: `10.0.2.2:${env.address.split(':').at(-1)}`,
    cut: () => signal('SIGSTOP'),
    restore: () => signal('SIGCONT'),
    end() {
      signal('SIGCONT');
      slirp.kill('SIGKILL');
      holder.kill('SIGKILL');
    },
  };
}

beforeAll(async () => {
  env = await createDevServerEnv();
  hostNetwork = await cutOffNetwork();
  worker = await startWorkerProcess(
    { address: hostNetwork.serverAddress },
    taskQueue,
    [
      ...['--host-id', `partitioned-${randomUUID().slice(0, 8)}`, '--spill-dir', spillDir],
      ...['--heartbeat-timeout-ms', String(HEARTBEAT_TIMEOUT_MS), '--workdir', workdir],
      // The cut is between the worker and the server; how commands are kept apart is not the subject.
      ...['--isolation', 'none'],
    ],
    { wrapper: ['nsenter', `--net=${hostNetwork.netns}`] },
  );
});

afterAll(async () => {
  hostNetwork?.restore();
  await worker?.crash();
  await endLeftCommands(spillDir);
  hostNetwork?.end();
  await env?.teardown();
  for (const dir of [spillDir, workdir]) removeDir(dir);
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
    const shownBefore = splitAnswer(firstRead).shown;
    await waitFor(() => processesMatching(new RegExp(`^${marker}`)).length === 1, 10_000);

    hostNetwork?.cut();
    const cutAt = Date.now();
    // The kill can reach the host only through the server: it is recorded, and waits for the host.
    expect(text(await tools.bash_kill.execute({ task_id: sleeper }, session))).toBe(
      `kill of background task ${sleeper} is pending: no worker on its host is answering; it takes effect as soon as one is back`,
    );
    await sleep(Math.max(0, CUT_MS - (Date.now() - cutAt)));
    // Cut off, the host ran on: the sleeper lives still, the printer printed on.
    expect(processesMatching(new RegExp(`^${marker}`))).toHaveLength(1);
    hostNetwork?.restore();

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

describe('a monitored task whose host is cut off from the server for twice the heartbeat timeout', () => {
  it('sends each matching line once, in order, before the completion notice, for a command that printed and ended during the cut', async () => {
    const agentTaskQueue = `agent-${randomUUID()}`;
    const inbox = new NoticeInbox();
    const agentWorker = await startAgentWorker(env, { taskQueue: agentTaskQueue, agents: inbox });
    try {
      const tools = toolsByName(createBashTools({ client: env.client, taskQueue, agentTaskQueue }));
      const session = agent(`partition-monitor-${randomUUID().slice(0, 8)}`);
      const gate = path.join(workdir, `gate-${randomUUID().slice(0, 8)}`);
      const open = (n: number) => writeFileSync(`${gate}.${n}`, '');
      const waitAt = (n: number) => `while [ ! -e ${gate}.${n} ]; do sleep 0.05; done`;
      const taskId = await startBackground(
        tools.bash,
        `echo "MATCH 1"; ${waitAt(1)}; echo "MATCH 2"; echo other; ${waitAt(2)}; echo "MATCH 3"; ` +
          `${waitAt(3)}; echo "MATCH 4"`,
        session,
        { notify_on: '^MATCH' },
      );
      await waitFor(() => inbox.notices.length === 1, 15_000);

      hostNetwork?.cut();
      const cutAt = Date.now();
      // A line early in the cut (its batch cannot reach the server), one while that batch waits,
      // and the last as the command ends, all before the server gives up on the attempt.
      open(1);
      await sleep(3_000);
      open(2);
      await sleep(3_000);
      open(3);
      await sleep(Math.max(0, CUT_MS - (Date.now() - cutAt)));
      hostNetwork?.restore();

      expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
      const lines = inbox.notices.flatMap((notice) =>
        notice.noticeId.includes('-match-') ? notice.content.split('\n').slice(1) : [],
      );
      expect(lines).toEqual(['MATCH 1', 'MATCH 2', 'MATCH 3', 'MATCH 4']);
      expect(inbox.notices.at(-1)?.noticeId).toBe(`${taskId}-notice`);
    } finally {
      await agentWorker.stop();
    }
  }, 180_000);
});

/** The agent host (test/chaos/agent-host.mjs: the tools and an agent worker) in `network`; calls by line. */
async function agentHostIn(network: CutOffNetwork) {
  const child = spawn(
    'nsenter',
    [
      `--net=${network.netns}`,
      process.execPath,
      path.resolve('test/chaos/agent-host.mjs'),
      path.resolve('dist'),
      network.serverAddress,
      path.join(workdir, 'notices.jsonl'),
      '60000',
    ],
    {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, AGENT_HOST_TASK_QUEUE: taskQueue, CHAOS_WORKDIR: workdir },
    },
  );
  const answers = new Map<number, (answer: { text: string; isError: boolean }) => void>();
  let ready = false;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    let message: { ready?: boolean; id?: number; text?: string; isError?: boolean };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.ready) ready = true;
    else answers.get(message.id ?? -1)?.({ text: message.text ?? '', isError: message.isError === true });
  });
  await waitFor(() => ready, 60_000);
  let nextId = 1;
  return {
    call(tool: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
      const id = nextId++;
      const answered = new Promise<{ text: string; isError: boolean }>((resolve) => answers.set(id, resolve));
      child.stdin?.write(`${JSON.stringify({ id, tool, args, sessionId: 'partitioned-agent' })}\n`);
      return answered;
    },
    stop: () => child.kill('SIGKILL'),
  };
}

describe('an agent host cut off from the server in the middle of a bash_output wait', () => {
  it('answers the read with an error line within its bound, and the next read goes on from the same position', async () => {
    const agentNetwork = await cutOffNetwork();
    const host = await agentHostIn(agentNetwork);
    try {
      const started = await host.call('bash', {
        command: 'for i in $(seq 1 40); do echo "line $i"; sleep 0.25; done; exit 3',
        description: 'Prints for 10 s',
        run_in_background: true,
      });
      const taskId = startedTaskId(started.text);
      await sleep(1_000);
      const before = await host.call('bash_output', { task_id: taskId });
      const shownBefore = splitAnswer(before.text).shown;
      const waiting = host.call('bash_output', { task_id: taskId, wait_ms: 3_000 });
      const sentAt = Date.now();
      agentNetwork.cut();
      const during = await waiting;
      const tookMs = Date.now() - sentAt;
      // One line saying why, well within the read's own bound (its wait and about 6 s of margins).
      expect(during.isError).toBe(true);
      expect(during.text).toMatch(/^Temporal is unreachable at 10\.0\.2\.2:\d+: [^\n]+$/);
      expect(tookMs).toBeLessThan(3_000 + 6_000);
      agentNetwork.restore();
      let rest = '';
      let status = '';
      for (let i = 0; i < 60 && !status.startsWith('[status: completed'); i++) {
        const read = await host.call('bash_output', { task_id: taskId, wait_ms: 2_000 });
        if (!read.isError) {
          const answer = splitAnswer(read.text);
          rest += answer.shown;
          status = answer.status ?? '';
        }
      }
      expect(shownBefore + rest).toBe(Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(''));
      expect(status).toBe('[status: completed, exit code: 3]');
    } finally {
      host.stop();
      agentNetwork.end();
    }
  }, 180_000);
});
