/** `bash_input` and `keep_stdin_open`: stdin through the command's supervisor, against a real dev server and worker. */
import { beforeAll, describe, expect, it } from 'vitest';
import { learnServerTime, serverNow } from '../../src/client/server-clock.js';
import type { Tool, ToolExecContext } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { agent, type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;

beforeAll(() => {
  tools = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
});

const call = (name: keyof Tools, args: Record<string, unknown>, exec: ToolExecContext = {}) =>
  tools[name].execute(args, exec);
const error = (message: string) => ({ content: [{ type: 'text', text: message }], isError: true });

/** Reads (waiting for output) until everything read so far matches `until`; returns it, every read's text joined. */
async function readUntil(taskId: string, until: RegExp, exec: ToolExecContext = {}): Promise<string> {
  let seen = '';
  const deadline = Date.now() + 30_000;
  while (!until.test(seen)) {
    if (Date.now() > deadline) throw new Error(`never matched ${until}; read ${JSON.stringify(seen)}`);
    seen += `${text(await call('bash_output', { task_id: taskId, wait_ms: 5_000 }, exec))}\n`;
  }
  return seen;
}

describe('bash_input', () => {
  it('writes lines a running program reads, then closes its stdin so it ends', async () => {
    const taskId = await startBackground(
      tools.bash,
      'while read -r line; do echo "got $line"; done; echo eof',
      {},
      {
        keep_stdin_open: true,
      },
    );
    expect(await call('bash_input', { task_id: taskId, text: 'one\ntwo\n' })).toEqual({
      content: [{ type: 'text', text: `wrote 8 bytes to the stdin of task ${taskId}` }],
    });
    expect(await readUntil(taskId, /got two\n/)).toMatch(/^got one\n(\[status: running\]\n)?got two\n/);
    expect(text(await call('bash_input', { task_id: taskId, text: 'é\n', close: true }))).toBe(
      `wrote 3 bytes to the stdin of task ${taskId} and closed it`,
    );
    expect(await readUntil(taskId, /\[status: completed, exit code: 0\]/)).toMatch(/got é\neof\n/);
    expect(await call('bash_input', { task_id: taskId, text: 'late\n' })).toEqual(
      error(`task ${taskId} has ended; nothing was written`),
    );
  });

  it('closes with empty text, and then says the stdin is closed while the command runs on', async () => {
    const taskId = await startBackground(
      tools.bash,
      'cat; echo "cat saw eof"; sleep 60',
      {},
      { keep_stdin_open: true },
    );
    expect(text(await call('bash_input', { task_id: taskId, text: '', close: true }))).toBe(
      `closed the stdin of task ${taskId}`,
    );
    await readUntil(taskId, /cat saw eof\n\[status: running\]/);
    expect(await call('bash_input', { task_id: taskId, text: 'x' })).toEqual(
      error(`the stdin of task ${taskId} is closed; nothing was written`),
    );
    await call('bash_kill', { task_id: taskId });
  });

  it('takes only what fits when the program does not read, and says so', async () => {
    const taskId = await startBackground(tools.bash, 'sleep 60', {}, { keep_stdin_open: true });
    const chunk = 'x'.repeat(64 * 1024);
    const answers: string[] = [];
    // The FIFO and the command's stdin pipe hold 64 KiB each: the third chunk cannot all go in.
    for (let i = 0; i < 3; i++)
      answers.push(text(await call('bash_input', { task_id: taskId, text: chunk })));
    expect(answers.slice(0, 2)).toEqual([
      `wrote 65536 bytes to the stdin of task ${taskId}`,
      `wrote 65536 bytes to the stdin of task ${taskId}`,
    ]);
    expect(answers[2]).toMatch(
      new RegExp(
        `^wrote \\d+ of 65536 bytes to the stdin of task ${taskId}: the command is not reading it, and the rest did not fit$`,
      ),
    );
    await call('bash_kill', { task_id: taskId });
  });

  it('refuses a task started without keep_stdin_open, an ended one, and bad calls, in one line each', async () => {
    const plain = await startBackground(tools.bash, 'cat; sleep 60');
    expect(await call('bash_input', { task_id: plain, text: 'hi\n' })).toEqual(
      error(`task ${plain} was not started with keep_stdin_open; its stdin is /dev/null`),
    );
    await call('bash_kill', { task_id: plain });
    expect(await call('bash', { command: 'cat', description: 'Reads stdin', keep_stdin_open: true })).toEqual(
      error(
        'invalid keep_stdin_open: stdin stays open only for a background run; set run_in_background: true',
      ),
    );
    const open = await startBackground(tools.bash, 'cat', {}, { keep_stdin_open: true });
    expect(await call('bash_input', { task_id: open, text: '' })).toEqual(
      error('invalid text: expected text to write (or close: true to only close the stdin), got ""'),
    );
    expect(await call('bash_input', { task_id: open, text: 'x'.repeat(64 * 1024 + 1) })).toEqual(
      error('invalid text: 65537 bytes, over the 65536-byte limit'),
    );
    expect(await call('bash_input', { task_id: open, text: 7 })).toEqual(
      error('invalid text: expected a string, got 7'),
    );
    expect(await call('bash_input', { task_id: open, text: 'x', close: 'yes' })).toEqual(
      error('invalid close: expected a boolean, got "yes"'),
    );
    const unknown = 'bash-00000000-0000-4000-8000-000000000000';
    expect(await call('bash_input', { task_id: unknown, text: 'x' })).toEqual(
      error(`unknown bash task ${unknown}`),
    );
    await call('bash_input', { task_id: open, text: '', close: true });
  });

  it('keeps other sessions out', async () => {
    const taskId = await startBackground(tools.bash, 'cat', agent('stdin-owner'), { keep_stdin_open: true });
    expect(await call('bash_input', { task_id: taskId, text: 'x' }, agent('stdin-stranger'))).toEqual(
      error(`task ${taskId} belongs to another session`),
    );
    expect(
      text(await call('bash_input', { task_id: taskId, text: 'mine\n', close: true }, agent('stdin-owner'))),
    ).toBe(`wrote 5 bytes to the stdin of task ${taskId} and closed it`);
    expect(await readUntil(taskId, /\[status: completed, exit code: 0\]/, agent('stdin-owner'))).toMatch(
      /^mine\n/,
    );
  });

  it("takes a write from a host whose clock is off either way: the refusal teaches it the server's time", async () => {
    const taskId = await startBackground(
      tools.bash,
      'while read -r line; do echo "got $line"; done',
      {},
      {
        keep_stdin_open: true,
      },
    );
    for (const skewMs of [-20_000, 20_000]) {
      // As if this host's clock were 20 s ahead of the server's, then 20 s behind.
      learnServerTime(suite.env.client, Date.now() + skewMs);
      expect(text(await call('bash_input', { task_id: taskId, text: `${skewMs}\n` }))).toBe(
        `wrote ${String(skewMs).length + 1} bytes to the stdin of task ${taskId}`,
      );
      expect(Math.abs(serverNow(suite.env.client) - Date.now())).toBeLessThan(5_000);
    }
    expect(await readUntil(taskId, /got 20000\n/)).toMatch(/got -20000\n(\[status: running\]\n)?got 20000\n/);
    await call('bash_input', { task_id: taskId, text: '', close: true });
  });

  it('presents its call as a card naming the task', () => {
    const taskId = 'bash-00000000-0000-4000-8000-000000000000';
    expect((tools.bash_input as Tool).presentCall({ task_id: taskId, text: 'y\n' })).toEqual({
      card: 'generic',
      title: `Send input to background task ${taskId}`,
      kind: 'execute',
      rawInput: taskId,
      content: [{ type: 'text', text: 'y\n' }],
    });
    expect((tools.bash_input as Tool).presentCall({ task_id: taskId, text: '', close: true })).toMatchObject({
      content: [{ type: 'text', text: '(then closes its stdin)' }],
    });
    expect((tools.bash_input as Tool).presentCall({ text: 3 })).toMatchObject({
      card: 'generic',
      title: 'bash_input',
    });
  });
});
