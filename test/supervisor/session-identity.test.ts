// The inner supervisor's session identity (supervisor/identity.c): under its launcher, the command
// runs as the session's uid with no capabilities, its workdir (a root-owned mkdtemp directory, mode
// 0700) shown as the session's by an idmapped mount, and setuid or setgid modes refused. Real
// processes and mounts; needs root.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'dist/bin/durable-bash-supervisor');
const SESSION_UID = 1_879_048_321;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs `script` as the session in `workdir`, as the default launcher will; its stdout lines. */
function asSession(workdir: string, script: string): { lines: string[]; status: number | null } {
  const ran = spawnSync(
    bin,
    [
      // The default launcher with root (supervisor/session-launch.c), in this process's network.
      '--session-launch',
      '--net',
      '/proc/self/ns/net',
      // The workdir handed to the session, as the worker hands a workspace.
      '--bind-as',
      String(SESSION_UID),
      workdir,
      workdir,
      '--chdir',
      workdir,
      bin,
      '--inner',
      '--as',
      String(SESSION_UID),
      '--',
      'bash',
      '-c',
      script,
    ],
    // fd 3: the inner supervisor's report.
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] },
  );
  return { lines: ran.stdout.trim().split('\n'), status: ran.status };
}

function workdir(): string {
  // In /tmp itself: the command enters its workdir as the session, so the way there must be open
  // to it (the worker replaces closed directories above a handed workdir; this runs the launcher alone).
  const dir = mkdtempSync(path.join('/tmp', 'durable-bash-session-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'README'), 'the project\n');
  chmodSync(path.join(dir, 'README'), 0o644);
  return dir;
}

describe('a command as its session', () => {
  it("runs as the session's uid with no capabilities, and cannot read root's files or signal root's processes", () => {
    const { lines, status } = asSession(
      workdir(),
      [
        'id -u; id -G',
        'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status | tr -s "\\t " " "',
        'cat /etc/shadow >/dev/null 2>&1 && echo read shadow || echo no shadow',
        // Its parent, the inner supervisor, runs as root.
        'kill -0 $PPID 2>/dev/null && echo signalled root || echo cannot signal root',
      ].join('; '),
    );
    expect(status).toBe(0);
    expect(lines).toEqual([
      String(SESSION_UID),
      String(SESSION_UID),
      'CapEff: 0000000000000000',
      'NoNewPrivs: 1',
      'no shadow',
      'cannot signal root',
    ]);
  });

  it("writes its root-owned 0700 workdir as if it were the session's, and what it writes belongs to the owner on disk", () => {
    const dir = workdir();
    const { lines, status } = asSession(
      dir,
      'stat -c "%u %a" . README; echo more >> README; mkdir -p build && echo out > build/a.out; chmod 755 build/a.out; echo done',
    );
    expect(status).toBe(0);
    expect(lines).toEqual([`${SESSION_UID} 700`, `${SESSION_UID} 644`, 'done']);
    // On disk: the worker's (root's) files still, with the session's changes.
    expect(statSync(path.join(dir, 'build/a.out')).uid).toBe(0);
    expect(statSync(path.join(dir, 'build/a.out')).mode & 0o7777).toBe(0o755);
    expect(readdirSync(dir).sort()).toEqual(['README', 'build']);
  });

  it('cannot make a setuid or setgid file (it would belong to the owner on disk), whichever call it uses', () => {
    const dir = workdir();
    const { lines, status } = asSession(
      dir,
      [
        'touch f',
        'chmod u+s f 2>/dev/null && echo chmod u+s || echo no chmod u+s',
        'chmod g+s f 2>/dev/null && echo chmod g+s || echo no chmod g+s',
        `python3 -c 'import os; os.open("g", os.O_CREAT | os.O_WRONLY, 0o4755)' 2>/dev/null && echo open || echo no open`,
        `python3 -c 'import os; os.mknod("h", 0o104755)' 2>/dev/null && echo mknod || echo no mknod`,
        'install -m 4755 /bin/true i 2>/dev/null && echo install || echo no install',
        'chmod 755 f && echo plain chmod',
      ].join('; '),
    );
    expect(status).toBe(0);
    expect(lines).toEqual([
      'no chmod u+s',
      'no chmod g+s',
      'no open',
      'no mknod',
      'no install',
      'plain chmod',
    ]);
    for (const name of readdirSync(dir)) expect(statSync(path.join(dir, name)).mode & 0o6000).toBe(0);
  });
});
