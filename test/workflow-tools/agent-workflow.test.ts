/**
 * Agents that are workflows (`durable-bash/workflow`), against a real dev server and command
 * worker: a background build whose notice reaches the agent as a signal, its output read with the
 * tools' own texts, the agent continued as new while its task runs, and the histories replayed.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { bundlerOptions } from '../../src/worker/workflow-bundle.js';
import { bashNoticeSignal } from '../../src/workflow-tools/index.js';
import { type AgentWorkflowsWorker, startAgentWorkflows } from '../helpers/agent-workflows-worker.js';
import { startedTaskId } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { createDevServerEnv } from '../helpers/temporal-env.js';
import type {
  buildAgent,
  monitoredAgent,
  noticeInbox,
  oneCall,
  quickMonitoredAgent,
  remindedAgent,
} from './agent-workflows.js';

const workflowsPath = fileURLToPath(new URL('./agent-workflows.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let commands: RunningWorker;
let agents: AgentWorkflowsWorker;

beforeAll(async () => {
  env = await createDevServerEnv();
  commands = await startBashWorker(env);
  agents = await startAgentWorkflows(env, workflowsPath);
}, 120_000);

afterAll(async () => {
  await agents?.stop();
  await commands?.stop();
  await env?.teardown();
});

async function runAgent(input: Omit<Parameters<typeof buildAgent>[0], 'taskQueue'>) {
  const workflowId = `agent-${randomUUID()}`;
  const transcript = await env.client.workflow.execute<typeof buildAgent>('buildAgent', {
    taskQueue: agents.taskQueue,
    workflowId,
    args: [{ taskQueue: commands.taskQueue, ...input }],
  });
  return { workflowId, transcript };
}

/** The transcript a build agent sees, as the tools word it. */
function expectedTranscript(taskId: string, command: string) {
  return [
    `started background task ${taskId}`,
    expect.stringMatching(
      new RegExp(`^ID STATUS AGE COMMAND\n${taskId} running \\d+s ${escapeRegExp(command)}$`),
    ),
    `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\nbuilding\ndone`,
    'building\ndone\n[status: completed, exit code: 0]',
    'deployed\n',
    `task ${taskId} had already finished`,
  ];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('an agent that is a workflow', () => {
  it("takes each task's notice once: a second one (a reset task that ended again) is dropped", async () => {
    const handle = await env.client.workflow.start<typeof noticeInbox>('noticeInbox', {
      taskQueue: agents.taskQueue,
      workflowId: `inbox-${randomUUID()}`,
    });
    const first = { taskId: 'bash-1', text: 'background bash task bash-1 finished ...' };
    const second = { taskId: 'bash-2', text: 'background bash task bash-2 finished ...' };
    await handle.signal(bashNoticeSignal, first);
    await handle.signal(bashNoticeSignal, { ...first, text: 'again' });
    await handle.signal(bashNoticeSignal, second);
    expect(await handle.result()).toEqual([first, second]);
  });

  it('drops a notice that names another agent workflow (one copied from its history)', async () => {
    const workflowId = `inbox-${randomUUID()}`;
    const handle = await env.client.workflow.start<typeof noticeInbox>('noticeInbox', {
      taskQueue: agents.taskQueue,
      workflowId,
    });
    const copied = { taskId: 'bash-1', agentWorkflowId: `inbox-${randomUUID()}`, text: 'another session' };
    const own = { taskId: 'bash-2', agentWorkflowId: workflowId, text: 'this one' };
    // As a task of 0.2.0 sends it: naming no agent workflow.
    const unnamed = { taskId: 'bash-3', text: 'this one too' };
    await handle.signal(bashNoticeSignal, copied);
    await handle.signal(bashNoticeSignal, own);
    await handle.signal(bashNoticeSignal, unnamed);
    expect(await handle.result()).toEqual([own, unnamed]);
  });

  it('starts a background build, gets its notice as a signal, reads the output and reacts', async () => {
    const build = 'echo building; sleep 1; echo done';
    const { workflowId, transcript } = await runAgent({ sessionId: `session-${randomUUID()}`, build });
    const taskId = startedTaskId(transcript[0] ?? '');
    expect(transcript).toEqual(expectedTranscript(taskId, build));
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    await Worker.runReplayHistory({ workflowsPath, bundlerOptions }, history, workflowId);
  });

  it('keeps its task and notice across a continue-as-new while the task runs', async () => {
    const build = 'echo building; sleep 3; echo done';
    const { workflowId, transcript } = await runAgent({
      sessionId: `session-${randomUUID()}`,
      build,
      continueAsNewWhileBuilding: true,
    });
    const taskId = startedTaskId(transcript[0] ?? '');
    expect(transcript).toEqual(expectedTranscript(taskId, build));
    // Both runs replay: the one that started the task and the one it continued as.
    const histories = env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }).intoHistories();
    let replayed = 0;
    for await (const { history } of histories) {
      await Worker.runReplayHistory({ workflowsPath, bundlerOptions }, history, workflowId);
      replayed += 1;
    }
    expect(replayed).toBe(2);
  });

  it('sets a reminder whose notice comes back as a signal', async () => {
    const [answer, noticeId, noticeText] = await env.client.workflow.execute<typeof remindedAgent>(
      'remindedAgent',
      {
        taskQueue: agents.taskQueue,
        workflowId: `reminded-${randomUUID()}`,
        args: [{ taskQueue: commands.taskQueue, sessionId: `session-${randomUUID()}` }],
      },
    );
    const reminderId = /^reminder (remind-[0-9a-f-]{36}) set: it fires in 1000ms$/.exec(answer ?? '')?.[1];
    expect(reminderId).toBeDefined();
    expect([noticeId, noticeText]).toEqual([reminderId, 'reminder: look at the build again']);
  });

  it("gets a monitor's notices as signals, each once, before the task's completion notice", async () => {
    const transcript = await env.client.workflow.execute<typeof monitoredAgent>('monitoredAgent', {
      taskQueue: agents.taskQueue,
      workflowId: `monitored-${randomUUID()}`,
      args: [{ taskQueue: commands.taskQueue, sessionId: `session-${randomUUID()}` }],
    });
    const taskId = startedTaskId(transcript[0] ?? '');
    expect(transcript.slice(1)).toEqual([
      `monitoring task ${taskId}: each line matching /WARN/ comes as a notice`,
      `${taskId}-match-1: background bash task ${taskId} printed 1 line matching /ERROR/: | ERROR one`,
      `${taskId}-match-2: background bash task ${taskId} printed 1 line matching /WARN/: | WARN two`,
      `${taskId}: background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output. | [output]`,
    ]);
  });

  it("gets a quick task's monitor notice before its completion notice, and its notice workflow closes", async () => {
    const ids = await env.client.workflow.execute<typeof quickMonitoredAgent>('quickMonitoredAgent', {
      taskQueue: agents.taskQueue,
      workflowId: `quick-monitored-${randomUUID()}`,
      args: [{ taskQueue: commands.taskQueue, sessionId: `session-${randomUUID()}` }],
    });
    const taskId = (ids[1] ?? '').replace(' (completion)', '');
    expect(ids).toEqual([`${taskId}-match-1`, `${taskId} (completion)`]);
    // It closes in the workflow task after the one that sent the completion notice, a moment after
    // the agent could have it.
    await expect
      .poll(async () => (await env.client.workflow.getHandle(`${taskId}-notice`).describe()).status.name, {
        timeout: 10_000,
      })
      .toBe('COMPLETED');
  });

  it("answers with the tools' texts: a bad call, a foreign session's read, a timed-out foreground run", async () => {
    const call = (input: Omit<Parameters<typeof oneCall>[0], 'taskQueue'>) =>
      env.client.workflow.execute<typeof oneCall>('oneCall', {
        taskQueue: agents.taskQueue,
        workflowId: `call-${randomUUID()}`,
        args: [{ taskQueue: commands.taskQueue, ...input }],
      });
    const [bash] = createBashTools({ client: env.client, taskQueue: commands.taskQueue });
    const asTool = async (args: unknown) => {
      const result = await bash?.execute(args);
      return { text: result?.content.map((block) => block.text).join(''), isError: result?.isError === true };
    };
    const bad = { command: 'true' };
    const badCall = await call({ tool: 'bash', args: bad });
    expect(badCall).toEqual(await asTool(bad));
    expect(badCall.isError).toBe(true);
    const owner = `session-${randomUUID()}`;
    const started = await call({
      sessionId: owner,
      tool: 'bash',
      args: { command: 'sleep 30', description: 'Sleeps', run_in_background: true },
    });
    const taskId = startedTaskId(started.text);
    expect(await call({ sessionId: 'someone-else', tool: 'bash_output', args: { task_id: taskId } })).toEqual(
      {
        text: `task ${taskId} belongs to another session`,
        isError: true,
      },
    );
    expect(await call({ sessionId: owner, tool: 'bash_kill', args: { task_id: taskId } })).toEqual({
      text: `killed background task ${taskId}`,
      isError: false,
    });
    expect(
      await call({
        tool: 'bash',
        args: { command: 'echo start; sleep 30', description: 'Times out', timeoutMs: 500 },
      }),
    ).toEqual({ text: 'start\n[timed out after 500ms]\n[killed by signal: SIGTERM]', isError: false });
    // Output that is not UTF-8 travels as base64, which workflow code decodes without Buffer.
    const latin1 = { command: "printf 'caf\\351 ok\\n'; printf '\\377' >&2", description: 'Prints Latin-1' };
    expect(await call({ tool: 'bash', args: latin1 })).toEqual(await asTool(latin1));
    // A budget cuts the middle in workflow code too (the file is on a host the workflow cannot name).
    const budgeted = await call({
      tool: 'bash',
      args: { command: 'seq 1 3000', description: 'Prints numbers', max_output_tokens: 50 },
    });
    expect(budgeted.isError).toBe(false);
    expect(budgeted.text).toMatch(
      /^1\n[\d\n]*\n\[\d+ tokens cut from the middle to fit max_output_tokens; full output: \(unavailable\)\]\n[\d\n]*3000\n$/,
    );
    expect(Buffer.byteLength(budgeted.text)).toBeLessThanOrEqual(200);
  });
});
