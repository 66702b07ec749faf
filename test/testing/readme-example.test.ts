import { createBashTools } from 'durable-bash';
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
