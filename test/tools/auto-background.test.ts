import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePayload } from '../../src/client/decode-payload.js';
import type { AgentSessions } from '../../src/shared/notice.js';
import { AttemptFailureType, type CommandProgress } from '../../src/shared/task.js';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import type { bashTask } from '../../src/workflows/bash-task.js';
import { startAgentWorker } from '../helpers/agent-worker.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { noticeOutcome as outcomeOfNotice } from '../helpers/notices.js';
import { readToEnd } from '../helpers/read-to-end.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import { agent, text } from '../helpers/tool-calls.js';

const AUTO_BACKGROUND_AFTER_MS = 500;

let env: TestWorkflowEnvironment;
let commandWorker: RunningWorker;
let agentWorker: RunningWorker;
const agentTaskQueue = `agent-${randomUUID()}`;

interface Injection {
  sessionId: string;
  content: string;
}

/** The harness's sessions, in memory: records every inject. */
class FakeSessions implements AgentSessions {
  readonly injections: Injection[] = [];

  async inject(sessionId: string, content: string): Promise<boolean> {
    this.injections.push({ sessionId, content });
    return true;
  }
}

const sessions = new FakeSessions();

beforeAll(async () => {
  env = await createDevServerEnv();
  // Timeouts well past the 300-500 ms thresholds: under a loaded CI the move must still come first.
  commandWorker = await startBashWorker(env, { defaultTimeoutMs: 4000, maxTimeoutMs: 10_000 });
  agentWorker = await startAgentWorker(env, { taskQueue: agentTaskQueue, agents: sessions });
});

afterAll(async () => {
  await Promise.all([commandWorker?.stop(), agentWorker?.stop()]);
  await env?.teardown();
});

function tools(autoBackgroundAfterMs?: number) {
  const all = createBashTools({
    client: env.client,
    taskQueue: commandWorker.taskQueue,
    agentTaskQueue,
    ...(autoBackgroundAfterMs !== undefined ? { autoBackgroundAfterMs } : {}),
  });
  return {
    bash: all.find((tool) => tool.name === 'bash') as Tool,
    bashOutput: all.find((tool) => tool.name === 'bash_output') as Tool,
    bashKill: all.find((tool) => tool.name === 'bash_kill') as Tool,
  };
}

const MOVED =
  /\n?\[still running after (\d+)ms; moved to background task (bash-[0-9a-f-]{36})\. Read its output with bash_output\.\]$/;

/** Splits a moved call's text into the output it showed and the task id it names. */
function moved(result: string): { output: string; taskId: string; afterMs: number } {
  const match = MOVED.exec(result);
  if (!match?.[2]) throw new Error(`not a moved run: ${JSON.stringify(result)}`);
  return {
    output: result.slice(0, match.index + (result[match.index] === '\n' ? 1 : 0)),
    taskId: match[2],
    afterMs: Number(match[1]),
  };
}

const noticeOutcome = (taskId: string) => outcomeOfNotice(env.client, taskId);

