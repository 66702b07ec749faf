import { describe, expect, it } from 'vitest';
import type { BashTasks } from '../../src/client/bash-tasks.js';
import { renderMovedRun, WORKER_UNAVAILABLE } from '../../src/shared/render.js';
import { createBashTool } from '../../src/tools/bash.js';
import { bashDescription } from '../../src/tools/descriptions.js';
import { presentBashResult } from '../../src/tools/present.js';
import { READ_HOST as HOST, outputRead as read } from '../helpers/output-read.js';

const TASK = 'bash-00000000-0000-4000-8000-000000000000';
const MOVED = `[still running after 500ms; moved to background task ${TASK}. Read its output with bash_output.]`;

describe('renderMovedRun', () => {
  it('shows the output so far, a [stderr] section, then the move line', () => {
    const text = renderMovedRun(
      read({ stdout: { text: '1\n2\n', droppedBytes: 0 }, stderr: { text: 'warn\n', droppedBytes: 0 } }),
      TASK,
      500,
      HOST,
    );
    expect(text).toBe(`1\n2\n[stderr]\nwarn\n${MOVED}`);
  });

  it('puts the move line on a line of its own after output with no final newline', () => {
    expect(renderMovedRun(read({ stdout: { text: 'partial', droppedBytes: 0 } }), TASK, 500, HOST)).toBe(
      `partial\n${MOVED}`,
    );
  });

  it('says (no output) when nothing was printed yet', () => {
    expect(renderMovedRun(read(), TASK, 500, HOST)).toBe(`(no output)\n${MOVED}`);
  });

  it('names the complete file when output was dropped, and says when no worker took the read', () => {
    const text = renderMovedRun(
      read({
        stdout: { text: 'tail\n', droppedBytes: 10, spillPath: '/spill/out' },
        unclaimed: true,
      }),
      TASK,
      500,
      HOST,
    );
    expect(text).toBe(
      `tail\n[some output was dropped from memory; full output: /spill/out]\n${MOVED}\n${WORKER_UNAVAILABLE}`,
    );
  });
});

describe('presentBashResult of a run moved to the background', () => {
  const call = { command: 'make', description: 'Build' };
  const result = (text: string) => ({ content: [{ type: 'text' as const, text }] });

  it('fences it as console text, with no exit pill', () => {
    expect(presentBashResult(call, result(`1\n${MOVED}`))).toEqual({
      card: 'generic',
      content: [{ type: 'text', text: `\`\`\`console\n1\n${MOVED}\n\`\`\`` }],
    });
    expect(presentBashResult(call, result(`1\n${MOVED}\n${WORKER_UNAVAILABLE}`))).toMatchObject({
      card: 'generic',
    });
  });
});

describe('the bash description with autoBackgroundAfterMs', () => {
  const tasks = {} as BashTasks;

  it('is the seed-compatible description when the option is off', () => {
    expect(createBashTool(tasks).description).toBe(bashDescription);
  });

  it('tells the model when and how a foreground call moves to the background', () => {
    expect(createBashTool(tasks, { autoBackgroundAfterMs: 500 }).description).toBe(
      `${bashDescription}\n\nA foreground call still running after 500ms returns the output so far and [still running after 500ms; moved to background task <id>. Read its output with bash_output.]: the command goes on as a background task, with no timeout, and you get a notice when it finishes. Read the rest of its output with bash_output (it starts after what the call showed).`,
    );
  });

  it('refuses a threshold that is not a positive number', () => {
    expect(() => createBashTool(tasks, { autoBackgroundAfterMs: -1 })).toThrow(
      'autoBackgroundAfterMs must be a positive number, got -1',
    );
  });
});
