/**
 * One file operation in a workspace, fenced to its root: no path leaves it, lexically or through a
 * link (each directory on the way is looked at with lstat, a link's target resolved and checked;
 * files are opened with O_NOFOLLOW and the opened descriptor's path checked again). It runs in the
 * worker's process when commands run as the worker, or as a program of its own through the
 * session's launcher (`node -e` with this file's compiled text, workspace-host.ts), so it imports
 * nothing but Node's own modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import type {
  ResolvedArchiveLimits,
  WorkspaceEntryReply,
  WorkspaceFailure,
  WorkspaceFileType,
  WorkspaceReply,
  WorkspaceRequest,
  WorkspaceStatReply,
} from '../../shared/workspace.js';

/** What an operation came to: its reply, its bytes (`read`, `archive`), or its refusal. */
export interface ProgramOutcome {
  reply?: WorkspaceReply;
  bytes?: Uint8Array;
  failure?: WorkspaceFailure;
}

/** The requests the program runs (`create` and `outputRange` are the worker's own, never the program's). */
export type ProgramRequest = Exclude<
  WorkspaceRequest,
  { op: 'create' | 'outputRange' | 'stage' | 'stagedRange' | 'unstage' }
>;

class Refusal extends Error {
  constructor(readonly failure: WorkspaceFailure) {
    super(failure.type);
  }
}

const refuse = (type: WorkspaceFailure['type'], facts: WorkspaceFailure['facts']): never => {
  throw new Refusal({ type, facts });
};

/** The refusal an errno stands for, about `p`; anything else surfaces as it is. */
function refusalOf(err: unknown, p: string): never {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return refuse('WorkspaceFileNotFoundError', { path: p });
    case 'ENOTDIR':
      return refuse('WorkspaceNotADirectoryError', { path: p });
    case 'EISDIR':
      return refuse('WorkspaceIsADirectoryError', { path: p });
    case 'EEXIST':
      return refuse('WorkspaceFileExistsError', { path: p });
    case 'ENOTEMPTY':
      return refuse('WorkspaceDirectoryNotEmptyError', { path: p });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return refuse('WorkspacePermissionError', { path: p });
    case 'ELOOP':
      return refuse('WorkspacePathError', { path: p, reason: 'it is a link' });
    default:
      throw err;
  }
}

/** Runs `op` with errnos turned into refusals about `p`. */
function about<T>(p: string, op: () => T): T {
  try {
    return op();
  } catch (err) {
    if (err instanceof Refusal) throw err;
    return refusalOf(err, p);
  }
}

const { O_RDONLY, O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

/** The fence of one workspace: every path it hands out lies in the root's real directory. */
class Fence {
  readonly real: string;

  constructor(readonly root: string) {
    this.real = about(root, () => fs.realpathSync(root));
  }

  isInside(real: string): boolean {
    return real === this.real || real.startsWith(`${this.real}/`);
  }

  /** `abs`'s components below the root; refused when it lies outside (the client checked too). */
  parts(abs: string): string[] {
    const rel = path.relative(this.root, abs);
    if (rel === '') return [];
    if (rel.startsWith('..') || path.isAbsolute(rel) || abs.includes('\0')) {
      refuse('WorkspacePathError', { path: abs, reason: `it lies outside ${this.root}` });
    }
    return rel.split('/');
  }

  /**
   * The real directory that holds `abs`'s last component, walked from the root one component at a
   * time: a link on the way must point inside; a missing directory is made when `create`.
   */
  parent(abs: string, create: boolean): string {
    const parts = this.parts(abs);
    let dir = this.real;
    for (const part of parts.slice(0, -1)) {
      const next = `${dir}/${part}`;
      let st: fs.Stats | undefined;
      try {
        st = fs.lstatSync(next);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') refusalOf(err, abs);
      }
      if (st === undefined) {
        if (!create) refuse('WorkspaceFileNotFoundError', { path: abs });
        about(abs, () => fs.mkdirSync(next));
        dir = next;
      } else if (st.isSymbolicLink()) {
        dir = this.followed(next, abs);
        if (!about(abs, () => fs.statSync(dir)).isDirectory())
          refuse('WorkspaceNotADirectoryError', { path: abs });
      } else if (st.isDirectory()) dir = next;
      else refuse('WorkspaceNotADirectoryError', { path: abs });
    }
    return dir;
  }

  /** Where the link `link` (a real path) leads, when inside; refused when it points out. */
  followed(link: string, abs: string): string {
    let target: string;
    try {
      target = fs.realpathSync(link);
    } catch {
      target = path.resolve(path.dirname(link), fs.readlinkSync(link));
      if (this.isInside(target)) refuse('WorkspaceFileNotFoundError', { path: abs });
    }
    if (!this.isInside(target)) {
      refuse('WorkspacePathError', {
        path: abs,
        reason: `${path.relative(this.real, link)} is a link to ${fs.readlinkSync(link)}`,
      });
    }
    return target;
  }

  /** The real path of `abs` itself: its parent walked, then the leaf followed when a link (inside only). */
  leaf(abs: string, create = false): { real: string; st: fs.Stats | undefined } {
    if (this.parts(abs).length === 0) return { real: this.real, st: fs.lstatSync(this.real) };
    let real = `${this.parent(abs, create)}/${this.name(abs)}`;
    let st = lstatOrUndefined(real, abs);
    if (st?.isSymbolicLink()) {
      real = this.followed(real, abs);
      st = lstatOrUndefined(real, abs);
    }
    return { real, st };
  }

  /** `abs`'s last component. */
  name(abs: string): string {
    return this.parts(abs).at(-1) ?? '';
  }

  /** Checks that an opened descriptor lies inside (a directory on the way swapped after the walk would not). */
  check(fd: number, abs: string): void {
    const opened = fs.readlinkSync(`/proc/self/fd/${fd}`);
    if (!this.isInside(opened)) {
      fs.closeSync(fd);
      refuse('WorkspacePathError', { path: abs, reason: `it was moved to ${opened}` });
    }
  }
}

function lstatOrUndefined(real: string, abs: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return refusalOf(err, abs);
  }
}

