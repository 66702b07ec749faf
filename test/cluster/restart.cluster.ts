/**
 * The Temporal server dies mid-task (SIGKILL of temporal-server; PostgreSQL keeps the state) and
 * comes back on the same database and ports: the background task that was printing lines goes on,
 * its worker reconnects, and bash_output gives every line exactly once and the exact end.
 */
import { describe, expect, it } from 'vitest';
import { startBackground } from '../helpers/background-task.js';
import { readToEnd } from '../helpers/read-to-end.js';
import { agent, text } from '../helpers/tool-calls.js';
import { useCluster } from './use-cluster.js';

const suite = useCluster();

/** What a bash_output answer adds to the stream: none of it when the host's worker did not answer. */
function newLines(answer: string): string[] {
  if (answer.includes('[task worker unavailable')) return [];
  return answer.split('\n').filter((line) => /^line \d+$/.test(line));
}

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`);

describe('on a cluster: a server restart mid-task', () => {
  it('loses no line and repeats none, and the task completes with its exit code', async () => {
    await suite.startHost();
    const tools = suite.tools();
    const session = 'cluster-restart';
    const taskId = await startBackground(
      tools.bash,
      'for i in $(seq 1 60); do echo "line $i"; sleep 0.25; done; exit 4',
      agent(session),
    );
    const before: string[] = [];
    while (before.length < 5) {
      before.push(
        ...newLines(text(await tools.bash_output.execute({ task_id: taskId, wait_ms: 500 }, agent(session)))),
      );
    }
    const pid = suite.cluster.serverPid();
    const restartedAt = Date.now();
    let downAnswer = '';
    await suite.cluster.restartServer({
      whileDown: async () => {
        // With no server, a read answers (with an error) instead of hanging, and moves nothing.
        const askedAt = Date.now();
        const answer = await tools.bash_output.execute({ task_id: taskId }, agent(session));
        downAnswer = `${Date.now() - askedAt}ms: ${text(answer)}`;
        expect(answer.isError).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 3_000)); // The command goes on writing.
      },
    });
    expect(suite.cluster.serverPid()).not.toBe(pid);
    console.log(
      `temporal-server SIGKILLed and serving again in ${Date.now() - restartedAt}ms; a read meanwhile answered in ${downAnswer}`,
    );

    // Each read waits for output; one that fails while the server settles is read again.
    const rest = await readToEnd(tools.bash_output, taskId, agent(session), {
      waitMs: 1_000,
      timeoutMs: 90_000,
      pauseMs: 0,
      tolerateErrors: true,
    });
    expect([...before, ...rest.answers.flatMap(newLines)]).toEqual(numbered(60));
    expect(rest.status).toBe('[status: completed, exit code: 4]');
    expect(text(await tools.bash_output.execute({ task_id: taskId }, agent(session)))).toBe(
      '(no new output)\n[status: completed, exit code: 4]',
    );

    // New work goes through the restarted server too.
    expect(text(await tools.bash.execute({ command: 'echo after', description: 'After the restart' }))).toBe(
      'after\n',
    );
  });
});
