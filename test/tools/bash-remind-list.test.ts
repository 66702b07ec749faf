/**
 * `bash_remind` where visibility answers (the dev server): `bash_list` shows a session's pending
 * reminders under its tasks, the soonest first, and a session past its limit sets nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import type { RunningWorker } from '../helpers/bash-worker.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { text } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
const agentTaskQueue = `remind-list-agent-${randomUUID()}`;
let agentWorker: RunningWorker;

beforeAll(async () => {
  agentWorker = await startAgentWorker(suite.env, {
    taskQueue: agentTaskQueue,
    agents: { inject: async () => true },
  });
});

afterAll(async () => {
  await agentWorker?.stop();
});

const tools = () =>
  createBashTools({
    client: suite.env.client,
    taskQueue: suite.worker.taskQueue,
    agentTaskQueue,
    maxRemindersPerSession: 2,
  });
const call = (name: string, args: unknown, exec: ToolExecContext) =>
  (tools().find((tool) => tool.name === name) as Tool).execute(args, exec);
/** Lists the session's tasks until `done` holds of the listing (visibility may lag a moment behind a start). */
async function listUntil(exec: ToolExecContext, done: (listing: string) => boolean): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const listing = text(await call('bash_list', {}, exec));
    if (done(listing) || Date.now() > deadline) return listing;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
const reminderIdOf = (answer: string) => /^reminder (remind-[0-9a-f-]{36}) set/.exec(answer)?.[1] ?? '';

describe('bash_remind with visibility', () => {
  it('lists pending reminders under the tasks, the soonest first, and caps them per session', async () => {
    const exec = { agent: { sessionId: `session-${randomUUID()}` } };
    const later = reminderIdOf(
      text(await call('bash_remind', { after_ms: 3 * 3_600_000, note: 'check the deploy' }, exec)),
    );
    const sooner = reminderIdOf(
      text(await call('bash_remind', { after_ms: 5 * 60_000, note: 'look at the logs\nsecond line' }, exec)),
    );
    const listing = await listUntil(exec, (shown) => shown.includes(later) && shown.includes(sooner));
    expect(listing).toBe(
      [
        '(no background tasks)',
        '',
        `${'REMINDER'.padEnd(43)}  FIRES IN  NOTE`,
        `${sooner}  4m        look at the logs …`,
        `${later}  2h        check the deploy`,
      ].join('\n'),
    );
    expect(await call('bash_remind', { after_ms: 1_000, note: 'third' }, exec)).toEqual({
      content: [
        {
          type: 'text',
          text: 'this session has 2 reminders pending (the limit is 2); cancel one with bash_remind { cancel: <id> }',
        },
      ],
      isError: true,
    });
    // Another session sees none of them.
    expect(text(await call('bash_list', {}, { agent: { sessionId: `other-${randomUUID()}` } }))).toBe(
      '(no background tasks)',
    );
    for (const id of [sooner, later]) await call('bash_remind', { cancel: id }, exec);
    expect(await listUntil(exec, (shown) => shown === '(no background tasks)')).toBe('(no background tasks)');
  });
});
