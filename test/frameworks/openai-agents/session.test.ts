import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Manifest,
  SandboxArchiveError,
  SandboxConfigurationError,
  SandboxLocalDirReadError,
  SandboxLocalFileReadError,
  SandboxPathResolutionError,
  SandboxUnsupportedFeatureError,
  SandboxWorkspaceReadNotFoundError,
  SandboxWorkspaceRootNotFoundError,
} from '@openai/agents-core/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BashTasks } from '../../../src/client/bash-tasks.js';
import type { DurableBashSandboxSession } from '../../../src/openai-agents/index.js';
import { WORKSPACE_FILE_MAX_BYTES } from '../../../src/shared/limits.js';
import { useOpenAiSandbox } from '../../helpers/openai-sandbox.js';
import { processesMatching, waitFor } from '../../helpers/processes.js';

const sandbox = useOpenAiSandbox('oa');
const { server, taskQueue } = sandbox;

/** The SDK's text frame, with the parts that change from run to run taken out. */
const frame = (text: string) =>
  text.replace(/^Chunk ID: \w+\n/, '').replace(/^Wall time: [\d.]+ seconds\n/, '');

/** The tasks of a session, as `durable-bash ps` would list them. */
const tasksOf = async (session: DurableBashSandboxSession) => {
  const tasks = new BashTasks({ client: server.env.client, taskQueue });
  return tasks.list({ owner: session.state.sessionId }, 100);
};