function typeOf(st: fs.Stats): WorkspaceFileType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

/**
 * Reads a regular file (opened already), refused when it is over `limit` bytes: the whole of it,
 * or with `range` the bytes `[offset, offset + length)` only (fewer at its end), a piece of a file
 * larger than one operation carries.
 */
function readOpened(
  fd: number,
  abs: string,
  limit: number,
  range?: { offset: number; length: number },
): Uint8Array {
  const st = fs.fstatSync(fd);
  if (st.isDirectory()) refuse('WorkspaceIsADirectoryError', { path: abs });
  if (!st.isFile()) refuse('WorkspaceOperationError', { reason: `${abs} is not a regular file` });
  if (st.size > limit) refuse('WorkspaceFileTooLargeError', { path: abs, size: st.size, limit });
  if (range !== undefined) {
    const buffer = Buffer.alloc(Math.max(0, Math.min(range.length, st.size - range.offset)));
    let filled = 0;
    while (filled < buffer.length) {
      const n = fs.readSync(fd, buffer, filled, buffer.length - filled, range.offset + filled);
      if (n === 0) break;
      filled += n;
    }
    return new Uint8Array(buffer.buffer, buffer.byteOffset, filled);
  }
  // One byte more than the limit allows: a file that grew since fstat is caught too.
  const buffer = Buffer.alloc(Math.min(st.size, limit) + 1);
  let filled = 0;
  for (;;) {
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, null);
    if (n === 0) break;
    filled += n;
    if (filled === buffer.length) {
      if (filled > limit) refuse('WorkspaceFileTooLargeError', { path: abs, size: filled, limit });
      break;
    }
  }
  return new Uint8Array(buffer.buffer, buffer.byteOffset, filled);
}

/**
 * The bytes `[offset, offset + length)` of a file (fewer at its end), refused when the whole file
 * is over `limit`: the pieces of a file larger than one operation carries are read this way.
 */
