// Sessions apart (`isolation: 'session'`), for real: a dev server, a worker with its codec key in
// the environment, a session `victim` whose task prints a secret, and commands of a session
// `attacker` that try what issue 16 measured on a worker without isolation. And what a session's
// own tasks must keep doing together. Needs root, bwrap and slirp4netns (scripts/provision-sandbox.sh).

import { randomUUID } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../../src/client/ownership.js';
import {
  createSessionIsolation,
  endSessionNetworks,
  sessionNetworksDir,
} from '../../../src/command-host/containment/session-isolation.js';
import type { ExecutorOptions } from '../../../src/command-host/executor-config.js';
import { processStart } from '../../../src/command-host/supervisor/process-identity.js';
import { supervisorPath } from '../../../src/command-host/supervisor/supervisor.js';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import type { CommandSpec, TaskId } from '../../../src/shared/task.js';
import type { BashWorker } from '../../../src/worker/bash-worker.js';
import { type RunningWorker, startBashWorker } from '../../helpers/bash-worker.js';
import { type IsolatedWorker, startIsolatedWorker } from '../../helpers/isolated-worker.js';
import { sessionTools } from '../../helpers/session-tools.js';
import { measuredAttempts, sessionKeepsTogether } from '../../helpers/sessions-apart.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import {
  connectCommand,
  INTERNET_ADDRESS,
  makeTestNetworks,
  type TestNetworks,
} from '../../helpers/test-networks.js';
import { TEST_WORKDIR_ROOTS } from '../../helpers/workdir-roots.js';

let env: TestWorkflowEnvironment;
let worker: IsolatedWorker;
let workdir: string;
const SECRET = `secret-${randomUUID()}`;

/** The tools as one session calls them, in the shared workdir (on the main test worker unless told). */
const session = (sessionId: string, on: RunningWorker = worker) =>
  sessionTools({ client: env.client, taskQueue: on.taskQueue, workdir }, sessionId);

beforeAll(async () => {
  env = await createDevServerEnv();
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-isolation-')));
  // As a user or a test makes one: mode 0700, the worker's (root's).
  workdir = mkdtempSync(path.join(root, 'work-'));
  worker = await startIsolatedWorker(env, { spillDir: path.join(root, 'spill') });
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  // Sessions' networks outlive a worker by design: end the ones this test's sessions made.
  if (worker) {
    endSessionNetworks(worker.spillDir);
    expect(
      readdirSync(sessionNetworksDir(worker.spillDir)).filter((file) => file.endsWith('.net.json')),
    ).toEqual([]);
  }
  await env?.teardown();
});

/** The port of the test's Temporal server, on the host's loopback. */
const temporalPort = () => env.address.split(':').pop() ?? '';

