/**
 * Workspace archives too large for one operation (WORKSPACE_TRANSFER_MAX_BYTES), staged on their
 * host as files of the worker's own, one per archive (`<session key>.<id>`): an archive made by
 * `persist` waits there for its caller to fetch it piece by piece, and one sent for `hydrate`
 * gathers there piece by piece before `extract` takes it. A caller that dies midway leaves a file
 * the next staging on the host sweeps once it is WORKSPACE_STAGED_KEEP_MS old.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  WORKSPACE_ARCHIVE_MAX_BYTES,
  WORKSPACE_STAGED_KEEP_MS,
  WORKSPACE_TRANSFER_MAX_BYTES,
} from '../../shared/limits.js';

const STAGED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class StagedArchives {
  constructor(private readonly dir: string) {}

  /** Stages a whole archive under a new id, and answers the id. */
  async put(sessionKey: string, bytes: Uint8Array): Promise<string> {
    await this.prepare();
    const id = randomUUID();
    await fs.writeFile(this.file(sessionKey, id), bytes, { flag: 'wx', mode: 0o600 });
    return id;
  }

  /**
   * Adds a piece at `offset`, which must be the staged size so far: the first piece (offset 0)
   * makes the file, and a piece sent twice or out of order is refused rather than misplaced.
   */
  async append(sessionKey: string, id: string, offset: number, data: Uint8Array): Promise<void> {
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new Error(`stage: invalid offset ${offset}: expected a whole number >= 0`);
    if (data.length > WORKSPACE_TRANSFER_MAX_BYTES)
      throw new Error(
        `stage: ${data.length} bytes is over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes a piece carries`,
      );
    if (offset + data.length > WORKSPACE_ARCHIVE_MAX_BYTES)
      throw new Error(
        `stage: the archive would be over ${WORKSPACE_ARCHIVE_MAX_BYTES} bytes (${offset + data.length})`,
      );
    if (offset === 0) await this.prepare();
    const file = this.file(sessionKey, id);
    const handle = await fs.open(file, offset === 0 ? 'wx' : 'r+', 0o600).catch((err) => {
      throw new Error(missingOrTaken(err, id, offset === 0 ? 'is staged already' : undefined));
    });
    try {
      const { size } = await handle.stat();
      if (size !== offset)
        throw new Error(
          `stage: staged archive ${id} holds ${size} bytes, not the ${offset} this piece follows`,
        );
      await handle.write(data, 0, data.length, offset);
    } finally {
      await handle.close();
    }
  }

  /** The bytes `[start, end)` of a staged archive (fewer at its end). */
  async range(sessionKey: string, id: string, start: number, end: number): Promise<Uint8Array> {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
      throw new Error(`stagedRange: invalid range [${start}, ${end}): expected 0 <= start <= end`);
    if (end - start > WORKSPACE_TRANSFER_MAX_BYTES)
      throw new Error(
        `stagedRange: ${end - start} bytes is over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes a piece carries`,
      );
    const handle = await fs.open(this.file(sessionKey, id), 'r').catch((err) => {
      throw new Error(missingOrTaken(err, id));
    });
    try {
      const buffer = Buffer.alloc(end - start);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
      return new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /** The whole staged archive, removed as it is taken. */
  async take(sessionKey: string, id: string): Promise<Uint8Array> {
    const file = this.file(sessionKey, id);
    const bytes = await fs.readFile(file).catch((err) => {
      throw new Error(missingOrTaken(err, id));
    });
    await fs.rm(file, { force: true });
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Removes a staged archive; one already gone is fine. */
  async remove(sessionKey: string, id: string): Promise<void> {
    await fs.rm(this.file(sessionKey, id), { force: true });
  }

  /** The directory made (0700: the worker's alone), and files a dead caller left swept. */
  private async prepare(nowMs = Date.now()): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const name of await fs.readdir(this.dir)) {
      const file = path.join(this.dir, name);
      const stat = await fs.lstat(file).catch(() => undefined);
      if (stat !== undefined && nowMs - stat.mtimeMs > WORKSPACE_STAGED_KEEP_MS)
        await fs.rm(file, { force: true });
    }
  }

  /** The id checked before it names a file. */
  private file(sessionKey: string, id: string): string {
    if (typeof id !== 'string' || !STAGED_ID.test(id))
      throw new Error(
        `invalid staged archive id ${JSON.stringify(String(id).slice(0, 80))}: expected a UUID`,
      );
    return path.join(this.dir, `${sessionKey}.${id}`);
  }
}

function missingOrTaken(err: unknown, id: string, exists?: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT')
    return `no staged archive ${id} on this host (taken already, or swept ${WORKSPACE_STAGED_KEEP_MS / 60_000} minutes after its last piece)`;
  if (code === 'EEXIST' && exists) return `staged archive ${id} ${exists}`;
  return err instanceof Error ? (err.message.split('\n', 1)[0] ?? '') : String(err);
}
