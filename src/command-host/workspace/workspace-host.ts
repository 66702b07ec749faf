/**
 * A workspace's file operations on its host: made and removed by the worker, every other operation
 * run as the session's own commands run. Where commands run as the worker (no sandbox, sessions not
 * apart), the fenced operation (workspace-program.ts) runs in the worker's process; where they run
 * in a launcher (sessions apart, the sandbox), it runs through that same launcher and inner
 * supervisor, as `node -e` with the program's compiled text: so a file it writes is the session's
 * as a command's would be, and it reads nothing the session's uid could not.
 *
 * No tar: the SDKs' persist/hydrate format is the OpenAI Agents SDK's JSON workspace archive
 * (version 1, base64 files), which the program writes and reads itself, so nothing but Node runs
 * in the session.
 *
 * Some operations are not a workspace's, and the worker serves them itself from its own directory,
 * hidden from sessions: `outputRange`, a ranged read of a task's spill file, and the staging of an
 * archive too large for one operation (`stage`, `stagedRange`, `unstage`, staged-archives.ts).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/activity';
import { WORKSPACE_TRANSFER_MAX_BYTES } from '../../shared/limits.js';
import type { TaskId } from '../../shared/task.js';
import { isTaskIdShape } from '../../shared/task-id.js';
import {
  normalizePosix,
  type OutputRangeRequest,
  type StagingRequest,
  type WorkspaceFailure,
  WorkspaceFailureType,
  type WorkspaceReply,
  type WorkspaceRequest,
  workspaceErrorOf,
} from '../../shared/workspace.js';
import { commandLaunch } from '../containment/command-launch.js';
import { realPathOf, within } from '../containment/session-workdir.js';
import type { ExecutorConfig } from '../executor-config.js';
import { readSpillRange } from '../spill/spill-files.js';
import { taskFiles } from '../supervisor/task-files.js';
import { StagedArchives } from './staged-archives.js';
import { type ProgramMessage, type ProgramRequest, runWorkspaceOp } from './workspace-program.js';
import { markWorkspaceUsed } from './workspace-use.js';

/** A refusal on the host: the activity turns it into an ApplicationFailure of its type. */
export class WorkspaceRefusal extends Error {
  constructor(readonly failure: WorkspaceFailure) {
    // The line the caller gets, so a log or a failed test says why, not only which kind.
    super(workspaceErrorOf(failure).message);
  }
}

/**
 * How long the program may run in the session's launcher before it is killed: well within the
 * operation's WORKSPACE_OP_TIMEOUT_MS, so the refusal still reaches the caller.
 */
const PROGRAM_TIMEOUT_MS = 20_000;

/** A session key, as `sessionKey()` makes it: it names a directory, so nothing else passes. */
export const SESSION_KEY = /^[0-9a-f]{32}$/;

/** What the host needs of the executor: its containment and where workspaces live. */
export type WorkspaceHostConfig = Pick<
  ExecutorConfig,
  'workspaceDir' | 'sandbox' | 'isolation' | 'taskQueue' | 'lostAfterMs' | 'spillDir' | 'workdirRoots'
>;

/** Runs one request on this host: its reply, or the bytes of a read or an archive. */
export async function runWorkspaceRequest(
  config: WorkspaceHostConfig,
  request: WorkspaceRequest,
  data?: Uint8Array,
): Promise<WorkspaceReply | Uint8Array> {
  if (request.op === 'create') return { op: 'create', root: createWorkspace(config, request) };
  if (request.op === 'outputRange') return readOutputRange(config, request);
  if (request.op === 'stage' || request.op === 'stagedRange' || request.op === 'unstage')
    return runStaging(config, request, data);
  if (!SESSION_KEY.test(request.workspace.sessionKey))
    failed(`invalid session key ${request.workspace.sessionKey}`);
  checkRoot(request.workspace.root);
  // Before any launcher, which would only say it cannot bind it.
  if (!existsSync(request.workspace.root)) {
    throw new WorkspaceRefusal({
      type: WorkspaceFailureType.notFound,
      facts: { path: request.workspace.root },
    });
  }
  markWorkspaceUsed(config.workspaceDir, request.workspace.root);
  const staged = stagedArchives(config);
  let input = data;
  if (request.op === 'extract' && request.staged !== undefined) {
    // Taken once: a failed extract is retried by staging again, never from a half-used piece.
    input = await staged.take(request.workspace.sessionKey, request.staged).catch(refusedStaging);
  }
  const outcome =
    config.sandbox || config.isolation
      ? await runLaunched(config, request, input)
      : runWorkspaceOp(request, input);
  if (outcome.failure) throw new WorkspaceRefusal(outcome.failure);
  if (request.op === 'destroy') removeEmptied(config, request.workspace.root);
  if (request.op === 'archive' && outcome.bytes && outcome.bytes.length > WORKSPACE_TRANSFER_MAX_BYTES) {
    const id = await staged.put(request.workspace.sessionKey, outcome.bytes);
    return { op: 'staged', id, size: outcome.bytes.length };
  }
  return outcome.bytes ?? outcome.reply ?? { op: 'done' };
}

