/**
 * `bash_remind` on the time-skipping test server: a reminder set for hours fires at once, through
 * an agent host's worker, exactly once; a cancelled one never does. Its listing and its per-session
 * limit need visibility, which the test server lacks: bash-remind-list.test.ts runs them.
 */
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSessions } from '../../src/shared/notice.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { type ScriptedHost, startScriptedHost } from '../../src/testing/index.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
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

beforeAll(async () => {
  env = await createTimeSkippingEnv();
  host = await startScriptedHost(env, { taskQueue, scripts: {} });
  agentWorker = await startAgentWorker(env, {
    taskQueue: agentTaskQueue,
    agents,
    // A host that can start a turn on its own is told of each notice once.
    onNotice: (sessionId, { content, noticeId }) => {
      announced.push({ sessionId, content, noticeId });
    },
  });
}, 120_000);

afterAll(async () => {
  await agentWorker?.stop();
  await host?.shutdown();
  await env?.teardown();
});

const session = (): ToolExecContext => ({ agent: { sessionId: `session-${randomUUID()}` } });
const remind = (args: unknown, exec: ToolExecContext) => {
  const tools = createBashTools({
    client: env.client,
    taskQueue,
    agentTaskQueue,
    // The test server has no visibility to count a session's reminders in.
    maxRemindersPerSession: Number.POSITIVE_INFINITY,
  });
  return (tools.find((tool) => tool.name === 'bash_remind') as Tool).execute(args, exec);
};
const REMINDER_SET = /^reminder (remind-[0-9a-f-]{36}) set: it fires in (\d+)ms$/;

describe('bash_remind', () => {
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
      'invalid cancel: a cancel takes no after_ms or note',
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
