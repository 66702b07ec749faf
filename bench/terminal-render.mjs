// What rendering a terminal task's screen costs its host (docs/TERMINALS.md), the worker and
// Temporal left out: the emulator (src/command-host/terminal/terminal-logs.ts) fed a 10 MB log of a build's
// coloured lines and progress bar at 120x40, and then
//
//   - first render: the whole log, from nothing (a task's first read);
//   - from the checkpoint file: 1 KB more, by a new instance (a restarted worker's first read);
//   - in memory: 30 bytes more, by the instance that rendered last (each later read);
//   - the checkpoint file's size, and the process's RSS after all of it.
//
// Each is the median of `--samples N` (default 5) runs. `node bench/terminal-render.mjs` prints
// JSON; `npm run bench` (full) runs it and writes its table to BENCHMARKS.md.
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { taskFiles } = await import(path.join(root, 'dist/command-host/supervisor/task-files.js'));
const { TerminalLogs } = await import(path.join(root, 'dist/command-host/terminal/terminal-logs.js'));

const at = process.argv.indexOf('--samples');
const samples = at >= 0 ? Number(process.argv[at + 1]) : 5;
const LOG_BYTES = 10e6;

let block = '';
for (let i = 0; i < 1000; i++)
  block += `\x1b[32mcompiling\x1b[0m module ${i} ${'.'.repeat(60)}\r\n\x1b[2K[${'#'.repeat(i % 40)}] ${i}%\r`;

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const timed = async (fn) => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};

const first = [];
const fromCheckpoint = [];
const inMemory = [];
let logBytes = 0;
let checkpointBytes = 0;
for (let sample = 0; sample < samples; sample++) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-terminal-bench-'));
  const files = taskFiles(dir, `bash-00000000-0000-4000-8000-${String(sample).padStart(12, '0')}`);
  writeFileSync(files.stdout, '');
  for (let written = 0; written < LOG_BYTES; written += block.length) appendFileSync(files.stdout, block);
  writeFileSync(files.ttyEvents, '0 120x40\n');
  logBytes = statSync(files.stdout).size;
  first.push(await timed(() => new TerminalLogs().render(files)));
  appendFileSync(files.stdout, 'one more line\r\n'.repeat(70));
  const logs = new TerminalLogs();
  fromCheckpoint.push(await timed(() => logs.render(files)));
  appendFileSync(files.stdout, 'x\r\n'.repeat(10));
  inMemory.push(await timed(() => logs.render(files)));
  checkpointBytes = statSync(files.screen).size;
  logs.forget(files.taskId);
  rmSync(dir, { recursive: true, force: true });
}
const ms = (value) => Math.round(value * 10) / 10;
process.stdout.write(
  `${JSON.stringify({
    samples,
    logBytes,
    firstRenderMs: ms(median(first)),
    fromCheckpointMs: ms(median(fromCheckpoint)),
    inMemoryMs: ms(median(inMemory)),
    checkpointBytes,
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  })}\n`,
);
