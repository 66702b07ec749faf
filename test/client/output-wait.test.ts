import { describe, expect, it } from 'vitest';
import { waitForNewOutput } from '../../src/client/output-wait.js';
import type { TaskSnapshot } from '../../src/client/task-snapshot.js';

// The wait's own logic, over snapshots as the server would describe them one poll after another.

/** A running task whose stdout is `text` in all, of which the tail holds the last `held` bytes. */
function running(text: string, held = text.length): TaskSnapshot {
  const bytes = Buffer.from(text);
  return {
    taskId: 'bash-00000000-0000-4000-8000-000000000000',
    owner: undefined,
    state: { status: 'running' },
    stdout: { bytes: bytes.length, tailBase64: bytes.subarray(bytes.length - held).toString('base64') },
    stderr: { bytes: 0, tailBase64: '' },
    host: 'host',
    final: false,
  };
}

/** Polls through `snapshots` in turn (the last one repeats), asking `wanted` what it is given. */
function waitThrough(snapshots: TaskSnapshot[], timeoutMs: number) {
  const asked: string[] = [];
  let poll = 0;
  const outcome = waitForNewOutput(
    async () => snapshots[Math.min(poll++, snapshots.length - 1)] as TaskSnapshot,
    async () => ({ stdout: 0, stderr: 0 }),
    {
      timeoutMs,
      intervalMs: 5,
      wholeLines: true,
      wanted: (text) => {
        asked.push(text);
        return text.includes('MATCH');
      },
    },
  );
  return { outcome, asked };
}

describe('a filtered wait', () => {
  it('looks at each new line once, and ends on a wanted one', async () => {
    const { outcome, asked } = waitThrough(
      [running(''), running('a\n'), running('a\nb\npart'), running('a\nb\npartial MATCH\n')],
      10_000,
    );
    expect(await outcome).toBe('output');
    expect(asked).toEqual(['a\n', 'b\n', 'partial MATCH\n']);
  });

  it('waits out its time when no new line is wanted', async () => {
    const { outcome, asked } = waitThrough([running('a\n'), running('a\nb\n')], 200);
    expect(await outcome).toBe('timeout');
    expect(asked).toEqual(['a\n', 'b\n']);
  });

  it('ends at once on new output the snapshot no longer holds all of, which it cannot look at', async () => {
    const { outcome, asked } = waitThrough([running(`${'x'.repeat(100)}\nb\n`, 10)], 10_000);
    expect(await outcome).toBe('output');
    expect(asked).toEqual([]);
  });
});