describe('sessions apart', () => {
  it('says at worker start that sessions are kept apart', () => {
    expect((worker.worker as BashWorker).containment).toContain(
      "isolation: sessions apart (a uid per session from 1879048192, own PID namespace, the session's own network without the host's loopback, its own addresses or link-local and metadata addresses, private /tmp and home)",
    );
  });

  it("keeps one session's commands from the worker, the spill directory, other sessions' processes and the Temporal server", async () => {
    const victim = session('victim');
    const attacker = session('attacker');
    const taskId = await victim.start(`echo ${SECRET}; sleep 60`);
    await expect.poll(() => victim.read(taskId)).toBe(`${SECRET}\n[status: running]`);
    const port = temporalPort();
    const attempts = [
      // The worker's environment (its pid is this test process's).
      `cat /proc/${process.pid}/environ >/dev/null 2>&1 && echo read the worker || echo no worker`,
      // Any task's output, through the spill directory.
      `grep -r ${SECRET} ${worker.spillDir} /tmp 2>/dev/null && echo found || echo no output`,
      // Other processes: only its own are in its PID namespace (with its launcher and inner supervisor).
      'ps -e -o comm= | sort -u | tr "\\n" " "; echo',
      // The Temporal server on the host's loopback.
      `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached temporal || echo no temporal`,
      'id -u',
    ];
    const lines = (await attacker.run(attempts.join('; '))).split('\n');
    expect(lines.slice(0, 2)).toEqual(['no worker', 'no output']);
    // Not the victim's `sleep`, not the worker (node): only its own.
    const seen = (lines[2] ?? '').trim().split(' ');
    expect(seen).toContain('ps');
    for (const name of seen) expect(['bash', 'bwrap', 'durable-bash-su', 'ps', 'sort', 'tr']).toContain(name);
    expect(lines[3]).toBe('no temporal');
    expect(Number(lines[4])).toBeGreaterThanOrEqual(1_879_048_192);
    expect(await victim.kill(taskId)).toBe(`killed background task ${taskId}`);
  });

  it("reaps the command's orphans: its inner supervisor is the namespace's PID 1", async () => {
    const agent = session('orphans');
    // Each subshell's child outlives it, so its end goes to PID 1: no zombie is left.
    expect(
      await agent.run(
        'for i in 1 2 3; do (sleep 0.1 &); done; sleep 1; echo "pid 1: $(cat /proc/1/comm)"; ps -e -o stat= | grep -c ^Z || true',
      ),
    ).toBe('pid 1: durable-bash-su\n0\n');
  });

  it('runs each session as its own uid, and its tasks together: its workdir, its /tmp, a server on its localhost', async () => {
    const alice = session('alice');
    const bob = session('bob');
    const aliceUid = await alice.run('id -u');
    const bobUid = await bob.run('id -u');
    expect(aliceUid).not.toBe(bobUid);
    // The workdir (root's, 0700) is writable, a session's /tmp is its own across its calls, and a
    // server one call starts on localhost answers the session's next call, and no other session.
    await sessionKeepsTogether(alice, bob, 8765);
    // What a session wrote in the workdir belongs to the workdir's owner on disk.
    expect(statSync(path.join(workdir, 'made.txt')).uid).toBe(0);
  });
});

describe('the measured attempts, in every mode this machine runs', () => {
  // What each attempt gives a command of session `attacker` while a task of `victim` prints a
  // secret on the same worker: the table of modes in docs/CONTAINMENT.md, row by row.
  const modes: { mode: string; options: ExecutorOptions; expected: string[] }[] = [
    {
      mode: '--isolation none',
      options: { isolation: 'none', sandbox: 'none' },
      expected: [
        'read the worker',
        'found the output',
        'sees the victim',
        'sees the worker',
        'reached temporal',
        'uid 0',
      ],
    },
    {
      mode: '--isolation session',
      options: { isolation: 'session', sandbox: 'none' },
      expected: ['no worker', 'no output', 'no victim', 'no worker process', 'no temporal', 'a session uid'],
    },
    {
      mode: '--sandbox bwrap',
      options: { sandbox: 'bwrap' },
      expected: ['no worker', 'no output', 'no victim', 'no worker process', 'no temporal', 'uid 0'],
    },
  ];
  for (const { mode, options, expected } of modes) {
    it(`${mode}: ${expected.join(', ')}`, async () => {
      const spill = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-mode-')));
      const started = await startBashWorker(env, { ...options, spillDir: spill });
      try {
        const target = { workerPid: process.pid, spillDir: spill, temporalPort: temporalPort() };
        expect(
          await measuredAttempts(session('victim', started), session('attacker', started), target),
        ).toEqual(expected);
      } finally {
        await started.stop();
        endSessionNetworks(spill);
      }
    });
  }
});

