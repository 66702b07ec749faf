/**
 * An approval in workflow time, through `durable-bash/testing`: the policy asks, the call waits in a
 * durable request, the scripted host plays a person's decision 3 hours later, and the approved run
 * plays its script: every notice the session gets, in well under a second of wall time.
 */
import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { createRulePolicy } from '../../src/policy/rules.js';
import { createTimeSkippingEnv, script, startScriptedHost } from '../../src/testing/index.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { NoticeInbox, noticeOutcome } from '../helpers/notices.js';
import { text } from '../helpers/tool-calls.js';

const HOUR_MS = 60 * 60_000;

test('a decision played 3 hours later starts the approved run, and the session hears both', async () => {
  const env = await createTimeSkippingEnv();
  const taskQueue = `scripted-approval-${randomUUID()}`;
  const host = await startScriptedHost(env, {
    taskQueue,
    scripts: { 'make release': script().prints('tagging\n').after('1 hour').prints('released\n').exits(0) },
  });
  const inbox = new NoticeInbox();
  const agentWorker = await startAgentWorker(env, { taskQueue: `${taskQueue}-agent`, agents: inbox });
  try {
    const tools = createBashTools({
      client: env.client,
      taskQueue,
      agentTaskQueue: `${taskQueue}-agent`,
      policy: createRulePolicy({ rules: [{ prefix: 'make release', action: 'ask' }] }),
      maxBackgroundTasksPerSession: Infinity, // the test server has no visibility to count in
      maxPendingApprovalsPerSession: Infinity, // nor the session's requests
    });
    const bash = tools.find((tool) => tool.name === 'bash');
    const answer = text(
      (await bash?.execute(
        { command: 'make release', description: 'Releases', run_in_background: true },
        { agent: { sessionId: 'dev' } },
      )) ?? { content: [] },
    );
    const approvalId = /^waiting for approval: (approval-[0-9a-f-]{36})$/.exec(answer)?.[1] as string;
    expect(await host.decide(approvalId, { approved: true, by: 'alice' }, { afterMs: 3 * HOUR_MS })).toBe(
      `approved ${approvalId}`,
    );
    const outcome = await env.client.workflow.getHandle(approvalId).result();
    const taskId = (outcome as { taskId: string }).taskId;
    await env.client.workflow.getHandle(taskId).result(); // 1 hour of script, skipped
    expect(await noticeOutcome(env.client, taskId)).toBe('delivered');
    expect(inbox.notices.map((notice) => notice.content)).toEqual([
      `approval ${approvalId} granted by alice: \`make release\` started as background task ${taskId}. Read its output with bash_output.`,
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\ntagging\nreleased`,
    ]);
  } finally {
    await agentWorker.stop();
    await host.shutdown();
    await env.teardown();
  }
}, 120_000);
