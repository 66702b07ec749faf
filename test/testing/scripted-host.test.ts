/**
 * The scripted host of `durable-bash/testing` on the time-skipping test server: hours of scripted
 * commands in well under a second of wall time each, with the texts real runs give (the same texts
 * the tool and durability suites assert for real commands).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { type ScriptedHost, script, startScriptedHost } from '../../src/testing/index.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { type AgentWorkflowsWorker, startAgentWorkflows } from '../helpers/agent-workflows-worker.js';
import { startBackground, startedTaskId } from '../helpers/background-task.js';
import { createTimeSkippingEnv } from '../helpers/temporal-env.js';
import { timed } from '../helpers/timed.js';
import { text } from '../helpers/tool-calls.js';
import type { awaitBackgroundTask } from './scripted-agents.js';

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;

let env: TestWorkflowEnvironment;
let host: ScriptedHost;
let agents: AgentWorkflowsWorker;
const taskQueue = `scripted-${randomUUID()}`;
// Another host, whose commands' hosts die (each on a host of its own, with the same name).
let dbHost: ScriptedHost;
const dbQueue = `scripted-db-${randomUUID()}`;

const scripts = {
  'make build': script().prints('building\n').after('3 hours').prints('done\n').exits(0),
  'make ship': script()
    .prints('building\n')
    .after('1 hour')
    .printsToStderr('ERROR: disk almost full\n')
    .after('2 hours')
    .prints('ERROR: disk full\nrolling back\n')
    .exits(1),
  'npm test': script().prints('running 412 tests\n'),
  'make deploy': script()
    .printsToStderr('warning: slow disk\n')
    .trapsSigterm({ prints: 'rolled back\n', exits: 3 }),
  'npm run dev': script().prints('listening on :3000\n').after('1 minute').prints('GET /\n').ignoresSigterm(),
};

beforeAll(async () => {
  env = await createTimeSkippingEnv();
  host = await startScriptedHost(env, {
    taskQueue,
    scripts,
    executor: { maxTimeoutMs: 3 * HOUR_MS },
  });
  dbHost = await startScriptedHost(env, {
    taskQueue: dbQueue,
    scripts: { 'make migrate': script().prints('step 1\n').after('1 hour').prints('step 2\n').hostDies() },
    executor: { hostId: 'db-host' },
  });
  agents = await startAgentWorkflows(env, fileURLToPath(new URL('./scripted-agents.ts', import.meta.url)));
}, 120_000);

afterAll(async () => {
  await agents?.stop();
  await host?.shutdown();
  await dbHost?.shutdown();
  await env?.teardown();
});

// Each test leaves the server's clock at rest: a day then passes at once (nothing holds it).
afterEach(async () => {
  const atRest = await Promise.race([
    env.sleep(DAY_MS).then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
  ]);
  expect(atRest, 'the test server clock skips a day at rest').toBe(true);
});

const session = (): ToolExecContext => ({ agent: { sessionId: `session-${randomUUID()}` } });
// The test server lists no workflows: no session quota (it counts a session's running tasks).
const tool = (name: string) =>
  createBashTools({
    client: env.client,
    taskQueue,
    maxBackgroundTasksPerSession: Number.POSITIVE_INFINITY,
  }).find((t) => t.name === name) as Tool;

/** Runs `body`, and says how much wall time it took. */
async function logWallTime<T>(label: string, body: () => Promise<T>): Promise<T> {
  const { value, ms } = await timed(body);
  console.log(`${label}: ${ms.toFixed(0)} ms of wall time`);
  return value;
}

/** How long the task ran in workflow time, from its start to its close. */
async function workflowTimeOf(taskId: string): Promise<number> {
  const { startTime, closeTime } = await env.client.workflow.getHandle(taskId).describe();
  return (closeTime?.getTime() ?? Number.NaN) - startTime.getTime();
}

async function agentRuns(command: string, commandQueue = taskQueue, notifyOn?: string): Promise<string[]> {
  return env.client.workflow.execute<typeof awaitBackgroundTask>('awaitBackgroundTask', {
    taskQueue: agents.taskQueue,
    workflowId: `agent-${randomUUID()}`,
    args: [
      {
        taskQueue: commandQueue,
        sessionId: `session-${randomUUID()}`,
        command,
        ...(notifyOn !== undefined ? { notifyOn } : {}),
      },
    ],
  });
}

