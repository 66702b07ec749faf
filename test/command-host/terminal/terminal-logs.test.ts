/** A terminal task's screen on its host: one emulator per task, its checkpoint file, scrolled-off lines. */
import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskFiles } from '../../../src/command-host/supervisor/task-files.js';
import { TerminalLogs } from '../../../src/command-host/terminal/terminal-logs.js';

function terminalTask(log: string, sizes = '0 20x3\n') {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-terminal-logs-'));
  const files = taskFiles(dir, 'bash-00000000-0000-4000-8000-000000000001');
  writeFileSync(files.stdout, log);
  writeFileSync(files.ttyEvents, sizes);
  return files;
}

describe("a terminal task's screen on its host", () => {
  it('feeds each byte once, however many renders and ends come at once, in one instance or two', async () => {
    const files = terminalTask('slow\r\n');
    const [one, two] = [new TerminalLogs(), new TerminalLogs()];
    const results = await Promise.all([
      one.render(files),
      one.render(files),
      two.render(files),
      one.end(files, 1_000),
    ]);
    for (const result of results) expect(result.screen.lines).toEqual(['slow', '', '']);
    // A new worker goes on from the checkpoint file to the same screen.
    expect((await new TerminalLogs().end(files, 1_000)).screen.cursor).toEqual({ row: 2, column: 1 });
  });

  it('saves a checkpoint every 64 KiB, cut before an unfinished escape sequence, and goes on from it', async () => {
    const filler = 'x'.repeat(70 * 1024);
    const files = terminalTask(`${filler}\x1b[2J\x1b[Hone\r\ntwo\x1b[1`);
    await new TerminalLogs().render(files);
    const checkpoint = JSON.parse(readFileSync(files.screen, 'utf8')) as { fed: number };
    // Cut where the unfinished `ESC [ 1` begins: a restored emulator knows nothing of its start.
    expect(checkpoint.fed).toBe(statSync(files.stdout).size - 3);
    appendFileSync(files.stdout, ';1HX');
    const { screen } = await new TerminalLogs().render(files);
    expect(screen.lines).toEqual(['Xne', 'two', '']);
  });

  it('gives the lines that scrolled off since a read position, and what scrolled off by the end', async () => {
    const files = terminalTask(Array.from({ length: 6 }, (_, i) => `line ${i + 1}\r\n`).join(''));
    const logs = new TerminalLogs();
    const first = await logs.render(files, { read: true, scrolledFrom: 0 });
    expect(first.scrolledOff).toEqual({ lines: ['line 1', 'line 2', 'line 3', 'line 4'], missing: 0 });
    appendFileSync(files.stdout, 'line 7\r\nline 8\r\n');
    // A new worker (its own instance) knows where the last read ended: the marks are on disk.
    const next = await new TerminalLogs().render(files, {
      read: true,
      scrolledFrom: first.fed,
      limitChars: 6,
    });
    expect(next.scrolledOff).toEqual({ lines: ['line 6'], missing: 1 });
    const end = await new TerminalLogs().end(files, 1_000);
    expect(end.scrolledOff).toBe('line 1\nline 2\nline 3\nline 4\nline 5\nline 6');
    expect(end.screen.lines).toEqual(['line 7', 'line 8', '']);
  });

  it('takes no checkpoint in a state it cannot restore, and restores the saved cursor', async () => {
    const filler = 'x'.repeat(70 * 1024);
    // A scroll region (rows 2-3, as a progress bar keeps its last row) and DEC line drawing.
    const files = terminalTask(`${filler}\x1b[2J\x1b[H\x1b[2;3r\x1b(0qqq`, '0 20x4\n');
    await new TerminalLogs().render(files);
    expect(() => readFileSync(files.screen)).toThrow();
    appendFileSync(files.stdout, '\x1b(B\x1b[r\x1b[3;5H\x1b7\x1b[1;1H');
    const logs = new TerminalLogs();
    await logs.end(files, 1_000);
    // Saved now (the region and the character set are back to normal), with the saved cursor.
    appendFileSync(files.stdout, '\x1b8Z');
    const restored = await new TerminalLogs().end(files, 1_000);
    expect(restored.screen.lines).toEqual(['───', '', '    Z', '']);
  });
});
