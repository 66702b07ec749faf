/**
 * Writes to a running command's stdin through the FIFO its supervisor feeds the command from (and a
 * terminal task's resize through its size file), asking the supervisor by signal to take note.
 */
import { constants } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StdinWriteResult, StdinWriteTask } from '../../shared/stdin.js';
import type { TerminalSize } from '../../shared/terminal.js';
import { keyBytes } from '../../shared/terminal-keys.js';
import { writeAtomically } from '../spill/spill-files.js';
import { TerminalLogs } from '../terminal/terminal-logs.js';
import { signalSupervisor } from './process-groups.js';
import { readRecord } from './supervisor-records.js';
import { type TaskFiles, taskFiles } from './task-files.js';

/** How long a write waits for room in a full stdin, or for a command that is being spawned. */
const STDIN_WAIT_MS = 3_000;

/** How often it looks again meanwhile. */
const STDIN_RETRY_MS = 25;

/**
 * Writes to a running command's stdin on its host: into the FIFO its supervisor feeds the command
 * from, without ever blocking (the supervisor holds the FIFO open, so this survives any worker's
 * restart). Answers how many bytes went in; a full stdin (the command is not reading) takes what
 * fits. A close asks the supervisor (SIGUSR2) to close stdin once the FIFO is drained.
 */
export async function writeToStdin(
  spillDir: string,
  terminals: TerminalLogs,
  request: StdinWriteTask,
): Promise<StdinWriteResult> {
  const files = taskFiles(spillDir, request.taskId);
  const deadline = Date.now() + STDIN_WAIT_MS;
  const terminal = TerminalLogs.isTerminal(files);
  if (request.size && !terminal) return { kind: 'no-terminal' };
  const fifo = await openFifo(files, deadline);
  if (typeof fifo === 'string') return { kind: fifo };
  let written = 0;
  try {
    if (request.size && !(await resize(files, request.size))) return { kind: 'ended' };
    // Keys are typed as the terminal's modes ask (its program may have set application cursor keys).
    const keys = request.keys?.length
      ? keyBytes(request.keys, {
          applicationCursor: terminal && (await terminals.applicationCursor(files)),
        })
      : '';
    const text = Buffer.from(request.text + keys);
    while (written < text.length) {
      const step = await fifo.write(text, written, text.length - written).then(
        ({ bytesWritten }) => bytesWritten,
        (err: NodeJS.ErrnoException) => {
          // EAGAIN: full. EPIPE: the supervisor let go of the FIFO meanwhile (stdin closed, or the end).
          if (err.code === 'EAGAIN') return 0;
          if (err.code === 'EPIPE') return -1;
          throw err;
        },
      );
      if (step < 0)
        return written === 0 ? { kind: 'closed' } : { kind: 'partial', bytes: written, total: text.length };
      written += step;
      if (step === 0) {
        if (Date.now() >= deadline) return { kind: 'partial', bytes: written, total: text.length };
        await sleep(STDIN_RETRY_MS);
      }
    }
  } finally {
    await fifo.close();
  }
  // The supervisor closes it once what the FIFO holds has gone in (the command may still read it).
  const closed = request.close && (await closeStdin(files));
  if (request.close && !closed && written === 0) return { kind: 'ended' };
  return { kind: 'written', bytes: written, closed };
}

/**
 * Sets a terminal task's size: the size file its supervisor reads, then SIGWINCH to the supervisor,
 * which resizes the terminal (the kernel tells the program) and records the size in the log's
 * events. False when no supervisor is there to ask.
 */
async function resize(files: TaskFiles, size: TerminalSize): Promise<boolean> {
  const record = await readRecord(files.state);
  if (record === undefined) return false;
  await writeAtomically(files.ttySize, `${size.cols}x${size.rows}\n`);
  return signalSupervisor(record, 'SIGWINCH');
}

/** Asks the task's supervisor to close the command's stdin; false when no supervisor is there to ask. */
async function closeStdin(files: TaskFiles): Promise<boolean> {
  const record = await readRecord(files.state);
  return record !== undefined && signalSupervisor(record, 'SIGUSR2');
}

/**
 * Opens the task's stdin FIFO for a non-blocking write, or says why there is none: the command
 * ended, its stdin was closed, or it has not started yet (waited for until `deadline`). The
 * supervisor makes the FIFO before it names the command in its record: a failed open says closed
 * only when the record named the command before it.
 */
async function openFifo(
  files: TaskFiles,
  deadline: number,
): Promise<FileHandle | 'ended' | 'closed' | 'not-started'> {
  // The record named the command before the last failed open: the FIFO was ready by then.
  let namedBeforeOpen = false;
  for (;;) {
    const handle = await fs
      .open(files.stdin, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
      .catch((err: NodeJS.ErrnoException) => {
        // ENXIO: no reader holds it. Either the supervisor has made it and is about to open it (it
        // names the command in its record only after), or it let go of it: the record says which.
        if (err.code === 'ENOENT' || err.code === 'ENXIO') return undefined;
        throw err;
      });
    if (handle !== undefined) {
      if ((await handle.stat()).isFIFO()) return handle;
      await handle.close();
      throw new Error(`${files.stdin} is not a named pipe; refusing to write to it`);
    }
    const exited = await fs.access(files.exit).then(
      () => true,
      () => false,
    );
    if (exited) return 'ended';
    const record = await readRecord(files.state);
    if (record?.tombstone) return 'ended';
    if (record !== undefined && record.pid > 0) {
      if (namedBeforeOpen) return 'closed';
      // Named only after the open failed: the supervisor may have made the FIFO in between (it
      // names the command after). Once more, so a write right after a start never finds it closed.
      namedBeforeOpen = true;
      continue;
    }
    if (Date.now() >= deadline) return 'not-started';
    await sleep(STDIN_RETRY_MS);
  }
}
