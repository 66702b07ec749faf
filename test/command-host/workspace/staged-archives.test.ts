// Staged workspace archives on a host: pieces in order only, a range read back, taken once, and a
// dead caller's leftovers swept an hour on. Real files in a scratch directory.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StagedArchives } from '../../../src/command-host/workspace/staged-archives.js';
import { WORKSPACE_STAGED_KEEP_MS, WORKSPACE_TRANSFER_MAX_BYTES } from '../../../src/shared/limits.js';

const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-staged-')), 'staged');
const staged = new StagedArchives(dir);
const key = 'a'.repeat(32);
const bytes = (s: string) => new Uint8Array(Buffer.from(s));
const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');

afterAll(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

describe('StagedArchives', () => {
  it('gathers pieces in order, reads a range back, and is taken once', async () => {
    const id = randomUUID();
    await staged.append(key, id, 0, bytes('hello '));
    await staged.append(key, id, 6, bytes('world'));
    expect(text(await staged.range(key, id, 3, 8))).toBe('lo wo');
    expect(text(await staged.range(key, id, 6, 100))).toBe('world');
    expect(text(await staged.take(key, id))).toBe('hello world');
    await expect(staged.take(key, id)).rejects.toThrow(
      `no staged archive ${id} on this host (taken already, or swept 60 minutes after its last piece)`,
    );
  });

  it('refuses a piece sent twice or out of order, a second first piece, and a piece over what one carries', async () => {
    const id = randomUUID();
    await staged.append(key, id, 0, bytes('abc'));
    await expect(staged.append(key, id, 0, bytes('abc'))).rejects.toThrow(
      `staged archive ${id} is staged already`,
    );
    await expect(staged.append(key, id, 1, bytes('x'))).rejects.toThrow(
      `stage: staged archive ${id} holds 3 bytes, not the 1 this piece follows`,
    );
    await expect(staged.append(key, id, 3, new Uint8Array(WORKSPACE_TRANSFER_MAX_BYTES + 1))).rejects.toThrow(
      `over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes a piece carries`,
    );
    await expect(staged.append(key, randomUUID(), 5, bytes('x'))).rejects.toThrow(/no staged archive/);
    expect(text(await staged.take(key, id))).toBe('abc');
  });

  it('is its session key and id alone: another session finds nothing, and a name that is no UUID is refused', async () => {
    const id = await staged.put(key, bytes('mine'));
    await expect(staged.range('b'.repeat(32), id, 0, 4)).rejects.toThrow(/no staged archive/);
    await expect(staged.range(key, '../../etc/passwd', 0, 4)).rejects.toThrow(
      'invalid staged archive id "../../etc/passwd": expected a UUID',
    );
    await staged.remove(key, id);
    await staged.remove(key, id);
  });

  it('sweeps what a dead caller left once it is older than the keep, at the next staging', async () => {
    const old = await staged.put(key, bytes('left'));
    const fresh = await staged.put(key, bytes('fresh'));
    const past = (Date.now() - WORKSPACE_STAGED_KEEP_MS - 60_000) / 1000;
    utimesSync(path.join(dir, `${key}.${old}`), past, past);
    const next = await staged.put(key, bytes('next'));
    expect(readdirSync(dir).sort()).toEqual([`${key}.${fresh}`, `${key}.${next}`].sort());
  });
});
