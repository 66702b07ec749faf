/**
 * Each session's uid on this host (docs/SESSION-ISOLATION.md), from a configured range, as systemd's
 * DynamicUser gives a service one: a session's commands run as its uid, so the kernel's own file
 * permissions, signal and ptrace checks keep sessions apart.
 *
 * The book is one file per uid taken, `<dir>/<uid>`, holding the session's key, made by link(2):
 * two workers on one host (or two commands at once) never give one uid to two sessions, and a
 * restarted worker finds the same uid for the same session. A session's first uid to try comes from
 * its key, so most sessions need one file operation.
 */
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
    const start = Number.parseInt(session.slice(0, 8), 16) % this.range.count;
    for (let i = 0; i < this.range.count; i++) {
      const uid = this.range.first + ((start + i) % this.range.count);
      const file = path.join(this.dir, String(uid));
      // Written whole, then linked into place: the uid's file never exists without its session.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, session, { mode: 0o600 });
      try {
        linkSync(tmp, file);
        return uid;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        rmSync(tmp, { force: true });
      }
      // Taken: ours (an earlier command of this session), or another session's (try the next).
      if (readFileSync(file, 'utf8') === session) return uid;
    }
    throw new Error(
      `every uid of the session range ${this.range.first}-${this.range.first + this.range.count - 1} is taken`,
    );
  }
}
