// A sandbox session's workspace through a real dev server and real workers, in each way commands
// run on this machine: as the worker (in-process file operations), sessions apart (through the
// session's launcher, as its uid) and the bwrap sandbox. Round trips of every method, the fence's
// refusals, the bounds, and what the session's own commands see of the files.

import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { type SandboxWorkspace, WorkspaceFiles } from '../../src/client/workspace-files.js';
import {
  ForeignTaskError,
  WorkspaceArchiveLimitError,
  WorkspaceDirectoryNotEmptyError,
  WorkspaceFileExistsError,
  WorkspaceFileNotFoundError,
  WorkspaceFileTooLargeError,
  WorkspacePathError,
  WorkspacePermissionError,
} from '../../src/shared/errors.js';
import {
  WORKSPACE_ARCHIVE_MAX_BYTES,
  WORKSPACE_FILE_MAX_BYTES,
  WORKSPACE_TRANSFER_MAX_BYTES,
} from '../../src/shared/limits.js';
import { type RunningWorker, startBashWorker } from '../helpers/bash-worker.js';
import { useDevServer } from '../helpers/temporal-env.js';

const server = useDevServer();
const root = process.getuid?.() === 0;
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');
const bytes = (s: string) => new Uint8Array(Buffer.from(s));

const modes = [
  { name: 'as the worker', executor: { isolation: 'none' as const } },
  ...(root
    ? [
        { name: 'sessions apart', executor: { isolation: 'session' as const } },
        { name: 'in the bwrap sandbox', executor: { sandbox: 'bwrap' as const } },
      ]
    : []),
];

