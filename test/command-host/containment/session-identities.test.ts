/**
 * Sessions' keys (client side) and their uids on a host (worker side): one uid per session, the
 * same across workers and restarts, never one uid for two sessions, even when processes race.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionKey } from '../../../src/client/ownership.js';
import { taskStart } from '../../../src/client/task-start.js';
import { SessionIdentities } from '../../../src/command-host/containment/session-identities.js';
import type { TaskId } from '../../../src/shared/task.js';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-uids-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('a session key', () => {
  it("is a hex hash of the owner, in the task's input, naming no session id", () => {
    const key = sessionKey('alice');
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(sessionKey('alice')).toBe(key);
    expect(sessionKey('bob')).not.toBe(key);
    const start = (owner?: string) =>
      taskStart(
        { ownerHasher: undefined },
        { command: 'true', description: 'd', background: false, ...(owner !== undefined ? { owner } : {}) },
        'bash-00000000-0000-4000-8000-000000000000' as TaskId,
        {},
      ).input;
    expect(start('alice').session).toBe(key);
    expect(JSON.stringify(start('alice'))).not.toContain('alice');
    expect(start().session).toBeUndefined();
  });
});

describe('session uids', () => {
  it('gives each session its own uid from the range, and the same one again, to any worker on the host', () => {
    const dir = scratch();
    const range = { first: 700_000, count: 4 };
    const one = new SessionIdentities(dir, range);
    const keys = ['a', 'b', 'c', 'd'].map(sessionKey);
    const uids = keys.map((key) => one.uidOf(key));
    expect(new Set(uids).size).toBe(4);
    for (const uid of uids) expect(uid >= 700_000 && uid < 700_004).toBe(true);
    // Another worker (or this one restarted) on the same book.
    const two = new SessionIdentities(dir, range);
    expect(keys.map((key) => two.uidOf(key))).toEqual(uids);
    expect(() => two.uidOf(sessionKey('e'))).toThrow('every uid of the session range 700000-700003 is taken');
    expect(() => two.uidOf('not-a-key')).toThrow('not a session key');
  });

  it('never gives one uid to two sessions when processes take uids at once', async () => {
    const dir = scratch();
    const module = fileURLToPath(
      new URL('../../../dist/command-host/containment/session-identities.js', import.meta.url),
    );
    // Eight processes, each taking uids for the same 20 sessions in its own order, from 25 uids.
    const keys = Array.from({ length: 20 }, (_, i) => sessionKey(`session-${i}`));
    const children = Array.from({ length: 8 }, (_, n) => {
      const order = n % 2 === 0 ? keys : [...keys].reverse();
      const code = `import(${JSON.stringify(module)}).then(({ SessionIdentities }) => {
        const ids = new SessionIdentities(${JSON.stringify(dir)}, { first: 800000, count: 25 });
        console.log(JSON.stringify(${JSON.stringify(order)}.map((key) => [key, ids.uidOf(key)])));
      })`;
      return spawn(process.execPath, ['--input-type=module', '-e', code], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
    });
    const answers = await Promise.all(
      children.map(async (child) => {
        let out = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk;
        });
        await once(child, 'exit');
        return new Map(JSON.parse(out) as [string, number][]);
      }),
    );
    // Every process gave each session the same uid, and no two sessions share one.
    const first = answers[0] as Map<string, number>;
    for (const answer of answers) expect(answer).toEqual(first);
    expect(new Set(first.values()).size).toBe(20);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('gives a uid back for another session, and keeps every other session on its own', () => {
    const dir = scratch();
    const range = { first: 900_000, count: 3 };
    const ids = new SessionIdentities(dir, range);
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(sessionKey) as [string, string, string, string];
    const uidA = ids.uidOf(a);
    const uidB = ids.uidOf(b);
    const uidC = ids.uidOf(c);
    expect(() => ids.uidOf(d)).toThrow('is taken');
    ids.release(a);
    ids.release(a); // Twice: nothing more.
    expect(ids.uidOf(d)).toBe(uidA);
    // The others keep theirs, in this worker and the next, whatever slot their search starts at.
    const next = new SessionIdentities(dir, range);
    for (const own of [ids, next])
      expect([own.uidOf(b), own.uidOf(c), own.uidOf(d)]).toEqual([uidB, uidC, uidA]);
    expect(() => next.uidOf(a)).toThrow('is taken');
    next.release(c);
    expect(next.uidOf(a)).toBe(uidC);
    // A release in another process is seen here: c, back, gets a uid of its own again.
    expect(() => ids.uidOf(c)).toThrow('is taken');
    expect(readdirSync(dir).sort()).toEqual(
      [String(uidA), String(uidB), String(uidC), `${a}.uid`, `${b}.uid`, `${d}.uid`].sort(),
    );
  });
});
