/**
 * With a codec key configured, a client without the key cannot act by copying ciphertext. The
 * codec authenticates a payload's key, not where it belongs, so the attacker here (a client that
 * reaches the namespace and holds no key) reads a history, takes an encrypted input, update or
 * signal from it as it is, and sends it to another workflow: each names the workflow it belongs to
 * inside what is encrypted, and the other workflow refuses it (an update in one line, a signal
 * ignored and logged, a start ended at once) and stays as it was. What no key can refuse, a run
 * started again under its own id or reset, is shown too: on the host that ran the command, the
 * command's records end it as recorded, and it does not run again. Against a real dev server and
 * `durable-bash worker` with a key, in its own process (its log read from its stderr).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, WorkflowFailedError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Approvals } from '../../src/client/approvals.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { encryptingDataConverter } from '../../src/codec/data-converter.js';
import { CODEC_KEYS_ENV, type CodecKey, CodecKeyring } from '../../src/codec/keyring.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { CODEC_KEY_BYTES } from '../../src/shared/limits.js';
import { monitorSet, noticeWorkflowId } from '../../src/shared/monitor.js';
import { outputReaderId } from '../../src/shared/read-position.js';
import type { TaskId } from '../../src/shared/task.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { waitFor } from '../helpers/processes.js';
import { useDevServer } from '../helpers/temporal-env.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process.js';

const server = useDevServer();

const key: CodecKey = { id: 'k1', secret: randomBytes(CODEC_KEY_BYTES) };
const taskQueue = `replay-${randomUUID()}`;
const agentTaskQueue = `replay-agent-${randomUUID()}`;
const session = `session-${randomUUID()}`;
/** Where each command leaves its mark, so a second run shows. */
const markDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-replay-'));
const mark = (name: string) => path.join(markDir, name);

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

let worker: WorkerProcess;
/** The session's own client: holds the key. */
let keyed: Client;
let tasks: BashTasks;
let approvals: Approvals;
let namespace: string;

beforeAll(async () => {
  const { env } = server;
  namespace = env.namespace ?? 'default';
  // Without isolation: this file is about the codec, and a command that did run must leave its mark
  // where the test looks (a session's /tmp is its own).
  worker = await startWorkerProcess(env, taskQueue, ['--isolation', 'none', '--spill-dir', markDir], {
    env: { [CODEC_KEYS_ENV]: `${key.id}=${key.secret.toString('base64')}` },
  });
  keyed = new Client({
    connection: env.connection,
    namespace,
    dataConverter: encryptingDataConverter(new CodecKeyring([key])),
  });
  // No agent host takes this session's notices: each gives up within a second, so runs close.
  tasks = new BashTasks({ client: keyed, taskQueue, agentTaskQueue, noticeWindowMs: 1_000 });
  approvals = new Approvals({ tasks });
}, 90_000);

afterAll(async () => {
  await worker?.crash();
});

/**
 * The attacker: Temporal's API with no data converter at all, so what it copies from a history
 * goes back to the server byte for byte.
 */
