/**
 * Hostile input, named: each case with the exact line it gets, end to end through the tools on a dev
 * server and a worker. Calls the tools refuse must start nothing; what only the worker can see (the
 * workdir, the spill directory, a task id in a workflow's input) fails the run in one line.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_COMMAND_BYTES, MAX_DESCRIPTION_BYTES, MAX_WORKDIR_BYTES } from '../../src/shared/limits.js';
import type { BashTaskInput, TaskId } from '../../src/shared/task.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { createBashWorker } from '../../src/worker/bash-worker.js';
import { bashTask } from '../../src/workflows/bash-task.js';
import { startBackground } from '../helpers/background-task.js';
import { type RunningWorker, startBashWorker, useDevServerWithWorker } from '../helpers/bash-worker.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-named-')));
const suite = useDevServerWithWorker({ executor: { spillDir: path.join(root, 'spill') } });

const toolsOn = (taskQueue: string) => toolsByName(createBashTools({ client: suite.env.client, taskQueue }));
let live: Tools;

beforeAll(() => {
  live = toolsOn(suite.worker.taskQueue);
});

const error = (line: string) => ({ content: [{ type: 'text', text: line }], isError: true });

/** Workflows started on `taskQueue`, once visibility has had a moment to show any. */
async function workflowsOn(taskQueue: string): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return (await suite.env.client.workflow.count(`TaskQueue = '${taskQueue}'`)).count;
}

/** Tools on a queue of their own (served by the suite's worker's code, not its queue): starts are countable. */
function countedTools(): { tools: Tools; taskQueue: string } {
  const taskQueue = `named-${Math.random().toString(36).slice(2)}`;
  return { tools: toolsOn(taskQueue), taskQueue };
}

describe('commands the bash tool refuses at once', () => {
  it('refuses a command with a NUL byte, in the foreground and in the background, and starts nothing', async () => {
    const { tools, taskQueue } = countedTools();
    const refusal = error('invalid command: contains a NUL byte');
    expect(await tools.bash.execute({ command: 'echo a\0b', description: 'Print with a NUL' })).toEqual(
      refusal,
    );
    expect(
      await tools.bash.execute(
        { command: 'echo a\0b', description: 'Print with a NUL', run_in_background: true },
        { agent: { sessionId: 'nul' } },
      ),
    ).toEqual(refusal);
    expect(await tools.bash.execute({ command: 'true', description: 'a\0b' })).toEqual(
      error('invalid description: contains a NUL byte'),
    );
    expect(await tools.bash.execute({ command: 'true', description: 'd', workdir: '/tmp\0/x' })).toEqual(
      error('invalid workdir: contains a NUL byte'),
    );
    expect(await workflowsOn(taskQueue)).toBe(0);
  });

  it('refuses a 3 MB command in one line at once, where Temporal would have timed out, and starts nothing', async () => {
    const { tools, taskQueue } = countedTools();
    const command = `true ${'x'.repeat(3 * 1024 * 1024 - 5)}`;
    const started = performance.now();
    const result = await tools.bash.execute({
      command,
      description: 'Run a huge command',
      run_in_background: true,
    });
    const elapsedMs = performance.now() - started;
    expect(result).toEqual(error(`invalid command: 3145728 bytes, over the ${MAX_COMMAND_BYTES}-byte limit`));
    expect(MAX_COMMAND_BYTES).toBe(131071);
    expect(elapsedMs).toBeLessThan(1_000);
    expect(await workflowsOn(taskQueue)).toBe(0);
  });

  it('runs a command of exactly the limit (the longest one exec takes) and refuses one byte more', async () => {
    const euros = Math.floor((MAX_COMMAND_BYTES - 5) / 3);
    const longest = `true ${'€'.repeat(euros)}${'x'.repeat(MAX_COMMAND_BYTES - 5 - 3 * euros)}`;
    expect(Buffer.byteLength(longest)).toBe(MAX_COMMAND_BYTES);
    expect(await live.bash.execute({ command: longest, description: 'Run the longest command' })).toEqual({
      content: [{ type: 'text', text: '(no output)' }],
    });
    expect(await live.bash.execute({ command: `${longest}x`, description: 'Run one byte too many' })).toEqual(
      error(`invalid command: ${MAX_COMMAND_BYTES + 1} bytes, over the ${MAX_COMMAND_BYTES}-byte limit`),
    );
  });

  it('refuses a description or a workdir over its limit', async () => {
    const description = 'd'.repeat(MAX_DESCRIPTION_BYTES + 1);
    expect(await live.bash.execute({ command: 'true', description })).toEqual(
      error(
        `invalid description: ${MAX_DESCRIPTION_BYTES + 1} bytes, over the ${MAX_DESCRIPTION_BYTES}-byte limit`,
      ),
    );
    const workdir = `/${'w'.repeat(MAX_WORKDIR_BYTES)}`;
    expect(await live.bash.execute({ command: 'true', description: 'd', workdir })).toEqual(
      error(`invalid workdir: ${MAX_WORKDIR_BYTES + 1} bytes, over the ${MAX_WORKDIR_BYTES}-byte limit`),
    );
  });

  it('names an odd unknown argument on the same line, quoted', async () => {
    expect(await live.bash.execute({ command: 'true', description: 'd', 'a\nb': 1, 'x\u2028y': 2 })).toEqual(
      error('unknown arguments: "a\\nb", "x\\u2028y"'),
    );
  });
});

