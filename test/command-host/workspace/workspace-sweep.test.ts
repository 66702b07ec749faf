// The workspace sweep (docs/SANDBOXES.md, "Cleanup"): a workspace nobody used for the spill
// retention goes; one in which a task may still run stays, whatever its age; a root its caller
// chose is never the sweep's. The last case runs a real command in a workspace through a worker.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../../src/client/ownership.js';
import {
  runWorkspaceRequest,
  type WorkspaceHostConfig,
} from '../../../src/command-host/workspace/workspace-host.js';
import {
  sweepWorkspaces,
  type WorkspaceSweepConfig,
  WorkspaceSweeper,
} from '../../../src/command-host/workspace/workspace-sweep.js';
import { workspaceRootOf } from '../../../src/command-host/workspace/workspace-use.js';
import { createBashTools } from '../../../src/tools/create-bash-tools.js';
import { startedTaskId } from '../../helpers/background-task.js';
import { useDevServerWithWorker } from '../../helpers/bash-worker.js';
import { waitFor } from '../../helpers/processes.js';
import { removeDir } from '../../helpers/remove-dir.js';
import { agent, text, toolsByName } from '../../helpers/tool-calls.js';

const RETENTION_MS = 7 * 24 * 3_600_000;
const dirs: string[] = [];
const tempDir = (name: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `durable-bash-test-workspace-sweep-${name}-`));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});

function configIn(workspaceDir: string, spillDir: string): WorkspaceSweepConfig {
  return {
    workspaceDir,
    spillDir,
    sandbox: undefined,
    isolation: undefined,
    taskQueue: 'unused',
    lostAfterMs: 60_000,
    spillRetentionMs: RETENTION_MS,
    workdirRoots: [],
  };
}

async function create(config: WorkspaceHostConfig, key: string, root?: string): Promise<string> {
  const reply = await runWorkspaceRequest(config, {
    op: 'create',
    sessionKey: key,
    ...(root ? { root } : {}),
  });
  if (reply instanceof Uint8Array || reply.op !== 'create') throw new Error('no root');
  return reply.root;
}

/** Sets a workspace's last use `days` ago. */
const lastUsed = (root: string, days: number) => {
  const then = new Date(Date.now() - days * 24 * 3_600_000);
  utimesSync(root, then, then);
};

describe('sweepWorkspaces', () => {
  it('removes a workspace unused for the retention, and its session directory once empty', async () => {
    const config = configIn(tempDir('ws'), tempDir('spill'));
    const key = sessionKey('sweep-idle');
    const [idle, recent] = [await create(config, key), await create(config, key)];
    mkdirSync(path.join(idle, 'src/deep'), { recursive: true });
    writeFileSync(path.join(idle, 'src/deep/file.txt'), 'x');
    lastUsed(idle, 8);
    lastUsed(recent, 6);
    expect(await sweepWorkspaces(config)).toEqual([idle]);
    expect(existsSync(idle)).toBe(false);
    expect(existsSync(recent)).toBe(true);
    lastUsed(recent, 8);
    expect(await sweepWorkspaces(config)).toEqual([recent]);
    expect(existsSync(path.dirname(recent))).toBe(false);
  });

  it('counts each workspace operation as a use', async () => {
    const config = configIn(tempDir('ws'), tempDir('spill'));
    const key = sessionKey('sweep-used');
    const root = await create(config, key);
    lastUsed(root, 8);
    await runWorkspaceRequest(config, { op: 'stat', workspace: { sessionKey: key, root }, path: root });
    expect(await sweepWorkspaces(config)).toEqual([]);
    expect(existsSync(root)).toBe(true);
  });

  it('keeps a workspace a task may still run in, whatever its age, until the task ends', async () => {
    const config = configIn(tempDir('ws'), tempDir('spill'));
    const key = sessionKey('sweep-busy');
    const root = await create(config, key);
    mkdirSync(path.join(root, 'sub'));
    lastUsed(root, 30);
    const task = path.join(config.spillDir, 'bash-0f0e0d0c-0000-4000-8000-000000000001');
    writeFileSync(
      `${task}.attempt`,
      JSON.stringify({
        namespace: 'default',
        hostQueue: 'q',
        taskToken: 'x',
        workdir: path.join(root, 'sub'),
      }),
    );
    expect(await sweepWorkspaces(config)).toEqual([]);
    writeFileSync(`${task}.exit`, JSON.stringify({ exitCode: 0, endedAtMs: Date.now() }));
    expect(await sweepWorkspaces(config)).toEqual([root]);
  });

  it('never touches a root its caller chose, nor sweeps twice within an interval', async () => {
    const config = configIn(tempDir('ws'), tempDir('spill'));
    const chosen = path.join(tempDir('chosen'), 'mine');
    await create(config, sessionKey('sweep-chosen'), chosen);
    lastUsed(chosen, 30);
    const sweeper = new WorkspaceSweeper(config);
    expect(await sweeper.sweepIfDue()).toEqual([]);
    expect(existsSync(chosen)).toBe(true);
    const idle = await create(config, sessionKey('sweep-chosen'));
    lastUsed(idle, 8);
    expect(await sweeper.sweepIfDue()).toEqual([]);
    expect(await sweeper.sweepIfDue(Date.now() + 61_000)).toEqual([idle]);
  });

  it('names the workspace a directory lies in, only under the workspace directory', () => {
    expect(workspaceRootOf('/w', '/w/k/id/a/b')).toBe('/w/k/id');
    expect(workspaceRootOf('/w', '/w/k/id')).toBe('/w/k/id');
    expect(workspaceRootOf('/w', '/w/k')).toBeUndefined();
    expect(workspaceRootOf('/w', '/wx/k/id')).toBeUndefined();
  });
});

describe('a command in a workspace, through a worker', () => {
  const workspaceDir = tempDir('ws-worker');
  const suite = useDevServerWithWorker({ executor: { workspaceDir, isolation: 'none' } });

  it('marks the workspace used and keeps it while the command runs', async () => {
    const spillDir = suite.worker.spillDir ?? '';
    const config = configIn(workspaceDir, spillDir);
    const key = sessionKey('sweep-worker');
    const root = await create(config, key);
    lastUsed(root, 8);
    const tools = toolsByName(
      createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }),
    );
    const session = agent('sweep-worker');
    const taskId = startedTaskId(
      text(
        await tools.bash.execute(
          { command: 'echo up; sleep 60', description: 'Wait', run_in_background: true, workdir: root },
          session,
        ),
      ),
    );
    const attemptFile = path.join(spillDir, `${taskId}.attempt`);
    await waitFor(() => existsSync(attemptFile));
    expect(JSON.parse(readFileSync(attemptFile, 'utf8')).workdir).toBe(root);
    // The attempt marked it used; aged again, the running command alone keeps it.
    lastUsed(root, 8);
    expect(await sweepWorkspaces(config)).toEqual([]);
    await tools.bash_kill.execute({ task_id: taskId }, session);
    await waitFor(() => existsSync(path.join(spillDir, `${taskId}.exit`)), 30_000);
    expect(await sweepWorkspaces(config)).toEqual([root]);
  }, 60_000);
});
