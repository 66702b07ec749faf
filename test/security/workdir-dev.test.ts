// The attack of issue 48 as it was made: `durable-bash dev` run as root in a project, then
// `durable-bash run --owner mallory --workdir /root -- 'echo x > pwned'`, which wrote /root/pwned
// as root on main f8f7ca6. dev declares the directory it starts in as a workdir root: the project
// stays the sessions' to write, its database is hidden from them, and nothing else is handed over.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, cli } from '../helpers/cli.js';
import { removeDir } from '../helpers/remove-dir.js';

let project: string;
let dev: ChildProcess;
let address: string;

/** `durable-bash run` as session mallory, against the dev server. */
const runAsMallory = (workdir: string, command: string) =>
  cli(['run', '--address', address, '--owner', 'mallory', '--workdir', workdir, '--', command]);

beforeAll(async () => {
  project = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-dev-project-')));
  dev = spawn('node', [CLI_BIN, 'dev', '--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  let banner = '';
  dev.stdout?.on('data', (chunk: Buffer) => {
    banner += chunk.toString();
  });
  dev.stderr?.resume();
  await new Promise<void>((resolve, reject) => {
    dev.stdout?.on('data', () => banner.includes('Ctrl-C stops') && resolve());
    dev.once('exit', (code) => reject(new Error(`dev exited with ${code}: ${banner}`)));
  });
  address = /Temporal gRPC: +(\S+)/.exec(banner)?.[1] ?? '';
  expect(banner).toContain('isolation: sessions apart');
});

afterAll(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev.once('exit', resolve));
    dev.kill('SIGINT');
    await exited;
  }
  if (project) removeDir(project);
});

describe('durable-bash dev as root, attacked through the CLI', () => {
  it('refuses --workdir /root in one line, and writes nothing there', async () => {
    const pwned = path.join('/root', `pwned-${randomUUID()}`);
    try {
      expect(await runAsMallory('/root', `echo x > ${path.basename(pwned)}`)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'workdir /root cannot be entered by this session: /root is mode 0700, owned by uid 0\n',
      });
      expect(existsSync(pwned)).toBe(false);
    } finally {
      rmSync(pwned, { force: true });
    }
  });

  it('keeps the project writable, as the README runs it', async () => {
    expect(await runAsMallory(project, 'echo hi > hello.txt && cat hello.txt')).toEqual({
      code: 0,
      stdout: 'hi\n',
      stderr: '',
    });
    expect(readFileSync(path.join(project, 'hello.txt'), 'utf8')).toBe('hi\n');
  });

  it("hides dev's database in the project: the session can neither read nor change it", async () => {
    const db = path.join(project, '.durable-bash', 'temporal.db');
    expect(
      await runAsMallory(project, 'wc -c < .durable-bash/temporal.db; echo x > .durable-bash/temporal.db'),
    ).toEqual({
      code: 0,
      // A node of /dev/null bound over it, on a mount without devices: opening it is refused.
      stdout:
        '[stderr]\nbash: line 1: .durable-bash/temporal.db: Permission denied\nbash: line 1: .durable-bash/temporal.db: Permission denied\n[exit code: 1]\n',
      stderr: '',
    });
    expect(readFileSync(db).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('will not declare its home: dev started there stops at once, in one line, and starts nothing', async () => {
    const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-dev-home-')));
    try {
      const started = spawnSync('node', [CLI_BIN, 'dev', '--port', '0'], {
        cwd: home,
        env: { ...process.env, HOME: home },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: started.status, stdout: started.stdout, stderr: started.stderr }).toEqual({
        status: 1,
        stdout: '',
        stderr: `durable-bash: workdir root ${home} cannot be declared: it holds the worker's home ${home} (its dotfiles and keys); declare a project directory (--workdir-root)\n`,
      });
      expect(existsSync(path.join(home, '.durable-bash'))).toBe(false);
    } finally {
      removeDir(home);
    }
  });
});