describe('a scripted host', () => {
  it('plays a 3-hour build to an agent workflow: the notice comes as a signal, the output reads as printed', async () => {
    const transcript = await logWallTime('3-hour build', () => agentRuns('make build'));
    const taskId = startedTaskId(transcript[0] ?? '');
    expect(transcript).toEqual([
      `started background task ${taskId}`,
      `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.\n[output]\nbuilding\ndone`,
      'building\ndone\n[status: completed, exit code: 0]',
    ]);
    expect(await workflowTimeOf(taskId)).toBeGreaterThanOrEqual(3 * HOUR_MS);
  });

  it("plays a monitor's matches as notices, hours apart in workflow time, before the completion notice", async () => {
    const transcript = await logWallTime('3-hour monitored release', () =>
      agentRuns('make ship', taskQueue, '^ERROR'),
    );
    const taskId = startedTaskId(transcript[0] ?? '');
    expect(transcript.slice(1, 4)).toEqual([
      `background bash task ${taskId} printed 1 line matching /^ERROR/:\n[stderr] ERROR: disk almost full`,
      `background bash task ${taskId} printed 1 line matching /^ERROR/:\nERROR: disk full`,
      `background bash task ${taskId} finished [status: completed, exit code: 1]. Read its output with bash_output.\n[output]\nbuilding\nERROR: disk full\nrolling back\n[stderr]\nERROR: disk almost full`,
    ]);
    expect(await workflowTimeOf(taskId)).toBeGreaterThanOrEqual(3 * HOUR_MS);
  });

  it('times a foreground command out after 2 hours, through the tools over a client', async () => {
    const bash = tool('bash');
    const result = await logWallTime('2-hour foreground timeout', () =>
      bash.execute({ command: 'npm test', description: 'Runs the tests', timeoutMs: 2 * HOUR_MS }, session()),
    );
    expect(text(result)).toBe(
      `running 412 tests\n[timed out after ${2 * HOUR_MS}ms]\n[killed by signal: SIGTERM]`,
    );
  });

  it('waits in workflow time in a wait_ms read, and a kill of a command that ignores SIGTERM ends it with SIGKILL', async () => {
    const exec = session();
    const taskId = await startBackground(tool('bash'), 'npm run dev', exec, {
      description: 'Starts the dev server',
    });
    const read = (args: Record<string, unknown>) =>
      tool('bash_output')
        .execute({ task_id: taskId, ...args }, exec)
        .then(text);
    // As on a real host, the command starts a moment after the call answers.
    await expect.poll(() => host.stdinOf(taskId)).toBe('');
    expect(await read({})).toBe('listening on :3000\n[status: running]');
    // The next line comes a minute later: a read that waits up to 2 minutes gets it, in workflow time.
    const waited = host.skipTimeWhile(() => read({ wait_ms: 2 * 60_000 }));
    expect(await logWallTime('wait_ms read', () => waited)).toBe('GET /\n[status: running]');
    expect(text(await tool('bash_kill').execute({ task_id: taskId }, exec))).toBe(
      `killed background task ${taskId}`,
    );
    expect(await read({})).toBe('(no new output)\n[status: killed by SIGKILL]');
  });

  it('runs a SIGTERM trap on a timeout, keeps stderr apart, takes stdin, and fails a command it has no script for', async () => {
    const bash = tool('bash');
    const exec = session();
    expect(
      text(await bash.execute({ command: 'make deploy', description: 'Deploys', timeoutMs: 60_000 }, exec)),
    ).toBe('rolled back\n[stderr]\nwarning: slow disk\n[timed out after 60000ms]\n[exit code: 3]');
    const taskId = await startBackground(bash, 'make deploy', exec, {
      description: 'Deploys',
      keep_stdin_open: true,
    });
    await expect.poll(() => host.stdinOf(taskId)).toBe('');
    expect(text(await tool('bash_input').execute({ task_id: taskId, text: 'yes\n' }, exec))).toMatch(
      /^wrote 4 bytes/,
    );
    expect(host.stdinOf(taskId)).toBe('yes\n');
    expect(text(await tool('bash_kill').execute({ task_id: taskId }, exec))).toBe(
      `killed background task ${taskId}`,
    );
    expect(text(await bash.execute({ command: 'make release', description: 'Releases' }, exec))).toBe(
      'no script for the command "make release"',
    );
  });
});

describe('a scripted host that dies', () => {
  it('ends a task lost once the 10-minute lost window has passed, with the output its host last sent', async () => {
    const transcript = await logWallTime('10-minute lost window', () => agentRuns('make migrate', dbQueue));
    const taskId = startedTaskId(transcript[0] ?? '');
    const lost =
      '[status: lost: no worker on its host db-host came back within 600000ms; the exit status is unknown]';
    expect(transcript).toEqual([
      `started background task ${taskId}`,
      `background bash task ${taskId} finished ${lost}. Read its output with bash_output.`,
      `step 1\nstep 2\n${lost}`,
    ]);
    // An hour of the script, then the lost window, in workflow time.
    expect(await workflowTimeOf(taskId)).toBeGreaterThanOrEqual(HOUR_MS + 10 * 60_000);
  });

  it('answers a read of a command whose host dies with what its host last sent, while it runs and once it is lost', async () => {
    const exec = session();
    const bash = createBashTools({
      client: env.client,
      taskQueue: dbQueue,
      maxBackgroundTasksPerSession: Infinity,
    });
    const call = (name: string, args: Record<string, unknown>) =>
      (bash.find((t) => t.name === name) as Tool).execute(args, exec).then(text);
    const taskId = startedTaskId(
      await call('bash', { command: 'make migrate', description: 'Migrates', run_in_background: true }),
    );
    // No worker of its host answers reads: a read gives what the server holds (the last heartbeat),
    // once the command has started.
    await expect.poll(() => call('bash_output', { task_id: taskId })).toBe('step 1\n[status: running]');
    await env.client.workflow
      .getHandle(taskId)
      .result()
      .catch(() => undefined);
    expect(await call('bash_output', { task_id: taskId })).toBe(
      'step 2\n[status: lost: no worker on its host db-host came back within 600000ms; the exit status is unknown]',
    );
  });
});
