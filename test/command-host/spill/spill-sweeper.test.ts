import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SpillSweeper, sweepSpillDir } from '../../../src/command-host/spill/spill-sweeper.js';
import { currentBootId, processStart } from '../../../src/command-host/supervisor/process-identity.js';
import { TASK_FILES_FORMAT } from '../../../src/command-host/supervisor/supervisor-records.js';
import { markDone, taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import { SPILL_SWEEP_INTERVAL_MS } from '../../../src/shared/limits.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
const dirs: string[] = [];

function spillDir(files: Record<string, number>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-sweep-'));
  dirs.push(dir);
  for (const [name, ageMs] of Object.entries(files)) {
    const file = path.join(dir, name);
    writeFileSync(file, 'x');
    const when = (Date.now() - ageMs) / 1000;
    utimesSync(file, when, when);
  }
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the spill sweeper', () => {
  it('keeps the directory under its quota, removing the tasks that ended longest ago first', async () => {
    const [oldest, older, newest, running] = [1, 2, 3, 4].map(
      (n) => `bash-00000000-0000-4000-8000-00000000010${n}`,
    );
    const dir = spillDir({
      [`${oldest}.stdout`]: 3 * DAY_MS,
      [`${older}.stdout`]: 2 * DAY_MS,
      [`${newest}.stdout`]: DAY_MS,
      [`${running}.stdout`]: 4 * DAY_MS,
    });
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      const { mtime } = statSync(file);
      writeFileSync(file, 'x'.repeat(100));
      utimesSync(file, mtime, mtime);
    }
    await sweepSpillDir(dir, 7 * DAY_MS, new Set([path.join(dir, `${running}.stdout`)]), Date.now(), 250);
    expect(readdirSync(dir).sort()).toEqual([`${newest}.stdout`, `${running}.stdout`].sort());
  });

  it('removes spill files past their retention, keeping fresh ones, running ones and strangers', async () => {
    const old = 'bash-00000000-0000-4000-8000-000000000001';
    const running = 'bash-00000000-0000-4000-8000-000000000002';
    const fresh = 'bash-00000000-0000-4000-8000-000000000003';
    const dir = spillDir({
      [`${old}.stdout`]: 8 * DAY_MS,
      [`${old}.stderr`]: 8 * DAY_MS,
      [`${running}.stdout`]: 8 * DAY_MS,
      [`${fresh}.stdout`]: DAY_MS,
      'notes.txt': 30 * DAY_MS,
    });
    await sweepSpillDir(dir, 7 * DAY_MS, new Set([path.join(dir, `${running}.stdout`)]));
    expect(readdirSync(dir).sort()).toEqual([`${running}.stdout`, `${fresh}.stdout`, 'notes.txt'].sort());
  });

  it("never removes a newer release's task (its records' format is newer than this worker's), even past its retention", async () => {
    const newer = 'bash-00000000-0000-4000-8000-000000000004';
    const old = 'bash-00000000-0000-4000-8000-000000000005';
    const dir = spillDir({
      [`${newer}.stdout`]: 8 * DAY_MS,
      [`${newer}.state`]: 8 * DAY_MS,
      [`${old}.stdout`]: 8 * DAY_MS,
      [`${old}.state`]: 8 * DAY_MS,
    });
    for (const [taskId, format] of [
      [newer, TASK_FILES_FORMAT + 1],
      [old, TASK_FILES_FORMAT],
    ] as const) {
      const file = path.join(dir, `${taskId}.state`);
      writeFileSync(file, `${JSON.stringify({ v: format, tombstone: true, startedAtMs: 0 })}\n`);
      const when = (Date.now() - 8 * DAY_MS) / 1000;
      utimesSync(file, when, when);
    }
    await sweepSpillDir(dir, 7 * DAY_MS, new Set());
    expect(readdirSync(dir).sort()).toEqual([`${newer}.state`, `${newer}.stdout`]);
  });

  it('removes a foreground run marked done after its short keep, the unmarked after the retention', async () => {
    const done = 'bash-00000000-0000-4000-8000-000000000006';
    const recent = 'bash-00000000-0000-4000-8000-000000000007';
    const background = 'bash-00000000-0000-4000-8000-000000000008';
    // Marked the way 0.2.0's workers did: a `.foreground-done` file.
    const doneBefore = 'bash-00000000-0000-4000-8000-000000000009';
    const dir = spillDir({
      [`${done}.stdout`]: 20 * MINUTE_MS,
      [`${done}.exit`]: 20 * MINUTE_MS,
      [`${recent}.stdout`]: 5 * MINUTE_MS,
      [`${recent}.exit`]: 5 * MINUTE_MS,
      [`${background}.stdout`]: 20 * MINUTE_MS,
      [`${background}.exit`]: 20 * MINUTE_MS,
      [`${doneBefore}.stdout`]: 20 * MINUTE_MS,
      [`${doneBefore}.foreground-done`]: 20 * MINUTE_MS,
    });
    markDone(taskFiles(dir, done));
    markDone(taskFiles(dir, recent));
    await sweepSpillDir(dir, 7 * DAY_MS, new Set(), Date.now(), Number.POSITIVE_INFINITY, 15 * MINUTE_MS);
    expect(readdirSync(dir).sort()).toEqual(
      [`${recent}.stdout`, `${recent}.exit`, `${background}.stdout`, `${background}.exit`].sort(),
    );
  });

  it("removes a task's supervisor records with its output, but never while its supervisor lives", async () => {
    const ended = 'bash-00000000-0000-4000-8000-000000000004';
    const live = 'bash-00000000-0000-4000-8000-000000000005';
    const dir = spillDir({
      [`${ended}.stdout`]: 8 * DAY_MS,
      [`${ended}.state`]: 8 * DAY_MS,
      [`${ended}.exit`]: 8 * DAY_MS,
      [`${ended}.attempt`]: 8 * DAY_MS,
      [`${live}.stdout`]: 8 * DAY_MS,
    });
    // A record naming this very process stands for a supervisor that still runs.
    const record = {
      supervisorPid: process.pid,
      supervisorStart: processStart(process.pid),
      bootId: currentBootId(),
      pid: 0,
      pidStart: 0,
      startedAtMs: 0,
    };
    writeFileSync(path.join(dir, `${live}.state`), JSON.stringify(record));
    const old = (Date.now() - 8 * DAY_MS) / 1000;
    utimesSync(path.join(dir, `${live}.state`), old, old);
    await sweepSpillDir(dir, 7 * DAY_MS, new Set());
    expect(readdirSync(dir).sort()).toEqual([`${live}.state`, `${live}.stdout`].sort());
  });

  it('sweeps at most once an interval', async () => {
    const dir = spillDir({});
    const sweeper = new SpillSweeper({
      spillDir: dir,
      spillRetentionMs: DAY_MS,
      spillQuotaBytes: 1e12,
      lostAfterMs: 10 * MINUTE_MS,
    });
    await sweeper.sweepIfDue(1_000_000);
    writeFileSync(path.join(dir, 'bash-0.stdout'), 'x');
    utimesSync(path.join(dir, 'bash-0.stdout'), 0, 0);
    await sweeper.sweepIfDue(1_000_000 + SPILL_SWEEP_INTERVAL_MS - 1);
    expect(readdirSync(dir)).toEqual(['bash-0.stdout']);
    await sweeper.sweepIfDue(Date.now());
    expect(readdirSync(dir)).toEqual([]);
  });

  it("removes the spare attempt records of a worker that is gone and a record it left half-made, never a live worker's spares", async () => {
    const gone = spawnSync('true').pid;
    const task = 'bash-00000000-0000-4000-8000-000000000001';
    const dir = spillDir({
      [`.attempt-spare.${gone}.0`]: 0,
      [`.attempt-spare.${process.pid}.0`]: 8 * DAY_MS,
      [`${task}.stdout`]: 8 * DAY_MS,
      [`${task}.attempt.tmp.${gone}`]: 8 * DAY_MS,
    });
    await sweepSpillDir(dir, 7 * DAY_MS, new Set());
    expect(readdirSync(dir)).toEqual([`.attempt-spare.${process.pid}.0`]);
  });
});
