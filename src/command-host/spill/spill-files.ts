/**
 * A task's spill files on its host, the one place they are opened: the private directory, the
 * command's writers and the readers' handles, and reads of their bytes and tails.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { chmodSync, constants, fstatSync, lstatSync, mkdirSync, readSync, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/activity';
import { RunFailureType, type StreamTail } from '../../shared/task.js';

/**
 * Creates (or checks) the private spill directory: a real directory, not a link, owned by this
 * process's user, writable by no one else; one only readable by others is made 0700. Anything else
 * is refused in one line, and not retried: another user could plant or read a task's files there.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  // Synchronous: every attempt checks it, and each call takes microseconds, where an asynchronous
  // one waits for libuv's thread pool (see task-files.ts).
  let mkdirFailure: unknown;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    mkdirFailure = err;
  }
  const stat = lstatSync(dir, { throwIfNoEntry: false });
  // A dangling link fails mkdir (ENOENT), and lstat shows what is there; otherwise mkdir's error stands.
  if (stat === undefined) throw mkdirFailure;
  const problem = unsafeDirProblem(stat);
  if (problem !== undefined) {
    throw ApplicationFailure.create({
      type: RunFailureType.unsafeSpillDirectory,
      message: `spill directory ${dir} ${problem}; refusing to use it`,
      nonRetryable: true,
    });
  }
  if ((stat.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/** What makes a directory (as lstat saw it) unsafe for spill files, or undefined. */
function unsafeDirProblem(stat: Stats): string | undefined {
  if (stat.isSymbolicLink()) return 'is a symbolic link';
  if (!stat.isDirectory()) return 'is not a directory';
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `belongs to another user (uid ${stat.uid})`;
  if ((stat.mode & 0o022) !== 0)
    return `is writable by its group or others (mode 0${(stat.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * Opens a spill file for the command's writes: created here with mode 0600, or the one an attempt
 * that died before starting anything left (no supervisor claimed the task, so nothing wrote it).
 * Links are never followed, and only a regular file of this user is accepted.
 */
export async function openSpillWriter(file: string): Promise<fs.FileHandle> {
  const handle = await fs.open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_APPEND,
    0o600,
  );
  const stat = await handle.stat();
  const uid = process.getuid?.();
  if (!stat.isFile() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    await handle.close();
    throw new Error(`spill file ${file} is not a private regular file of this user`);
  }
  return handle;
}

/** Opens a spill file for reading. Readers keep the handle, so an unlinked file stays readable. */
export function openSpillReader(file: string): Promise<fs.FileHandle> {
  return fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/** Read handles on a task's spill files: they keep working if a file is unlinked. */
export interface SpillReaders {
  stdout: fs.FileHandle;
  stderr: fs.FileHandle;
}

/**
 * Opens both of a task's spill files for reading. One that is gone (a foreground run removes the
 * files its result does not name; a sweep removes old ones) reads as empty: the end is still known.
 */
export async function openReaders(files: { stdout: string; stderr: string }): Promise<SpillReaders> {
  // Both at once: each open waits for libuv's thread pool, and one after the other doubled that
  // wait on every command's start.
  const [stdout, stderr] = await Promise.allSettled([openOrEmpty(files.stdout), openOrEmpty(files.stderr)]);
  if (stdout.status === 'fulfilled' && stderr.status === 'fulfilled')
    return { stdout: stdout.value, stderr: stderr.value };
  await Promise.all(
    [stdout, stderr].map((opened) => (opened.status === 'fulfilled' ? opened.value.close() : undefined)),
  );
  throw stdout.status === 'rejected' ? stdout.reason : (stderr as PromiseRejectedResult).reason;
}

async function openOrEmpty(file: string): Promise<fs.FileHandle> {
  try {
    return await openSpillReader(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return fs.open('/dev/null', 'r');
  }
}

/**
 * The bytes `[start, end)` of one spill file (fewer when the file is shorter, none past its end):
 * a process handle's ranged read. Undefined when the file is not there (never written, or swept
 * after the retention).
 */
export async function readSpillRange(file: string, start: number, end: number): Promise<Buffer | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await openSpillReader(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return await readRange(handle, start, end);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

export async function closeReaders(readers: SpillReaders): Promise<void> {
  await Promise.all([
    readers.stdout.close().catch(() => undefined),
    readers.stderr.close().catch(() => undefined),
  ]);
}

/**
 * The stream's size and its last `maxBytes` bytes, raw. Synchronous, on the handle's descriptor: a
 * tail is bounded (the output limit, a heartbeat's tail) and just written, so in the page cache,
 * and the calls take microseconds where each asynchronous one waited for libuv's thread pool
 * (0.1-0.2 ms, twice for each stream, on the way from a command's end to its result).
 */
export function readTail(handle: fs.FileHandle, maxBytes: number): { bytes: number; tail: Buffer } {
  const { size } = fstatSync(handle.fd);
  const length = Math.min(size, maxBytes);
  const buffer = Buffer.alloc(length);
  const bytesRead = length === 0 ? 0 : readSync(handle.fd, buffer, 0, length, size - length);
  return { bytes: size, tail: buffer.subarray(0, bytesRead) };
}

/**
 * A stream's tail as results and progress carry it, read through `handle` and named by `file`.
 * `namePath` says whether to name the spill file even when the tail holds all of the stream
 * (progress does: the stream may grow past it).
 */
export function streamTail(
  handle: fs.FileHandle,
  file: string,
  limitBytes: number,
  namePath = false,
): StreamTail {
  const { bytes, tail } = readTail(handle, limitBytes);
  return namedTail(bytes, tail, file, namePath);
}

/** `tailOf`, naming the spill file `file` when the tail is not all of the stream, or always with `namePath`. */
export function namedTail(bytes: number, tail: Buffer, file: string, namePath = false): StreamTail {
  const held = tailOf(bytes, tail);
  return namePath || bytes > tail.length ? { ...held, spillPath: file } : held;
}

/**
 * A stream's last bytes as a tail carries them: as text when they are valid UTF-8 once the bytes of
 * a character cut at the start are left out, else base64 (binary output).
 */
export function tailOf(bytes: number, tail: Buffer): StreamTail {
  let start = 0;
  // UTF-8 continuation bytes look like 0b10xxxxxx; at most three begin a tail cut inside a character.
  if (tail.length < bytes)
    while (start < 3 && start < tail.length && ((tail[start] ?? 0) & 0xc0) === 0x80) start++;
  const text = tail.subarray(start);
  return isUtf8(text)
    ? { bytes, tail: text.toString('utf8') }
    : { bytes, tailBase64: tail.toString('base64') };
}

/** The bytes `[start, end)` of an open file (fewer when it ends before `end`). */
export async function readRange(handle: fs.FileHandle, start: number, end: number): Promise<Buffer> {
  const buffer = Buffer.alloc(end - start);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
  return buffer.subarray(0, bytesRead);
}

/**
 * Writes a task's small file whole, private to this user: to a unique temporary name, then renamed
 * over it (another worker process may write the same file at once).
 */
export async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
  await fs.writeFile(temporary, text, { mode: 0o600 });
  await fs.rename(temporary, file);
}
