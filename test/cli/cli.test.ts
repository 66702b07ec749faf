import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRulePolicy } from '../../src/policy/rules.js';
import { resultText, type Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground, startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { CLI_BIN, cli } from '../helpers/cli.js';
import { freePorts } from '../helpers/processes.js';
import { agent } from '../helpers/tool-calls.js';

const execFileAsync = promisify(execFile);

describe('durable-bash --version', () => {
  it('prints the package version alone', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});

describe('durable-bash run', () => {
  const suite = useDevServerWithWorker();

  const runOnWorker = (...args: string[]) =>
    cli(['run', '--address', suite.env.address, '--task-queue', suite.worker.taskQueue, ...args]);

  it('prints exactly what the model sees and exits 0 for a result, even a non-zero exit', async () => {
    const result = await runOnWorker('--', 'echo hi; echo err >&2; exit 3');
    expect(result).toEqual({ code: 0, stdout: 'hi\n[stderr]\nerr\n[exit code: 3]\n', stderr: '' });
  });

  it('takes the address from TEMPORAL_ADDRESS and passes --timeout-ms and --workdir', async () => {
    const result = await cli(
      [
        'run',
        '--task-queue',
        suite.worker.taskQueue,
        '--timeout-ms',
        '300',
        '--workdir',
        '/tmp',
        '--',
        'pwd; sleep 10',
      ],
      { TEMPORAL_ADDRESS: suite.env.address },
    );
    expect(result).toEqual({
      code: 0,
      stdout: '/tmp\n[timed out after 300ms]\n[killed by signal: SIGTERM]\n',
      stderr: '',
    });
  });

  it('exits 1 with the error line for an error result', async () => {
    const result = await runOnWorker('--workdir', '/nope', '--', 'true');
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'workdir does not exist or is not a directory: /nope\n',
    });
  });

  it('says in one line, within seconds, that an unreachable server is unreachable', async () => {
    const started = Date.now();
    const result = await cli(['run', '--address', '127.0.0.1:1', '--', 'echo hi']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^durable-bash: Temporal is unreachable at 127\.0\.0\.1:1: [^\n]+\n$/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('durable-bash dev', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-dev-'));
  // Ports the system handed out free a moment ago: a random pick could land on a port another
  // test's server or connection holds, and dev would exit at once. Both starts use the same two.
  let port = 0;
  let uiPort = 0;
  let address = '';
  beforeAll(async () => {
    [port, uiPort] = await freePorts();
    address = `127.0.0.1:${port}`;
  });

  function startDev(): { child: ChildProcess; ready: Promise<string> } {
    const child = spawn('node', [CLI_BIN, 'dev', '--port', String(port), '--ui-port', String(uiPort)], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const ready = new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('Ctrl-C stops')) resolve(out);
      });
      child.once('exit', (code) => reject(new Error(`dev exited early with ${code}: ${out}${err}`)));
    });
    return { child, ready };
  }

  async function stop(child: ChildProcess): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    return exited;
  }

  it('serves commands, stops cleanly on Ctrl-C, and keeps its state across a restart', async () => {
    const first = startDev();
    const banner = await first.ready;
    expect(banner).toContain(`Temporal gRPC:  ${address}`);
    expect(banner).toContain(`Temporal UI:    http://127.0.0.1:${uiPort}`);
    const result = await cli(['run', '--address', address, '--', 'echo from dev']);
    expect(result).toEqual({ code: 0, stdout: 'from dev\n', stderr: '' });
    expect(await stop(first.child)).toBe(0);
    expect(await serverProcesses(port)).toEqual([]);

    const second = startDev();
    await second.ready;
    const connection = await Connection.connect({ address });
    try {
      const count = await new Client({ connection }).workflow.count(`WorkflowType = 'bashTask'`);
      expect(count.count).toBe(1);
    } finally {
      await connection.close();
      expect(await stop(second.child)).toBe(0);
    }
    expect(await serverProcesses(port)).toEqual([]);
  }, 120_000);
});

async function serverProcesses(port: number): Promise<string[]> {
  const { stdout } = await execFileAsync('ps', ['-eo', 'args']);
  return stdout.split('\n').filter((line) => line.includes('start-dev') && line.includes(`--port ${port}`));
}

describe('durable-bash remind', () => {
  const suite = useDevServerWithWorker();
  const remind = (...args: string[]) =>
    cli([
      'remind',
      '--address',
      suite.env.address,
      '--task-queue',
      suite.worker.taskQueue,
      '--owner',
      'cli-remind',
      ...args,
    ]);

  it('sets a reminder for an agent host, and cancels it, printing what the model would see', async () => {
    const set = await remind(
      '--after-ms',
      '600000',
      '--agent-task-queue',
      'cli-agent-host',
      '--',
      'look',
      'again',
    );
    const reminderId = /^reminder (remind-[0-9a-f-]{36}) set: it fires in 600000ms\n$/.exec(set.stdout)?.[1];
    expect(set.code).toBe(0);
    expect(reminderId).toBeDefined();
    const memo = await suite.env.client.workflow.getHandle(reminderId ?? '').describe();
    expect(memo.memo?.note).toBe('look again');
    expect(await remind('--cancel', reminderId ?? '')).toEqual({
      code: 0,
      stdout: `cancelled reminder ${reminderId}\n`,
      stderr: '',
    });
  });

  it('refuses to set one with nowhere for its notice to go, in one line', async () => {
    expect(await remind('--after-ms', '1000', '--', 'note')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'reminders need an agent host that takes notices (agentTaskQueue); none is set here, so nothing was set\n',
    });
  });
});