describe("what the operator chooses for sessions' networks", () => {
  let nets: TestNetworks;
  const workers: IsolatedWorker[] = [];
  /** A worker keeping sessions apart, whose sessions' traffic leaves from the test's "host". */
  const startWorker = async (options: ExecutorOptions) => {
    const started = await startIsolatedWorker(env, { isolationEgressNetns: nets.hostNs, ...options });
    workers.push(started);
    return started;
  };

  beforeAll(async () => {
    nets = await makeTestNetworks();
    await nets.serve(nets.internetNs, INTERNET_ADDRESS, 8080, 'the internet');
    await nets.serve(nets.hostNs, '127.0.0.1', 5432, 'the allowed database');
    await nets.serve(nets.hostNs, '127.0.0.1', 7233, 'the host temporal');
  });

  afterAll(async () => {
    for (const started of workers) await started.stop();
    for (const started of workers) endSessionNetworks(started.spillDir);
    await nets?.end();
  });

  it('reaches the internet and the host ports allowed by name, and no other host loopback port', async () => {
    const allowing = await startWorker({ isolationAllowedPorts: [5432] });
    expect((allowing.worker as BashWorker).containment).toContain(
      "the session's own network reaching the host's loopback only at port 5432, without the host's own addresses or link-local and metadata addresses,",
    );
    const agent = session('egress', allowing);
    expect(await agent.run(connectCommand(INTERNET_ADDRESS, 8080))).toBe('hello from the internet\n');
    expect(await agent.run(connectCommand('127.0.0.1', 5432))).toBe('hello from the allowed database\n');
    expect(await agent.run(connectCommand('127.0.0.1', 7233))).toBe('ECONNREFUSED\n');
    // The host's loopback through slirp4netns's gateway: refused too.
    expect(await agent.run(connectCommand('10.0.2.2', 7233))).toMatch(
      /^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timeout)\n$/,
    );
  });

  it('turns the way out off: the session keeps its own localhost and the allowed ports', async () => {
    const closed = await startWorker({ isolationEgress: false, isolationAllowedPorts: [5432] });
    expect((closed.worker as BashWorker).containment).toContain(
      "the session's own localhost and no way out, reaching the host's loopback only at port 5432,",
    );
    const agent = session('no-egress', closed);
    expect(await agent.run(connectCommand(INTERNET_ADDRESS, 8080))).toBe('ENETUNREACH\n');
    expect(await agent.run(connectCommand('127.0.0.1', 5432))).toBe('hello from the allowed database\n');
    expect(await agent.run(connectCommand('127.0.0.1', 7233))).toBe('ECONNREFUSED\n');
    const server = await agent.start(
      `python3 -c "import http.server as h; h.HTTPServer(('127.0.0.1', 8766), h.SimpleHTTPRequestHandler).serve_forever()"`,
    );
    await expect
      .poll(() => agent.run(`curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8766/`))
      .toBe('200');
    expect(await agent.kill(server)).toBe(`killed background task ${server}`);
  });
});