describe('bash with autoBackgroundAfterMs', () => {
  it('moves a long foreground run to the background, shows the rest once, and sends a completion notice', async () => {
    const { bash, bashOutput } = tools(AUTO_BACKGROUND_AFTER_MS);
    const exec = agent('session-move');
    const result = text(
      await bash.execute(
        { command: 'for i in 1 2 3; do echo $i; sleep 0.4; done; sleep 2; echo done', description: 'Count' },
        exec,
      ),
    );
    const { output, taskId, afterMs } = moved(result);
    expect(afterMs).toBe(AUTO_BACKGROUND_AFTER_MS);
    expect(result).toBe(
      `${output}[still running after 500ms; moved to background task ${taskId}. Read its output with bash_output.]`,
    );
    // What the command had printed when the call answered, never its end: its first line(s), or
    // nothing yet when its start is slow (in the sandbox, on a loaded CI).
    expect(['(no output)\n', '1\n', '1\n2\n', '1\n2\n3\n']).toContain(output);

    const rest = await readToEnd(bashOutput, taskId, exec);
    expect(output.replace('(no output)\n', '') + rest.output).toBe('1\n2\n3\ndone\n');
    expect(rest.status).toBe('[status: completed, exit code: 0]');
    expect(await noticeOutcome(taskId)).toBe('delivered');
    // The call and the reads showed 1, 2 and 3 before the end; done, printed as the command ends,
    // went to whichever came first: a read (then the notice says all was read) or the notice.
    const first = `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.`;
    const notices = sessions.injections.filter((injection) => injection.content.includes(taskId));
    expect(notices).toHaveLength(1);
    expect(notices[0]?.sessionId).toBe('session-move');
    expect([
      `${first}\n[output since the last read]\ndone`,
      `${first}\n[output: all of it was already read]`,
    ]).toContain(notices[0]?.content);
    const description = await env.client.workflow.getHandle(taskId).describe();
    expect(description.memo?.background).toBe(true);
    // The foreground attempt let go with the command's progress: until the background attempt's
    // heartbeat at attach, it is what a read with no worker to ask finds on the server.
    if (output !== '(no output)\n') {
      const { events } = await env.client.workflow.getHandle(taskId).fetchHistory();
      const released = (events ?? []).find(
        (event) =>
          event.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type ===
          AttemptFailureType.released,
      )?.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.details?.payloads?.[0];
      const progress = released && (await decodePayload<CommandProgress>(env.client, released));
      expect(progress?.hostQueue?.startsWith(`${commandWorker.taskQueue}@`)).toBe(true);
      // As the spill file stood at the release (the call's text may be read later): a start of it.
      expect(progress?.stdout.tail).toBe('1\n2\n3\ndone\n'.slice(0, progress?.stdout.bytes));
    }
  });

  it('lifts the foreground timeout: a moved command runs past its timeoutMs and completes', async () => {
    const { bash, bashOutput } = tools(300);
    const exec = agent('session-timeout');
    const started = Date.now();
    const result = text(
      await bash.execute(
        { command: 'echo start; sleep 4; echo finished', description: 'Slow', timeoutMs: 2500 },
        exec,
      ),
    );
    const { output, taskId } = moved(result);
    expect(output).toBe('start\n');
    expect(Date.now() - started).toBeLessThan(4000);
    const end = await env.client.workflow.getHandle<typeof bashTask>(taskId).result();
    expect(end.exitCode).toBe(0);
    expect(end.signal).toBeNull();
    expect(end.timedOutAfterMs).toBeUndefined();
    const { output: rest, status } = await readToEnd(bashOutput, taskId, exec);
    expect({ output: rest, status }).toEqual({
      output: 'finished\n',
      status: '[status: completed, exit code: 0]',
    });
    expect(await noticeOutcome(taskId)).toBe('delivered');
  });

  it('lets the owning session kill a moved task, whose answer then is the only word of its end', async () => {
    const { bash, bashKill } = tools(300);
    const exec = agent('session-kill');
    const { taskId } = moved(
      text(await bash.execute({ command: 'echo up; sleep 60', description: 'Serve' }, exec)),
    );
    expect(text(await bashKill.execute({ task_id: taskId }, agent('someone-else')))).toBe(
      `task ${taskId} belongs to another session`,
    );
    expect(text(await bashKill.execute({ task_id: taskId }, exec))).toBe(`killed background task ${taskId}`);
    expect((await env.client.workflow.getHandle<typeof bashTask>(taskId).result()).signal).toBe('SIGTERM');
    // A notice starts before its task closes: a closed task without one never gets one.
    await expect(env.client.workflow.getHandle(`${taskId}-notice`).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(sessions.injections.filter((injection) => injection.content.includes(taskId))).toEqual([]);
  });

  it('answers a command that ends before the threshold as an ordinary foreground result', async () => {
    // A threshold no loaded machine reaches for a quick command (CI once took over 500 ms).
    const { bash } = tools(10_000);
    expect(
      await bash.execute({ command: 'echo quick; exit 2', description: 'Quick' }, agent('session-quick')),
    ).toEqual({
      content: [{ type: 'text', text: 'quick\n[exit code: 2]' }],
    });
  });

  it('still times out a command whose timeout fires before the threshold', async () => {
    const { bash } = tools(5_000);
    expect(
      text(
        await bash.execute(
          { command: 'echo start; sleep 30', description: 'Slow', timeoutMs: 500 },
          agent('s'),
        ),
      ),
    ).toBe('start\n[timed out after 500ms]\n[killed by signal: SIGTERM]');
  });

  it('leaves every foreground run in the foreground when the option is off', async () => {
    const { bash } = tools();
    expect(
      text(await bash.execute({ command: 'echo a; sleep 1; echo b', description: 'Two' }, agent('s'))),
    ).toBe('a\nb\n');
    expect(
      text(
        await bash.execute(
          { command: 'echo start; sleep 30', description: 'Slow', timeoutMs: 700 },
          agent('s'),
        ),
      ),
    ).toBe('start\n[timed out after 700ms]\n[killed by signal: SIGTERM]');
  });

  it('refuses a non-positive autoBackgroundAfterMs', () => {
    expect(() => tools(0)).toThrow('autoBackgroundAfterMs must be a positive number, got 0');
  });
});
