// Containment and limits per task, against a real dev server, real workers and real processes:
// nothing a task starts outlives it (setsid, double fork), each limit ends a misbehaving command
// with a status that says so, and the worker and other tasks carry on. Both mechanisms are run:
// a cgroup per task (this machine class lets root make cgroups) and the supervisor's process tree.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../../src/client/bash-tasks.js';
import { NON_INTERACTIVE_ENV } from '../../../src/command-host/containment/non-interactive-env.js';
import type { ExecutorOptions } from '../../../src/command-host/executor-config.js';
import { readRecord } from '../../../src/command-host/supervisor/supervisor-records.js';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import type { Tool } from '../../../src/shared/tool-types.js';
import { createBashTools } from '../../../src/tools/create-bash-tools.js';
import type { BashWorker } from '../../../src/worker/bash-worker.js';
import { type RunningWorker, startBashWorker } from '../../helpers/bash-worker.js';
import { processesMatching, waitFor } from '../../helpers/processes.js';
import { createDevServerEnv } from '../../helpers/temporal-env.js';
import { text } from '../../helpers/tool-calls.js';

const OUTPUT_CAP = 100_000;
const PROCESS_LIMIT = 64;
const MEMORY_LIMIT = 64 * 1024 * 1024;

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await createDevServerEnv();
});

afterAll(async () => {
  await env?.teardown();
});

/** A sleep no other process on the machine runs: its argument names the test. */
const marker = () => `${Math.floor(Math.random() * 1e6) + 1000}.${Math.floor(Math.random() * 1e6)}`;
const sleeping = (seconds: string) => processesMatching(new RegExp(`^sleep ${seconds.replace('.', '\\.')}$`));

function useWorker(kind: 'cgroup' | 'process-tree', executor: ExecutorOptions = {}) {
  const suite = {} as { worker: RunningWorker; bash: Tool; tasks: BashTasks; spillDir: string };
  beforeAll(async () => {
    suite.spillDir = path.join(
      realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-contain-'))),
      'spill',
    );
    suite.worker = await startBashWorker(env, {
      spillDir: suite.spillDir,
      maxOutputBytesPerStream: OUTPUT_CAP,
      maxProcesses: PROCESS_LIMIT,
      maxMemoryBytes: MEMORY_LIMIT,
      maxTimeoutMs: 8_000,
      containment: kind === 'cgroup' ? 'auto' : 'process-tree',
      ...executor,
    });
    [suite.bash] = createBashTools({ client: env.client, taskQueue: suite.worker.taskQueue }) as [Tool];
    suite.tasks = new BashTasks({ client: env.client, taskQueue: suite.worker.taskQueue });
  });
  afterAll(async () => {
    await suite.worker?.stop();
  });
  return suite;
}