const attacker = {
  identity: 'mallory@elsewhere',
  service: () => server.env.connection.workflowService,

  /** A workflow's history, as anyone who may read the namespace reads it (no key needed). */
  async events(workflowId: string): Promise<HistoryEvent[]> {
    const { history } = await this.service().getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId },
    });
    return history?.events ?? [];
  },

  /** The recorded argument of the last update `name` a workflow accepted, and that update's id. */
  async acceptedUpdate(workflowId: string, name: string): Promise<{ payload: Payload; updateId: string }> {
    const accepted = (await this.events(workflowId))
      .map((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
      .filter((request) => request?.input?.name === name)
      .at(-1);
    const payload = accepted?.input?.args?.payloads?.[0];
    const updateId = accepted?.meta?.updateId;
    if (!payload || !updateId) throw new Error(`no ${name} update in ${workflowId}'s history`);
    return { payload, updateId };
  },

  /** The recorded argument of the last signal `name` a workflow took. */
  async signalled(workflowId: string, name: string): Promise<Payload> {
    const payload = (await this.events(workflowId))
      .map((event) => event.workflowExecutionSignaledEventAttributes)
      .filter((signal) => signal?.signalName === name)
      .at(-1)?.input?.payloads?.[0];
    if (!payload) throw new Error(`no ${name} signal in ${workflowId}'s history`);
    return payload;
  },

  /** Sends `payload` as update `name` to a workflow; the refusal's line, or undefined when it was taken. */
  async update(workflowId: string, name: string, payload: Payload, updateId: string = randomUUID()) {
    const { outcome } = await this.service().updateWorkflowExecution({
      namespace,
      workflowExecution: { workflowId },
      request: {
        meta: { updateId, identity: this.identity },
        input: { name, args: { payloads: [payload] } },
      },
      waitPolicy: {
        lifecycleStage:
          proto.temporal.api.enums.v1.UpdateWorkflowExecutionLifecycleStage
            .UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_COMPLETED,
      },
    });
    return outcome?.failure ? (outcome.failure.message ?? '') : undefined;
  },

  async signal(workflowId: string, name: string, payload: Payload): Promise<void> {
    await this.service().signalWorkflowExecution({
      namespace,
      workflowExecution: { workflowId },
      signalName: name,
      input: { payloads: [payload] },
      identity: this.identity,
      requestId: randomUUID(),
    });
  },

  /**
   * Starts `workflowId` with what `from`'s start recorded (type, input, memo, search attributes),
   * its id reusable: a closed run's id is the starter's to take again.
   */
  async startCopy(from: string, workflowId: string): Promise<void> {
    const started = (await this.events(from))[0]?.workflowExecutionStartedEventAttributes;
    if (!started) throw new Error(`no start in ${from}'s history`);
    await this.service().startWorkflowExecution({
      namespace,
      workflowId,
      workflowType: started.workflowType,
      taskQueue: started.taskQueue,
      input: started.input,
      memo: started.memo,
      searchAttributes: started.searchAttributes,
      identity: this.identity,
      requestId: randomUUID(),
      workflowIdReusePolicy:
        proto.temporal.api.enums.v1.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
    });
  },
};

/** The worker's log line `line` (at WARN), with the workflow it came to (in the line's metadata). */
async function logged(line: string, workflowId: string): Promise<void> {
  const found = () =>
    worker
      .stderr()
      .split(`[WARN] ${line}`)
      .slice(1)
      .some((after) => after.slice(0, after.indexOf('\n20')).includes(workflowId));
  await waitFor(found, 15_000);
}

/** Event types of a workflow's history, named. */
async function eventTypes(workflowId: string): Promise<string[]> {
  return (await attacker.events(workflowId)).map((event) => EventType[event.eventType ?? 0] ?? '');
}

/** How a run the attacker started ended: its failure's line (workflow failures are not encrypted). */
async function failureOf(workflowId: string): Promise<string | undefined> {
  const failure = await keyed
    .withDeadline(Date.now() + 20_000, () => keyed.workflow.getHandle(workflowId).result())
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  if (!(failure instanceof WorkflowFailedError)) throw new Error(`did not fail: ${String(failure)}`);
  return failure.cause?.message;
}

/** What a refused start's history holds: its start, one workflow task and its failure. */
const ENDED_AT_ONCE = [
  'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
  'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED',
  'EVENT_TYPE_WORKFLOW_TASK_STARTED',
  'EVENT_TYPE_WORKFLOW_TASK_COMPLETED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED',
];

const request = (command: string) =>
  approvals.request({ command, description: 'Asks', background: true, owner: session }, 'the test asks');

describe('a decision copied from another request', () => {
  it('is refused by the update and dropped by the signal; the request still waits, its command unrun', async () => {
    const approved = await request(`touch ${mark('approved')}`);
    const target = await request(`touch ${mark('never-approved')}`);
    expect(await approvals.decide(approved.approvalId, { approved: true, by: 'alice' })).toBe(
      `approved ${approved.approvalId}`,
    );
    const { payload } = await attacker.acceptedUpdate(approved.approvalId, 'decide');
    const naming = `expected an argument whose approvalId is ${target.approvalId}, got "${approved.approvalId}"; nothing changed`;

    expect(await attacker.update(target.approvalId, 'decide', payload)).toBe(`decide: ${naming}`);
    await attacker.signal(target.approvalId, 'decide', payload);
    await logged(`decide signal ignored: ${naming}`, target.approvalId);

    const description = await keyed.workflow.getHandle(target.approvalId).describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.memo?.decision).toBeUndefined();
    await waitFor(() => existsSync(mark('approved')), 20_000);
    expect(existsSync(mark('never-approved'))).toBe(false);
    // Its own decision still applies.
    expect(await approvals.decide(target.approvalId, { approved: false, by: 'alice' })).toBe(
      `denied ${target.approvalId}`,
    );
  });
});

