/**
 * Answers a terminal program's cursor-position queries (`CSI 6 n`, and DEC's `CSI ? 6 n`) while a
 * worker follows its task: the answer needs the screen, which only the worker's emulator has (the
 * supervisor answers the other queries, with or without a worker; docs/TERMINALS.md). A program
 * that asks waits for the answer before it writes on, so the log's end is where it asked: the
 * cursor after the whole log is the cursor it asked about. The answer is typed into the terminal
 * through the task's stdin FIFO, as a terminal's own answer comes in on its input.
 */
import { constants, type FSWatcher, watch } from 'node:fs';
import fs from 'node:fs/promises';
import { readRange } from '../spill/spill-files.js';
import type { TaskFiles } from '../supervisor/task-files.js';
import type { TerminalLogs } from './terminal-logs.js';

/** How often the log is looked at when no file event came (a host out of inotify watches). */
const POLL_MS = 250;

/** The longest query: a match may start this many bytes before the bytes read last. */
const OVERLAP_BYTES = 4;

/** The most of the log one look reads. */
const MAX_SCAN_BYTES = 1 << 20;

/** `CSI 6 n` and `CSI ? 6 n` (ESC joined in: a control character in a regex literal reads as a typo). */
const QUERY = new RegExp(`${String.fromCharCode(0x1b)}\\[\\??6n`, 'g');

/**
 * Follows the task's log; `stop` ends it. From its start when this worker just started the command
 * (it may have asked already); from its end now when re-attaching, since a query before it may
 * have been answered by the worker before (a second answer would be typed into the program).
 */
export async function answerCursorQueries(
  files: TaskFiles,
  terminals: TerminalLogs,
  fromStart: boolean,
): Promise<() => void> {
  let scanned = fromStart ? 0 : ((await fs.stat(files.stdout).catch(() => undefined))?.size ?? 0);
  let stopped = false;
  let busy = false;
  let again = false;
  let poll: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;

  const look = async (): Promise<void> => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const { size } = await fs.stat(files.stdout);
        if (size <= scanned) continue;
        // A scan that fell far behind looks at the last of it only: a program waits for its answer.
        const from = Math.max(0, scanned - OVERLAP_BYTES, size - MAX_SCAN_BYTES);
        const bytes = await readLog(files.stdout, from, size);
        // Only queries that end past what was scanned before: each is answered once.
        const asked = [...bytes.toString('latin1').matchAll(QUERY)].filter(
          (match) => from + match.index + match[0].length > scanned,
        );
        scanned = size;
        if (asked.length === 0 || stopped) continue;
        const { screen } = await terminals.render(files);
        const answer = asked
          .map(
            (match) =>
              `\x1b[${match[0].includes('?') ? '?' : ''}${screen.cursor.row};${screen.cursor.column}R`,
          )
          .join('');
        await typeIn(files.stdin, answer);
      } while (again && !stopped);
    } catch {
      // A log or FIFO gone (the command ended): nothing to answer.
    } finally {
      busy = false;
    }
  };

  try {
    watcher = watch(files.stdout, { persistent: false }, () => void look());
    watcher.on('error', () => watcher?.close());
  } catch {
    // No watch: the poll alone.
  }
  const tick = () => {
    poll = setTimeout(() => {
      void look().finally(() => {
        if (!stopped) tick();
      });
    }, POLL_MS);
    poll.unref();
  };
  tick();
  void look();
  return () => {
    stopped = true;
    clearTimeout(poll);
    watcher?.close();
  };
}

async function readLog(file: string, start: number, end: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    return await readRange(handle, start, end);
  } finally {
    await handle.close();
  }
}

/** Writes `text` to the FIFO the supervisor types from, never blocking (an answer is a few bytes). */
async function typeIn(fifo: string, text: string): Promise<void> {
  const handle = await fs.open(fifo, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    if ((await handle.stat()).isFIFO()) await handle.write(text);
  } finally {
    await handle.close();
  }
}
