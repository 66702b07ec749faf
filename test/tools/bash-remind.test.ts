/**
 * `bash_remind` on the time-skipping test server: a reminder set for hours fires at once, through
 * an agent host's worker, exactly once; a cancelled one never does. Its listing and its per-session
 * limit need visibility, which the test server lacks: bash-remind-list.test.ts runs them.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSessions } from '../../src/shared/notice.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { type ScriptedHost, script, startScriptedHost } from '../../src/testing/index.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { startBackground } from '../helpers/background-task.js';
import type { RunningWorker } from '../helpers/bash-worker.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';
import { text } from '../helpers/tool-calls.js';

const HOUR_MS = 60 * 60_000;

let env: TestWorkflowEnvironment;
let host: ScriptedHost;
let agentWorker: RunningWorker;
const taskQueue = `remind-${randomUUID()}`;
const agentTaskQueue = `remind-agent-${randomUUID()}`;
const injected: Array<{ sessionId: string; content: string; noticeId: string }> = [];
const announced: Array<{ sessionId: string; content: string; noticeId: string }> = [];

const agents: AgentSessions = {
  async inject(sessionId, content, { noticeId }) {
    injected.push({ sessionId, content, noticeId });
    return true;
  },
};

/** A test server, a scripted host and an agent host's worker. */
async function startWorld(): Promise<void> {
  env = await createTimeSkippingEnv();
  host = await startScriptedHost(env, {
    taskQueue,
    scripts: {
      'make build': script().prints('building\n').after('1 hour').exits(0),
      'make release': script().prints('packing\n').after('5 hours').exits(2),
    },
  });
  agentWorker = await startAgentWorker(env, {
    taskQueue: agentTaskQueue,
    agents,
    // A host that can start a turn on its own is told of each notice once.
    onNotice: (sessionId, { content, noticeId }) => {
      announced.push({ sessionId, content, noticeId });
    },
  });
}

async function stopWorld(): Promise<void> {
  await agentWorker?.stop();
  await host?.shutdown();
  await env?.teardown();
}

const session = (): ToolExecContext => ({ agent: { sessionId: `session-${randomUUID()}` } });
const tool = (name: string) =>
  createBashTools({
    client: env.client,
    taskQueue,
    agentTaskQueue,
    // The test server has no visibility to count a session's reminders or tasks in.
    maxRemindersPerSession: Number.POSITIVE_INFINITY,
    maxBackgroundTasksPerSession: Number.POSITIVE_INFINITY,
  }).find((each) => each.name === name) as Tool;
const remind = (args: unknown, exec: ToolExecContext) => tool('bash_remind').execute(args, exec);
/** What the session's agent host was given, in order. */
const noticesOf = (exec: ToolExecContext) =>
  injected.filter((notice) => notice.sessionId === exec.agent?.sessionId).map((notice) => notice.content);
const REMINDER_SET = /^reminder (remind-[0-9a-f-]{36}) set: it fires in (\d+)ms$/;
/** The id a `bash_remind` answer set, with or without the tasks it waits for. */
const reminderIdOf = (answer: string) => /^reminder (remind-[0-9a-f-]{36}) set: /.exec(answer)?.[1] ?? '';
/** The reminders the session's agent host was given, in order. */
const remindersOf = (exec: ToolExecContext) =>
  noticesOf(exec).filter((notice) => notice.startsWith('reminder:'));

