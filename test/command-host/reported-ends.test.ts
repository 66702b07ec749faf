import { describe, expect, it } from 'vitest';
import { type ReportedEnd, ReportedEnds } from '../../src/command-host/reported-ends.js';
import type { CommandOutcome } from '../../src/shared/task.js';

const outcome = (tail: string): CommandOutcome => ({
  exitCode: 0,
  signal: null,
  stdout: { bytes: tail.length, tail },
  stderr: { bytes: 0, tail: '' },
  host: 'h',
});

const end = (runId: string, reportedAtMs: number, tail = ''): Omit<ReportedEnd, 'bytes'> => ({
  taskId: `bash-${runId}`,
  runId,
  activityId: '2',
  attempt: 1,
  taskToken: new Uint8Array([1]),
  outcome: outcome(tail),
  reportedAtMs,
});

describe('the ends a host returned, until the server is seen holding them', () => {
  it('are due after the grace, forgotten past the heartbeat timeout or once confirmed', () => {
    const ends = new ReportedEnds();
    ends.add(end('a', 0));
    ends.add(end('b', 10_000));
    ends.add(end('c', 20_000));
    expect(ends.due(25_000, 15_000, 300_000).map((e) => e.runId)).toEqual(['a', 'b']);
    ends.confirm('a');
    expect(ends.due(40_000, 15_000, 300_000).map((e) => e.runId)).toEqual(['b', 'c']);
    // Past the heartbeat timeout the server has timed the attempt out: nothing left to send.
    expect(ends.due(312_000, 15_000, 300_000).map((e) => e.runId)).toEqual(['c']);
    expect(ends.size).toBe(1);
  });

  it('keep one end per run, the newest attempt', () => {
    const ends = new ReportedEnds();
    ends.add(end('a', 0, 'first'));
    ends.add({ ...end('a', 5_000, 'second'), attempt: 2 });
    expect(ends.due(30_000, 15_000, 300_000).map((e) => [e.attempt, e.outcome.stdout.tail])).toEqual([
      [2, 'second'],
    ]);
  });

  it('hold at most their byte budget, dropping the oldest first', () => {
    const size = Buffer.byteLength(JSON.stringify(outcome('x'.repeat(1_000))));
    const ends = new ReportedEnds(size * 2);
    ends.add(end('a', 0, 'x'.repeat(1_000)));
    ends.add(end('b', 1, 'x'.repeat(1_000)));
    ends.add(end('c', 2, 'x'.repeat(1_000)));
    expect(ends.due(100_000, 0, 300_000).map((e) => e.runId)).toEqual(['b', 'c']);
  });
});
