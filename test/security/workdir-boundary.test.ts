// A model's `workdir` against a worker keeping sessions apart, as root (issue 48, finding 1): the
// worker hands a session only its own workspace and the worker's directories under a declared root;
// anything else the session gets with its uid's rights, and one it cannot enter is refused in one
// line before anything runs. Each attack here worked on main f8f7ca6.
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceFiles } from '../../src/client/workspace-files.js';
import { type IsolatedWorker, startIsolatedWorker } from '../helpers/isolated-worker.js';
import { removeDir } from '../helpers/remove-dir.js';
import { sessionTools } from '../helpers/session-tools.js';
import { useDevServer } from '../helpers/temporal-env.js';

const server = useDevServer();
let worker: IsolatedWorker;
let scratch: string;
/** The declared root: a project, as `durable-bash dev` declares its cwd. */
let project: string;
/** A directory of root's, mode 0700, outside the root, holding a secret of mode 0600. */
let vault: string;

/** The first directory on the way to `dir` that others may not pass, as the refusal says it. */
function closedToOthers(dir: string): string | undefined {
  let at = '/';
  for (const name of ['', ...dir.split('/').filter(Boolean)]) {
    at = path.join(at, name);
    const { mode, uid } = statSync(at);
    if ((mode & 0o001) === 0)
      return `${at} is mode ${(mode & 0o7777).toString(8).padStart(4, '0')}, owned by uid ${uid}`;
  }
  return undefined;
}

/** `command` run by session `sessionId` in `workdir`: the text the model gets. */
const runIn = (sessionId: string, workdir: string, command: string) =>
  sessionTools({ client: server.env.client, taskQueue: worker.taskQueue, workdir }, sessionId).run(command);

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-workdir-boundary-')));
  project = path.join(scratch, 'project');
  vault = path.join(scratch, 'vault');
  mkdirSync(project, { mode: 0o755 });
  mkdirSync(vault, { mode: 0o700 });
  writeFileSync(path.join(vault, 'secret'), 'the secret\n', { mode: 0o600 });
  chmodSync(scratch, 0o755);
  worker = await startIsolatedWorker(server.env, {
    spillDir: path.join(scratch, 'spill'),
    workspaceDir: path.join(scratch, 'workspaces'),
    workdirRoots: [project],
  });
});

afterAll(async () => {
  await worker?.stop();
  if (scratch) removeDir(scratch);
});

describe("a session's workdir, with sessions apart and root", () => {
  it('refuses /root, and writes nothing there', async () => {
    const pwned = path.join('/root', `pwned-${randomUUID()}`);
    try {
      expect(await runIn('mallory', '/root', `echo x > ${path.basename(pwned)}`)).toBe(
        'workdir /root cannot be entered by this session: /root is mode 0700, owned by uid 0',
      );
      expect(existsSync(pwned)).toBe(false);
    } finally {
      rmSync(pwned, { force: true });
    }
  });

  it('refuses a root-owned 0700 directory outside the declared roots: its 0600 file stays unread', async () => {
    expect(await runIn('mallory', vault, 'cat secret')).toBe(
      `workdir ${vault} cannot be entered by this session: ${vault} is mode 0700, owned by uid 0`,
    );
  });

  it('refuses the same directory named with .. from inside the root', async () => {
    expect(await runIn('mallory', `${project}/../vault`, 'cat secret')).toBe(
      `workdir ${vault} cannot be entered by this session: ${vault} is mode 0700, owned by uid 0`,
    );
  });

  it('refuses a link the session made in its workdir to a directory it may not enter', async () => {
    const link = `link-${randomUUID()}`;
    expect(await runIn('mallory', project, `ln -s /root ${link} && echo made`)).toBe('made\n');
    expect(await runIn('mallory', path.join(project, link), 'ls')).toBe(
      `workdir ${path.join(project, link)} (/root) cannot be entered by this session: /root is mode 0700, owned by uid 0`,
    );
  });

  it("refuses another session's workspace, and the worker's spill directory", async () => {
    const files = new WorkspaceFiles({ client: server.env.client, taskQueue: worker.taskQueue });
    const theirs = await files.create('alice');
    expect(await runIn('mallory', theirs.root, 'ls')).toBe(
      `workdir ${theirs.root} cannot be used by this session: it lies in another session's workspace`,
    );
    // Alice's own commands run there, and write it.
    expect(await runIn('alice', theirs.root, 'echo mine > f && cat f')).toBe('mine\n');
    const bin = path.join(worker.spillDir, '.bin');
    expect(await runIn('mallory', bin, 'touch durable-bash-supervisor')).toBe(
      `workdir ${bin} cannot be used by a session: it lies in the worker's spill directory`,
    );
    await files.destroy(theirs);
  });

  it('hands over a directory of the worker under the root: writes land as the worker, shown as the session', async () => {
    expect(await runIn('mallory', project, 'echo made > made.txt && stat -c %u made.txt')).toMatch(
      /^18\d{8}\n$/,
    );
    expect(statSync(path.join(project, 'made.txt')).uid).toBe(0);
  });

  it("gives a directory open to all as it is: what the session writes there is its uid's, never another's", async () => {
    const open = path.join(scratch, 'open');
    mkdirSync(open);
    chmodSync(open, 0o1777);
    expect(await runIn('mallory', open, 'echo x > f && echo written')).toBe('written\n');
    expect(statSync(path.join(open, 'f')).uid).toBeGreaterThanOrEqual(1879048192);
  });

  it("runs in a directory it may enter but not write, with its uid's rights alone", async () => {
    expect(await runIn('mallory', '/etc', 'pwd; touch durable-bash-x')).toBe(
      "/etc\n[stderr]\ntouch: cannot touch 'durable-bash-x': Permission denied\n[exit code: 1]",
    );
    expect(existsSync('/etc/durable-bash-x')).toBe(false);
  });

  it("never hands over a directory inside the worker's own code, even under a declared root", async () => {
    // The checkout holds this worker's code (src/, dist/, node_modules/) and is declared a root here.
    const coded = await startIsolatedWorker(server.env, {
      spillDir: path.join(scratch, 'spill-code'),
      workdirRoots: [process.cwd()],
    });
    const planted = path.join(process.cwd(), 'src', 'policy', `planted-${randomUUID()}`);
    try {
      const run = (workdir: string, command: string) =>
        sessionTools({ client: server.env.client, taskQueue: coded.taskQueue, workdir }, 'mallory').run(
          command,
        );
      // Given as it is, with the session's uid's rights: refused where a directory on its way is
      // closed to others (a clone in a 0700 directory), else entered and not writable.
      const workdir = path.dirname(planted);
      const closed = closedToOthers(workdir);
      expect(await run(workdir, `touch ${path.basename(planted)}`)).toBe(
        closed === undefined
          ? `[stderr]\ntouch: cannot touch '${path.basename(planted)}': Permission denied\n[exit code: 1]`
          : `workdir ${workdir} cannot be entered by this session: ${closed}`,
      );
      expect(existsSync(planted)).toBe(false);
    } finally {
      rmSync(planted, { force: true });
      await coded.stop();
    }
  });
});