describe('task ids the task tools refuse', () => {
  it.each([
    ['../../etc/passwd', '"../../etc/passwd"'],
    ['bash-../../etc/passwd', '"bash-../../etc/passwd"'],
    ['bash-a/b', '"bash-a/b"'],
    ['bash-..', '"bash-.."'],
    ['bash-\0', '"bash-\\u0000"'],
    ['bash-a\nb', '"bash-a\\nb"'],
  ])('refuses %j in one line', async (taskId, shown) => {
    const line = `invalid task_id: expected an id that bash returned (bash-<uuid>), got ${shown}`;
    expect(await live.bash_output.execute({ task_id: taskId })).toEqual(error(line));
    expect(await live.bash_kill.execute({ task_id: taskId })).toEqual(error(line));
  });

  it('fails a task whose workflow input names a path outside the spill directory, touching no file', async () => {
    const escaped = path.join(root, 'escaped');
    const taskId = `../${path.basename(root)}/escaped` as TaskId;
    const input: BashTaskInput = { taskId, command: 'echo no', description: 'Escape', background: false };
    const handle = await suite.env.client.workflow.start(bashTask, {
      // Under its own id: a workflow id that is not its input's task id is refused before the host.
      workflowId: taskId,
      taskQueue: suite.worker.taskQueue,
      args: [input],
    });
    const failure = await handle.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as { cause?: { cause?: Error } }).cause?.cause?.message).toBe(
      `invalid task id ${JSON.stringify(taskId)}: expected bash- then letters, digits and dashes`,
    );
    for (const suffix of ['.state', '.stdout', '.stderr', '.attempt'])
      expect(existsSync(escaped + suffix)).toBe(false);
  });
});

describe('workdirs the worker refuses', () => {
  const aFile = path.join(root, 'a-file');
  const dangling = path.join(root, 'dangling');
  const target = path.join(root, 'gone');

  beforeAll(() => {
    writeFileSync(aFile, 'x');
    symlinkSync(target, dangling);
  });

  it('fails a workdir that is a file, naming it', async () => {
    expect(await live.bash.execute({ command: 'pwd', description: 'd', workdir: aFile })).toEqual(
      error(`workdir is not a directory: ${aFile}`),
    );
  });

  it('fails a workdir that is a dangling link, naming it and where it points', async () => {
    const line = `workdir is a dangling symbolic link: ${dangling} -> ${target}`;
    expect(await live.bash.execute({ command: 'pwd', description: 'd', workdir: dangling })).toEqual(
      error(line),
    );
    const taskId = await startBackground(live.bash, 'pwd', {}, { description: 'd', workdir: dangling });
    await suite.env.client.workflow
      .getHandle(taskId)
      .result()
      .catch(() => undefined);
    expect(text(await live.bash_output.execute({ task_id: taskId }))).toBe(
      `(no new output)\n[status: failed: ${line}]`,
    );
  });

  it('quotes a workdir with a line break, so the failure stays one line', async () => {
    const odd = path.join(root, 'line\nbreak');
    expect(await live.bash.execute({ command: 'pwd', description: 'd', workdir: odd })).toEqual(
      error(`workdir does not exist or is not a directory: ${JSON.stringify(odd)}`),
    );
  });
});

