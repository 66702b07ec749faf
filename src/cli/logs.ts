import os from 'node:os';
import type { BashTasks } from '../client/bash-tasks.js';
import type { TaskSnapshot } from '../client/task-snapshot.js';
import type { ReadPosition, StreamRead } from '../shared/read-position.js';
import { nameSpillFile } from '../shared/render.js';
import { renderScreen, SCREEN_UNAVAILABLE } from '../shared/render-screen.js';
import { shownLine } from '../shared/shown-text.js';
import { statusLine } from '../shared/status-line.js';
import { heldBytes, tailBytes } from '../shared/stream-text.js';
import type { StreamTail } from '../shared/task.js';
import type { ServerOptions } from './options.js';
import { withTasks } from './with-client.js';

export interface LogsFlags extends ServerOptions {
  owner: string;
  follow?: boolean;
  /** A terminal task's bytes rather than its screen. */
  raw?: boolean;
}

/** How often `logs --follow` asks the server again when the task's host does not answer. */
const LOGS_POLL_MS = 250;

/** How long one read of `logs --follow` waits on the task's host for new output. */
const FOLLOW_WAIT_MS = 10_000;

/**
 * `durable-bash logs <id>`: the task's output as the server holds it (from the start when it still
 * holds that), then what its host has past that (a running task), the task's stdout on stdout and
 * its stderr on stderr; with --follow, new output until the task ends, read on the task's host as
 * it is printed; then its status line. An operator's view: it never moves `bash_output`'s position.
 * The output is the task's bytes as it printed them; the lines logs adds (the status line, a note
 * of bytes left out) are in the shown form, as a failure's reason may quote what the model gave.
 */
export function runLogs(taskId: string, flags: LogsFlags): Promise<number> {
  return withTasks(flags, async (tasks) => {
    let interrupted = false;
    const onSigint = () => {
      interrupted = true;
    };
    process.once('SIGINT', onSigint);
    try {
      let shown: ReadPosition = { stdout: 0, stderr: 0 };
      let snapshot = await tasks.snapshot(taskId, flags.owner);
      // A terminal task's screen, as bash_output shows it. Following, its bytes: the operator's own
      // terminal renders them as they come.
      if (snapshot.onTerminal && !flags.raw && !flags.follow) {
        process.stdout.write(`${await screenOf(tasks, taskId, flags.owner, snapshot)}\n`);
        process.stderr.write(`${shownLine(statusLine(snapshot.state))}\n`);
        return 0;
      }
      for (;;) {
        shown = {
          stdout: await writeNew('stdout', snapshot, snapshot.stdout, shown.stdout, process.stdout),
          stderr: await writeNew('stderr', snapshot, snapshot.stderr, shown.stderr, process.stderr),
        };
        if (snapshot.final || interrupted) break;
        // Fresh output from the host, as `bash_output` reads it (the server's snapshot may be a
        // heartbeat a minute old); with --follow, waiting there for more.
        const peeked = await tasks.peek(taskId, flags.owner, shown, flags.follow ? FOLLOW_WAIT_MS : 0);
        if (peeked !== undefined) {
          shown = {
            stdout: await writePeeked(
              'stdout',
              peeked.stdout,
              peeked.host,
              process.stdout,
              shown.stdout,
              peeked.upTo.stdout,
            ),
            stderr: await writePeeked(
              'stderr',
              peeked.stderr,
              peeked.host,
              process.stderr,
              shown.stderr,
              peeked.upTo.stderr,
            ),
          };
          if (!flags.follow) break;
          if (!peeked.ended && !interrupted) continue;
        } else {
          if (!flags.follow) break;
          await new Promise((resolve) => setTimeout(resolve, LOGS_POLL_MS));
        }
        snapshot = await tasks.snapshot(taskId, flags.owner);
      }
      if (interrupted) return 130;
      process.stderr.write(`${shownLine(statusLine(snapshot.state))}\n`);
      return 0;
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}

/** A terminal task's screen: its last, once it ended; else as its host renders it now. */
async function screenOf(
  tasks: BashTasks,
  taskId: string,
  owner: string,
  snapshot: TaskSnapshot,
): Promise<string> {
  if (snapshot.terminal) return renderScreen(snapshot.terminal.screen);
  const peeked = await tasks.peek(taskId, owner, { stdout: 0, stderr: 0 }, 0, 'screen');
  return peeked?.terminal ? renderScreen(peeked.terminal.screen) : SCREEN_UNAVAILABLE;
}

/** Writes the bytes of `stream` after `from` that the snapshot holds; notes a gap it no longer holds. */
async function writeNew(
  name: 'stdout' | 'stderr',
  snapshot: TaskSnapshot,
  stream: StreamTail,
  from: number,
  out: NodeJS.WritableStream,
): Promise<number> {
  const { bytes, droppedBytes } = heldBytes(stream, tailBytes(stream), from, stream.bytes);
  if (droppedBytes > 0) {
    const file = nameSpillFile(stream.spillPath, snapshot.host, os.hostname());
    process.stderr.write(
      `[${droppedBytes} bytes of ${name} not held by the server; full output: ${shownLine(file)}]\n`,
    );
  }
  if (bytes.length > 0) await new Promise<void>((resolve) => out.write(bytes, () => resolve()));
  return Math.max(from, stream.bytes);
}

/** Writes what a peek on the host read of one stream; notes the bytes it left out (over the output limit). */
async function writePeeked(
  name: 'stdout' | 'stderr',
  read: StreamRead,
  host: string,
  out: NodeJS.WritableStream,
  from: number,
  upTo: number,
): Promise<number> {
  if (read.droppedBytes > 0) {
    const file = nameSpillFile(read.spillPath, host, os.hostname());
    process.stderr.write(
      `[${read.droppedBytes} bytes of ${name} left out; full output: ${shownLine(file)}]\n`,
    );
  }
  if (read.text !== '') await new Promise<void>((resolve) => out.write(read.text, () => resolve()));
  return Math.max(from, upTo);
}
