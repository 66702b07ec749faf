/**
 * A read of a task's output on its host, as the read activity serves it: the bytes its spill files
 * hold past the reader's position (or a terminal task's screen), up to where a read may end, waiting
 * for more when there is nothing new.
 */
import type { FileHandle } from 'node:fs/promises';
import os from 'node:os';
import { HOST_READ_POLL_MS } from '../../shared/limits.js';
import type {
  HostRead,
  HostReadRequest,
  ReadPosition,
  StreamRead,
  TerminalReadMode,
} from '../../shared/read-position.js';
import { decodeText, readableEnd } from '../../shared/stream-text.js';
import type { AttachedTasks } from '../attached-tasks.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import { hostMetrics } from '../host-metrics.js';
import { readEnd } from '../supervisor/supervisor-records.js';
import { type TaskFiles, taskFiles } from '../supervisor/task-files.js';
import { TerminalLogs } from '../terminal/terminal-logs.js';
import { closeReaders, openReaders, readRange, type SpillReaders } from './spill-files.js';
import { SpillWatch } from './spill-watch.js';

type StreamName = 'stdout' | 'stderr';
const STREAMS: readonly StreamName[] = ['stdout', 'stderr'];

/** What a read needs of the executor config. */
type ReadConfig = Pick<CompiledExecutorOptions, 'spillDir' | 'outputLimitBytes'>;

/**
 * Reads a running task's output from its spill files, on the command's own host: what a
 * `bash_output` call gets, fresh, at the cost of one activity, so heartbeats need not carry output.
 * With nothing new past `from`, waits up to `waitMs` for output or the command's end (a file watch
 * wakes it, a poll backs the watch up). Returns at most the worker's output limit of each stream:
 * the newest bytes, with the count of those it left out. A running command's unfinished last
 * character (and, with `wholeLines`, its unfinished last line) stays for a later read; once the
 * command has ended, everything is read.
 */
export async function readHostOutput(
  config: ReadConfig,
  attached: AttachedTasks,
  request: HostReadRequest,
): Promise<HostRead> {
  const files = taskFiles(config.spillDir, request.taskId);
  const readers = await openReaders(files);
  const wake = new SpillWatch(files.stdout, files.stderr);
  try {
    const deadline = Date.now() + Math.max(0, request.waitMs);
    for (;;) {
      // The end first: output written before it is all in the files once it is recorded.
      const ended = (await readEnd(files.exit)) !== undefined;
      const upTo = await readableUpTo(readers, request, ended, config.outputLimitBytes);
      const grew = STREAMS.some((stream) => upTo[stream] > request.from[stream]);
      if (grew || ended || Date.now() >= deadline) {
        const mode = request.terminal ?? 'screen';
        const read =
          mode !== 'raw' && TerminalLogs.isTerminal(files)
            ? await terminalRead(files, request, mode, ended, attached.terminals, config.outputLimitBytes)
            : await bytesRead(readers, files, request.from, upTo, ended, config);
        hostMetrics.readServed();
        return read;
      }
      await wake.next(Math.min(HOST_READ_POLL_MS, deadline - Date.now()));
    }
  } finally {
    wake.close();
    await closeReaders(readers);
  }
}

/** A read of the streams' bytes `[from, upTo)`, at most the output limit of each. */
async function bytesRead(
  readers: SpillReaders,
  files: TaskFiles,
  from: ReadPosition,
  upTo: ReadPosition,
  ended: boolean,
  config: ReadConfig,
): Promise<HostRead> {
  const [stdout, stderr] = await Promise.all(
    STREAMS.map((stream) => streamRead(readers[stream], files[stream], from[stream], upTo[stream], config)),
  );
  return { upTo, stdout: stdout as StreamRead, stderr: stderr as StreamRead, host: os.hostname(), ended };
}

/**
 * A terminal task's read: the screen after all of its log (rendered here, from the checkpoint on),
 * and for `scrollback` the lines that scrolled off since `from`. The position moves to the end of
 * the log the screen shows; the log's bytes stay in the spill file (`durable-bash logs --raw`).
 */
async function terminalRead(
  files: TaskFiles,
  request: HostReadRequest,
  mode: TerminalReadMode,
  ended: boolean,
  terminals: TerminalLogs,
  limitBytes: number,
): Promise<HostRead> {
  const render = await terminals.render(files, {
    read: true,
    // What scrolled off is held to the output limit, as a stream's read is: the newest lines.
    ...(mode === 'scrollback' ? { scrolledFrom: request.from.stdout, limitChars: limitBytes } : {}),
  });
  const nothing = (file: string): StreamRead => ({ text: '', droppedBytes: 0, spillPath: file });
  return {
    upTo: { stdout: Math.max(request.from.stdout, render.fed), stderr: request.from.stderr },
    stdout: nothing(files.stdout),
    stderr: nothing(files.stderr),
    host: os.hostname(),
    ended,
    terminal: {
      screen: render.screen,
      ...(render.scrolledOff ? { scrolledOff: render.scrolledOff } : {}),
    },
  };
}

/**
 * How far a read may take each stream: to its end once the command ended; else not into an
 * unfinished character, and with `wholeLines` not into an unfinished line (a line longer than the
 * output limit is taken as it is). Never back before `from`.
 */
async function readableUpTo(
  readers: SpillReaders,
  request: HostReadRequest,
  ended: boolean,
  limitBytes: number,
): Promise<{ stdout: number; stderr: number }> {
  const upTo = async (stream: StreamName): Promise<number> => {
    const from = request.from[stream];
    const { size } = await readers[stream].stat();
    if (size <= from) return from;
    if (ended) return size;
    const start = Math.max(from, size - limitBytes);
    return readableEnd(await readRange(readers[stream], start, size), start, from, request.wholeLines);
  };
  const [stdout, stderr] = await Promise.all([upTo('stdout'), upTo('stderr')]);
  return { stdout, stderr };
}

/** The bytes `[start, upTo)` a read of `[from, upTo)` keeps (the newest, up to the limit), as it shows them. */
export function streamReadOf(bytes: Buffer, start: number, from: number, spillPath: string): StreamRead {
  return { text: decodeText(bytes, start > from), droppedBytes: start - from, spillPath };
}

/** The bytes `[from, upTo)` of a stream as a read shows them: the newest `outputLimitBytes`, decoded. */
async function streamRead(
  handle: FileHandle,
  file: string,
  from: number,
  upTo: number,
  config: ReadConfig,
): Promise<StreamRead> {
  const start = Math.max(from, upTo - config.outputLimitBytes);
  const bytes = upTo > start ? await readRange(handle, start, upTo) : Buffer.alloc(0);
  return streamReadOf(bytes, start, from, file);
}
