import { describe, expect, it } from 'vitest';
import { renderRun } from '../../src/shared/render.js';
import type { BashTaskResult } from '../../src/shared/task.js';
import { keepMatchingLines } from '../../src/tools/line-filter.js';
import { parseRunText } from '../../src/tools/present.js';
import { renderOutputRead } from '../../src/tools/render-read.js';
import { b64, READ_HOST as HOST, outputRead as read, runResult as result } from '../helpers/output-read.js';

describe('renderRun', () => {
  it('names a spill file on the reader host, and says (unavailable) on another', () => {
    const run = result({
      stdout: { bytes: 10_000, tailBase64: b64('end\n'), spillPath: '/spill/bash-1.stdout' },
    });
    expect(renderRun(run, HOST)).toBe('end\n[output truncated; full output: /spill/bash-1.stdout]');
    expect(renderRun(run, 'host-b')).toBe('end\n[output truncated; full output: (unavailable)]');
  });

  it('puts every marker on its own line, in contract order', () => {
    const run = result({
      exitCode: null,
      signal: 'SIGKILL',
      timedOutAfterMs: 100,
      stdout: { bytes: 2, tailBase64: b64('x') },
    });
    expect(renderRun(run, HOST)).toBe('x\n[timed out after 100ms]\n[killed by signal: SIGKILL]');
  });
});

describe('parseRunText inverts renderRun', () => {
  const cases: [string, BashTaskResult, { exitCode?: number; signal?: string }][] = [
    ['a clean exit', result({ stdout: { bytes: 3, tailBase64: b64('ok\n') } }), { exitCode: 0 }],
    [
      'a non-zero exit',
      result({ exitCode: 3, stderr: { bytes: 4, tailBase64: b64('err\n') } }),
      { exitCode: 3 },
    ],
    ['a signal death', result({ exitCode: null, signal: 'SIGTERM' }), { signal: 'SIGTERM' }],
    ['a timeout with a trapped exit 0', result({ timedOutAfterMs: 500 }), { exitCode: 0 }],
    [
      'output that looks like a marker',
      result({ stdout: { bytes: 16, tailBase64: b64('[exit code: 9]\n') } }),
      { exitCode: 0 },
    ],
  ];

  it.each(cases)('recovers the status of %s', (_name, run, status) => {
    const text = renderRun(run, HOST);
    const parsed = parseRunText(text);
    expect({ exitCode: parsed.exitCode, signal: parsed.signal }).toEqual({
      exitCode: undefined,
      signal: undefined,
      ...status,
    });
    expect(text.startsWith(parsed.output)).toBe(true);
  });
});

describe('renderOutputRead', () => {
  it('shows new stdout, a [stderr] section, then the status line', () => {
    expect(
      renderOutputRead(
        read({ stdout: { text: 'out\n', droppedBytes: 0 }, stderr: { text: 'err', droppedBytes: 0 } }),
        HOST,
      ),
    ).toBe('out\n[stderr]\nerr\n[status: running]');
  });

  it('says (no new output) when nothing is new, with every kind of status line', () => {
    expect(renderOutputRead(read({ state: { status: 'completed', exitCode: 3 } }), HOST)).toBe(
      '(no new output)\n[status: completed, exit code: 3]',
    );
    expect(renderOutputRead(read({ state: { status: 'killed', signal: 'SIGKILL' } }), HOST)).toBe(
      '(no new output)\n[status: killed by SIGKILL]',
    );
    expect(
      renderOutputRead(read({ state: { status: 'lost', reason: 'its worker stopped answering' } }), HOST),
    ).toBe('(no new output)\n[status: lost: its worker stopped answering]');
  });

  it('names the spill files of every stream that dropped output, or (unavailable) on another host', () => {
    const dropped = read({
      stdout: { text: 'tail\n', droppedBytes: 10, spillPath: '/spill/t.stdout' },
      stderr: { text: 'etail\n', droppedBytes: 3, spillPath: '/spill/t.stderr' },
    });
    expect(renderOutputRead(dropped, HOST)).toBe(
      'tail\n[stderr]\netail\n[some output was dropped from memory; full output: /spill/t.stdout, /spill/t.stderr]\n[status: running]',
    );
    expect(renderOutputRead(dropped, 'host-b')).toBe(
      'tail\n[stderr]\netail\n[some output was dropped from memory; full output: (unavailable)]\n[status: running]',
    );
  });

  it('says when no worker took the read', () => {
    expect(renderOutputRead(read({ stdout: { text: 'x\n', droppedBytes: 0 }, unclaimed: true }), HOST)).toBe(
      'x\n[status: running]\n[task worker unavailable: this is the output the server holds; the read position did not move, so it will be shown again]',
    );
  });

  it('stops a filter that backtracks without end, and shows every line instead, saying so', () => {
    const line = `${'a'.repeat(40)}\n`;
    const started = Date.now();
    expect(keepMatchingLines(`ok\n${line}`, /(a+)+b/, 50)).toEqual({
      text: `ok\n${line}`,
      leftOut: 0,
      notApplied: { timedOut: true },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(renderOutputRead(read({ stdout: { text: line, droppedBytes: 0 } }), HOST, /(a+)+b/)).toBe(
      `${line}[the filter /(a+)+b/ took over 1000ms and was not applied: every line is shown]\n[status: running]`,
    );
    expect(keepMatchingLines('x\ny\n', /y/)).toEqual({ text: 'y\n', leftOut: 1 });
  });
});
