/**
 * A foreground call approved after its caller stopped waiting runs in the background with the
 * timeout the call asked for (issue 48, finding 6): against a real dev server, command worker and
 * agent worker, with the request approved through the built CLI. The command would run a minute;
 * its timeout ends it, and the session's completion notice says so.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRulePolicy } from '../../src/policy/rules.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import type { bashApproval } from '../../src/workflows/bash-approval.js';
import { useAgentWorkers } from '../helpers/agent-worker.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';
import { NoticeInbox } from '../helpers/notices.js';
import { waitFor } from '../helpers/processes.js';
import { agent, text } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
const agentWorkers = useAgentWorkers(() => suite.env);

/** The call's timeout: its wait for a decision, then, approved late, its run's. */
const TIMEOUT_MS = 3_000;

describe('a foreground request approved after its caller left', () => {
  it('runs with the timeout the call asked for', async () => {
    const agentTaskQueue = `agent-${randomUUID()}`;
    const tools = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      agentTaskQueue,
      policy: createRulePolicy({ rules: [{ prefix: 'echo', action: 'ask' }], defaultAction: 'allow' }),
    });
    const inbox = new NoticeInbox();
    await agentWorkers.start({ taskQueue: agentTaskQueue, agents: inbox });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const exec = agent(`session-${randomUUID()}`);

    const answer = text(
      await bash.execute(
        { command: 'echo tick; sleep 60', description: 'Slow', timeoutMs: TIMEOUT_MS },
        exec,
      ),
    );
    const approvalId = /request (approval-[0-9a-f-]{36})/.exec(answer)?.[1] as string;
    expect(answer).toBe(
      `command not approved: no decision within ${TIMEOUT_MS}ms; request ${approvalId} stays open, and if it is approved the command runs in the background, within its timeout, with a notice to this session`,
    );
    const decided = await cli([
      'approve',
      '--address',
      suite.env.address,
      '--task-queue',
      suite.worker.taskQueue,
      '--by',
      'alice',
      approvalId,
    ]);
    expect(decided.stdout).toBe(`approved ${approvalId}\n`);
    const outcome = await suite.env.client.workflow.getHandle<typeof bashApproval>(approvalId).result();
    const taskId = outcome.kind === 'approved' ? outcome.taskId : '';
    expect(outcome).toEqual({ kind: 'approved', by: 'alice', taskId, background: true });

    // Well before the command's minute: its timeout ended it.
    await waitFor(() => inbox.notices.length === 2, 30_000, 100);
    expect(inbox.notices.map((notice) => notice.content)).toEqual([
      `approval ${approvalId} granted by alice: \`echo tick; sleep 60\` started as background task ${taskId}. Read its output with bash_output.`,
      `background bash task ${taskId} finished [status: killed by SIGTERM]. Read its output with bash_output.\n[output]\ntick\n[timed out after ${TIMEOUT_MS}ms]`,
    ]);
    const { memo } = await suite.env.client.workflow.getHandle(taskId).describe();
    expect(memo?.background).toBe(true);
  });
});