for (const kind of ['cgroup', 'process-tree'] as const) {
  describe(`containment: ${kind}`, () => {
    const suite = useWorker(kind);

    it('says at worker start which mechanism is in force', () => {
      const summary = (suite.worker.worker as BashWorker).containment;
      expect(summary).toMatch(
        kind === 'cgroup' ? /^containment: a cgroup per task/ : /^containment: the supervisor process tree/,
      );
    });

    it('ends a setsid daemon and a double-forked process when a background task is killed', async () => {
      const [a, b] = [marker(), marker()];
      const taskId = await suite.tasks.start({
        command: `setsid sleep ${a} & (sleep ${b} &); echo up; sleep 600`,
        description: 'Detached children',
        background: true,
      });
      await waitFor(() => sleeping(a).length === 1 && sleeping(b).length === 1);
      expect(await suite.tasks.kill(taskId, undefined)).toBe('killed');
      await waitFor(() => sleeping(a).length === 0 && sleeping(b).length === 0, 10_000);
    });

    it('ends what a foreground command left behind before it reports the end', async () => {
      const [a, b] = [marker(), marker()];
      const result = await suite.bash.execute({
        command: `setsid sleep ${a} & (sleep ${b} &); echo done`,
        description: 'Leave children behind',
      });
      expect(text(result)).toBe('done\n');
      expect([...sleeping(a), ...sleeping(b)]).toEqual([]);
    });

    it('ends detached processes when the foreground timeout fires', async () => {
      const a = marker();
      const result = await suite.bash.execute({
        command: `setsid sleep ${a} & sleep 600`,
        description: 'Time out',
        timeoutMs: 500,
      });
      expect(text(result)).toBe('(no output)\n[timed out after 500ms]\n[killed by signal: SIGTERM]');
      await waitFor(() => sleeping(a).length === 0, 10_000);
    });

    it('delivers a kill signal once to each process: a TERM trap runs once', async () => {
      const a = marker();
      const result = await suite.bash.execute({
        command: `trap 'echo trapped; exit 0' TERM; setsid sleep ${a} & sleep 600 & wait`,
        description: 'Trap once',
        timeoutMs: 500,
      });
      expect(text(result)).toBe('trapped\n[timed out after 500ms]');
      await waitFor(() => sleeping(a).length === 0, 10_000);
    });

    it('ends detached processes when the workflow is terminated', async () => {
      const a = marker();
      const taskId = await suite.tasks.start({
        command: `setsid sleep ${a} & sleep 600`,
        description: 'Terminated',
        background: true,
      });
      await waitFor(() => sleeping(a).length === 1);
      await env.client.workflow.getHandle(taskId).terminate('test');
      await waitFor(() => sleeping(a).length === 0, 20_000);
    });

    it('stops an output flood at the cap: the spill file holds exactly the cap, and the result says so', async () => {
      const result = await suite.bash.execute({ command: 'yes', description: 'Flood' });
      const lines = text(result).split('\n');
      expect(lines.slice(-3)).toEqual([
        expect.stringMatching(/^\[output truncated; full output: .*\.stdout\]$/),
        `[stdout stopped at the task's limit of ${OUTPUT_CAP} bytes; later writes to it failed]`,
        '[killed by signal: SIGPIPE]',
      ]);
      const spill = lines.at(-3)?.match(/full output: (.*)\]$/)?.[1] ?? '';
      expect(statSync(spill).size).toBe(OUTPUT_CAP);
    });

    it('keeps an exact-size stream whole without calling it capped', async () => {
      const result = await suite.bash.execute({
        command: `head -c ${OUTPUT_CAP} /dev/zero | tr '\\0' x; echo -n`,
        description: 'Exactly the cap',
      });
      expect(text(result)).not.toContain('stopped at');
    });

    it('lets a command close its stdout and go on', async () => {
      const result = await suite.bash.execute({
        command: 'exec 1>&-; sleep 0.3; echo still here >&2',
        description: 'Close stdout',
      });
      expect(text(result)).toBe('[stderr]\nstill here\n');
    });

    it('starts commands with only stdin, stdout and stderr open', async () => {
      // ls runs as bash's child (a command after it keeps bash from exec'ing it) and lists bash's fds.
      const result = await suite.bash.execute({
        command: 'ls /proc/$$/fd; true',
        description: 'List fds',
      });
      expect(text(result)).toBe('0\n1\n2\n');
    });

    if (kind === 'cgroup') {
      it('stops a fork bomb at the process limit, says so, and leaves nothing behind', async () => {
        const result = await suite.bash.execute({
          command: 'bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 600',
          description: 'Fork bomb',
          timeoutMs: 2_000,
        });
        const lines = text(result).split('\n');
        expect(lines).toContain(
          `[process limit reached: forks failed at the task's limit of ${PROCESS_LIMIT}]`,
        );
        expect(lines.slice(-2)).toEqual([
          '[timed out after 2000ms]',
          expect.stringMatching(/^\[killed by signal: /),
        ]);
        // The worker is unharmed and runs the next command at once.
        expect(text(await suite.bash.execute({ command: 'echo fine', description: 'After' }))).toBe('fine\n');
      });

      it('ends a memory hog at the memory limit and says so', async () => {
        const result = await suite.bash.execute({
          command: 'python3 -c "x = bytearray(256 * 1024 * 1024)"',
          description: 'Memory hog',
        });
        expect(text(result)).toBe(
          `(no output)\n[out of memory: the kernel killed a process of the task at its limit of ${MEMORY_LIMIT} bytes]\n[killed by signal: SIGKILL]`,
        );
      });

      it('removes each task cgroup once the task ended', async () => {
        const taskId = await suite.tasks.start({ command: 'true', description: 'Quick', background: false });
        await suite.tasks.result(taskId);
        // The task's record names its cgroups (a warm supervisor's, named for it, not for the task).
        const record = await readRecord(taskFiles(suite.spillDir, taskId).state);
        const cgroups = record?.cgroups ?? [];
        expect(cgroups.length).toBeGreaterThan(0);
        // Removed just after the end is recorded, so the end is not held up by the kernel.
        await expect.poll(() => cgroups.filter((dir) => existsSync(dir)), { timeout: 5_000 }).toEqual([]);
      });
    }
  });
}

describe('environment allowlist', () => {
  const name = `DURABLE_BASH_TEST_${randomUUID().slice(0, 8).toUpperCase()}`;
  // Set before the worker: its commands get the environment it was set up with.
  beforeAll(() => {
    process.env[name] = 'secret';
    process.env.DURABLE_ALLOW_TEST = 'kept';
    process.env.TEMPORAL_API_KEY_DURABLE_TEST = 'never';
  });
  const suite = useWorker('cgroup', { envAllowlist: ['PATH', 'DURABLE_ALLOW_*'] });
  afterAll(() => {
    delete process.env[name];
    delete process.env.DURABLE_ALLOW_TEST;
    delete process.env.TEMPORAL_API_KEY_DURABLE_TEST;
  });

  it('passes only the listed variables (and never TEMPORAL_*)', async () => {
    process.env.DURABLE_ALLOW_LATER = 'set after the worker';
    try {
      const result = await suite.bash.execute({
        command: 'env | cut -d= -f1 | grep -v "^\\(PWD\\|SHLVL\\|_\\)$" | sort',
        description: 'Environment',
      });
      // The listed ones, and durable-bash's own defaults for a command with no person to ask.
      const names = ['DURABLE_ALLOW_TEST', 'PATH', ...Object.keys(NON_INTERACTIVE_ENV)].sort();
      // DURABLE_ALLOW_LATER is not among them: it came after the worker was set up.
      expect(text(result)).toBe(`${names.join('\n')}\n`);
    } finally {
      delete process.env.DURABLE_ALLOW_LATER;
    }
  });
});