describe('the OpenAI Agents sandbox session', () => {
  it('answers a command that ends within its yield with its output and exit code', async () => {
    const session = await sandbox.client.create();
    const result = await session.exec({ cmd: 'echo out; echo err >&2; pwd; exit 3', yieldTimeMs: 20_000 });
    expect(result).toMatchObject({
      // The workspace's directory as the model knows it: the manifest's root.
      output: 'out\n/workspace\n[stderr]\nerr\n',
      stdout: 'out\n/workspace\n',
      stderr: 'err\n',
      exitCode: 3,
    });
    expect(result.sessionId).toBeUndefined();
    await session.delete();
  });

  it('moves a command past its yield to the background, and polls it with empty chars', async () => {
    const session = await sandbox.client.create();
    const text = await session.execCommand({
      cmd: 'echo first; sleep 3; echo second; exit 7',
      yieldTimeMs: 1_000,
    });
    expect(frame(text)).toBe('Process running with session ID 1\nOutput:\nfirst\n');
    const polled = await session.writeStdin({ sessionId: 1, chars: '', yieldTimeMs: 10_000 });
    expect(frame(polled)).toBe('Process exited with code 7\nOutput:\nsecond\n');
    // The id is given up once its end was told; an unknown id answers as the SDK's UnixLocal does.
    expect(frame(await session.writeStdin({ sessionId: 1 }))).toBe(
      'Process exited with code 1\nOutput:\nwrite_stdin failed: session not found: 1',
    );
    await session.delete();
  });

  it('types into a command on a terminal', async () => {
    const session = await sandbox.client.create();
    const started = await session.exec({ cmd: 'cat', tty: true, yieldTimeMs: 500 });
    expect(started.sessionId).toBe(1);
    const echoed = await session.writeStdin({ sessionId: 1, chars: 'hello\n', yieldTimeMs: 1_500 });
    // The terminal echoes the line, and cat prints it back: raw, as the SDK's own PTY shows it.
    expect(frame(echoed)).toBe('Process running with session ID 1\nOutput:\nhello\r\nhello\r\n');
    const ended = await session.writeStdin({ sessionId: 1, chars: '\u0004', yieldTimeMs: 10_000 });
    expect(frame(ended)).toMatch(/^Process exited with code 0\nOutput:\n/);
    await session.delete();
  });

  it('writes to the stdin of a command without a terminal, and Ctrl-C ends it as bash_kill does', async () => {
    const session = await sandbox.client.create();
    const marker = `oa-stdin-${process.pid}`;
    const started = await session.exec({
      cmd: `: ${marker}; while read -r line; do echo "got $line"; done`,
      yieldTimeMs: 500,
    });
    expect(started).toMatchObject({ sessionId: 1, output: '' });
    const echoed = await session.writeStdin({ sessionId: 1, chars: 'one\ntwo\n', yieldTimeMs: 2_000 });
    expect(frame(echoed)).toBe('Process running with session ID 1\nOutput:\ngot one\ngot two\n');
    const killed = await session.writeStdin({ sessionId: 1, chars: '\u0003', yieldTimeMs: 10_000 });
    expect(frame(killed)).toMatch(/^Process exited with code 143\nOutput:\n/);
    expect(processesMatching(new RegExp(marker))).toEqual([]);
    await session.delete();
  });

  it('cuts output over maxOutputTokens in the middle, naming the full output', async () => {
    const session = await sandbox.client.create();
    const moved = await session.exec({
      cmd: 'seq 1 2000; sleep 30',
      yieldTimeMs: 1_500,
      maxOutputTokens: 60,
    });
    const lines = moved.output.split('\n');
    expect(lines[0]).toBe('1');
    expect(lines.at(-2)).toBe('2000');
    expect(moved.output).toMatch(/\n…\d+ tokens truncated; full output: \/\S+\.stdout…\n/);
    expect(moved.originalTokenCount).toBe(Math.ceil(Buffer.byteLength(moved.stdout) / 4));
    expect(Buffer.byteLength(moved.output)).toBeLessThanOrEqual(60 * 4);
    await session.delete();
  });

  it('reads, lists and writes workspace files, and applies a manifest', async () => {
    const session = await sandbox.client.create({
      manifest: new Manifest({ entries: { 'notes.txt': { type: 'file', content: 'hello\n' } } }),
    });
    const root = session.state.workspaceRoot;
    expect(session.state.manifest.root).toBe('/workspace');
    expect(new TextDecoder().decode(await session.readFile({ path: 'notes.txt' }))).toBe('hello\n');
    await session.materializeEntry({
      path: 'src',
      entry: { type: 'dir', children: { 'a.ts': { type: 'file', content: 'export {};\n' } } },
    });
    await session.applyManifest(new Manifest({ entries: { 'b.txt': { type: 'file', content: 'b' } } }));
    expect(await session.listDir({ path: '.' })).toEqual([
      { name: 'b.txt', path: 'b.txt', type: 'file' },
      { name: 'notes.txt', path: 'notes.txt', type: 'file' },
      { name: 'src', path: 'src', type: 'dir' },
    ]);
    expect(await session.pathExists('src/a.ts')).toBe(true);
    expect(await session.pathExists('/workspace/src/a.ts')).toBe(true);
    expect(await session.pathExists(`${root}/missing`)).toBe(false);
    expect(await session.directoryExists('src')).toBe(true);
    expect(await session.directoryExists('notes.txt')).toBe(false);
    expect(Object.keys(session.state.manifest.entries).sort()).toEqual(['b.txt', 'notes.txt', 'src']);
    // The model's commands see the same files at the same paths.
    expect(
      (await session.exec({ cmd: 'cat /workspace/src/a.ts notes.txt', workdir: '/workspace' })).stdout,
    ).toBe('export {};\nhello\n');
    await session.delete();
  });

  it('persists a workspace and hydrates it into a new session', async () => {
    const first = await sandbox.client.create({
      manifest: new Manifest({ entries: { 'kept.txt': { type: 'file', content: 'kept\n' } } }),
    });
    await first.exec({ cmd: 'mkdir -p out && echo built > out/result' });
    // Larger than one operation carries: persisted and hydrated in pieces staged on the host.
    await first.exec({ cmd: 'head -c 3000000 /dev/urandom > out/blob && sha256sum out/blob > blob.sum' });
    const archive = await first.persistWorkspace();
    await first.delete();
    const second = await sandbox.client.create();
    await second.hydrateWorkspace(archive);
    expect((await second.exec({ cmd: 'cat kept.txt out/result' })).stdout).toBe('kept\nbuilt\n');
    expect((await second.exec({ cmd: 'sha256sum -c blob.sum' })).stdout).toBe('out/blob: OK\n');
    await second.delete();
  });

  it('leaves its commands running on stop, and a resumed session finds them; delete ends them', async () => {
    const marker = `oa-stop-${process.pid}-${Date.now()}`;
    const session = await sandbox.client.create();
    const started = await session.exec({
      cmd: `echo one; sleep 4; echo two # ${marker}`,
      yieldTimeMs: 1_000,
    });
    expect(started.sessionId).toBe(1);
    await session.stop();
    const serialized = JSON.parse(JSON.stringify(await sandbox.client.serializeSessionState(session.state)));
    const resumed = await sandbox.client.resume(await sandbox.client.deserializeSessionState(serialized));
    expect(frame(await resumed.writeStdin({ sessionId: 1, yieldTimeMs: 15_000 }))).toBe(
      'Process exited with code 0\nOutput:\ntwo\n',
    );
    const sleeper = await resumed.exec({ cmd: `sleep 300 # ${marker}`, yieldTimeMs: 500 });
    expect(sleeper.sessionId).toBe(2);
    expect(processesMatching(new RegExp(marker)).length).toBeGreaterThan(0);
    await sandbox.client.delete(resumed.state);
    await waitFor(() => processesMatching(new RegExp(marker)).length === 0, 15_000);
    await expect(resumed.pathExists('.')).rejects.toThrow(SandboxWorkspaceReadNotFoundError);
    await expect(sandbox.client.resume(resumed.state)).rejects.toThrow(SandboxWorkspaceRootNotFoundError);
  });
});