describe('a task started again from its recorded start', () => {
  const ranOnce = async (name: string): Promise<TaskId> => {
    const taskId = await tasks.start({
      command: `echo ran >> ${mark(name)}`,
      description: 'Counts its runs',
      background: false,
      owner: session,
    });
    expect((await tasks.result(taskId)).exitCode).toBe(0);
    return taskId;
  };

  it('under a new workflow id ends at once, and its command does not run again', async () => {
    const taskId = await ranOnce('runs-new-id');
    const copyId = `bash-${randomUUID()}`;
    await attacker.startCopy(taskId, copyId);
    expect(await failureOf(copyId)).toBe(
      `bashTask: expected an input whose taskId is this workflow's id ${copyId}, got "${taskId}"; nothing ran`,
    );
    expect(await eventTypes(copyId)).toEqual(ENDED_AT_ONCE);
    expect(readFileSync(mark('runs-new-id'), 'utf8')).toBe('ran\n');
  });

  it('under its own id, on the host that ran it, ends as recorded there: the command does not run again', async () => {
    const taskId = await ranOnce('runs-same-id');
    await attacker.startCopy(taskId, taskId);
    expect((await tasks.result(taskId)).exitCode).toBe(0);
    expect(readFileSync(mark('runs-same-id'), 'utf8')).toBe('ran\n');
  });
});

