/**
 * A session's pending approval requests are capped (issue 48, finding 6): against a real dev server,
 * command worker and agent worker, a model that fires more asked-about calls at once than the cap
 * gets exactly the cap's worth of requests, and the rest are refused in one line that starts
 * nothing. Another session has its own cap; a request decided (here through the built CLI) frees
 * its place.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRulePolicy } from '../../src/policy/rules.js';
import { MAX_PENDING_APPROVALS_PER_SESSION } from '../../src/shared/limits.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useAgentWorkers } from '../helpers/agent-worker.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';
import { NoticeInbox } from '../helpers/notices.js';
import { agent, text } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
const agentWorkers = useAgentWorkers(() => suite.env);

const APPROVAL_ID = /^waiting for approval: (approval-[0-9a-f-]{36})$/;
const idOf = (answer: string) => APPROVAL_ID.exec(answer)?.[1] as string;

describe('the cap on pending approval requests', () => {
  it('refuses the requests past the cap in one line, counting those made at the same moment', async () => {
    const agentTaskQueue = `agent-${randomUUID()}`;
    const tools = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      agentTaskQueue,
      policy: createRulePolicy({ rules: [{ prefix: 'echo', action: 'ask' }], defaultAction: 'allow' }),
    });
    await agentWorkers.start({ taskQueue: agentTaskQueue, agents: new NoticeInbox() });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const ask = (sessionId: string, n: number) =>
      bash.execute({ command: `echo ${n}`, description: 'Asks', run_in_background: true }, agent(sessionId));
    const sessionId = `session-${randomUUID()}`;
    const limit = MAX_PENDING_APPROVALS_PER_SESSION;
    expect(limit).toBe(20);

    // One more than the cap, all at once, as a model's parallel tool calls come.
    const answers = await Promise.all(Array.from({ length: limit + 1 }, (_, n) => ask(sessionId, n)));
    const waiting = answers.map(text).filter((answer) => APPROVAL_ID.test(answer));
    expect(waiting).toHaveLength(limit);
    const refused = answers.filter((answer) => !APPROVAL_ID.test(text(answer)));
    expect(refused).toEqual([
      {
        content: [
          {
            type: 'text',
            text: 'this session has 20 approval requests pending (the limit is 20); wait for a decision on one (bash_list shows them)',
          },
        ],
        isError: true,
      },
    ]);
    const ids = waiting.map(idOf);
    const running = await suite.env.client.workflow.count(
      `WorkflowType = 'bashApproval' AND ExecutionStatus = 'Running' AND WorkflowId IN (${ids.map((id) => `'${id}'`).join(', ')})`,
    );
    expect(running.count).toBe(limit);

    // Still refused once visibility lists them all; another session is not held back.
    expect(text(await ask(sessionId, limit + 1))).toBe(
      'this session has 20 approval requests pending (the limit is 20); wait for a decision on one (bash_list shows them)',
    );
    const other = text(await ask(`other-${randomUUID()}`, 0));
    expect(other).toMatch(APPROVAL_ID);

    // A decision frees a place.
    const denied = await cli([
      'deny',
      '--address',
      suite.env.address,
      '--task-queue',
      suite.worker.taskQueue,
      ids[0] as string,
    ]);
    expect(denied.stdout).toBe(`denied ${ids[0]}\n`);
    // Its notice delivered, the decided request closes: visibility may take a moment to say so.
    let freed = '';
    for (const deadline = Date.now() + 10_000; !APPROVAL_ID.test(freed) && Date.now() < deadline; )
      freed = text(await ask(sessionId, limit + 2));
    expect(freed).toMatch(APPROVAL_ID);

    await Promise.all(
      [...ids.slice(1), idOf(other), idOf(freed)].map((id) =>
        suite.env.client.workflow.getHandle(id).terminate(),
      ),
    );
  });
});