describe("manifest entries from the client's machine", () => {
  // UnixLocal's rule: a local source lies under the working directory (.durable-bash/ is ignored by git).
  let src: string;
  beforeAll(() => {
    mkdirSync('.durable-bash', { recursive: true });
    src = path.relative(process.cwd(), mkdtempSync(path.join('.durable-bash', 'oa-local-')));
    mkdirSync(path.join(src, 'project/lib/empty'), { recursive: true });
    writeFileSync(path.join(src, 'project/README.md'), 'readme\n');
    writeFileSync(path.join(src, 'project/lib/a.js'), 'export const a = 1;\n');
    writeFileSync(path.join(src, 'run.sh'), '#!/bin/sh\necho ran\n');
  });
  afterAll(() => rmSync(src, { recursive: true, force: true }));

  it('copies a local_file with its permissions and a local_dir with its tree, as UnixLocal does', async () => {
    const session = await sandbox.client.create({
      manifest: new Manifest({
        entries: {
          'bin/run.sh': { type: 'local_file', src: path.join(src, 'run.sh') },
          project: { type: 'local_dir', src: path.resolve(src, 'project') },
        },
      }),
    });
    const listed = await session.exec({
      cmd: './bin/run.sh && find project | sort && cat project/lib/a.js && stat -c %a bin/run.sh project/README.md',
    });
    expect(listed.stdout).toBe(
      [
        'ran',
        'project',
        'project/README.md',
        'project/lib',
        'project/lib/a.js',
        'project/lib/empty',
        'export const a = 1;',
        // The entry's permissions (the SDK's default 0755) on a local file; a directory's files as written.
        '755',
        (0o666 & ~process.umask()).toString(8),
        '',
      ].join('\n'),
    );
    expect(Object.keys(session.state.manifest.entries).sort()).toEqual(['bin/run.sh', 'project']);
    await session.delete();
  });

  it('refuses a symbolic link, a file over what a file copy carries, and a copy over the archive limits, writing nothing', async () => {
    const linked = path.join(src, 'linked');
    mkdirSync(linked);
    writeFileSync(path.join(linked, 'kept.txt'), 'kept\n');
    symlinkSync('/etc/passwd', path.join(linked, 'passwd'));
    const big = path.join(src, 'big.bin');
    // Sparse: the refusal reads its size, never its bytes.
    writeFileSync(big, '');
    truncateSync(big, WORKSPACE_FILE_MAX_BYTES + 1);
    const session = await sandbox.client.create();
    const cases: Array<[() => Promise<unknown>, new (...args: never[]) => Error, string]> = [
      [
        () => session.materializeEntry({ path: 'l', entry: { type: 'local_dir', src: linked } }),
        SandboxLocalDirReadError,
        `local_dir entry ${linked}: ${path.resolve(linked, 'passwd')} is a symbolic link; symbolic links are not copied`,
      ],
      [
        () =>
          session.materializeEntry({
            path: 'p',
            entry: { type: 'local_file', src: path.join(linked, 'passwd') },
          }),
        SandboxLocalFileReadError,
        'symbolic links are not copied',
      ],
      [
        () => session.materializeEntry({ path: 'b', entry: { type: 'local_file', src: big } }),
        SandboxLocalFileReadError,
        `is ${WORKSPACE_FILE_MAX_BYTES + 1} bytes, over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file copy carries`,
      ],
      [
        () => session.materializeEntry({ path: 'e', entry: { type: 'local_dir', src: '/etc' } }),
        SandboxLocalDirReadError,
        `local_dir entry /etc: the source must be inside the working directory ${process.cwd()}`,
      ],
      [
        () =>
          session.materializeEntry({
            path: 'm',
            entry: { type: 'local_file', src: path.join(src, 'missing') },
          }),
        SandboxLocalFileReadError,
        'no such file or directory',
      ],
    ];
    for (const [call, type, line] of cases) {
      const err = await call().then(
        () => new Error('resolved'),
        (error: unknown) => error,
      );
      expect(err, line).toBeInstanceOf(type);
      expect((err as Error).message, line).toContain(line);
    }
    session.setArchiveLimits({ maxExtractedBytes: 10 });
    await expect(
      session.applyManifest(
        new Manifest({
          entries: {
            first: { type: 'file', content: 'x' },
            project: { type: 'local_dir', src: path.join(src, 'project') },
          },
        }),
      ),
    ).rejects.toMatchObject({
      constructor: SandboxArchiveError,
      message: 'local entries over the archive limit maxExtractedBytes: 27 > 10',
      details: { limit: 'maxExtractedBytes', actual: 27, max: 10 },
    });
    expect(await session.listDir({ path: '.' })).toEqual([]);
    await session.delete();
  });
});

