/**
 * An approved run counts against the session's background quota when it starts (issue 48, finding
 * 6): against a real dev server, command worker and agent worker, with requests decided through the
 * built CLI. Over the quota the approval stands (the CLI says `approved`, a second decision is
 * refused as already approved), the run does not start, and the session hears the quota's own line
 * by notice. Two approvals decided at once start no more than the quota leaves room for.
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

/** An agent host whose policy asks about `echo` (anything else runs), with a background quota of `limit`. */
async function agentHost(limit: number) {
  const agentTaskQueue = `agent-${randomUUID()}`;
  const tools = createBashTools({
    client: suite.env.client,
    taskQueue: suite.worker.taskQueue,
    agentTaskQueue,
    policy: createRulePolicy({
      rules: [{ prefix: 'echo', action: 'ask', reason: 'echo needs a person' }],
      defaultAction: 'allow',
    }),
    maxBackgroundTasksPerSession: limit,
  });
  const inbox = new NoticeInbox();
  await agentWorkers.start({ taskQueue: agentTaskQueue, agents: inbox });
  const tool = (name: string) => tools.find((each) => each.name === name) as Tool;
  const exec = agent(`session-${randomUUID()}`);
  const background = async (command: string) =>
    text(await tool('bash').execute({ command, description: 'Quota', run_in_background: true }, exec));
  return { tool, inbox, exec, background };
}

/** `durable-bash approve <id>` by alice, as a person types it. */
const approve = (approvalId: string) =>
  cli([
    'approve',
    '--address',
    suite.env.address,
    '--task-queue',
    suite.worker.taskQueue,
    '--by',
    'alice',
    approvalId,
  ]);

const APPROVAL_ID = /^waiting for approval: (approval-[0-9a-f-]{36})$/;
const TASK_ID = /^started background task (bash-[0-9a-f-]{36})$/;
const quotaLine = (running: number, limit: number) =>
  `too many background tasks: this session already runs ${running} (the limit is ${limit}); wait for one to end or kill one with bash_kill`;

describe('the background quota on approved runs', () => {
  it('refuses an approved run over the quota with its own line and a notice; the approval stands', async () => {
    const { tool, inbox, exec, background } = await agentHost(1);
    const running = TASK_ID.exec(await background('sleep 60'))?.[1] as string;
    expect(running).toBeDefined();
    const approvalId = APPROVAL_ID.exec(await background('echo over'))?.[1] as string;
    expect(approvalId).toBeDefined();

    expect(await approve(approvalId)).toEqual({ code: 0, stdout: `approved ${approvalId}\n`, stderr: '' });
    await waitFor(() => inbox.notices.length === 1, 30_000, 100);
    expect(inbox.notices).toEqual([
      {
        content: `approval ${approvalId} granted by alice, but \`echo over\` did not start: ${quotaLine(1, 1)}`,
        noticeId: approvalId,
      },
    ]);
    const handle = suite.env.client.workflow.getHandle<typeof bashApproval>(approvalId);
    expect(await handle.result()).toEqual({ kind: 'refused', by: 'alice', running: 1, limit: 1 });
    // The decision stands: a second one is refused as for any approved request.
    expect(await approve(approvalId)).toEqual({
      code: 1,
      stdout: '',
      stderr: `approval ${approvalId} was already approved by alice: nothing changed\n`,
    });
    // Nothing started: the session runs its one task.
    const listing = text(await tool('bash_list').execute({}, exec));
    expect(listing.split('\n').filter((line) => line.startsWith('bash-'))).toEqual([
      expect.stringMatching(new RegExp(`^${running} +running `)),
    ]);
    await tool('bash_kill').execute({ task_id: running }, exec);
  });

  it('starts one of two approvals decided at once when the quota has room for one', async () => {
    const { tool, inbox, exec, background } = await agentHost(2);
    const running = TASK_ID.exec(await background('sleep 60'))?.[1] as string;
    const first = APPROVAL_ID.exec(await background('echo first; sleep 60'))?.[1] as string;
    const second = APPROVAL_ID.exec(await background('echo second; sleep 60'))?.[1] as string;

    const decided = await Promise.all([approve(first), approve(second)]);
    expect(decided.map((run) => run.stdout)).toEqual([`approved ${first}\n`, `approved ${second}\n`]);
    await waitFor(() => inbox.notices.length === 2, 30_000, 100);
    const outcomes = await Promise.all(
      [first, second].map((id) => suite.env.client.workflow.getHandle<typeof bashApproval>(id).result()),
    );
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['approved', 'refused']);
    const [startedAt, refusedAt] = outcomes[0]?.kind === 'approved' ? [0, 1] : [1, 0];
    const started = outcomes[startedAt];
    const startedId = started?.kind === 'approved' ? started.taskId : '';
    expect(outcomes[refusedAt]).toEqual({ kind: 'refused', by: 'alice', running: 2, limit: 2 });
    const ids = [first, second];
    const names = ['first', 'second'];
    const byId = (notices: typeof inbox.notices) =>
      [...notices].sort((a, b) => a.noticeId.localeCompare(b.noticeId));
    expect(byId(inbox.notices)).toEqual(
      byId([
        {
          content: `approval ${ids[startedAt]} granted by alice: \`echo ${names[startedAt]}; sleep 60\` started as background task ${startedId}. Read its output with bash_output.`,
          noticeId: ids[startedAt] as string,
        },
        {
          content: `approval ${ids[refusedAt]} granted by alice, but \`echo ${names[refusedAt]}; sleep 60\` did not start: ${quotaLine(2, 2)}`,
          noticeId: ids[refusedAt] as string,
        },
      ]),
    );
    await Promise.all(
      [running, startedId].map((taskId) => tool('bash_kill').execute({ task_id: taskId }, exec)),
    );
  });
});