describe("a session's network on a host", () => {
  /** A background run of `true` in `session`, as these launch it (no worker, no supervisor). */
  const spec = (taskId: string, session: string): CommandSpec => ({
    taskId: taskId as TaskId,
    command: 'true',
    workdir,
    background: true,
    taskQueue: 'q',
    lostAfterMs: 1,
    session,
  });
  it('ends once nothing of the session runs there, and not before', async () => {
    const spill = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sweep-')));
    const isolation = createSessionIsolation({ workdirRoots: TEST_WORKDIR_ROOTS }, supervisorPath(), spill);
    const running = `bash-${randomUUID()}`;
    const ended = `bash-${randomUUID()}`;
    await isolation.launch(spec(running, sessionKey('still-running')));
    await isolation.launch(spec(ended, sessionKey('all-done')));
    const networks = () => readdirSync(sessionNetworksDir(spill)).filter((f) => f.endsWith('.net.json'));
    expect(networks()).toHaveLength(2);
    // Each network's processes (its namespace's holder and its slirp4netns), to see them end.
    const processes = networks().flatMap((file) =>
      Object.values(
        JSON.parse(readFileSync(path.join(sessionNetworksDir(spill), file), 'utf8')) as Record<
          string,
          { pid: number; start: number }
        >,
      ),
    );
    expect(processes).toHaveLength(4);
    // Launched a moment ago, not claimed yet: both kept.
    expect(await isolation.sweep()).toBe(0);
    // One claimed and running, the other ended (its end recorded).
    writeFileSync(taskFiles(spill, running).state, '{}');
    writeFileSync(taskFiles(spill, ended).state, '{}');
    writeFileSync(taskFiles(spill, ended).exit, '{}');
    expect(await isolation.sweep()).toBe(1);
    expect(networks()).toEqual([`${sessionKey('still-running')}.net.json`]);
    writeFileSync(taskFiles(spill, running).exit, '{}');
    expect(await isolation.sweep()).toBe(1);
    expect(networks()).toEqual([]);
    // Their holders and slirp4netns processes end too (SIGTERM, a moment after).
    await expect.poll(() => processes.filter(({ pid, start }) => processStart(pid) === start)).toEqual([]);
  });
  it("marks a task with a link to its attempt's record, and forgets a mark never claimed", async () => {
    const spill = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sweep-')));
    const isolation = createSessionIsolation({ workdirRoots: TEST_WORKDIR_ROOTS }, supervisorPath(), spill);
    const session = sessionKey('never-claimed');
    const taskId = `bash-${randomUUID()}`;
    const files = taskFiles(spill, taskId);
    const launch = () => isolation.launch(spec(taskId, session));
    const mark = path.join(spill, '.sessions', session, 'tasks', taskId);
    // The command runner writes the attempt's record before the launch (a rename, as here).
    const rememberAttempt = () => {
      writeFileSync(`${files.attempt}.tmp`, '{}');
      renameSync(`${files.attempt}.tmp`, files.attempt);
    };
    rememberAttempt();
    await launch();
    expect(statSync(mark).ino).toBe(statSync(files.attempt).ino);
    // Launched again (the first start failed before its claim): the mark follows the new attempt.
    rememberAttempt();
    await launch();
    expect(statSync(mark).ino).toBe(statSync(files.attempt).ino);
    expect(await isolation.sweep()).toBe(0);
    // Unclaimed for longer than a launch may take: the mark goes, and the session's network with it.
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(files.attempt, longAgo, longAgo);
    expect(await isolation.sweep()).toBe(1);
    expect(() => statSync(mark)).toThrow('ENOENT');
    expect(statSync(files.attempt).isFile()).toBe(true);
  });
  it("gives a session's directories and uid back once it has been idle for the retention", async () => {
    const spill = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sweep-')));
    const isolation = createSessionIsolation(
      { retentionMs: 0, workdirRoots: TEST_WORKDIR_ROOTS },
      supervisorPath(),
      spill,
    );
    const session = sessionKey('short-lived');
    const launch = (taskId: string) => isolation.launch(spec(taskId, session));
    const taskId = `bash-${randomUUID()}`;
    const { inner } = await launch(taskId);
    const uid = inner[inner.indexOf('--as') + 1];
    const sessionDir = path.join(spill, '.sessions', session);
    const uidFile = path.join(spill, '.sessions', 'uids', String(uid));
    expect(statSync(path.join(sessionDir, 'tmp')).uid).toBe(Number(uid));
    expect(readdirSync(path.dirname(uidFile))).toContain(String(uid));
    // While its task runs, all stays.
    writeFileSync(taskFiles(spill, taskId).state, '{}');
    expect(await isolation.sweep()).toBe(0);
    expect(statSync(sessionDir).isDirectory()).toBe(true);
    writeFileSync(taskFiles(spill, taskId).exit, '{}');
    expect(await isolation.sweep()).toBe(1);
    expect(() => statSync(sessionDir)).toThrow('ENOENT');
    // (The start probe's uid, the unowned session's, stays.)
    expect(readdirSync(path.dirname(uidFile))).not.toContain(String(uid));
    expect(readdirSync(path.dirname(uidFile))).not.toContain(`${session}.uid`);
    // Back: made again.
    await launch(`bash-${randomUUID()}`);
    expect(statSync(path.join(sessionDir, 'home')).mode & 0o777).toBe(0o711);
    endSessionNetworks(spill);
  });
});