describe.each(modes)('WorkspaceFiles, commands run $name', ({ name, executor }) => {
  let worker: RunningWorker;
  let files: WorkspaceFiles;
  let tasks: BashTasks;
  const workspaceDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-workspaces-'));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-test-outside-'));
  const session = `sandbox-${name.replace(/\W/g, '-')}`;

  beforeAll(async () => {
    worker = await startBashWorker(server.env, { ...executor, workspaceDir });
    files = new WorkspaceFiles({ client: server.env.client, taskQueue: worker.taskQueue });
    tasks = new BashTasks({ client: server.env.client, taskQueue: worker.taskQueue });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(workspaceDir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  /** Runs `command` in the workspace as the session's own `bash` call would; stdout and exit code. */
  const inSession = async (ws: SandboxWorkspace, command: string) => {
    const taskId = await tasks.start({
      command,
      description: 'In the session',
      workdir: ws.root,
      owner: ws.sessionId,
      background: false,
    });
    const result = await tasks.result(taskId);
    return { stdout: result.stdout.tail ?? '', stderr: result.stderr.tail ?? '', exitCode: result.exitCode };
  };

  it('makes an empty workspace on the host, in the workspace directory, under the session key', async () => {
    const ws = await files.create(session);
    expect(ws.sessionId).toBe(session);
    expect(ws.host.hostQueue).toContain(worker.taskQueue);
    expect(path.dirname(path.dirname(ws.root))).toBe(workspaceDir);
    expect(readdirSync(ws.root)).toEqual([]);
    expect(await files.list(ws, '.')).toEqual([]);
  });

  it('writes, reads, stats, lists, makes directories and removes', async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'src/deep/a.txt', bytes('hello\n'));
    await files.writeFile(ws, `${ws.root}/run.sh`, bytes('#!/bin/sh\necho ran\n'), { mode: 0o755 });
    const binary = new Uint8Array(256).map((_, i) => i);
    await files.writeFile(ws, 'bin.dat', binary);
    expect(text(await files.readFile(ws, 'src/deep/a.txt'))).toBe('hello\n');
    expect(await files.readFile(ws, 'bin.dat')).toEqual(binary);
    expect(await files.stat(ws, 'run.sh')).toMatchObject({ type: 'file', size: 19 });
    expect(((await files.stat(ws, 'run.sh'))?.mode ?? 0) & 0o777).toBe(0o755);
    expect(await files.stat(ws, 'src')).toMatchObject({ type: 'dir' });
    expect(await files.stat(ws, 'missing')).toBeUndefined();
    expect(await files.stat(ws, 'missing/too')).toBeUndefined();
    expect(await files.list(ws, '.')).toEqual([
      { name: 'bin.dat', path: `${ws.root}/bin.dat`, type: 'file', size: 256 },
      { name: 'run.sh', path: `${ws.root}/run.sh`, type: 'file', size: 19 },
      { name: 'src', path: `${ws.root}/src`, type: 'dir', size: expect.any(Number) },
    ]);
    await files.mkdir(ws, 'a/b/c', { recursive: true });
    await files.mkdir(ws, 'a/b/c', { recursive: true });
    await expect(files.mkdir(ws, 'a/b/c')).rejects.toThrow(WorkspaceFileExistsError);
    await expect(files.mkdir(ws, 'x/y')).rejects.toThrow(WorkspaceFileNotFoundError);
    await files.mkdir(ws, 'a/d');
    await expect(files.remove(ws, 'a')).rejects.toThrow(
      new WorkspaceDirectoryNotEmptyError(`${ws.root}/a`).message,
    );
    await files.remove(ws, 'a', { recursive: true });
    await files.remove(ws, 'bin.dat');
    await expect(files.remove(ws, 'bin.dat')).rejects.toThrow(WorkspaceFileNotFoundError);
    await expect(files.readFile(ws, 'nothing')).rejects.toThrow(
      `no such file or directory in the workspace: ${ws.root}/nothing`,
    );
    expect((await files.list(ws, '.')).map((entry) => entry.name)).toEqual(['run.sh', 'src']);
  });

  it("reads a task's output raw by range after its end: the owning session only, short past the file's end", async () => {
    const ws = await files.create(session);
    const taskId = await tasks.start({
      command: "printf 'abc\\377def'; printf E >&2",
      description: 'Output by range',
      workdir: ws.root,
      owner: session,
      background: true,
      host: ws.host,
    });
    await tasks.result(taskId);
    const range = (start: number, end: number, owner = session, stream: 'stdout' | 'stderr' = 'stdout') =>
      tasks.outputRange(taskId, owner, { hostQueue: ws.host.hostQueue, stream, start, end });
    expect(await range(2, 5)).toEqual(new Uint8Array([0x63, 0xff, 0x64]));
    expect(text(await range(5, 100))).toBe('ef');
    expect(await range(50, 60)).toEqual(new Uint8Array(0));
    expect(text(await range(0, 1, session, 'stderr'))).toBe('E');
    await expect(range(0, 1, 'another-session')).rejects.toThrow(new ForeignTaskError(taskId).message);
    await expect(range(0, 1, 'another-session')).rejects.toBeInstanceOf(ForeignTaskError);
  });

  it("writes files the session's next command reads as its own, and reads what the command wrote", async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'notes/in.txt', bytes('from writeFile\n'));
    const seen = await inSession(
      ws,
      'cat notes/in.txt; [ "$(stat -c %u notes/in.txt)" = "$(id -u)" ] && echo own; echo out > made.txt; chmod 640 made.txt',
    );
    expect(seen).toMatchObject({ stdout: 'from writeFile\nown\n', exitCode: 0 });
    expect(text(await files.readFile(ws, 'made.txt'))).toBe('out\n');
    expect(((await files.stat(ws, 'made.txt'))?.mode ?? 0) & 0o777).toBe(0o640);
  });

  it('refuses paths outside the workspace, lexically and through links, in one line', async () => {
    const ws = await files.create(session);
    expect(() => files.resolve(ws, '../x')).toThrow(
      new WorkspacePathError('../x', `it lies outside ${ws.root}`).message,
    );
    expect(() => files.resolve(ws, '/etc/passwd')).toThrow(WorkspacePathError);
    expect(files.resolve(ws, 'a/../b')).toBe(`${ws.root}/b`);
    await expect(files.readFile(ws, '/etc/passwd')).rejects.toThrow(WorkspacePathError);
    writeFileSync(path.join(outside, 'secret'), 'outside\n');
    symlinkSync('/etc', path.join(ws.root, 'etc'));
    symlinkSync(path.join(outside, 'secret'), path.join(ws.root, 'secret'));
    symlinkSync(outside, path.join(ws.root, 'out'));
    await expect(files.readFile(ws, 'etc/passwd')).rejects.toThrow(
      new WorkspacePathError(`${ws.root}/etc/passwd`, 'etc is a link to /etc').message,
    );
    await expect(files.readFile(ws, 'secret')).rejects.toThrow(WorkspacePathError);
    await expect(files.writeFile(ws, 'out/planted', bytes('x'))).rejects.toThrow(WorkspacePathError);
    await expect(files.writeFile(ws, 'out/deeper/planted', bytes('x'))).rejects.toThrow(WorkspacePathError);
    await expect(files.writeFile(ws, 'secret', bytes('x'))).rejects.toThrow(WorkspacePathError);
    await expect(files.list(ws, 'out')).rejects.toThrow(WorkspacePathError);
    await expect(files.mkdir(ws, 'out/d', { recursive: true })).rejects.toThrow(WorkspacePathError);
    expect(readdirSync(outside)).toEqual(['secret']);
    // The links themselves are the workspace's: stat shows them, remove takes them (never their target).
    expect(await files.stat(ws, 'out')).toMatchObject({ type: 'symlink' });
    await files.remove(ws, 'out', { recursive: true });
    expect(readdirSync(outside)).toEqual(['secret']);
    // A link that stays inside is followed.
    mkdirSync(path.join(ws.root, 'real'));
    symlinkSync('real', path.join(ws.root, 'alias'));
    await files.writeFile(ws, 'alias/f', bytes('inside'));
    expect(text(await files.readFile(ws, 'real/f'))).toBe('inside');
    await expect(files.remove(ws, '.', { recursive: true })).rejects.toThrow(WorkspacePathError);
  });

  it('refuses a read over maxBytes, saying the size and the limit, and a write over what a file write carries', async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'ten', bytes('0123456789'));
    await expect(files.readFile(ws, 'ten', { maxBytes: 4 })).rejects.toThrow(
      new WorkspaceFileTooLargeError(`${ws.root}/ten`, 10, 4).message,
    );
    expect(text(await files.readFile(ws, 'ten', { maxBytes: 10 }))).toBe('0123456789');
    // Sparse: its size is what the refusal reads, before any byte.
    const big = path.join(ws.root, 'big');
    writeFileSync(big, '');
    truncateSync(big, WORKSPACE_FILE_MAX_BYTES + 1);
    await expect(files.readFile(ws, 'big')).rejects.toThrow(
      new WorkspaceFileTooLargeError(`${ws.root}/big`, WORKSPACE_FILE_MAX_BYTES + 1, WORKSPACE_FILE_MAX_BYTES)
        .message,
    );
    await expect(
      files.writeFile(ws, 'too-big', new Uint8Array(WORKSPACE_FILE_MAX_BYTES + 1)),
    ).rejects.toThrow(
      `writing too-big: ${WORKSPACE_FILE_MAX_BYTES + 1} bytes is over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file write carries`,
    );
    expect(readdirSync(ws.root).sort()).toEqual(['big', 'ten']);
  });

  it('writes and reads a file over what one operation carries in pieces, byte for byte, mode set at the end', async () => {
    const ws = await files.create(session);
    const data = new Uint8Array(randomBytes(2 * WORKSPACE_TRANSFER_MAX_BYTES + 12_345));
    await files.writeFile(ws, 'sub/large.bin', data, { mode: 0o444 });
    expect(Buffer.compare(readFileSync(path.join(ws.root, 'sub/large.bin')), data)).toBe(0);
    expect(((await files.stat(ws, 'sub/large.bin'))?.mode ?? 0) & 0o777).toBe(0o444);
    expect(Buffer.compare(await files.readFile(ws, 'sub/large.bin'), data)).toBe(0);
    // Exactly two pieces: the read ends on an empty piece, and returns no more than the file.
    const even = data.subarray(0, 2 * WORKSPACE_TRANSFER_MAX_BYTES);
    await files.writeFile(ws, 'even.bin', even);
    const pieces: number[] = [];
    for await (const piece of files.readPieces(ws, 'even.bin')) pieces.push(piece.length);
    expect(pieces).toEqual([WORKSPACE_TRANSFER_MAX_BYTES, WORKSPACE_TRANSFER_MAX_BYTES]);
    // Rewritten shorter: emptied first, not left with the old tail.
    await files.writeFile(ws, 'even.bin', bytes('short'));
    expect(text(await files.readFile(ws, 'even.bin'))).toBe('short');
    await files.writeFile(ws, 'empty', new Uint8Array());
    expect((await files.readFile(ws, 'empty')).length).toBe(0);
  });

  it('archives as the OpenAI Agents SDK persists, and extracts into another workspace', async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'src/main.py', bytes('print(1)\n'));
    await files.writeFile(ws, 'run.sh', bytes('echo\n'), { mode: 0o755 });
    await files.mkdir(ws, 'empty');
    await files.writeFile(ws, 'cache/big', bytes('left out'));
    symlinkSync('/etc', path.join(ws.root, 'link'));
    const archive = await files.archive(ws, undefined, { exclude: ['cache'] });
    expect(JSON.parse(text(archive))).toEqual({
      version: 1,
      directories: ['empty', 'src'],
      files: [
        { path: 'run.sh', data: Buffer.from('echo\n').toString('base64'), mode: 0o755 },
        { path: 'src/main.py', data: Buffer.from('print(1)\n').toString('base64'), mode: expect.any(Number) },
      ],
    });
    const copy = await files.create(session);
    await files.writeFile(copy, 'stale', bytes('gone after extract'));
    await files.extract(copy, archive);
    expect((await files.list(copy, '.')).map((entry) => entry.name)).toEqual(['empty', 'run.sh', 'src']);
    expect(text(await files.readFile(copy, 'src/main.py'))).toBe('print(1)\n');
    expect(((await files.stat(copy, 'run.sh'))?.mode ?? 0) & 0o777).toBe(0o755);
  });

  it('refuses an archive over each limit, naming it', async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'a', bytes('x'.repeat(20)));
    await files.writeFile(ws, 'b', bytes('y'));
    await expect(files.archive(ws, { maxMembers: 1 })).rejects.toThrow(
      new WorkspaceArchiveLimitError('maxMembers', 2, 1).message,
    );
    await expect(files.archive(ws, { maxExtractedBytes: 10 })).rejects.toThrow(
      new WorkspaceArchiveLimitError('maxExtractedBytes', 20, 10).message,
    );
    await expect(files.archive(ws, { maxInputBytes: 50 })).rejects.toThrow(/over its maxInputBytes limit/);
    await expect(
      files.extract(ws, new Uint8Array(WORKSPACE_ARCHIVE_MAX_BYTES + 1), { maxInputBytes: null }),
    ).rejects.toThrow(
      new WorkspaceArchiveLimitError(
        'archiveBytes',
        WORKSPACE_ARCHIVE_MAX_BYTES + 1,
        WORKSPACE_ARCHIVE_MAX_BYTES,
      ).message,
    );
    const archive = bytes(
      JSON.stringify({ version: 1, directories: ['d'], files: [{ path: 'd/f', data: 'eHh4eA==' }] }),
    );
    await expect(files.extract(ws, archive, { maxMembers: 1 })).rejects.toThrow(WorkspaceArchiveLimitError);
    await expect(files.extract(ws, archive, { maxExtractedBytes: 3 })).rejects.toThrow(
      new WorkspaceArchiveLimitError('maxExtractedBytes', 4, 3).message,
    );
    await expect(files.extract(ws, archive, { maxInputBytes: 10 })).rejects.toThrow(/maxInputBytes/);
    // Nothing was touched by a refused extract.
    expect(readdirSync(ws.root).sort()).toEqual(['a', 'b']);
  });

  it('archives and extracts a workspace over what one operation carries, staged on the host and left nowhere', async () => {
    const ws = await files.create(session);
    const large = new Uint8Array(randomBytes(3 * WORKSPACE_TRANSFER_MAX_BYTES));
    await files.writeFile(ws, 'data/large.bin', large);
    await files.writeFile(ws, 'small.txt', bytes('small'));
    const archive = await files.archive(ws);
    // base64 makes it a third larger: four pieces at least, each its own operation.
    expect(archive.length).toBeGreaterThan(4 * WORKSPACE_TRANSFER_MAX_BYTES);
    const copy = await files.create(session);
    await files.extract(copy, archive);
    expect(Buffer.compare(await files.readFile(copy, 'data/large.bin'), large)).toBe(0);
    expect(text(await files.readFile(copy, 'small.txt'))).toBe('small');
    expect(readdirSync(path.join(worker.spillDir ?? '', 'staged-archives'))).toEqual([]);
  });

  it('refuses an archive whose members escape, before touching anything', async () => {
    const ws = await files.create(session);
    await files.writeFile(ws, 'keep', bytes('kept'));
    const escaping = (member: string) =>
      bytes(JSON.stringify({ version: 1, directories: [], files: [{ path: member, data: 'eA==' }] }));
    for (const member of ['../escaped', '/tmp/escaped', 'a/../../escaped']) {
      await expect(files.extract(ws, escaping(member))).rejects.toThrow(
        new WorkspacePathError(member, 'an archive member must lie under the workspace root').message,
      );
    }
    await expect(files.extract(ws, bytes('not json'))).rejects.toThrow(
      'not a workspace archive: it is not JSON',
    );
    expect(readdirSync(ws.root)).toEqual(['keep']);
    // A link the workspace held is emptied away, never written through.
    symlinkSync(outside, path.join(ws.root, 'out'));
    await files.extract(
      ws,
      bytes(JSON.stringify({ version: 1, directories: [], files: [{ path: 'out/f', data: 'eA==' }] })),
    );
    expect(await files.stat(ws, 'out')).toMatchObject({ type: 'dir' });
    expect(readdirSync(outside).filter((f) => f === 'f')).toEqual([]);
  });

  it('destroys the workspace, and its session directory with its last workspace', async () => {
    const ws = await files.create(`${session}-destroyed`);
    await files.writeFile(ws, 'deep/er/file', bytes('x'));
    await files.destroy(ws);
    expect(readdirSync(workspaceDir)).not.toContain(path.basename(path.dirname(ws.root)));
    await expect(files.stat(ws, 'deep')).rejects.toThrow(WorkspaceFileNotFoundError);
  });

  // Only where sessions have uids of their own: defined there alone (a skipped test fails CI).
  if (name === 'sessions apart')
    it('reads nothing the session could not: a file its uid may not read is refused, as its cat is', async () => {
      const ws = await files.create(session);
      await files.writeFile(ws, 'locked', bytes('secret'));
      // Made unreadable by the session's own command (mode 000); the worker, root, could still read it.
      expect((await inSession(ws, 'chmod 000 locked; cat locked')).exitCode).not.toBe(0);
      await expect(files.readFile(ws, 'locked')).rejects.toThrow(
        new WorkspacePermissionError(`${ws.root}/locked`).message,
      );
      // Another uid's file in the workspace (not the workdir's owner: not mapped to the session).
      writeFileSync(path.join(ws.root, 'foreign'), 'not yours');
      chownSync(path.join(ws.root, 'foreign'), 12345, 12345);
      chmodSync(path.join(ws.root, 'foreign'), 0o600);
      expect((await inSession(ws, 'cat foreign')).exitCode).not.toBe(0);
      await expect(files.readFile(ws, 'foreign')).rejects.toThrow(WorkspacePermissionError);
      await expect(files.writeFile(ws, 'foreign', bytes('x'))).rejects.toThrow(WorkspacePermissionError);
    });
});
