import { constants } from 'node:fs';
import fs from 'node:fs/promises';
import type { StreamTail } from '../shared/task.js';

/**
 * Creates (or checks) the private spill directory: a real directory, not a link, owned by this
 * process's user, mode 0700.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const stat = await fs.lstat(dir);
  if (!stat.isDirectory()) throw new Error(`spill directory ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new Error(`spill directory ${dir} belongs to another user`);
  if ((stat.mode & 0o777) !== 0o700) await fs.chmod(dir, 0o700);
}

/** Opens a new spill file for writing: created here (never an existing file), no links followed, 0600. */
export function createSpillFile(file: string): Promise<fs.FileHandle> {
  return fs.open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_APPEND,
    0o600,
  );
}

/** The stream's size and its last `maxBytes` bytes, cut at a UTF-8 character boundary. */
export async function readTail(file: string, maxBytes: number): Promise<{ bytes: number; tail: string }> {
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, size - length);
    return { bytes: size, tail: decodeTail(buffer.subarray(0, bytesRead), length < size) };
  } finally {
    await handle.close();
  }
}

/** A stream's tail as a result carries it: the spill path only when the tail is not the whole stream. */
export async function streamTail(file: string, limitBytes: number): Promise<StreamTail> {
  const { bytes, tail } = await readTail(file, limitBytes);
  return bytes > limitBytes ? { bytes, tail, spillPath: file } : { bytes, tail };
}

/** Decodes bytes that may start inside a multi-byte character: a cut start skips continuation bytes. */
function decodeTail(buffer: Buffer, cut: boolean): string {
  let start = 0;
  // UTF-8 continuation bytes look like 0b10xxxxxx; at most three precede a character's end.
  if (cut) while (start < 3 && start < buffer.length && ((buffer[start] ?? 0) & 0xc0) === 0x80) start++;
  return buffer.subarray(start).toString('utf8');
}
