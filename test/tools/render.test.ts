import { describe, expect, it } from 'vitest';
import type { BashTaskResult } from '../../src/shared/task.js';
import { parseRunText } from '../../src/tools/present.js';
import { renderRun } from '../../src/tools/render.js';

const HOST = 'host-a';
const b64 = (text: string) => Buffer.from(text).toString('base64');

function result(overrides: Partial<BashTaskResult> = {}): BashTaskResult {
  return {
    exitCode: 0,
    signal: null,
    stdout: { bytes: 0, tailBase64: b64('') },
    stderr: { bytes: 0, tailBase64: b64('') },
    host: HOST,
    ...overrides,
  };
}

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
