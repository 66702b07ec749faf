import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AttemptRecords } from '../../../src/command-host/supervisor/attempt-records.js';
import {
  type AttemptRecord,
  readAttempt,
  taskFiles,
} from '../../../src/command-host/supervisor/task-files.js';

const dirs: string[] = [];

function spillDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-attempts-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const record = (taskToken: string): AttemptRecord => ({
  namespace: 'default',
  hostQueue: 'host-q',
  taskToken,
});
const TASK = 'bash-00000000-0000-4000-8000-000000000001';
const OTHER = 'bash-00000000-0000-4000-8000-000000000002';

describe('attempt records', () => {
  it('writes a record as a new file before any spare is made, then through the spares, each used once', async () => {
    const dir = spillDir();
    const records = new AttemptRecords(dir);
    const files = taskFiles(dir, TASK);
    records.remember(files, record('first'));
    expect(await readAttempt(files.attempt)).toEqual(record('first'));
    expect(readdirSync(dir)).toEqual([`${TASK}.attempt`]);

    records.refill();
    const spares = readdirSync(dir).filter((name) => name.startsWith('.attempt-spare.'));
    expect(spares).toEqual([`.attempt-spare.${process.pid}.0`, `.attempt-spare.${process.pid}.1`]);
    expect(statSync(path.join(dir, spares[0] as string)).mode & 0o777).toBe(0o600);

    // A later attempt of the same task replaces its record whole; another task takes the other spare.
    records.remember(files, record('second'));
    records.remember(taskFiles(dir, OTHER), record('other'));
    expect(await readAttempt(files.attempt)).toEqual(record('second'));
    expect(await readAttempt(taskFiles(dir, OTHER).attempt)).toEqual(record('other'));
    expect(readdirSync(dir).sort()).toEqual([`${TASK}.attempt`, `${OTHER}.attempt`]);
    expect(statSync(files.attempt).mode & 0o777).toBe(0o600);
  });

  it('writes a new file when its spare was swept away meanwhile', async () => {
    const dir = spillDir();
    const records = new AttemptRecords(dir);
    records.refill();
    for (const name of readdirSync(dir)) unlinkSync(path.join(dir, name));
    const files = taskFiles(dir, TASK);
    records.remember(files, record('token'));
    expect(JSON.parse(readFileSync(files.attempt, 'utf8'))).toEqual(record('token'));
    expect(readdirSync(dir)).toEqual([`${TASK}.attempt`]);
  });
});