/** The staged archives of this host's workspaces, in the worker's spill directory (never a session's). */
function stagedArchives(config: Pick<WorkspaceHostConfig, 'spillDir'>): StagedArchives {
  return new StagedArchives(path.join(config.spillDir, 'staged-archives'));
}

async function runStaging(
  config: Pick<WorkspaceHostConfig, 'spillDir'>,
  request: StagingRequest,
  data: Uint8Array | undefined,
): Promise<WorkspaceReply | Uint8Array> {
  if (!SESSION_KEY.test(request.sessionKey)) failed(`invalid session key ${request.sessionKey}`);
  const staged = stagedArchives(config);
  try {
    switch (request.op) {
      case 'stage':
        await staged.append(request.sessionKey, request.id, request.offset, data ?? new Uint8Array());
        return { op: 'done' };
      case 'stagedRange':
        return await staged.range(request.sessionKey, request.id, request.start, request.end);
      case 'unstage':
        await staged.remove(request.sessionKey, request.id);
        return { op: 'done' };
      default: {
        const unknown: never = request;
        return failed(`unknown staging operation ${JSON.stringify(unknown)}`);
      }
    }
  } catch (err) {
    return refusedStaging(err);
  }
}

/** A staging error as the caller's one line. */
function refusedStaging(err: unknown): never {
  if (err instanceof WorkspaceRefusal) throw err;
  return failed(err instanceof Error ? err.message : String(err));
}

/**
 * A ranged read of a task's spill file, in the worker's own process: the spill directory is the
 * worker's, hidden from sessions, so never through a session's launcher. The caller (the client)
 * checked that the task is the session's; the id is checked here before it names a path.
 */
async function readOutputRange(
  config: Pick<WorkspaceHostConfig, 'spillDir'>,
  request: OutputRangeRequest,
): Promise<Uint8Array> {
  const { taskId, stream, start, end } = request;
  if (typeof taskId !== 'string' || !isTaskIdShape(taskId))
    failed(`outputRange: invalid task id ${JSON.stringify(String(taskId).slice(0, 80))}`);
  if (stream !== 'stdout' && stream !== 'stderr')
    failed(`outputRange: invalid stream ${JSON.stringify(stream)}: expected stdout or stderr`);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start)
    failed(`outputRange: invalid range [${start}, ${end}): expected 0 <= start <= end`);
  if (end - start > WORKSPACE_TRANSFER_MAX_BYTES)
    failed(
      `outputRange: ${end - start} bytes is over the ${WORKSPACE_TRANSFER_MAX_BYTES} bytes one operation carries`,
    );
  const file = taskFiles(config.spillDir, taskId)[stream];
  const bytes = await readSpillRange(file, start, end);
  if (bytes === undefined)
    throw new WorkspaceRefusal({ type: WorkspaceFailureType.notFound, facts: { path: file } });
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function failed(reason: string): never {
  throw new WorkspaceRefusal({ type: WorkspaceFailureType.failed, facts: { reason } });
}

/** A root the caller named: absolute, normalized, not `/` (a fence around everything is none). */
function checkRoot(root: string): void {
  if (!root.startsWith('/') || normalizePosix(root) !== root || root === '/') {
    failed(`invalid workspace root ${root}: expected an absolute, normalized directory other than /`);
  }
}

/**
 * Makes the workspace's directory as the worker, mode 0700, as a task's workdir is made: commands
 * of the session write it (shown as theirs by the idmapped mount when sessions are apart).
 */
function createWorkspace(
  config: WorkspaceHostConfig,
  request: { sessionKey: string; root?: string },
): string {
  if (!SESSION_KEY.test(request.sessionKey)) failed(`invalid session key ${request.sessionKey}`);
  if (request.root !== undefined) {
    checkRoot(request.root);
    // Where commands run as the session, a root the caller names is the session's only when it lies
    // under a declared workdir root (session-workdir.ts): nothing is made on the host elsewhere.
    if (
      (config.isolation || config.sandbox) &&
      !config.workdirRoots.some((dir) => within(realPathOf(request.root as string), dir))
    )
      failed(`workspace root ${request.root} is not under a declared workdir root (--workdir-root)`);
    mkdirSync(request.root, { recursive: true, mode: 0o700 });
    return request.root;
  }
  const sessionDir = path.join(config.workspaceDir, request.sessionKey);
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const root = path.join(sessionDir, randomUUID());
  mkdirSync(root, { mode: 0o700 });
  return root;
}