describe('bash_remind', () => {
  beforeAll(startWorld, 120_000);
  afterAll(stopWorld);

  it('delivers reminder: <note> once, after three hours of skipped time', async () => {
    const exec = session();
    const answer = text(await remind({ after_ms: 3 * HOUR_MS, note: 'check the nightly build' }, exec));
    const [, reminderId, afterMs] = REMINDER_SET.exec(answer) ?? [];
    expect(afterMs).toBe(String(3 * HOUR_MS));
    const started = Date.now();
    await env.client.workflow.getHandle(reminderId ?? '').result();
    expect(Date.now() - started).toBeLessThan(30_000);
    const mine = injected.filter((notice) => notice.sessionId === exec.agent?.sessionId);
    expect(mine).toEqual([
      {
        sessionId: exec.agent?.sessionId,
        content: 'reminder: check the nightly build',
        noticeId: reminderId,
      },
    ]);
  });

  it('cancels a pending reminder, which then never fires, and refuses a second cancel', async () => {
    const exec = session();
    const [, reminderId] =
      REMINDER_SET.exec(text(await remind({ after_ms: HOUR_MS, note: 'n' }, exec))) ?? [];
    expect(await remind({ cancel: reminderId }, exec)).toEqual({
      content: [{ type: 'text', text: `cancelled reminder ${reminderId}` }],
    });
    await env.sleep(2 * HOUR_MS);
    expect(injected.filter((notice) => notice.sessionId === exec.agent?.sessionId)).toEqual([]);
    expect(text(await remind({ cancel: reminderId }, exec))).toBe(
      `reminder ${reminderId} was already cancelled`,
    );
    expect(text(await remind({ cancel: reminderId }, session()))).toBe(
      `reminder ${reminderId} belongs to another session`,
    );
  });

  const unknown = `remind-${randomUUID()}`;
  const cases: [string, unknown, ToolExecContext | undefined, string][] = [
    [
      'a zero after_ms',
      { after_ms: 0, note: 'n' },
      undefined,
      'invalid after_ms: expected a whole number of milliseconds from 1 to 2592000000, got 0',
    ],
    [
      'an after_ms past 30 days',
      { after_ms: 2592000001, note: 'n' },
      undefined,
      'invalid after_ms: expected a whole number of milliseconds from 1 to 2592000000, got 2592000001',
    ],
    ['no note', { after_ms: 10 }, undefined, 'invalid note: expected a non-blank string, got nothing'],
    [
      'a blank note',
      { after_ms: 10, note: ' ' },
      undefined,
      'invalid note: expected a non-blank string, got " "',
    ],
    [
      'a note over 1024 bytes',
      { after_ms: 10, note: 'x'.repeat(1025) },
      undefined,
      'invalid note: 1025 bytes, over the 1024-byte limit',
    ],
    [
      'nothing',
      {},
      undefined,
      'invalid after_ms: expected a whole number of milliseconds from 1 to 2592000000, got nothing; invalid note: expected a non-blank string, got nothing',
    ],
    [
      'a cancel with a note',
      { cancel: unknown, note: 'n' },
      undefined,
      'invalid cancel: a cancel takes no after_ms, note or task_ids',
    ],
    [
      'an empty task_ids',
      { after_ms: 10, note: 'n', task_ids: [] },
      undefined,
      'invalid task_ids: expected at least one task id',
    ],
    [
      'a task_ids of a reminder id',
      { after_ms: 10, note: 'n', task_ids: [unknown] },
      undefined,
      // A value in an error is cut at 40 characters.
      `invalid task_ids.0: expected an id that bash returned (bash-<uuid>), got "${unknown.slice(0, 40)}…"`,
    ],
    [
      'a cancel of a task id',
      { cancel: 'bash-1' },
      undefined,
      'invalid cancel: expected an id that bash_remind returned (remind-<uuid>), got "bash-1"',
    ],
    ['a cancel of no reminder', { cancel: unknown }, undefined, `unknown reminder ${unknown}`],
    [
      'a call with no session',
      { after_ms: 10, note: 'n' },
      {},
      'reminders belong to an agent session, and this call has none: nothing was set',
    ],
  ];

  it.each(cases)('refuses %s with one line, and sets nothing', async (_name, args, exec, message) => {
    const before = injected.length;
    expect(await remind(args, exec ?? session())).toEqual({
      content: [{ type: 'text', text: message }],
      isError: true,
    });
    await env.sleep(HOUR_MS);
    expect(injected.length).toBe(before);
  });

  it('is offered only where notices can arrive: with agentTaskQueue', () => {
    const names = (agentQueue?: string) =>
      createBashTools({
        client: env.client,
        taskQueue,
        ...(agentQueue ? { agentTaskQueue: agentQueue } : {}),
      }).map((tool) => tool.name);
    expect(names()).not.toContain('bash_remind');
    expect(names(agentTaskQueue)).toContain('bash_remind');
  });
});

// Each test on a server of its own: after a task with a completion notice has ended, the test
// server's clock no longer skips while another scripted command runs (seen at a388d95 too; see the
// issue 30 note), so tasks of one test must not hold up the next.
describe('bash_remind with task_ids', () => {
  beforeEach(startWorld, 120_000);
  afterEach(stopWorld);

  it('fires sooner once every task it waits for has ended, saying how each ended', async () => {
    const exec = session();
    const build = await startBackground(tool('bash'), 'make build', exec);
    const answer = text(
      await remind({ after_ms: 3 * HOUR_MS, note: 'review the build', task_ids: [build] }, exec),
    );
    const reminderId = reminderIdOf(answer);
    expect(answer).toBe(
      `reminder ${reminderId} set: it fires in ${3 * HOUR_MS}ms, or sooner when task ${build} has ended`,
    );
    await env.client.workflow.getHandle(reminderId).result();
    expect(remindersOf(exec)).toEqual([
      `reminder: review the build\n[every task it waited for has ended]\n${build} [status: completed, exit code: 0]`,
    ]);
  });

  it('fires at its time when not every task has ended, and says which have not', async () => {
    const exec = session();
    const release = await startBackground(tool('bash'), 'make release', exec);
    const answer = text(
      await remind({ after_ms: 2 * HOUR_MS, note: 'check the release', task_ids: [release] }, exec),
    );
    const reminderId = reminderIdOf(answer);
    await env.client.workflow.getHandle(reminderId).result();
    expect(remindersOf(exec)).toEqual([
      `reminder: check the release\n[its time came: 0 of the 1 tasks it waited for have ended]\n${release} [status: running]`,
    ]);
    await tool('bash_kill').execute({ task_id: release }, exec);
  });

  it('fires at once for tasks that had all ended when it was set', async () => {
    const exec = session();
    const build = await startBackground(tool('bash'), 'make build', exec);
    await env.client.workflow.getHandle(build).result();
    const reminderId = reminderIdOf(
      text(await remind({ after_ms: 10 * HOUR_MS, note: 'done?', task_ids: [build] }, exec)),
    );
    const started = Date.now();
    await env.client.workflow.getHandle(reminderId).result();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(remindersOf(exec)).toEqual([
      `reminder: done?\n[every task it waited for has ended]\n${build} [status: completed, exit code: 0]`,
    ]);
  });

  it("refuses another session's task, an unknown one and a repeated one, setting nothing", async () => {
    const mine = session();
    const build = await startBackground(tool('bash'), 'make build', mine);
    const unknownTask = `bash-${randomUUID()}`;
    const other = session();
    expect(text(await remind({ after_ms: 10, note: 'n', task_ids: [build] }, other))).toBe(
      `task ${build} belongs to another session`,
    );
    expect(text(await remind({ after_ms: 10, note: 'n', task_ids: [unknownTask] }, mine))).toBe(
      `unknown bash task ${unknownTask}`,
    );
    expect(text(await remind({ after_ms: 10, note: 'n', task_ids: [build, build] }, mine))).toBe(
      'invalid task_ids: a task id is listed twice',
    );
    await env.sleep(HOUR_MS);
    expect(noticesOf(other)).toEqual([]);
    expect(remindersOf(mine)).toEqual([]);
  });
});
