// docs/CONTAINMENT.md's table of workdirs, row by row, in every mode this machine runs as root: what
// a session's command gets when its workdir is the worker's under a declared root, another
// session's workspace, the spill directory, a directory of root's outside the roots, or the
// worker's own code under a root.
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
import type { ExecutorOptions } from '../../src/command-host/executor-config.js';
import { startBashWorker } from '../helpers/bash-worker.js';
import { removeDir } from '../helpers/remove-dir.js';
import { sessionTools } from '../helpers/session-tools.js';
import { useDevServer } from '../helpers/temporal-env.js';

const server = useDevServer();
let scratch: string;

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-workdir-modes-')));
  chmodSync(scratch, 0o755);
});

afterAll(() => {
  if (scratch) removeDir(scratch);
});

/** What a command of session mallory got in each workdir, a line each. */
interface Rows {
  /** `project`, a directory of the worker's under the declared root: a write there, and its owner on disk. */
  underRoot: string;
  /** The worker's code (the checkout's `dist`) under a declared root: a write there. */
  workerCode: string;
  /** Alice's workspace. */
  othersWorkspace: string;
  /** The spill directory: every task's output and records, and the supervisor the worker runs. */
  spill: string;
  /** A directory of root's, mode 0700, outside the roots: its 0600 file read, a write. */
  closed: string;
}

const modes: { mode: string; options: ExecutorOptions; rows: (dirs: Record<string, string>) => Rows }[] = [
  {
    mode: '--isolation none',
    options: { isolation: 'none', sandbox: 'none' },
    rows: () => ({
      underRoot: 'wrote, owned by 0',
      workerCode: 'wrote',
      othersWorkspace: 'ran',
      spill: 'ran',
      closed: 'the secret; wrote',
    }),
  },
  {
    mode: '--isolation session',
    options: { isolation: 'session', sandbox: 'none' },
    rows: ({ workspace, spillDir, vault, planted }) => ({
      underRoot: 'wrote, owned by 0',
      workerCode: `touch: cannot touch '${planted}': Read-only file system`,
      othersWorkspace: `workdir ${workspace} cannot be used by this session: it lies in another session's workspace`,
      spill: `workdir ${spillDir} cannot be used by a session: it lies in the worker's spill directory`,
      closed: `workdir ${vault} cannot be entered by this session: ${vault} is mode 0700, owned by uid 0`,
    }),
  },
  {
    // Commands run as the worker's uid (root here), without capabilities, on a read-only root.
    mode: '--sandbox bwrap',
    options: { sandbox: 'bwrap' },
    rows: ({ workspace, spillDir, planted }) => ({
      underRoot: 'wrote, owned by 0',
      workerCode: `touch: cannot touch '${planted}': Read-only file system`,
      othersWorkspace: `workdir ${workspace} cannot be used by this session: it lies in another session's workspace`,
      spill: `workdir ${spillDir} cannot be used by a session: it lies in the worker's spill directory`,
      closed: "the secret; touch: cannot touch 'x': Read-only file system",
    }),
  },
];

describe("a session's workdir, in every mode this machine runs", () => {
  for (const { mode, options, rows } of modes) {
    it(`${mode}: as docs/CONTAINMENT.md's table says`, async () => {
      const dir = mkdtempSync(path.join(scratch, 'mode-'));
      chmodSync(dir, 0o755);
      const project = path.join(dir, 'project');
      const vault = path.join(dir, 'vault');
      mkdirSync(project);
      mkdirSync(vault, { mode: 0o700 });
      writeFileSync(path.join(vault, 'secret'), 'the secret\n', { mode: 0o600 });
      const spillDir = path.join(dir, 'spill');
      const started = await startBashWorker(server.env, {
        ...options,
        spillDir,
        workspaceDir: path.join(dir, 'workspaces'),
        // And the checkout, which holds the worker's code (dist/), as dev's cwd does in a project.
        workdirRoots: [project, process.cwd()],
      });
      const planted = path.join('dist', `durable-bash-planted-${path.basename(dir)}`);
      try {
        const files = new WorkspaceFiles({ client: server.env.client, taskQueue: started.taskQueue });
        const workspace = (await files.create('alice')).root;
        const run = (workdir: string, command: string) =>
          sessionTools({ client: server.env.client, taskQueue: started.taskQueue, workdir }, 'mallory').run(
            command,
          );
        const line = (said: string) =>
          said
            .replace('[stderr]\n', '')
            .replace(/\n\[exit code: \d+\]$/, '')
            .trim();
        const got: Rows = {
          underRoot: line(await run(project, 'touch made && echo wrote')),
          workerCode: line(await run(process.cwd(), `touch ${planted} && echo wrote`)),
          othersWorkspace: line(await run(workspace, 'echo ran')),
          spill: line(await run(spillDir, 'echo ran')),
          closed: line(await run(vault, 'cat secret; touch x && echo wrote')).replace('\n', '; '),
        };
        got.underRoot += `, owned by ${statSync(path.join(project, 'made')).uid}`;
        expect(got).toEqual(rows({ workspace, spillDir, vault, planted }));
        expect(existsSync(path.join(vault, 'x'))).toBe(mode === '--isolation none');
      } finally {
        rmSync(planted, { force: true });
        await started.stop();
      }
    });
  }
});