/** After the program emptied it as the session: the directory itself, and its session's when empty. */
function removeEmptied(config: WorkspaceHostConfig, root: string): void {
  rmdirSync(root);
  const sessionDir = path.dirname(root);
  if (path.dirname(sessionDir) !== config.workspaceDir) return;
  try {
    rmdirSync(sessionDir);
  } catch {
    // Another workspace of the session is still there.
  }
}

/** Where the program's node is bound in a session's (or the sandbox's) launcher: its /run is a tmpfs. */
const SESSION_NODE = '/run/durable-bash-node';

/** Runs the program as the session's command would run, in its workspace: one request on stdin. */
async function runLaunched(
  config: WorkspaceHostConfig,
  request: ProgramRequest,
  data?: Uint8Array,
): Promise<{ reply?: WorkspaceReply; bytes?: Uint8Array; failure?: WorkspaceFailure }> {
  let launch: Awaited<ReturnType<typeof commandLaunch>>;
  try {
    launch = await commandLaunch(config, {
      // A task id's shape: the session's launch marks it (its network stays while the program
      // runs); no supervisor claims it, so the sweep drops the mark a minute on.
      taskId: `bash-${randomUUID()}` as TaskId,
      command: `workspace ${request.op}`,
      workdir: request.workspace.root,
      background: false,
      taskQueue: config.taskQueue,
      lostAfterMs: config.lostAfterMs,
      session: request.workspace.sessionKey,
    });
  } catch (err) {
    if (err instanceof ApplicationFailure) failed(err.message);
    throw err;
  }
  if (!launch.launcher || !launch.innerBinary) failed('no launcher for the session');
  const argv = [
    ...launch.launcher,
    // The worker's own node, shown where every session sees it: where it lies may be hidden from
    // the session (under /tmp or a home, which the session gets its own of). /run is a tmpfs there.
    '--ro-bind',
    process.execPath,
    SESSION_NODE,
    launch.innerBinary,
    '--inner',
    ...(launch.inner ?? []),
    '--',
    SESSION_NODE,
    '--input-type=module',
    '-e',
    programText(),
  ];
  const input: ProgramMessage = {
    request,
    ...(data ? { data: Buffer.from(data).toString('base64') } : {}),
  };
  const { stdout, stderr, code } = await run(argv, JSON.stringify(input));
  let message: ProgramMessage;
  try {
    message = JSON.parse(stdout) as ProgramMessage;
  } catch {
    const why = stderr.trim().split('\n', 1)[0] || `the program exited with ${code}`;
    return failed(`${request.op} could not run in the session: ${why}`);
  }
  if (message.error !== undefined) failed(`${request.op}: ${message.error}`);
  return {
    ...(message.reply ? { reply: message.reply } : {}),
    ...(message.failure ? { failure: message.failure } : {}),
    ...(message.data !== undefined ? { bytes: new Uint8Array(Buffer.from(message.data, 'base64')) } : {}),
  };
}

function run(
  argv: string[],
  input: string,
): Promise<{ stdout: string; stderr: string; code: number | string }> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv as [string, ...string[]];
    const child = spawn(file, args, {
      // The inner supervisor reports on fd 3; nothing of the worker's environment goes in.
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
      timeout: PROGRAM_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    (child.stdio[3] as NodeJS.ReadableStream | null)?.resume();
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        code: code ?? signal ?? 'nothing',
      }),
    );
    child.stdin?.on('error', () => undefined); // A program that died early: its exit says why.
    child.stdin?.end(input);
  });
}

let cachedProgram: string | undefined;

/**
 * The program's text: its compiled module, then a call of its main. Run from the TypeScript sources
 * (tests), the build's copy is used, as the codec's failure converter is (`npm run build` first).
 */
function programText(): string {
  if (cachedProgram === undefined) {
    const beside = fileURLToPath(new URL('./workspace-program.js', import.meta.url));
    const file = existsSync(beside)
      ? beside
      : fileURLToPath(new URL('../../../dist/command-host/workspace/workspace-program.js', import.meta.url));
    cachedProgram = `${readFileSync(file, 'utf8')}\nawait workspaceProgramMain();\n`;
  }
  return cachedProgram;
}
