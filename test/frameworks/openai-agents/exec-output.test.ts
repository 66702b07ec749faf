import { describe, expect, it } from 'vitest';
import { cutToTokens, readsOutput, resultOutput } from '../../../src/openai-agents/exec-output.js';
import {
  b64,
  READ_HOST as HOST,
  outputRead as read,
  runResult as result,
} from '../../helpers/output-read.js';

describe("an exec's output from a run's result", () => {
  it("is the bash tool's text without (no output) and the exit-code line, which the SDK's frame says", () => {
    expect(resultOutput(result({ exitCode: 3 }), HOST)).toEqual({ output: '', stdout: '', stderr: '' });
    const run = result({
      exitCode: 2,
      stdout: { bytes: 3, tailBase64: b64('ok\n') },
      stderr: { bytes: 4, tailBase64: b64('bad\n') },
    });
    expect(resultOutput(run, HOST).output).toBe('ok\n[stderr]\nbad\n');
  });

  it('says every way the run ended short of its own exit, in the order the bash tool does', () => {
    const run = result({
      exitCode: null,
      signal: 'SIGKILL',
      timedOutAfterMs: 100,
      stdout: { bytes: 10_000, tailBase64: b64('end\n'), spillPath: '/spill/bash-1.stdout' },
      limits: { memory: { bytes: 1024, kills: 1 } },
    });
    expect(resultOutput(run, HOST)).toEqual({
      output: [
        'end',
        '[output truncated; full output: /spill/bash-1.stdout]',
        '[out of memory: the kernel killed a process of the task at its limit of 1024 bytes]',
        '[timed out after 100ms]',
        '[killed by signal: SIGKILL]',
      ].join('\n'),
      stdout: 'end\n',
      stderr: '',
      spillPath: '/spill/bash-1.stdout',
    });
    // A file on another host than the session's is not one its commands could read.
    expect(resultOutput(run, 'host-b').output).toContain('full output: (unavailable)]');
  });
});

describe("an exec's output from durable reads", () => {
  it('joins the reads, and tells an end that is not a plain exit with its limits and status line', () => {
    const reads = [
      read({ stdout: { text: 'one\n', droppedBytes: 0 } }),
      read({
        stdout: { text: 'two\n', droppedBytes: 5, spillPath: '/spill/bash-2.stdout' },
        stderr: { text: 'warn\n', droppedBytes: 0 },
        state: { status: 'killed', signal: 'SIGTERM' },
        limits: { processes: { limit: 64 } },
      }),
    ];
    const output = readsOutput(reads, HOST);
    expect(output.output).toBe(
      [
        'one',
        'two',
        '[stderr]',
        'warn',
        '[some output was dropped from memory; full output: /spill/bash-2.stdout]',
        "[process limit reached: forks failed at the task's limit of 64]",
        '[status: killed by SIGTERM]',
      ].join('\n'),
    );
    expect(output).toMatchObject({
      stdout: 'one\ntwo\n',
      stderr: 'warn\n',
      spillPath: '/spill/bash-2.stdout',
    });
  });

  it('answers nothing new as empty output, and a plain exit without a status line', () => {
    expect(readsOutput([read()], HOST).output).toBe('');
    expect(readsOutput([read({ state: { status: 'completed', exitCode: 4 } })], HOST).output).toBe('');
  });
});

describe('the cut to maxOutputTokens', () => {
  it('keeps the head and the tail in whole characters and names the full output', () => {
    const text = `${'é'.repeat(200)}${'x'.repeat(200)}`;
    const cut = cutToTokens(text, 20, '/spill/bash-3.stdout');
    expect(cut.originalTokenCount).toBe(Math.ceil(Buffer.byteLength(text) / 4));
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(80);
    expect(cut.text).toMatch(/^é+\n…\d+ tokens truncated; full output: \/spill\/bash-3\.stdout…\nx+$/);
    expect(cutToTokens('short', 20, undefined)).toEqual({ text: 'short' });
  });
});
