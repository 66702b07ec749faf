import { existsSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { startBackground } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { type Tools, text, toolsByName } from '../helpers/tool-calls.js';

const suite = useDevServerWithWorker();
let tools: Tools;

beforeAll(() => {
  tools = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
});

/** `seq 1 <count>` as it prints it. */
const seq = (count: number) => Array.from({ length: count }, (_, i) => `${i + 1}\n`).join('');

/** The budget's marker line in an answer: the count it cut, and the files it names. */
const MARKER = /^\[(\d+) tokens cut from the middle to fit max_output_tokens; full output: (.+)\]$/m;

describe('max_output_tokens', () => {
  it("cuts a foreground run's middle, keeps its markers whole, and keeps the file it names", async () => {
    const answer = text(
      await (tools.bash as Tool).execute({
        command: 'seq 1 3000; exit 4',
        description: 'Print numbers',
        // Room for the marker, whose path is as long as the spill directory's (the run's TMPDIR).
        max_output_tokens: 80,
      }),
    );
    expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(320);
    const lines = answer.split('\n');
    expect(lines[0]).toBe('1');
    expect(lines.slice(-2)).toEqual(['3000', '[exit code: 4]']);
    const [, tokens, file] = MARKER.exec(answer) ?? [];
    // A short run's files go once its result is in; these stay, for the line that names them.
    expect(existsSync(file ?? '')).toBe(true);
    expect(readFileSync(file ?? '', 'utf8')).toBe(seq(3000));
    // What went, in tokens of 4 bytes (the exact count is output-budget.test.ts's).
    expect(Number(tokens)).toBeGreaterThan((seq(3000).length - 320) / 4);
    expect(Number(tokens)).toBeLessThanOrEqual(seq(3000).length / 4);
  });

  it('leaves an answer within its budget as it is', async () => {
    const answer = await (tools.bash as Tool).execute({
      command: 'echo short',
      description: 'Print a line',
      max_output_tokens: 50,
    });
    expect(text(answer)).toBe('short\n');
  });

  it("cuts a bash_output read's middle, with its status line whole, and consumes all of it", async () => {
    const taskId = await startBackground(tools.bash, 'seq 1 2000; echo oops >&2');
    await suite.env.client.workflow.getHandle(taskId).result();
    const answer = text(
      await (tools.bash_output as Tool).execute({ task_id: taskId, max_output_tokens: 100 }),
    );
    expect(Buffer.byteLength(answer)).toBeLessThanOrEqual(400);
    expect(answer.split('\n')[0]).toBe('1');
    expect(answer.endsWith('[stderr]\noops\n[status: completed, exit code: 0]')).toBe(true);
    const [stdoutFile, stderrFile] = (MARKER.exec(answer)?.[2] ?? '').split(', ');
    expect(stdoutFile).toMatch(/\.stdout$/);
    expect(stderrFile).toMatch(/\.stderr$/);
    expect(readFileSync(stdoutFile ?? '', 'utf8')).toBe(seq(2000));
    expect(text(await (tools.bash_output as Tool).execute({ task_id: taskId }))).toBe(
      '(no new output)\n[status: completed, exit code: 0]',
    );
  });

  it('refuses a bad budget on bash_output with one line, and reads nothing', async () => {
    const taskId = await startBackground(tools.bash, 'echo kept');
    await suite.env.client.workflow.getHandle(taskId).result();
    const refused = await (tools.bash_output as Tool).execute({ task_id: taskId, max_output_tokens: -1 });
    expect(refused).toEqual({
      content: [
        {
          type: 'text',
          text: 'invalid max_output_tokens: expected a whole number of tokens from 1 to 1000000, got -1',
        },
      ],
      isError: true,
    });
    expect(text(await (tools.bash_output as Tool).execute({ task_id: taskId }))).toBe(
      'kept\n[status: completed, exit code: 0]',
    );
  });
});