describe('a task reset to its first workflow task', () => {
  it('runs again from its recorded start, and on the host that ran it ends as recorded there', async () => {
    const taskId = await tasks.start({
      command: `echo ran >> ${mark('runs-reset')}`,
      description: 'Counts its runs',
      background: false,
      owner: session,
    });
    await tasks.result(taskId);
    const events = await attacker.events(taskId);
    const firstTask = events.find(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    )?.eventId;
    const { runId } = await attacker.service().resetWorkflowExecution({
      namespace,
      workflowExecution: { workflowId: taskId },
      workflowTaskFinishEventId: firstTask,
      reason: 'replay',
      requestId: randomUUID(),
    });
    const reset = keyed.workflow.getHandle(taskId, runId ?? undefined);
    expect((await reset.result()).exitCode).toBe(0);
    // The reset run scheduled the command again; the host found its records and answered its end.
    expect(
      (await reset.fetchHistory()).events?.filter(
        (event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      ).length,
    ).toBeGreaterThan(0);
    expect(readFileSync(mark('runs-reset'), 'utf8')).toBe('ran\n');
  });
});

describe('an approval request started again from its recorded start', () => {
  it('under a new workflow id ends at once: no decision can start the run it holds', async () => {
    const denied = await request(`touch ${mark('denied')}`);
    expect(await approvals.decide(denied.approvalId, { approved: false, by: 'alice' })).toBe(
      `denied ${denied.approvalId}`,
    );
    const copyId = `approval-${randomUUID()}`;
    await attacker.startCopy(denied.approvalId, copyId);
    expect(await failureOf(copyId)).toBe(
      `bashApproval: expected an input whose approvalId is this workflow's id ${copyId}, got "${denied.approvalId}"; nothing ran`,
    );
    expect(await eventTypes(copyId)).toEqual(ENDED_AT_ONCE);
    expect(existsSync(mark('denied'))).toBe(false);
  });

  it('under its own id, with its own recorded decision, starts no second run', async () => {
    const asked = await request(`echo ran >> ${mark('approved-once')}`);
    await approvals.decide(asked.approvalId, { approved: true, by: 'alice' });
    const outcome = await keyed.workflow.getHandle(asked.approvalId).result();
    await waitFor(() => existsSync(mark('approved-once')), 20_000);
    const { payload } = await attacker.acceptedUpdate(asked.approvalId, 'decide');
    await attacker.startCopy(asked.approvalId, asked.approvalId);
    expect(await attacker.update(asked.approvalId, 'decide', payload)).toBeUndefined();
    // The run it starts exists already (its id is in the request): the approval finds it, starts nothing.
    expect(await keyed.workflow.getHandle(asked.approvalId).result()).toEqual(outcome);
    await expect(
      keyed.workflow.getHandle((outcome as { taskId: string }).taskId).result(),
    ).resolves.toMatchObject({ exitCode: 0 });
    expect(readFileSync(mark('approved-once'), 'utf8')).toBe('ran\n');
  });
});

describe("a task's messages copied from its history", () => {
  it('a stdin write is refused by another task, and by its own under a new update id; under its own id nothing is written again', async () => {
    const start = (name: string) =>
      tasks.start({
        command: `cat > ${mark(name)}`,
        description: 'Keeps its input',
        background: true,
        owner: session,
        keepStdinOpen: true,
      });
    const written = await start('stdin-written');
    const target = await start('stdin-target');
    expect(await tasks.writeStdin(written, session, { text: 'secret\n', close: false })).toEqual({
      kind: 'written',
      bytes: 7,
      closed: false,
    });
    const { payload, updateId } = await attacker.acceptedUpdate(written, 'writeStdin');

    expect(await attacker.update(target, 'writeStdin', payload)).toBe(
      `writeStdin: expected an argument whose taskId is ${target}, got "${written}"; nothing changed`,
    );
    const newId = randomUUID();
    expect(await attacker.update(written, 'writeStdin', payload, newId)).toBe(
      `writeStdin: expected an argument whose writeId is this update's id ${newId}, got "${updateId}"; nothing changed`,
    );
    // The same update to the server: it answers with the recorded outcome, and the workflow never sees it.
    expect(await attacker.update(written, 'writeStdin', payload, updateId)).toBeUndefined();

    for (const taskId of [written, target]) {
      await tasks.writeStdin(taskId, session, { text: '', close: true });
      await tasks.result(taskId);
    }
    expect(readFileSync(mark('stdin-written'), 'utf8')).toBe('secret\n');
    expect(readFileSync(mark('stdin-target'), 'utf8')).toBe('');
  });

  it('a move to the background is refused by another foreground task, which keeps its timeout', async () => {
    const start = (timeoutMs: number) =>
      tasks.start({
        command: 'sleep 30',
        description: 'Sleeps',
        background: false,
        timeoutMs,
        owner: session,
      });
    const moved = await start(20_000);
    const target = await start(4_000);
    expect(await tasks.moveToBackground(moved, session)).toBe(true);
    const { payload } = await attacker.acceptedUpdate(moved, 'moveToBackground');
    expect(await attacker.update(target, 'moveToBackground', payload)).toBe(
      `moveToBackground: expected an argument whose taskId is ${target}, got "${moved}"; nothing changed`,
    );
    expect((await tasks.result(target)).timedOutAfterMs).toBe(4_000);
    await tasks.kill(moved, session);
  });

  it("a read is refused by another task's reader, and by its own under a new update id; the other task's output is still there to read", async () => {
    const tools = toolsByName(createBashTools({ client: keyed, taskQueue, agentTaskQueue }));
    const read = (taskId: string, waitMs = 0) =>
      tools.bash_output.execute({ task_id: taskId, wait_ms: waitMs }, agent(session)).then(text);
    const readFrom = await tasks.start({
      command: 'echo from-line; sleep 30',
      description: 'Prints',
      background: true,
      owner: session,
    });
    const target = await tasks.start({
      command: 'sleep 2; echo target-line; sleep 30',
      description: 'Prints later',
      background: true,
      owner: session,
    });
    // Its reader is made before it prints anything.
    expect(await read(target)).toBe('(no new output)\n[status: running]');
    expect(await read(readFrom, 10_000)).toBe('from-line\n[status: running]');
    const { payload, updateId } = await attacker.acceptedUpdate(outputReaderId(readFrom), 'read');
    // The target has printed: a read copied to its reader would take its line.
    await waitFor(
      () =>
        existsSync(taskFiles(markDir, target).stdout) && statSync(taskFiles(markDir, target).stdout).size > 0,
      10_000,
    );

    expect(await attacker.update(outputReaderId(target), 'read', payload)).toBe(
      `read: expected an argument whose taskId is ${target}, got "${readFrom}"; nothing changed`,
    );
    const newId = randomUUID();
    expect(await attacker.update(outputReaderId(readFrom), 'read', payload, newId)).toBe(
      `read: expected an argument whose claimId is this update's id ${newId}, got "${updateId}"; nothing changed`,
    );
    expect(await read(target, 10_000)).toBe('target-line\n[status: running]');
    await tasks.kill(readFrom, session);
    await tasks.kill(target, session);
  });

  it("a task's end copied to another task's reader is ignored there, and logged", async () => {
    const tools = toolsByName(createBashTools({ client: keyed, taskQueue, agentTaskQueue }));
    const read = (taskId: string) =>
      tools.bash_output.execute({ task_id: taskId }, agent(session)).then(text);
    const ended = await tasks.start({
      command: 'sleep 1',
      description: 'Ends',
      background: true,
      owner: session,
    });
    const target = await tasks.start({
      command: 'sleep 30',
      description: 'Runs',
      background: true,
      owner: session,
    });
    // Read while running: each has a reader, and the ended task hands its notice to its own.
    expect(await read(ended)).toBe('(no new output)\n[status: running]');
    expect(await read(target)).toBe('(no new output)\n[status: running]');
    await tasks.result(ended);
    const notice = await waitForSignal(outputReaderId(ended), 'taskEnded');
    const before = await eventTypes(outputReaderId(target));

    await attacker.signal(outputReaderId(target), 'taskEnded', notice);
    await logged(
      `taskEnded signal ignored: expected an argument whose taskId is ${target}, got "${ended}"; nothing changed`,
      outputReaderId(target),
    );
    // The signal is in its history, and nothing follows it: no notice started.
    expect((await eventTypes(outputReaderId(target))).slice(before.length)).not.toContain(
      'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED',
    );
    await tasks.kill(target, session);
  });

  it("a session's kill copied to another task is ignored there, and logged: that task's end is still noticed", async () => {
    const tools = toolsByName(createBashTools({ client: keyed, taskQueue, agentTaskQueue }));
    const killed = await tasks.start({
      command: 'sleep 30',
      description: 'Killed by its session',
      background: true,
      owner: session,
    });
    const target = await tasks.start({
      command: 'sleep 30',
      description: 'Runs',
      background: true,
      owner: session,
    });
    expect(text(await tools.bash_kill.execute({ task_id: killed }, agent(session)))).toBe(
      `killed background task ${killed}`,
    );
    const kill = await waitForSignal(killed, 'sessionKill');

    await attacker.signal(target, 'sessionKill', kill);
    await logged(
      `sessionKill signal ignored: expected an argument whose taskId is ${target}, got "${killed}"; nothing changed`,
      target,
    );
    // Killed by someone else (an operator's kill tells the task nothing): its notice starts.
    await tasks.kill(target, session);
    expect((await keyed.workflow.getHandle(`${target}-notice`).describe()).type).toBe('completionNotice');
  });
});

describe("a monitor's messages copied from its history", () => {
  it('a monitor request is refused by another task and by its own task again; matched lines and the completion notice are ignored by another task', async () => {
    const bashMonitor = createBashTools({ client: keyed, taskQueue, agentTaskQueue }).find(
      (tool) => tool.name === 'bash_monitor',
    );
    const monitor = (taskId: string, pattern: string | null) =>
      bashMonitor?.execute({ task_id: taskId, notify_on: pattern }, agent(session)).then(text);
    const monitored = await tasks.start({
      command: 'sleep 3; echo ERR one; sleep 2',
      description: 'Fails once',
      background: true,
      owner: session,
    });
    const target = await tasks.start({
      command: 'sleep 60',
      description: 'Runs',
      background: true,
      owner: session,
    });
    // Set once each task has reached its host.
    for (const [taskId, pattern] of [
      [monitored, 'ERR'],
      [target, 'never'],
    ] as const)
      await expect
        .poll(() => monitor(taskId, pattern), { timeout: 20_000, interval: 200 })
        .toBe(monitorSet(taskId, pattern));
    // Cleared, then its first request copied back: the pattern would be set again.
    await monitor(target, null);
    const set = (await attacker.events(noticeWorkflowId(target)))
      .map((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
      .find((accepted) => accepted?.input?.name === 'setMonitor');
    const setPayload = set?.input?.args?.payloads?.[0] as Payload;
    const newId = randomUUID();
    expect(await attacker.update(noticeWorkflowId(target), 'setMonitor', setPayload, newId)).toBe(
      `setMonitor: expected an argument whose requestId is this update's id ${newId}, got "${set?.meta?.updateId}"; nothing changed`,
    );
    const { payload: otherSet } = await attacker.acceptedUpdate(noticeWorkflowId(monitored), 'setMonitor');
    expect(await attacker.update(noticeWorkflowId(target), 'setMonitor', otherSet)).toBe(
      `setMonitor: expected an argument whose taskId is ${target}, got "${monitored}"; nothing changed`,
    );

    await tasks.result(monitored);
    const lines = await waitForSignal(noticeWorkflowId(monitored), 'monitorLines');
    const completion = await waitForSignal(noticeWorkflowId(monitored), 'completionNotice');
    const before = await eventTypes(noticeWorkflowId(target));
    for (const [name, payload] of [
      ['monitorLines', lines],
      ['completionNotice', completion],
    ] as const) {
      await attacker.signal(noticeWorkflowId(target), name, payload);
      await logged(
        `${name} signal ignored: expected an argument whose taskId is ${target}, got "${monitored}"; nothing changed`,
        noticeWorkflowId(target),
      );
    }
    // Nothing delivered to the session from the target's notice workflow, which still runs.
    expect((await eventTypes(noticeWorkflowId(target))).slice(before.length)).not.toContain(
      'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    );
    expect((await keyed.workflow.getHandle(noticeWorkflowId(target)).describe()).status.name).toBe('RUNNING');
    await tasks.kill(target, session);
  });
});

/** The argument of signal `name` once the workflow has taken one. */
async function waitForSignal(workflowId: string, name: string): Promise<Payload> {
  const taken = () =>
    attacker.signalled(workflowId, name).then(
      () => true,
      () => false,
    );
  await expect.poll(taken, { timeout: 30_000, interval: 200 }).toBe(true);
  return attacker.signalled(workflowId, name);
}
