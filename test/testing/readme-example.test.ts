import { createAgentWorker, createBashTools } from 'durable-bash';
import { createTimeSkippingEnv, script, startScriptedHost } from 'durable-bash/testing';
import { expect, test } from 'vitest';

test('a 3-hour build times out after 2 hours, in milliseconds', async () => {
  const env = await createTimeSkippingEnv();
  const host = await startScriptedHost(env, {
    scripts: { 'make build': script().prints('building\n').after('3 hours').prints('done\n').exits(0) },
    executor: { maxTimeoutMs: 2 * 60 * 60_000 },
  });
  try {
    // The test server lists no workflows: no per-session quota of background tasks.
    const tools = createBashTools({ client: env.client, maxBackgroundTasksPerSession: Infinity });
    const bash = tools.find((tool) => tool.name === 'bash');
    const result = await bash?.execute({
      command: 'make build',
      description: 'Builds',
      timeoutMs: 7_200_000,
    });
    expect(result?.content[0]?.text).toBe(
      'building\n[timed out after 7200000ms]\n[killed by signal: SIGTERM]',
    );
  } finally {
    await host.shutdown();
    await env.teardown();
  }
});

test('a reminder set for 3 hours reaches the session at once', async () => {
  const env = await createTimeSkippingEnv();
  const host = await startScriptedHost(env, { scripts: {} });
  const notices: string[] = [];
  // The agent host's worker: it hands each notice to the session (here, to an array).
  const agentHost = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue: 'agent-host',
    agents: {
      async inject(_sessionId, content) {
        notices.push(content);
        return true; // delivered
      },
    },
  });
  const running = agentHost.run();
  try {
    const tools = createBashTools({
      client: env.client,
      agentTaskQueue: 'agent-host',
      maxRemindersPerSession: Infinity, // no visibility to count them in either
    });
    const remind = tools.find((tool) => tool.name === 'bash_remind');
    const set = await remind?.execute(
      { after_ms: 3 * 60 * 60_000, note: 'check the nightly build' },
      { agent: { sessionId: 'dev' } },
    );
    const reminderId = /remind-[0-9a-f-]+/.exec(set?.content[0]?.text ?? '')?.[0] ?? '';
    await env.client.workflow.getHandle(reminderId).result(); // 3 hours, skipped
    expect(notices).toEqual(['reminder: check the nightly build']);
  } finally {
    agentHost.shutdown();
    await running;
    await host.shutdown();
    await env.teardown();
  }
});