describe('spill directories the worker refuses', () => {
  const workers: RunningWorker[] = [];

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  });

  /** A worker with a spill directory of its own, the tools on its queue, and the directory's path. */
  async function workerWithSpillDir(name: string) {
    const spillDir = path.join(root, name);
    const worker = await startBashWorker(suite.env, { spillDir });
    workers.push(worker);
    expect(text(await toolsOn(worker.taskQueue).bash.execute({ command: 'echo ok', description: 'd' }))).toBe(
      'ok\n',
    );
    return { spillDir, bash: toolsOn(worker.taskQueue).bash };
  }

  it('refuses a spill directory replaced by a symbolic link', async () => {
    const { spillDir, bash } = await workerWithSpillDir('spill-link');
    renameSync(spillDir, `${spillDir}.real`);
    symlinkSync(`${spillDir}.real`, spillDir);
    expect(await bash.execute({ command: 'echo no', description: 'd' })).toEqual(
      error(`spill directory ${spillDir} is a symbolic link; refusing to use it`),
    );
  });

  it('refuses a spill directory made writable by others, and does not make it private itself', async () => {
    const { spillDir, bash } = await workerWithSpillDir('spill-open');
    chmodSync(spillDir, 0o777);
    expect(await bash.execute({ command: 'echo no', description: 'd', run_in_background: false })).toEqual(
      error(`spill directory ${spillDir} is writable by its group or others (mode 0777); refusing to use it`),
    );
    chmodSync(spillDir, 0o770);
    expect(text(await bash.execute({ command: 'echo no', description: 'd' }))).toBe(
      `spill directory ${spillDir} is writable by its group or others (mode 0770); refusing to use it`,
    );
  });

  // Only root can give a directory away; CI (CI=true) never skips, so there a non-root run fails here.
  it.skipIf(process.getuid?.() !== 0 && process.env.CI !== 'true')(
    'refuses a spill directory owned by another user',
    async () => {
      const { spillDir, bash } = await workerWithSpillDir('spill-other');
      chownSync(spillDir, 65534, 65534);
      expect(await bash.execute({ command: 'echo no', description: 'd' })).toEqual(
        error(`spill directory ${spillDir} belongs to another user (uid 65534); refusing to use it`),
      );
    },
  );

  it('still makes a directory readable by others private, as before', async () => {
    const { spillDir, bash } = await workerWithSpillDir('spill-readable');
    chmodSync(spillDir, 0o755);
    expect(text(await bash.execute({ command: 'echo ok', description: 'd' }))).toBe('ok\n');
    expect(statSync(spillDir).mode & 0o777).toBe(0o700);
  });

  it('will not start a worker on a spill directory that is a symbolic link', async () => {
    const real = path.join(root, 'spill-start.real');
    mkdirSync(real, { mode: 0o700 });
    const spillDir = path.join(root, 'spill-start');
    symlinkSync(real, spillDir);
    await expect(
      createBashWorker({
        connection: suite.env.nativeConnection,
        taskQueue: 'never',
        executor: { spillDir },
        workflowBundle: { codePath: inject('workflowBundlePath') },
      }),
    ).rejects.toThrow(`spill directory ${spillDir} is a symbolic link; refusing to use it`);
  });
});