function readFile(fence: Fence, abs: string, limit: number, offset: number, length: number): Uint8Array {
  const { real, st } = fence.leaf(abs);
  if (st === undefined) return refuse('WorkspaceFileNotFoundError', { path: abs });
  if (st.isDirectory()) refuse('WorkspaceIsADirectoryError', { path: abs });
  const fd = about(abs, () => fs.openSync(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  fence.check(fd, abs);
  try {
    // A piece that is the whole file is read as one, so a file that grew past the limit is caught.
    const whole = offset === 0 && length >= limit;
    return about(abs, () => readOpened(fd, abs, limit, whole ? undefined : { offset, length }));
  } finally {
    fs.closeSync(fd);
  }
}

/** No setuid or setgid bit: a session's own commands may not set them either. */
const MODE_BITS = 0o1777;

/**
 * Writes `data` at `offset`: at 0 the file is made or emptied first; past it the file must hold
 * exactly `offset` bytes (the pieces of a larger file, in order; one sent twice is refused).
 */
function writeFile(fence: Fence, abs: string, data: Uint8Array, mode: number | undefined, offset = 0): void {
  const { real, st } = fence.leaf(abs, true);
  if (st?.isDirectory()) refuse('WorkspaceIsADirectoryError', { path: abs });
  if (fence.parts(abs).length === 0) refuse('WorkspaceIsADirectoryError', { path: abs });
  // Not truncated before the descriptor is known to lie inside.
  const fd = about(abs, () =>
    fs.openSync(real, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, (mode ?? 0o666) & MODE_BITS),
  );
  fence.check(fd, abs);
  try {
    about(abs, () => {
      const opened = fs.fstatSync(fd);
      if (!opened.isFile()) refuse('WorkspaceOperationError', { reason: `${abs} is not a regular file` });
      if (offset === 0) fs.ftruncateSync(fd, 0);
      else if (opened.size !== offset) {
        refuse('WorkspaceOperationError', {
          reason: `${abs} holds ${opened.size} bytes, not the ${offset} this piece follows (changed while it was written)`,
        });
      }
      let written = 0;
      while (written < data.length)
        written += fs.writeSync(fd, data, written, data.length - written, offset + written);
      if (mode !== undefined) fs.fchmodSync(fd, mode & MODE_BITS);
    });
  } finally {
    fs.closeSync(fd);
  }
}

function stat(fence: Fence, abs: string): WorkspaceStatReply | null {
  let real: string;
  try {
    real = fence.parts(abs).length === 0 ? fence.real : `${fence.parent(abs, false)}/${fence.name(abs)}`;
  } catch (err) {
    if (err instanceof Refusal && err.failure.type === 'WorkspaceFileNotFoundError') return null;
    throw err;
  }
  const st = lstatOrUndefined(real, abs);
  if (st === undefined) return null;
  return { type: typeOf(st), size: st.size, mode: st.mode, mtimeMs: st.mtimeMs };
}

function list(fence: Fence, abs: string): WorkspaceEntryReply[] {
  const { real, st } = fence.leaf(abs);
  if (st === undefined) return refuse('WorkspaceFileNotFoundError', { path: abs });
  if (!st.isDirectory()) refuse('WorkspaceNotADirectoryError', { path: abs });
  const fd = about(abs, () => fs.openSync(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  fence.check(fd, abs);
  fs.closeSync(fd);
  const names = about(abs, () => fs.readdirSync(real)).sort();
  return names.flatMap((name) => {
    const entry = lstatOrUndefined(`${real}/${name}`, `${abs}/${name}`);
    if (entry === undefined) return []; // Gone since the listing.
    const shown = abs === '/' ? `/${name}` : `${abs}/${name}`;
    return [{ name, path: shown, type: typeOf(entry), size: entry.size }];
  });
}

function remove(fence: Fence, abs: string, recursive: boolean): void {
  if (fence.parts(abs).length === 0) {
    refuse('WorkspacePathError', { path: abs, reason: 'it is the workspace root (destroy removes it)' });
  }
  // The leaf itself, never where a link leads.
  const real = `${fence.parent(abs, false)}/${fence.name(abs)}`;
  const st = lstatOrUndefined(real, abs) ?? refuse('WorkspaceFileNotFoundError', { path: abs });
  about(abs, () => {
    if (!st.isDirectory()) fs.unlinkSync(real);
    else if (recursive) fs.rmSync(real, { recursive: true });
    else fs.rmdirSync(real);
  });
}

function mkdir(fence: Fence, abs: string, recursive: boolean): void {
  if (fence.parts(abs).length === 0) {
    if (!recursive) refuse('WorkspaceFileExistsError', { path: abs });
    return;
  }
  const { real, st } = fence.leaf(abs, recursive);
  if (st === undefined) about(abs, () => fs.mkdirSync(real));
  else if (!recursive) refuse('WorkspaceFileExistsError', { path: abs });
  else if (!st.isDirectory()) refuse('WorkspaceNotADirectoryError', { path: abs });
}

/** Empties the workspace's directory (what `extract` and `destroy` start with). */
function clear(fence: Fence): void {
  for (const name of about(fence.root, () => fs.readdirSync(fence.real))) {
    about(`${fence.root}/${name}`, () => fs.rmSync(`${fence.real}/${name}`, { recursive: true }));
  }
}

/** A file of the archive; `mode` is ours (the SDK reads `path` and `data` only). */
interface ArchiveFile {
  path: string;
  data: string;
  mode?: number;
}

/** The OpenAI Agents SDK's remote workspace archive, version 1 (its `createWorkspaceArchive`). */
interface WorkspaceArchive {
  version: 1;
  directories: string[];
  files: ArchiveFile[];
}

function overLimit(limit: string, actual: number, max: number): never {
  return refuse('WorkspaceArchiveLimitError', { limit, actual, max });
}

/**
 * The workspace as the SDK archives it: directories and regular files in `localeCompare` order,
 * links and other files left out, each limit checked as the walk goes.
 */
function archive(
  fence: Fence,
  limits: ResolvedArchiveLimits,
  maxBytes: number,
  exclude: readonly string[],
): Uint8Array {
  const out: WorkspaceArchive = { version: 1, directories: [], files: [] };
  const excluded = new Set(exclude.map((p) => p.replace(/^\.?\/+|\/+$/g, '')));
  // The bytes' own limit: the caller's, or the largest archive (WORKSPACE_ARCHIVE_MAX_BYTES) when smaller.
  const [byteLimit, byteMax] =
    limits.maxInputBytes !== null && limits.maxInputBytes <= maxBytes
      ? ['maxInputBytes', limits.maxInputBytes]
      : ['archiveBytes', maxBytes];
  let members = 0;
  let extracted = 0;
  // JSON's framing plus each member's path and base64 data: checked before the whole is built.
  let estimate = 40;
  const walk = (dir: string, rel: string) => {
    const names = about(rel || fence.root, () => fs.readdirSync(dir)).sort((a, b) => a.localeCompare(b));
    for (const name of names) {
      const relative = rel ? `${rel}/${name}` : name;
      if (excluded.has(relative)) continue;
      const abs = `${fence.root}/${relative}`;
      const st = lstatOrUndefined(`${dir}/${name}`, abs);
      if (st === undefined || !(st.isDirectory() || st.isFile())) continue;
      members += 1;
      if (limits.maxMembers !== null && members > limits.maxMembers)
        overLimit('maxMembers', members, limits.maxMembers);
      estimate += relative.length + 8;
      if (st.isDirectory()) {
        out.directories.push(relative);
        walk(`${dir}/${name}`, relative);
        continue;
      }
      extracted += st.size;
      if (limits.maxExtractedBytes !== null && extracted > limits.maxExtractedBytes)
        overLimit('maxExtractedBytes', extracted, limits.maxExtractedBytes);
      estimate += Math.ceil(st.size / 3) * 4 + 40;
      if (estimate > byteMax) overLimit(byteLimit, estimate, byteMax);
      const fd = about(abs, () => fs.openSync(`${dir}/${name}`, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
      fence.check(fd, abs);
      try {
        const data = about(abs, () => readOpened(fd, abs, byteMax));
        out.files.push({ path: relative, data: Buffer.from(data).toString('base64'), mode: st.mode & 0o777 });
      } finally {
        fs.closeSync(fd);
      }
    }
  };
  walk(fence.real, '');
  const bytes = Buffer.from(JSON.stringify(out));
  if (bytes.length > byteMax) overLimit(byteLimit, bytes.length, byteMax);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** `p` of an archive member, when it names a path under the root: relative, no `..`, no NUL. */
function memberPath(fence: Fence, p: unknown): string {
  if (typeof p !== 'string' || p === '')
    return refuse('WorkspaceArchiveFormatError', { reason: 'a member without a path' });
  const parts = p.split('/').filter((part) => part !== '' && part !== '.');
  if (p.startsWith('/') || parts.includes('..') || p.includes('\0') || parts.length === 0) {
    refuse('WorkspacePathError', { path: p, reason: 'an archive member must lie under the workspace root' });
  }
  return `${fence.root}/${parts.join('/')}`;
}

/**
 * Restores an archive as the SDK's `hydrateWorkspace` does: the whole checked first (its limits,
 * every member's path), then the workspace emptied and the members written, each through the fence.
 */
function extract(fence: Fence, data: Uint8Array, limits: ResolvedArchiveLimits): void {
  if (limits.maxInputBytes !== null && data.length > limits.maxInputBytes)
    overLimit('maxInputBytes', data.length, limits.maxInputBytes);
  let parsed: Partial<WorkspaceArchive> | undefined;
  try {
    parsed = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.length).toString('utf8'));
  } catch {
    refuse('WorkspaceArchiveFormatError', { reason: 'it is not JSON' });
  }
  if (parsed?.version !== 1 || !Array.isArray(parsed.directories) || !Array.isArray(parsed.files)) {
    refuse('WorkspaceArchiveFormatError', {
      reason: 'expected { version: 1, directories: [...], files: [...] }',
    });
  }
  const directories = (parsed?.directories ?? []).map((p) => memberPath(fence, p));
  let extracted = 0;
  const files = (parsed?.files ?? []).map((file: ArchiveFile) => {
    if (typeof file !== 'object' || file === null)
      refuse('WorkspaceArchiveFormatError', { reason: 'a file member that is not an object' });
    const abs = memberPath(fence, file.path);
    if (typeof file.data !== 'string')
      refuse('WorkspaceArchiveFormatError', { reason: `no data for ${file.path}` });
    const bytes = Buffer.from(file.data, 'base64');
    extracted += bytes.length;
    if (limits.maxExtractedBytes !== null && extracted > limits.maxExtractedBytes)
      overLimit('maxExtractedBytes', extracted, limits.maxExtractedBytes);
    return { abs, bytes, mode: typeof file.mode === 'number' ? file.mode : undefined };
  });
  const members = directories.length + files.length;
  if (limits.maxMembers !== null && members > limits.maxMembers)
    overLimit('maxMembers', members, limits.maxMembers);
  clear(fence);
  for (const dir of directories) mkdir(fence, dir, true);
  for (const file of files) writeFile(fence, file.abs, file.bytes, file.mode);
}

/** Runs one operation; a refusal comes back as `failure`, anything unexpected throws. */
export function runWorkspaceOp(request: ProgramRequest, data?: Uint8Array): ProgramOutcome {
  try {
    const fence = new Fence(request.workspace.root);
    switch (request.op) {
      case 'read':
        return {
          bytes: readFile(fence, request.path, request.maxBytes, request.offset, request.length),
        };
      case 'write':
        writeFile(fence, request.path, data ?? new Uint8Array(), request.mode, request.offset);
        return { reply: { op: 'done' } };
      case 'stat':
        return { reply: { op: 'stat', stat: stat(fence, request.path) } };
      case 'list':
        return { reply: { op: 'list', entries: list(fence, request.path) } };
      case 'remove':
        remove(fence, request.path, request.recursive);
        return { reply: { op: 'done' } };
      case 'mkdir':
        mkdir(fence, request.path, request.recursive);
        return { reply: { op: 'done' } };
      case 'archive':
        return { bytes: archive(fence, request.limits, request.maxBytes, request.exclude) };
      case 'extract':
        extract(fence, data ?? new Uint8Array(), request.limits);
        return { reply: { op: 'done' } };
      case 'destroy':
        clear(fence);
        return { reply: { op: 'done' } };
      default: {
        const unknown: never = request;
        throw new Error(`unknown workspace operation ${JSON.stringify(unknown)}`);
      }
    }
  } catch (err) {
    if (err instanceof Refusal) return { failure: err.failure };
    throw err;
  }
}

/** What the program reads on stdin and writes on stdout: JSON, bytes in base64. */
export interface ProgramMessage {
  request?: ProgramRequest;
  reply?: WorkspaceReply;
  failure?: WorkspaceFailure;
  /** The data in (write, extract) or out (read, archive). */
  data?: string;
  /** Anything unexpected, as one line. */
  error?: string;
}

/** The program's main, run through the session's launcher: one request on stdin, its outcome on stdout. */
export async function workspaceProgramMain(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let message: ProgramMessage;
  try {
    const { request, data } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ProgramMessage;
    if (request === undefined) throw new Error('no request');
    const outcome = runWorkspaceOp(request, data === undefined ? undefined : Buffer.from(data, 'base64'));
    message = {
      ...(outcome.reply ? { reply: outcome.reply } : {}),
      ...(outcome.failure ? { failure: outcome.failure } : {}),
      ...(outcome.bytes ? { data: Buffer.from(outcome.bytes).toString('base64') } : {}),
    };
  } catch (err) {
    message = { error: (err instanceof Error ? err.message : String(err)).split('\n', 1)[0] ?? '' };
  }
  process.stdout.write(JSON.stringify(message));
}
