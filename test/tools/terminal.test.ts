/** `tty: true`: a command on a pseudo-terminal its supervisor holds, read as a screen, typed into with keys. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;

beforeAll(() => {
  tools = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
});

const call = async (name: keyof Tools, args: Record<string, unknown>) =>
  text(await tools[name].execute(args, {}));

/** A background task on a terminal (`options`: its size, and any other argument). */
const startTerminal = (command: string, options: Record<string, unknown> = {}) =>
  startBackground(tools.bash, command, {}, { description: 'Runs on a terminal', tty: true, ...options });

/** Reads the screen (waiting for change) until it matches `until`; returns that read's text. */
async function screenUntil(
  taskId: string,
  until: RegExp,
  args: Record<string, unknown> = {},
): Promise<string> {
  const deadline = Date.now() + 30_000;
  let last = '';
  for (;;) {
    last = await call('bash_output', { task_id: taskId, wait_ms: 2_000, ...args });
    if (until.test(last)) return last;
    if (Date.now() > deadline) throw new Error(`never matched ${until}; last read ${JSON.stringify(last)}`);
  }
}

describe('a terminal task', () => {
  it('runs a foreground command on a terminal: isatty, TERM, its screen and exit code', async () => {
    const out = await call('bash', {
      command: `python3 -c 'import sys, os; print(sys.stdin.isatty(), sys.stdout.isatty(), os.environ["TERM"]); sys.exit(3)'`,
      description: 'Checks its terminal',
      tty: true,
      cols: 60,
      rows: 5,
    });
    expect(out).toBe('True True xterm-256color\n[screen: 60x5, cursor at row 2, column 1]\n[exit code: 3]');
  });

  it('shows a prompt, takes typed text and keys, and ends with its exit status', async () => {
    const taskId = await startTerminal(`read -p 'name? ' name; echo "hello $name"; exit 4`, {
      cols: 40,
      rows: 6,
    });
    expect(await screenUntil(taskId, /name\?/)).toBe(
      'name?\n[screen: 40x6, cursor at row 1, column 7]\n[status: running]',
    );
    expect(await call('bash_input', { task_id: taskId, text: 'bob', keys: ['Enter'] })).toBe(
      `wrote 4 bytes to the stdin of task ${taskId}`,
    );
    expect(await screenUntil(taskId, /exit code/)).toBe(
      'name? bob\nhello bob\n[screen: 40x6, cursor at row 3, column 1]\n[status: completed, exit code: 4]',
    );
  });

  it('takes C-c as Ctrl-C: the foreground program gets SIGINT', async () => {
    const taskId = await startTerminal(
      `trap 'echo interrupted; exit 7' INT; echo ready; while :; do sleep 0.1; done`,
      {
        cols: 40,
        rows: 4,
      },
    );
    await screenUntil(taskId, /ready/);
    await call('bash_input', { task_id: taskId, keys: ['C-c'] });
    expect(await screenUntil(taskId, /exit code/)).toMatch(
      /interrupted\n.*\n\[status: completed, exit code: 7\]$/,
    );
  });

  it('resizes: the program sees the new size', async () => {
    const taskId = await startTerminal(`stty size; read; stty size`, { cols: 50, rows: 10 });
    await screenUntil(taskId, /^10 50/);
    expect(await call('bash_input', { task_id: taskId, cols: 70, rows: 12, keys: ['Enter'] })).toBe(
      `resized the terminal of task ${taskId} to 70x12; wrote 1 byte to the stdin of task ${taskId}`,
    );
    expect(await screenUntil(taskId, /exit code/)).toBe(
      '10 50\n\n12 70\n[screen: 70x12, cursor at row 4, column 1]\n[status: completed, exit code: 0]',
    );
  });

  it('gives the lines that scrolled off since the last read with scrollback: true', async () => {
    const taskId = await startTerminal(`for i in $(seq 1 12); do echo line $i; done; read`, {
      cols: 20,
      rows: 5,
    });
    let scrolled = '';
    const deadline = Date.now() + 30_000;
    while (!scrolled.includes('line 8\n') && Date.now() < deadline) {
      const read = await call('bash_output', { task_id: taskId, scrollback: true, wait_ms: 2_000 });
      scrolled += read.replace(/^\(no lines scrolled off\)\n/, '').replace(/\[status: running\]$/, '');
    }
    expect(scrolled).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n');
    expect(await call('bash_output', { task_id: taskId, scrollback: true })).toBe(
      '(no lines scrolled off)\n[status: running]',
    );
    expect(await call('bash_output', { task_id: taskId })).toBe(
      'line 9\nline 10\nline 11\nline 12\n[screen: 20x5, cursor at row 5, column 1]\n[status: running]',
    );
    await call('bash_input', { task_id: taskId, keys: ['Enter'] });
    await screenUntil(taskId, /exit code/);
  });

  it('answers a cursor-position query from the screen while a worker follows the task', async () => {
    // Echo off before the query: `read -s` turns it off only once it runs, and an answer that comes
    // sooner would be echoed onto the screen.
    const taskId = await startTerminal(
      `stty -echo; printf 'abc\\033[6n'; IFS= read -r -d R pos; echo; echo "at \${pos#*[}"`,
      {
        cols: 30,
        rows: 4,
      },
    );
    expect(await screenUntil(taskId, /exit code/)).toBe(
      'abc\nat 1;4\n[screen: 30x4, cursor at row 3, column 1]\n[status: completed, exit code: 0]',
    );
  });

  it('is killed and timed out as any task is, with its screen kept', async () => {
    const taskId = await startTerminal(`echo waiting; sleep 600`, { cols: 20, rows: 3 });
    await screenUntil(taskId, /waiting/);
    expect(await call('bash_kill', { task_id: taskId })).toBe(`killed background task ${taskId}`);
    expect(await screenUntil(taskId, /\[status: killed/)).toBe(
      'waiting\n[screen: 20x3, cursor at row 2, column 1]\n[status: killed by SIGTERM]',
    );
    expect(
      await call('bash', {
        command: 'echo slow; sleep 600',
        description: 'Times out on a terminal',
        tty: true,
        cols: 20,
        rows: 3,
        timeoutMs: 1_000,
      }),
    ).toBe(
      'slow\n[screen: 20x3, cursor at row 2, column 1]\n[timed out after 1000ms]\n[killed by signal: SIGTERM]',
    );
  });

  it('refuses a resize of a task without a terminal, and a size without tty, in one line each', async () => {
    const taskId = await startBackground(
      tools.bash,
      'sleep 600',
      {},
      { description: 'Sleeps without a terminal' },
    );
    expect(await call('bash_input', { task_id: taskId, cols: 80, rows: 24 })).toBe(
      `task ${taskId} was not started with tty: true; it has no terminal to resize`,
    );
    expect(await call('bash_input', { task_id: taskId, cols: 80 })).toBe(
      'invalid rows: a resize needs both cols and rows',
    );
    expect(await call('bash_input', { task_id: taskId, keys: ['Hyper-x'] })).toMatch(
      /^invalid keys\.0: unknown key "Hyper-x"/,
    );
    expect(await call('bash', { command: 'true', description: 'Sized without tty', cols: 80 })).toBe(
      'invalid cols: a terminal size needs tty: true',
    );
    await call('bash_kill', { task_id: taskId });
  });

  it('gives an interactive shell job control: C-z stops the foreground job, fg resumes it, C-c ends it', async () => {
    const taskId = await startTerminal(`PS1='$ ' exec bash --norc --noprofile -i`, { cols: 40, rows: 6 });
    await screenUntil(taskId, /^\$/);
    await call('bash_input', { task_id: taskId, text: 'sleep 600', keys: ['Enter'] });
    await screenUntil(taskId, /sleep 600\n\[screen/);
    await call('bash_input', { task_id: taskId, keys: ['C-z'] });
    // bash writes the job's line and its next prompt apart: a read may come between them.
    await screenUntil(taskId, /\[1\]\+ +Stopped +sleep 600\n\$\n/);
    await call('bash_input', { task_id: taskId, text: 'fg', keys: ['Enter'] });
    await screenUntil(taskId, /\$ fg\nsleep 600\n\[screen/);
    await call('bash_input', { task_id: taskId, keys: ['C-c'] });
    await screenUntil(taskId, /\^C\n\$\n\[screen/);
    await call('bash_input', { task_id: taskId, text: 'exit 5', keys: ['Enter'] });
    expect((await screenUntil(taskId, /\[status: completed/)).split('\n').at(-1)).toBe(
      '[status: completed, exit code: 5]',
    );
  });
});