describe('bad input to the OpenAI Agents sandbox session', () => {
  let session: DurableBashSandboxSession;
  beforeAll(async () => {
    session = await sandbox.client.create();
  });
  afterAll(async () => {
    await session.delete();
  });

  it('gets the SDK error classes with one line, and starts nothing', async () => {
    const before = (await tasksOf(session)).length;
    const root = session.state.workspaceRoot;
    const cases: Array<[Promise<unknown>, new (...args: never[]) => Error, string]> = [
      [
        session.exec({ cmd: 'true', yieldTimeMs: -1 }),
        SandboxConfigurationError,
        'invalid yieldTimeMs: expected a number of milliseconds >= 0, got -1',
      ],
      [
        session.exec({ cmd: 'true', maxOutputTokens: 0 }),
        SandboxConfigurationError,
        'invalid maxOutputTokens: expected an integer >= 1, got 0',
      ],
      [
        session.exec({ cmd: 'true', workdir: '../..' }),
        SandboxPathResolutionError,
        'path ../.. is outside the workspace',
      ],
      [
        session.exec({ cmd: 'true', runAs: 'root' }),
        SandboxConfigurationError,
        'invalid runAs: "root"; a durable-bash session runs everything as its own identity, so runAs must be left out',
      ],
      [
        session.exec({ cmd: '  ' }),
        SandboxConfigurationError,
        'invalid cmd: expected a non-blank string, got "  "',
      ],
      [session.exec({ cmd: 'true', shell: 'zsh; rm -rf /' }), SandboxConfigurationError, 'invalid shell'],
      [
        session.writeStdin({ sessionId: 1, yieldTimeMs: -5 }),
        SandboxConfigurationError,
        'invalid yieldTimeMs: expected a number of milliseconds >= 0, got -5',
      ],
      [
        session.writeStdin({ sessionId: 1.5 }),
        SandboxConfigurationError,
        'invalid sessionId: expected the integer an exec answered with, got 1.5',
      ],
      [
        session.readFile({ path: '/etc/passwd' }),
        SandboxPathResolutionError,
        'path /etc/passwd is outside the workspace',
      ],
      [session.readFile({ path: `${root}/../x` }), SandboxPathResolutionError, 'is outside the workspace'],
      [session.listDir({ path: '..' }), SandboxPathResolutionError, 'path .. is outside the workspace'],
      [session.pathExists('../../etc'), SandboxPathResolutionError, 'is outside the workspace'],
      [session.directoryExists('/tmp'), SandboxPathResolutionError, 'path /tmp is outside the workspace'],
      [
        session.materializeEntry({ path: '../x', entry: { type: 'file', content: 'x' } }),
        SandboxPathResolutionError,
        'path ../x is outside the workspace',
      ],
      [
        session.materializeEntry({ path: 'repo', entry: { type: 'git_repo', repo: 'openai/codex' } }),
        SandboxUnsupportedFeatureError,
        'manifest entry repo is a git_repo; a durable-bash workspace takes files, directories, local files and local directories only',
      ],
      [
        session.applyManifest(new Manifest({ environment: { TOKEN: 'x' } })),
        SandboxUnsupportedFeatureError,
        'the manifest has environment variables; a durable-bash session does not take them',
      ],
      [
        session.hydrateWorkspace(new Uint8Array(2048), { archiveLimits: { maxInputBytes: 1024 } }),
        SandboxArchiveError,
        'workspace archive over its maxInputBytes limit: 2048 > 1024',
      ],
      [
        sandbox.client.create({
          manifest: new Manifest({ entries: { m: { type: 's3_mount', bucket: 'b' } } }),
        }),
        SandboxUnsupportedFeatureError,
        'manifest entry m is a s3_mount',
      ],
      [
        sandbox.client.deserializeSessionState({
          sessionId: 's',
          host: {},
          workspaceRoot: '/x',
          processes: {},
          nextProcessId: 1,
        }),
        SandboxConfigurationError,
        'invalid durable-bash session state: host should be { hostId, hostQueue }, got {}',
      ],
      [
        // A session this client never made (or deleted): its workspace is not on its host.
        sandbox.client.resume({
          ...session.state,
          sessionId: 'never-made',
          workspaceRoot: `${root}-never-made`,
        }),
        SandboxWorkspaceRootNotFoundError,
        `the workspace ${root}-never-made of sandbox session never-made is gone from host`,
      ],
    ];
    for (const [call, type, line] of cases) {
      const err = await call.then(
        () => new Error('resolved'),
        (error: unknown) => error,
      );
      expect(err, line).toBeInstanceOf(type);
      expect((err as Error).message, line).toContain(line);
      expect((err as Error).message).not.toContain('\n');
    }
    expect((await tasksOf(session)).length).toBe(before);
  });
});
