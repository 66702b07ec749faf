import { describe, expect, it } from 'vitest';
import { NOTICE_TAIL_CHARS } from '../../src/shared/limits.js';
import { noticeText } from '../../src/shared/notice.js';
import type { ReadPosition } from '../../src/shared/read-position.js';
import { renderNoticeOutput } from '../../src/shared/render-notice.js';
import type { BashTaskResult, StreamTail } from '../../src/shared/task.js';

const stream = (tail: string, spillPath?: string): StreamTail => ({
  bytes: Buffer.byteLength(tail),
  tail,
  ...(spillPath ? { spillPath } : {}),
});

function result(stdout: StreamTail, stderr: StreamTail = stream('')): BashTaskResult {
  return { exitCode: 0, signal: null, stdout, stderr, host: 'h' };
}

/** Where reads left the task: the bytes of each stream they took. */
const at = (stdout: number, stderr = 0): ReadPosition => ({ stdout, stderr });

const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

describe('a completion notice', () => {
  it('keeps its first line, and carries all of a short output after it', () => {
    expect(
      noticeText(
        'bash-1',
        '[status: completed, exit code: 1]',
        renderNoticeOutput(result(stream('3 passed\n1 failed\n'))),
      ),
    ).toBe(
      'background bash task bash-1 finished [status: completed, exit code: 1]. Read its output with bash_output.\n[output]\n3 passed\n1 failed',
    );
  });

  it('shows stderr in its own section, as a run does', () => {
    expect(renderNoticeOutput(result(stream('built\n'), stream('warning: unused\n')))).toBe(
      '[output]\nbuilt\n[stderr]\nwarning: unused',
    );
    expect(renderNoticeOutput(result(stream(''), stream('error\n')))).toBe('[output]\n[stderr]\nerror');
  });

  it('says there was no output', () => {
    expect(renderNoticeOutput(result(stream('')))).toBe('(no output)');
  });

  it('ends with the timeout a run kept from its foreground call, when it ran into it', () => {
    const timedOut = { ...result(stream('tick\n')), signal: 'SIGTERM', timedOutAfterMs: 3_000 };
    expect(renderNoticeOutput(timedOut)).toBe('[output]\ntick\n[timed out after 3000ms]');
    expect(renderNoticeOutput({ ...timedOut, stdout: stream('') })).toBe(
      '(no output)\n[timed out after 3000ms]',
    );
  });

  it('carries the last lines of a long output, whole lines, and says bash_output returns all of it', () => {
    const text = renderNoticeOutput(result(stream(lines(1, 500))), 100);
    // The last 100 characters start inside "line 489"; the notice starts at the next whole line.
    expect(text).toBe(
      `[output: the last 99 characters; bash_output returns all of it]\n${lines(490, 500).slice(0, -1)}`,
    );
  });

  it('says the output was cut when the result held only its tail', () => {
    const held = { ...stream('end\n', '/spill/bash-1.stdout'), bytes: 40_000 };
    expect(renderNoticeOutput(result(held))).toBe(
      '[output: the last 4 characters; bash_output returns all of it]\nend',
    );
  });

  it('gives each stream half when both are long, and what one leaves to the other', () => {
    const both = renderNoticeOutput(result(stream(lines(1, 300)), stream(lines(1, 300))), 100).split('\n');
    // stderr's half is 50 characters, 45 in whole lines; stdout gets the other 55.
    expect(both.indexOf('[stderr]')).toBe(7);
    expect(both.slice(1, 7)).toEqual([
      'line 295',
      'line 296',
      'line 297',
      'line 298',
      'line 299',
      'line 300',
    ]);
    expect(both.slice(8)).toEqual(['line 296', 'line 297', 'line 298', 'line 299', 'line 300']);
    const shortErr = renderNoticeOutput(result(stream(lines(1, 300)), stream('oops\n')), 100);
    expect(shortErr.endsWith('\n[stderr]\noops')).toBe(true);
    expect(shortErr).toContain('line 291\n');
  });

  it('never splits a character of two UTF-16 units', () => {
    const text = renderNoticeOutput(result(stream('🙂'.repeat(100))), 11);
    expect(text).toBe(`[output: the last 10 characters; bash_output returns all of it]\n${'🙂'.repeat(5)}`);
  });

  it("shows a terminal task's last screen, its top rows cut to fit, whatever reads showed", () => {
    const screen = {
      cols: 40,
      rows: 4,
      lines: ['>>> print(6*7)', '42', '>>> exit()', ''],
      cursor: { row: 4, column: 1 },
      applicationCursor: false,
    };
    const ended: BashTaskResult = {
      ...result(stream('raw bytes')),
      terminal: { screen, scrolledOff: '', scrolledOffDropped: 0 },
    };
    expect(noticeText('bash-1', '[status: completed, exit code: 0]', renderNoticeOutput(ended))).toBe(
      'background bash task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.\n>>> print(6*7)\n42\n>>> exit()\n[screen: 40x4, cursor at row 4, column 1]',
    );
    expect(renderNoticeOutput(ended, 15)).toBe(
      '[the last 2 rows of the screen; bash_output shows all of it]\n42\n>>> exit()\n[screen: 40x4, cursor at row 4, column 1]',
    );
    expect(renderNoticeOutput(ended, NOTICE_TAIL_CHARS, { stdout: 9, stderr: 0 })).toBe(
      renderNoticeOutput(ended),
    );
  });
});

