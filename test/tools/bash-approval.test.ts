/**
 * Durable approvals against a real dev server, a real command worker and an agent worker: a policy's
 * `ask` with no approver becomes a `bashApproval` request that a decision (update or signal) applies
 * once; a background call answers at once and its session hears the decision by notice; a
 * foreground call waits within its timeout, then is refused naming the request, which stays open.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Approvals } from '../../src/client/approvals.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { createRulePolicy } from '../../src/policy/rules.js';
import type { ApprovalDecision } from '../../src/shared/approval.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { decideSignal } from '../../src/workflows/bash-approval.js';
import { useAgentWorkers } from '../helpers/agent-worker.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { NoticeInbox } from '../helpers/notices.js';
import { waitFor } from '../helpers/processes.js';
import { agent, text } from '../helpers/tool-calls.js';

const execFileAsync = promisify(execFile);

const suite = useDevServerWithWorker();
const agentWorkers = useAgentWorkers(() => suite.env);

const policy = createRulePolicy({
  rules: [{ prefix: 'echo', action: 'ask', reason: 'echo needs a person' }],
  defaultAction: 'allow',
});

/** An agent host whose policy asks about `echo`, with no approver: its tools, inbox and approvals. */
async function agentHost(options: { approvalExpiryMs?: number; autoBackgroundAfterMs?: number } = {}) {
  const agentTaskQueue = `agent-${randomUUID()}`;
  const tools = createBashTools({
    client: suite.env.client,
    taskQueue: suite.worker.taskQueue,
    agentTaskQueue,
    policy,
    ...options,
  });
  const inbox = new NoticeInbox();
  await agentWorkers.start({ taskQueue: agentTaskQueue, agents: inbox });
  const tool = (name: string) => tools.find((each) => each.name === name) as Tool;
  const approvals = new Approvals({
    tasks: new BashTasks({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
  });
  const sessionId = `session-${randomUUID()}`;
  return { tool, inbox, approvals, sessionId, exec: agent(sessionId) };
}

const alice: ApprovalDecision = { approved: true, by: 'alice' };
const APPROVAL_ID = /^waiting for approval: (approval-[0-9a-f-]{36})$/;

describe('durable approvals', () => {
  it('a background call answers at once; approved, its run starts and the session hears both', async () => {
    const { tool, inbox, approvals, sessionId, exec } = await agentHost();
    const answer = text(
      await tool('bash').execute(
        { command: 'echo shipped', description: 'Ship', run_in_background: true },
        exec,
      ),
    );
    const approvalId = APPROVAL_ID.exec(answer)?.[1] as string;
    expect(answer).toBe(`waiting for approval: ${approvalId}`);

    await expect.poll(async () => (await approvals.list(sessionId, 10)).length, { timeout: 10_000 }).toBe(1);
    const [pending] = await approvals.list(sessionId, 10);
    expect(pending).toMatchObject({
      approvalId,
      command: 'echo shipped',
      sessionId,
      background: true,
      reason: 'echo needs a person',
    });
    // The session's own listing shows what waits, under its tasks (none yet).
    expect(text(await tool('bash_list').execute({}, exec))).toMatch(
      new RegExp(
        `^\\(no background tasks\\)\n\nAPPROVAL +AGE +COMMAND +REASON\n${approvalId} +\\d+s +echo shipped +echo needs a person$`,
      ),
    );
    expect(await approvals.decide(approvalId, alice)).toBe(`approved ${approvalId}`);
    await expect(approvals.decide(approvalId, { approved: false, by: 'bob' })).rejects.toThrow(
      `approval ${approvalId} was already approved by alice: nothing changed`,
    );

    await waitFor(() => inbox.notices.length === 2, 30_000, 100);
    const taskId = /background task (bash-[0-9a-f-]{36})/.exec(inbox.notices[0]?.content ?? '')?.[1];
    expect(inbox.notices).toEqual([
      {
        content: `approval ${approvalId} granted by alice: \`echo shipped\` started as background task ${taskId}. Read its output with bash_output.`,
        noticeId: approvalId,
      },
      {
        content: `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\nshipped`,
        noticeId: `${taskId}-notice`,
      },
    ]);
    // Closed, a request refuses another decision the same way.
    await expect(approvals.decide(approvalId, { approved: false, by: 'bob' })).rejects.toThrow(
      `approval ${approvalId} was already approved by alice: nothing changed`,
    );
    expect(await approvals.list(sessionId, 10)).toEqual([]);
    expect(text(await tool('bash_list').execute({}, exec))).not.toContain('APPROVAL');
  });

  it('a denial by signal (`temporal workflow signal`, as the Web UI sends it) is told with its reason; a second signal changes nothing', async () => {
    const { tool, inbox, exec } = await agentHost();
    const answer = text(
      await tool('bash').execute({ command: 'echo no', description: 'No', run_in_background: true }, exec),
    );
    const approvalId = APPROVAL_ID.exec(answer)?.[1] as string;
    const handle = suite.env.client.workflow.getHandle(approvalId);
    // As docs/PERMISSIONS.md gives it: Temporal's own CLI, with the decision as the signal's JSON input.
    const temporal = findTemporalBinary(TemporalBinary.cli);
    if (temporal.kind === 'download') throw new Error('no temporal binary: run npm run provision');
    await execFileAsync(temporal.path, [
      'workflow',
      'signal',
      '--address',
      suite.env.address,
      '--workflow-id',
      approvalId,
      '--name',
      'decide',
      '--input',
      JSON.stringify({ approvalId, approved: false, by: 'carol', reason: 'not on a Friday' }),
    ]);
    await handle.signal(decideSignal, { approvalId, approved: true, by: 'dave' });
    await waitFor(() => inbox.notices.length === 1, 30_000, 100);
    expect(inbox.notices[0]?.content).toBe(
      `approval ${approvalId} denied by carol: not on a Friday. \`echo no\` did not run.`,
    );
    expect(await handle.result()).toEqual({ kind: 'denied', by: 'carol', reason: 'not on a Friday' });
  });

  it('a foreground call runs once approved within its wait, and answers the command', async () => {
    const { tool, inbox, approvals, sessionId, exec } = await agentHost();
    const call = tool('bash').execute({ command: 'echo now', description: 'Now' }, exec);
    await expect.poll(async () => (await approvals.list(sessionId, 10)).length, { timeout: 10_000 }).toBe(1);
    const [pending] = await approvals.list(sessionId, 10);
    await approvals.decide(pending?.approvalId as string, alice);
    expect(text(await call)).toBe('now\n');
    // The caller had the answer: no notice.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(inbox.notices).toEqual([]);
  });

  it('a foreground call with no decision in time is refused naming the request; approved later, it runs in the background', async () => {
    const { tool, inbox, approvals, exec } = await agentHost();
    const answer = text(
      await tool('bash').execute({ command: 'echo later', description: 'Later', timeoutMs: 3_000 }, exec),
    );
    const approvalId = /request (approval-[0-9a-f-]{36})/.exec(answer)?.[1] as string;
    expect(answer).toBe(
      `command not approved: no decision within 3000ms; request ${approvalId} stays open, and if it is approved the command runs in the background, within its timeout, with a notice to this session`,
    );
    await approvals.decide(approvalId, alice);
    await waitFor(() => inbox.notices.length === 2, 30_000, 100);
    const taskId = /background task (bash-[0-9a-f-]{36})/.exec(inbox.notices[0]?.content ?? '')?.[1];
    expect(inbox.notices.map((notice) => notice.content)).toEqual([
      `approval ${approvalId} granted by alice: \`echo later\` started as background task ${taskId}. Read its output with bash_output.`,
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\nlater`,
    ]);
  });

  it('a foreground call that would move to the background waits no longer than that for a decision', async () => {
    const { tool, exec } = await agentHost({ autoBackgroundAfterMs: 2_000 });
    const answer = text(await tool('bash').execute({ command: 'echo quick', description: 'Quick' }, exec));
    const approvalId = /request (approval-[0-9a-f-]{36})/.exec(answer)?.[1] as string;
    expect(answer).toBe(
      `command not approved: no decision within 2000ms; request ${approvalId} stays open, and if it is approved the command runs in the background, within its timeout, with a notice to this session`,
    );
    await suite.env.client.workflow.getHandle(approvalId).terminate();
  });

  it('a foreground call hears a denial as one line', async () => {
    const { tool, approvals, sessionId, exec } = await agentHost();
    const call = tool('bash').execute({ command: 'echo denied', description: 'Denied' }, exec);
    await expect.poll(async () => (await approvals.list(sessionId, 10)).length, { timeout: 10_000 }).toBe(1);
    const [pending] = await approvals.list(sessionId, 10);
    await approvals.decide(pending?.approvalId as string, {
      approved: false,
      by: 'erin',
      reason: 'too risky',
    });
    const result = await call;
    expect(text(result)).toBe('command not approved: denied by erin: too risky');
    expect(result.isError).toBe(true);
  });

  it('a request past its expiry is denied with a notice, and takes no decision', async () => {
    const { tool, inbox, approvals, exec } = await agentHost({ approvalExpiryMs: 2_000 });
    const answer = text(
      await tool('bash').execute(
        { command: 'echo stale', description: 'Stale', run_in_background: true },
        exec,
      ),
    );
    const approvalId = APPROVAL_ID.exec(answer)?.[1] as string;
    await waitFor(() => inbox.notices.length === 1, 30_000, 100);
    expect(inbox.notices[0]?.content).toBe(
      `approval ${approvalId} expired with no decision after 2000ms: \`echo stale\` did not run.`,
    );
    await expect(approvals.decide(approvalId, alice)).rejects.toThrow(
      `approval ${approvalId} is no longer waiting for a decision: nothing changed`,
    );
  });

  it('refuses a decision for no request, or one that is no decision, in one line', async () => {
    const { tool, approvals, exec } = await agentHost();
    await expect(approvals.decide('approval-nope', alice)).rejects.toThrow(
      'no approval request approval-nope',
    );
    const unknown = `approval-${randomUUID()}`;
    await expect(approvals.decide(unknown, alice)).rejects.toThrow(`no approval request ${unknown}`);
    const answer = text(
      await tool('bash').execute({ command: 'echo x', description: 'X', run_in_background: true }, exec),
    );
    const approvalId = APPROVAL_ID.exec(answer)?.[1] as string;
    await expect(approvals.decide(approvalId, { approved: true, by: ' ' })).rejects.toThrow(
      'decide: expected {"approvalId": "<the request id>", "approved": true|false, "by": "<who>", "reason"?: "<why>"}',
    );
    await approvals.decide(approvalId, { approved: false, by: 'tester' });
  });
});
