import { describe, expect, it } from 'vitest';
import { budgetMarker, cutMiddle, fitToBudget, utf8Length } from '../../src/shared/output-budget.js';

const numbered = (count: number) => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n');

describe('cutMiddle', () => {
  it('keeps half the room from each end, in whole characters', () => {
    expect(cutMiddle('abcdefghij', 4)).toEqual({ head: 'ab', tail: 'ij', cutBytes: 6 });
    // 'é' is two bytes: a cut through one leaves it out on either side.
    expect(cutMiddle('ééééé', 5)).toEqual({ head: 'é', tail: 'é', cutBytes: 6 });
    expect(cutMiddle('abc', 10)).toEqual({ head: 'a', tail: 'bc', cutBytes: 0 });
    expect(cutMiddle('abc', -5)).toEqual({ head: '', tail: '', cutBytes: 3 });
  });
});

describe('fitToBudget', () => {
  const trailer = ['[status: completed, exit code: 0]'];

  it('leaves an answer within its budget, or without one, as it is', () => {
    const parts = { body: 'one\ntwo\n', trailer, files: '/spill/a.stdout' };
    expect(fitToBudget(parts, undefined)).toBe('one\ntwo\n[status: completed, exit code: 0]');
    expect(fitToBudget(parts, 100)).toBe('one\ntwo\n[status: completed, exit code: 0]');
  });

  it('keeps the head and the tail of the body, the trailer whole, within the budget', () => {
    const text = fitToBudget({ body: 'a'.repeat(200), trailer: ['[x]'], files: '/f' }, 25);
    expect(text).toBe(
      `${'a'.repeat(10)}\n[45 tokens cut from the middle to fit max_output_tokens; full output: /f]\n${'a'.repeat(11)}\n[x]`,
    );
    expect(utf8Length(text)).toBe(100);
    const long = fitToBudget({ body: numbered(500), trailer, files: '/spill/a.stdout' }, 100);
    expect(utf8Length(long)).toBeLessThanOrEqual(400);
    expect(long.split('\n')[0]).toBe('line 1');
    expect(long.endsWith('line 500\n[status: completed, exit code: 0]')).toBe(true);
  });

  it('gives the marker alone when the trailer fills the budget', () => {
    const text = fitToBudget({ body: numbered(50), trailer, files: '(unavailable)' }, 5);
    expect(text).toBe(
      `${budgetMarker(Math.ceil(utf8Length(numbered(50)) / 4), '(unavailable)')}\n${trailer[0]}`,
    );
  });
});