describe('a completion notice of a task that reads have seen', () => {
  const first = (taskId: string) =>
    `background bash task ${taskId} finished [status: completed, exit code: 0]. Read its output with bash_output.`;

  it('says in one line that all of its output was already read, in place of repeating it', () => {
    // Issue 28: n1, n2 and n3 were read through bash_output before the task ended.
    const ended = result(stream('n1\nn2\nn3\n'));
    expect(
      noticeText(
        'bash-1',
        '[status: completed, exit code: 0]',
        renderNoticeOutput(ended, NOTICE_TAIL_CHARS, at(9)),
      ),
    ).toBe(`${first('bash-1')}\n[output: all of it was already read]`);
    expect(renderNoticeOutput(result(stream('out\n'), stream('err\n')), NOTICE_TAIL_CHARS, at(4, 4))).toBe(
      '[output: all of it was already read]',
    );
  });

  it('carries only the output no read has shown', () => {
    const ended = result(stream('n1\nn2\nn3\nn4\nn5\n'));
    expect(
      noticeText(
        'bash-1',
        '[status: completed, exit code: 0]',
        renderNoticeOutput(ended, NOTICE_TAIL_CHARS, at(9)),
      ),
    ).toBe(`${first('bash-1')}\n[output since the last read]\nn4\nn5`);
    // A read that took part of a line (no filter): the rest of it.
    expect(renderNoticeOutput(ended, NOTICE_TAIL_CHARS, at(4))).toBe(
      '[output since the last read]\n2\nn3\nn4\nn5',
    );
  });

  it('keeps a stream that no read has shown whole beside one that reads showed', () => {
    const ended = result(stream('built\n'), stream('warning: unused\n'));
    expect(renderNoticeOutput(ended, NOTICE_TAIL_CHARS, at(6))).toBe(
      '[output since the last read]\n[stderr]\nwarning: unused',
    );
    expect(renderNoticeOutput(ended, NOTICE_TAIL_CHARS, at(0, 16))).toBe(
      '[output since the last read]\nbuilt',
    );
  });

  it('carries the last lines of a long unread rest, and says bash_output returns all of it', () => {
    const ended = result(stream(lines(1, 500)));
    expect(renderNoticeOutput(ended, 100, at(Buffer.byteLength(lines(1, 100))))).toBe(
      `[output since the last read: the last 99 characters; bash_output returns all of it]\n${lines(490, 500).slice(0, -1)}`,
    );
    // Unread bytes the result no longer holds (before its tail) make the rest a cut one, however short.
    const held = { ...stream('end\n', '/spill/bash-1.stdout'), bytes: 40_000 };
    expect(renderNoticeOutput(result(held), NOTICE_TAIL_CHARS, at(30_000))).toBe(
      '[output since the last read: the last 4 characters; bash_output returns all of it]\nend',
    );
    // The reads reached into what the tail holds: the rest is whole.
    expect(renderNoticeOutput(result(held), NOTICE_TAIL_CHARS, at(39_998))).toBe(
      '[output since the last read]\nd',
    );
  });

  it('slices at the byte the reads stopped at, between characters of several bytes', () => {
    expect(renderNoticeOutput(result(stream('é\n🙂\n')), NOTICE_TAIL_CHARS, at(3))).toBe(
      '[output since the last read]\n🙂',
    );
    // A tail that is not UTF-8 travels as base64, and is sliced the same way.
    const binary: StreamTail = {
      bytes: 5,
      tailBase64: Buffer.from([0xff, 0x61, 0x0a, 0x62, 0x0a]).toString('base64'),
    };
    expect(renderNoticeOutput(result(binary), NOTICE_TAIL_CHARS, at(3))).toBe(
      '[output since the last read]\nb',
    );
  });

  it('says there was no output when the task printed nothing', () => {
    expect(renderNoticeOutput(result(stream('')), NOTICE_TAIL_CHARS, at(0))).toBe('(no output)');
  });
});
