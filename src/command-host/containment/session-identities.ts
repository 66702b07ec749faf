/**
 * Each session's uid on this host (docs/CONTAINMENT.md, "Sessions apart"), from a configured range, as systemd's
 * DynamicUser gives a service one: a session's commands run as its uid, so the kernel's own file
 * permissions, signal and ptrace checks keep sessions apart.
 *
 * The book is one file per uid taken, `<dir>/<uid>`, holding the session's key, made by link(2):
 * two workers on one host (or two commands at once) never give one uid to two sessions, and a
 * restarted worker finds the same uid for the same session, through its index `<dir>/<key>.uid`. A
 * session's first uid to try comes from its key, so most sessions need one file operation. A sweep
 * gives a uid back once its session left nothing on the host (`release`).
 */
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface UidRange {
  first: number;
  count: number;
}

/**
 * Past systemd's container range (524288-1879048191), below 2^31 (tools that read a uid as a signed
 * int), and clear of the usual /etc/subuid blocks: a million sessions per host.
 */
export const DEFAULT_SESSION_UIDS: UidRange = { first: 1_879_048_192, count: 1_000_000 };

export class SessionIdentities {
  /** Uids this process found or took, checked against the book before each use. */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly dir: string,
    private readonly range: UidRange = DEFAULT_SESSION_UIDS,
  ) {
    if (
      !Number.isSafeInteger(range.first) ||
      range.first < 1 ||
      !(range.count >= 1) ||
      range.first + range.count > 2 ** 31
    )
      throw new RangeError(
        `a session uid range must lie within 1..2^31-1, got ${range.first}+${range.count}`,
      );
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  /** The session's uid, taken now if it has none. Throws when the whole range is taken. */
  uidOf(session: string): number {
    if (!/^[0-9a-f]{8,64}$/.test(session)) throw new TypeError(`not a session key: ${session}`);
    // The uid it holds, if it holds one (checked against the book: a sweep may have given it back).
    const held = this.known.get(session) ?? this.indexed(session);
    if (held !== undefined && this.holderOf(held) === session) {
      this.known.set(session, held);
      return held;
    }
    const start = Number.parseInt(session.slice(0, 8), 16) % this.range.count;
    for (let i = 0; i < this.range.count; i++) {
      const uid = this.range.first + ((start + i) % this.range.count);
      const file = path.join(this.dir, String(uid));
      // Written whole, then linked into place: the uid's file never exists without its session.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, session, { mode: 0o600 });
      let taken = false;
      try {
        linkSync(tmp, file);
        taken = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        // Taken: ours (a command of this session before its index was written), or another's.
        taken = this.holderOf(uid) === session;
      } finally {
        rmSync(tmp, { force: true });
      }
      if (taken) {
        this.index(session, uid);
        return uid;
      }
    }
    throw new Error(
      `every uid of the session range ${this.range.first}-${this.range.first + this.range.count - 1} is taken`,
    );
  }

  /**
   * Gives the session's uid back, for another session to take: once nothing of the session runs
   * here and its files are gone (its /tmp and home). No-op for a session without one.
   */
  release(session: string): void {
    const held = this.known.get(session) ?? this.indexed(session);
    this.known.delete(session);
    if (held !== undefined && this.holderOf(held) === session) rmSync(path.join(this.dir, String(held)));
    rmSync(this.indexFile(session), { force: true });
  }

  /** The uid the session's index names (written after the uid was taken), if any. */
  private indexed(session: string): number | undefined {
    try {
      const uid = Number(readFileSync(this.indexFile(session), 'utf8'));
      return Number.isSafeInteger(uid) ? uid : undefined;
    } catch {
      return undefined;
    }
  }

  private index(session: string, uid: number): void {
    const file = this.indexFile(session);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, String(uid), { mode: 0o600 });
    renameSync(tmp, file);
    this.known.set(session, uid);
  }

  private indexFile(session: string): string {
    return path.join(this.dir, `${session}.uid`);
  }

  private holderOf(uid: number): string | undefined {
    try {
      return readFileSync(path.join(this.dir, String(uid)), 'utf8');
    } catch {
      return undefined;
    }
  }
}