describe('durable-bash monitor', () => {
  const suite = useDevServerWithWorker();
  const common = () => [
    '--address',
    suite.env.address,
    '--task-queue',
    suite.worker.taskQueue,
    '--owner',
    'cli-monitor',
  ];

  it("sets and clears a running task's monitor for an agent host, printing what the model would see", async () => {
    // A task with somewhere for its notices to go: started by the tools of an agent host.
    const tools = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      agentTaskQueue: 'cli-agent-host',
    });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const taskId = await startBackground(bash, 'sleep 30', agent('cli-monitor'));
    const monitor = (...args: string[]) =>
      cli(['monitor', ...common(), '--agent-task-queue', 'cli-agent-host', ...args]);
    expect(await monitor(taskId, 'ERROR|FAIL')).toEqual({
      code: 0,
      stdout: `monitoring task ${taskId}: each line matching /ERROR|FAIL/ comes as a notice\n`,
      stderr: '',
    });
    expect(await monitor('--clear', taskId)).toEqual({
      code: 0,
      stdout: `cleared the monitor of task ${taskId}\n`,
      stderr: '',
    });
    expect(await monitor(taskId, '(?<=x)')).toMatchObject({ code: 1, stdout: '' });
    expect(await cli(['monitor', ...common(), taskId, 'x'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'a monitor needs a host that takes notices, and this one takes none: nothing was set\n',
    });
    // `run --background` names no agent host: its task has nowhere to send notices.
    const plain = startedTaskId(
      (await cli(['run', '--background', ...common(), '--', 'sleep 30'])).stdout,
      '\n',
    );
    expect(await monitor(plain, 'x')).toEqual({
      code: 1,
      stdout: '',
      stderr: `task ${plain} started without a session to notify: it cannot take a monitor\n`,
    });
    await Promise.all([cli(['kill', ...common(), taskId]), cli(['kill', ...common(), plain])]);
  });
});

describe('durable-bash approvals, approve, deny', () => {
  const suite = useDevServerWithWorker();
  const common = () => ['--address', suite.env.address, '--task-queue', suite.worker.taskQueue];

  it('lists the waiting requests and decides each once, printing one line', async () => {
    // Requests made by the tools of an agent host whose policy asks about `echo deploy`.
    const tools = createBashTools({
      client: suite.env.client,
      taskQueue: suite.worker.taskQueue,
      agentTaskQueue: 'cli-approvals-host',
      policy: createRulePolicy({ rules: [{ prefix: 'echo deploy', action: 'ask' }], defaultAction: 'allow' }),
    });
    const bash = tools.find((tool) => tool.name === 'bash') as Tool;
    const request = async (command: string) => {
      const answer = await bash.execute(
        { command, description: 'Deploy', run_in_background: true },
        agent('cli-approvals'),
      );
      return resultText(answer).replace('waiting for approval: ', '');
    };
    const first = await request('echo deploy main');
    const second = await request('echo deploy dev');
    await expect
      .poll(async () => (await cli(['approvals', ...common(), '--owner', 'cli-approvals'])).stdout, {
        timeout: 10_000,
      })
      .toMatch(
        new RegExp(
          `^APPROVAL +AGE +SESSION +RUNS\\n${first} +\\d+s +cli-approvals +background\\n  command  echo deploy main\\n  reason   \`echo deploy main\` matches the ask rule \`echo deploy\`\\n${second} .*\\n  command  echo deploy dev\\n`,
        ),
      );
    expect(await cli(['approve', ...common(), '--by', 'alice', first])).toEqual({
      code: 0,
      stdout: `approved ${first}\n`,
      stderr: '',
    });
    expect(await cli(['deny', ...common(), '--by', 'bob', '--reason', 'not now', first])).toEqual({
      code: 1,
      stdout: '',
      stderr: `approval ${first} was already approved by alice: nothing changed\n`,
    });
    expect(await cli(['deny', ...common(), '--reason', 'not dev', second])).toEqual({
      code: 0,
      stdout: `denied ${second}\n`,
      stderr: '',
    });
    expect(await cli(['approve', ...common(), 'approval-nope'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'no approval request approval-nope\n',
    });
    // The decider is recorded (its session's notice waits for an agent host that is not there).
    const { memo } = await suite.env.client.workflow.getHandle(second).describe();
    expect(memo?.decision).toEqual({
      approved: false,
      by: `${os.userInfo().username}@${os.hostname()}`,
      reason: 'not dev',
    });
    await Promise.all([first, second].map((id) => suite.env.client.workflow.getHandle(id).terminate()));
  });
});
