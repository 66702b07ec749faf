/**
 * The host side of a monitor on real files, with a sink that records (and can refuse) what it is
 * given: lines are never split at a read's edge, a long line is matched once by its start, a
 * batch the server did not take is sent again exactly as it was and nothing gathered meanwhile is
 * left behind at the end, and a batch's lines come in one order, stdout's then stderr's.
 */
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LineMonitor, type MonitorSink } from '../../src/command-host/monitor/line-monitor.js';
import { readMonitorRecord } from '../../src/command-host/monitor/monitor-record.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { MONITOR_LINE_SCAN_BYTES } from '../../src/shared/limits.js';
import type { MonitorBatch } from '../../src/shared/monitor.js';

const TASK_ID = 'bash-00000000-0000-4000-8000-000000000001';

function task(notifyOn: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-line-monitor-'));
  const files = taskFiles(dir, TASK_ID);
  writeFileSync(files.stdout, '');
  writeFileSync(files.stderr, '');
  return {
    files,
    spec: { taskId: TASK_ID, files, target: { target: { workflowId: 'agent' } }, terminal: false, notifyOn },
  };
}

/** A sink that records each batch it took, and refuses the next `refusals` sends (or all, until `reach`). */
function sink(refusals = 0) {
  const taken: MonitorBatch[] = [];
  const tried: MonitorBatch[] = [];
  let left = refusals;
  const monitors: MonitorSink = {
    async send(_taskId, _target, batch) {
      tried.push(structuredClone(batch));
      if (left-- > 0) throw new Error('the server is restarting');
      taken.push(structuredClone(batch));
    },
  };
  return { monitors, taken, tried, reach: () => (left = 0) };
}

const count = (batches: MonitorBatch[]) =>
  batches.reduce((sum, batch) => sum + batch.lines.length + batch.more, 0);

describe('a monitor on its host', () => {
  it('matches every line of a backlog longer than one read, splitting none at the edge', async () => {
    const { files, spec } = task('^MATCH');
    const lines: string[] = [];
    // 3 MiB of lines, a matching one every 997 lines: some straddle the 1 MiB read edges.
    for (let i = 0, bytes = 0; bytes < 3 * 1024 * 1024; i++) {
      const line = i % 997 === 0 ? `MATCH ${i}` : `line ${i} ${'x'.repeat(40)}`;
      lines.push(line);
      bytes += line.length + 1;
    }
    writeFileSync(files.stdout, `${lines.join('\n')}\nMATCH at the end with no newline`);
    const { monitors, taken } = sink();
    const monitor = await LineMonitor.open(spec, monitors);
    await monitor.finish();
    const expected = [
      ...lines.filter((line) => line.startsWith('MATCH')),
      'MATCH at the end with no newline',
    ];
    expect(count(taken)).toBe(expected.length);
    expect(taken[0]?.lines.map((line) => line.text)).toEqual(expected.slice(0, 20));
    expect(taken[0]?.lines.every((line) => line.text.startsWith('MATCH'))).toBe(true);
  });

  it('matches a line longer than it scans once, by its start, and goes on after it', async () => {
    const { files, spec } = task('MATCH');
    writeFileSync(
      files.stdout,
      `MATCH long ${'y'.repeat(3 * MONITOR_LINE_SCAN_BYTES)} MATCH again\nMATCH next\n`,
    );
    const { monitors, taken } = sink();
    const monitor = await LineMonitor.open(spec, monitors);
    await monitor.finish();
    expect(
      taken.flatMap((batch) => batch.lines.map((line) => [line.offset, line.text.slice(0, 10)])),
    ).toEqual([
      [0, 'MATCH long'],
      [11 + 3 * MONITOR_LINE_SCAN_BYTES + 12 + 1, 'MATCH next'],
    ]);
  });

  it('sends a batch the server refused again as it was, and what matched meanwhile after it', async () => {
    const { files, spec } = task('^E');
    const { monitors, taken, tried } = sink(1);
    const monitor = await LineMonitor.open(spec, monitors);
    monitor.start();
    appendFileSync(files.stdout, 'E1\nok\nE2\n');
    // The first send is refused; a line that matches comes while the batch waits to go again.
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    appendFileSync(files.stdout, 'E3\n');
    await monitor.finish();
    expect(tried[0]).toEqual(taken[0]);
    expect(taken.map((batch) => batch.lines.map((line) => line.text))).toEqual([['E1', 'E2'], ['E3']]);
    expect((await readMonitorRecord(files))?.sentUpTo).toEqual({ stdout: 12, stderr: 0 });
  });

  it('sends, at the end, both the batch the server kept refusing and every line that matched while it waited', async () => {
    const { files, spec } = task('^E');
    const { monitors, taken, reach } = sink(Number.POSITIVE_INFINITY);
    const monitor = await LineMonitor.open(spec, monitors);
    monitor.start();
    appendFileSync(files.stdout, 'E1\n');
    // The server is unreachable: E1's batch is refused, and E2 matches while it waits to go again.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    appendFileSync(files.stdout, 'ok\nE2\n');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The command ends, and the server is back as the monitor finishes: nothing may stay behind.
    reach();
    await monitor.finish();
    expect(taken.map((batch) => batch.lines.map((line) => line.text))).toEqual([['E1'], ['E2']]);
    expect((await readMonitorRecord(files))?.sentUpTo).toEqual({ stdout: 9, stderr: 0 });
  });

  it("puts stdout's lines of a batch before stderr's, whichever reached its file first", async () => {
    const { files, spec } = task('E');
    const { monitors, taken } = sink();
    const monitor = await LineMonitor.open(spec, monitors);
    monitor.start();
    // The supervisor relays each stream through its own pipe: stderr's line may land first.
    appendFileSync(files.stderr, 'E late\n');
    await new Promise((resolve) => setTimeout(resolve, 300));
    appendFileSync(files.stdout, 'E1\nE2\n');
    await monitor.finish();
    expect(taken.map((batch) => batch.lines.map((line) => `${line.stream} ${line.text}`))).toEqual([
      ['stdout E1', 'stdout E2', 'stderr E late'],
    ]);
  });
});
