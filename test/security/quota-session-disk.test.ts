// Issue 48, finding 6 (the disk bullet of "Quotas hold for every path"): a session's /tmp, /var/tmp
// and home were counted by no quota and capped by nothing, so one session could fill the host's
// disk. Now, with sessions apart (root here: a uid per session), a session past its disk cap has
// its running task ended with a line saying so and its next command refused with a line it can act
// on, until it removes files (a plain rm still runs); another session runs on as before.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../src/client/ownership.js';
import { taskFiles } from '../../src/command-host/supervisor/task-files.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { type IsolatedWorker, startIsolatedWorker } from '../helpers/isolated-worker.js';
import { readToEnd } from '../helpers/read-to-end.js';
import { removeDir } from '../helpers/remove-dir.js';
import { sessionTools } from '../helpers/session-tools.js';
import { useDevServer } from '../helpers/temporal-env.js';
import { agent, toolsByName } from '../helpers/tool-calls.js';

const server = useDevServer();
/** Small, so that a test's file passes it: 10 MiB. */
const CAP_BYTES = 10 * 1024 * 1024;

let scratch: string;
let workdir: string;
let worker: IsolatedWorker;
const pathBefore = process.env.PATH;

beforeAll(async () => {
  // A directory of the worker's home first on its commands' PATH, as ~/.cargo/bin or an nvm node's
  // is on many hosts: a session's commands see their own home there, and may leave an `rm` in it.
  process.env.PATH = `${path.join(os.homedir(), 'bin')}:${pathBefore}`;
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-session-disk-')));
  chmodSync(scratch, 0o755);
  workdir = path.join(scratch, 'project');
  mkdirSync(workdir);
  worker = await startIsolatedWorker(server.env, {
    spillDir: path.join(scratch, 'spill'),
    workdirRoots: [workdir],
    sessionDiskCapBytes: CAP_BYTES,
  });
});

afterAll(async () => {
  process.env.PATH = pathBefore;
  await worker?.stop();
  if (scratch) removeDir(scratch);
});

/**
 * What a session's files on the host hold, as `du` counts them (blocks, each file once): its /tmp,
 * /var/tmp and home, and the output of the tasks its directory names.
 */
function heldBytes(sessionId: string): number {
  const dir = path.join(worker.spillDir, '.sessions', sessionKey(sessionId));
  const tasks = ['tasks', 'ended'].flatMap((marks) =>
    existsSync(path.join(dir, marks)) ? readdirSync(path.join(dir, marks)) : [],
  );
  const outputs = tasks
    .flatMap((taskId) => [
      taskFiles(worker.spillDir, taskId).stdout,
      taskFiles(worker.spillDir, taskId).stderr,
    ])
    .filter((file) => existsSync(file));
  const areas = ['tmp', 'var-tmp', 'home'].map((area) => path.join(dir, area));
  const du = spawnSync('du', ['-s', '-c', '-B1', ...areas, ...outputs], { encoding: 'utf8' });
  return Number(/^(\d+)\s+total$/m.exec(du.stdout)?.[1]);
}

describe("a session's disk cap", () => {
  it('ends the running task of a session past it, refuses its commands but rm until it is back under, and leaves other sessions alone', async () => {
    const where = { client: server.env.client, taskQueue: worker.taskQueue, workdir };
    const mallory = sessionTools(where, 'mallory');
    const alice = sessionTools(where, 'alice');
    const tools = toolsByName(createBashTools({ client: server.env.client, taskQueue: worker.taskQueue }));

    // An `rm` of its own, first on its PATH, that writes: over the cap it must not be what runs.
    expect(
      await mallory.run(
        "mkdir -p ~/bin && printf '#!/bin/sh\\nhead -c 1M /dev/zero > /tmp/planted\\n' > ~/bin/rm && chmod +x ~/bin/rm && command -v rm",
      ),
    ).toBe(`${path.join(os.homedir(), 'bin', 'rm')}\n`);
    const sleeper = await mallory.start('sleep 300');
    expect(await mallory.run('head -c 20M /dev/zero > /tmp/big && echo wrote')).toBe('wrote\n');
    // The worker measures a session with a task running every few seconds: the sleep ends.
    const ended = await readToEnd(tools.bash_output, sleeper, agent('mallory'), { timeoutMs: 30_000 });
    expect(ended.answers.at(-1)).toBe(
      [
        '(no new output)',
        `[ended: this session's files on its host passed its disk cap of ${CAP_BYTES} bytes (/tmp, /var/tmp, home and its output)]`,
        '[status: killed by SIGKILL]',
      ].join('\n'),
    );

    const refused = await mallory.run('echo more > /tmp/more');
    expect(refused).toBe(
      `this session's files on its host hold ${heldBytes('mallory')} bytes, over its disk cap of ${CAP_BYTES} bytes: remove some from /tmp, /var/tmp or its home with rm (until then only a plain rm command runs)`,
    );
    expect(heldBytes('mallory')).toBeGreaterThan(20 * 1024 * 1024);
    // Another session's commands run as ever, in the same workdir.
    expect(await alice.run('head -c 1M /dev/zero > /tmp/mine && ls -s --block-size=K /tmp/mine')).toBe(
      '1024K /tmp/mine\n',
    );

    // A plain rm runs over the cap (the system's, not the session's own); then the session is back
    // under it, and its commands run again.
    expect(await mallory.run('rm /tmp/big')).toBe('(no output)');
    expect(await mallory.run('echo back > /tmp/more && cat /tmp/more && ls /tmp/planted')).toBe(
      "back\n[stderr]\nls: cannot access '/tmp/planted': No such file or directory\n[exit code: 2]",
    );
  });
});
