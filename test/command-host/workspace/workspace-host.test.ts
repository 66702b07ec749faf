// The workspace host without Temporal: the fence in the worker's process, and the same program run
// through a session's launcher (sessions apart, as root), with what one operation costs each way.
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sessionKey } from '../../../src/client/ownership.js';
import {
  createSessionIsolation,
  endSessionNetworks,
} from '../../../src/command-host/containment/session-isolation.js';
import { supervisorPath } from '../../../src/command-host/supervisor/supervisor.js';
import {
  runWorkspaceRequest,
  type WorkspaceHostConfig,
  WorkspaceRefusal,
} from '../../../src/command-host/workspace/workspace-host.js';
import { workspacePathOf } from '../../../src/shared/workspace.js';

const workspaceDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-workspace-host-'));
const spillDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-workspace-spill-'));
afterAll(() => {
  endSessionNetworks(spillDir);
  rmSync(workspaceDir, { recursive: true, force: true });
  rmSync(spillDir, { recursive: true, force: true });
});

const key = sessionKey('host-test');
const plain: WorkspaceHostConfig = {
  workspaceDir,
  sandbox: undefined,
  isolation: undefined,
  taskQueue: 'unused',
  lostAfterMs: 60_000,
  spillDir,
  workdirRoots: [],
};

async function create(config: WorkspaceHostConfig) {
  const reply = await runWorkspaceRequest(config, { op: 'create', sessionKey: key });
  if (reply instanceof Uint8Array || reply.op !== 'create') throw new Error('no root');
  return { sessionKey: key, root: reply.root };
}

/** Median ms of `n` runs of `op`. */
async function medianMs(n: number, op: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await op();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)] ?? 0;
}

describe('workspacePathOf', () => {
  it('resolves relative paths under the root and refuses what lies outside, lexically', () => {
    expect(workspacePathOf('/w/s', 'a/./b//c/')).toBe('/w/s/a/b/c');
    expect(workspacePathOf('/w/s', '.')).toBe('/w/s');
    expect(workspacePathOf('/w/s', '/w/s/x')).toBe('/w/s/x');
    expect(workspacePathOf('/w/s', '../s/x')).toBe('/w/s/x');
    expect(workspacePathOf('/w/s', '../x')).toBeUndefined();
    expect(workspacePathOf('/w/s', '/w/sx')).toBeUndefined();
    expect(workspacePathOf('/w/s', '/etc/passwd')).toBeUndefined();
    expect(workspacePathOf('/w/s', 'a\0b')).toBeUndefined();
  });
});

describe('runWorkspaceRequest in the worker', () => {
  it('refuses a read through a link to /etc with a WorkspacePathError naming the link', async () => {
    const ws = await create(plain);
    symlinkSync('/etc', path.join(ws.root, 'etc'));
    const read = runWorkspaceRequest(plain, {
      op: 'read',
      workspace: ws,
      path: `${ws.root}/etc/hostname`,
      maxBytes: 100,
      offset: 0,
      length: 100,
    });
    await expect(read).rejects.toBeInstanceOf(WorkspaceRefusal);
    await expect(read).rejects.toMatchObject({
      failure: {
        type: 'WorkspacePathError',
        facts: { path: `${ws.root}/etc/hostname`, reason: 'etc is a link to /etc' },
      },
    });
  });

  it('refuses a root that is not absolute and normalized, and a session key that is not one', async () => {
    await expect(
      runWorkspaceRequest(plain, {
        op: 'stat',
        workspace: { sessionKey: key, root: '/tmp/../etc' },
        path: '/etc',
      }),
    ).rejects.toMatchObject({ failure: { type: 'WorkspaceOperationError' } });
    await expect(runWorkspaceRequest(plain, { op: 'create', sessionKey: '../x' })).rejects.toMatchObject({
      failure: { type: 'WorkspaceOperationError' },
    });
  });

  it("reads a range of a task's spill file raw: short past its end, refused for a missing file or a bad id or size", async () => {
    const taskId = 'bash-00000000-0000-4000-8000-0000000000aa';
    const bytes = Buffer.from([0xff, 0xfe, 0x41, 0x0a, 0xc3]);
    writeFileSync(path.join(spillDir, `${taskId}.stdout`), bytes);
    const range = (stream: 'stdout' | 'stderr', start: number, end: number, id = taskId) =>
      runWorkspaceRequest(plain, { op: 'outputRange', taskId: id, stream, start, end });
    await expect(range('stdout', 1, 4)).resolves.toEqual(new Uint8Array(bytes.subarray(1, 4)));
    await expect(range('stdout', 3, 100)).resolves.toEqual(new Uint8Array(bytes.subarray(3)));
    await expect(range('stdout', 50, 60)).resolves.toEqual(new Uint8Array(0));
    await expect(range('stderr', 0, 1)).rejects.toMatchObject({
      failure: { type: 'WorkspaceFileNotFoundError' },
    });
    for (const bad of [
      range('stdout', 0, 1, '../../etc/passwd'),
      range('stdout', 2, 1),
      range('stdout', 0, 1e9),
    ])
      await expect(bad).rejects.toMatchObject({ failure: { type: 'WorkspaceOperationError' } });
  });
});

describe.runIf(process.getuid?.() === 0)('runWorkspaceRequest through the session launcher', () => {
  it("runs as the session's uid: writes are the session's, a mode-000 file is refused; and costs tens of ms", async () => {
    const isolation = createSessionIsolation({ workspaceDir }, supervisorPath(), spillDir);
    const isolated: WorkspaceHostConfig = { ...plain, isolation };
    const ws = await create(isolated);
    const write = () =>
      runWorkspaceRequest(
        isolated,
        { op: 'write', workspace: ws, path: `${ws.root}/f`, offset: 0 },
        new Uint8Array([104, 105]),
      );
    await write();
    const read = await runWorkspaceRequest(isolated, {
      op: 'read',
      workspace: ws,
      path: `${ws.root}/f`,
      maxBytes: 10,
      offset: 0,
      length: 10,
    });
    expect(Buffer.from(read as Uint8Array).toString()).toBe('hi');
    writeFileSync(path.join(ws.root, 'locked'), 'secret', { mode: 0o000 });
    await expect(
      runWorkspaceRequest(isolated, {
        op: 'read',
        workspace: ws,
        path: `${ws.root}/locked`,
        maxBytes: 10,
        offset: 0,
        length: 10,
      }),
    ).rejects.toMatchObject({ failure: { type: 'WorkspacePermissionError' } });
    const inProcess = await medianMs(20, () =>
      runWorkspaceRequest(
        plain,
        { op: 'write', workspace: ws, path: `${ws.root}/g`, offset: 0 },
        new Uint8Array([1]),
      ),
    );
    const launched = await medianMs(10, write);
    console.log(
      `one workspace write: ${inProcess.toFixed(2)} ms in the worker, ${launched.toFixed(1)} ms as the session`,
    );
    expect(launched).toBeGreaterThan(inProcess);
  });
});
