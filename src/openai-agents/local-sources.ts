/**
 * The manifest's `local_file` and `local_dir` entries: files on the client's machine, copied into
 * the workspace as the SDK's UnixLocal session copies them. The source is read here, on the client;
 * the workspace's host gets each file by `WorkspaceFiles.writeFile`.
 */
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  SandboxArchiveError,
  SandboxLocalDirReadError,
  SandboxLocalFileReadError,
} from '@openai/agents-core/sandbox';
import { WORKSPACE_FILE_MAX_BYTES } from '../shared/limits.js';

/** What one copy may carry in all: the archive limits' `maxExtractedBytes` and `maxMembers` (null: no limit). */
export interface CopyBudget {
  maxBytes: number | null;
  maxMembers: number | null;
  bytes: number;
  members: number;
}

/** A file or directory to make in the workspace, its path relative to the entry's; a file's source on this machine. */
export type LocalItem = { kind: 'dir'; path: string } | { kind: 'file'; path: string; source: string };

type LocalEntryType = 'local_file' | 'local_dir';

/**
 * What `src` holds, checked before anything is copied: within the client's working directory (the
 * base UnixLocal resolves a relative `src` against, and the only one, path grants being refused),
 * no symbolic link on the way or inside, each file within what a file write carries, and the whole
 * within `budget`. A `local_dir`'s files and directories are copied; other kinds (sockets, FIFOs)
 * are left out, as UnixLocal leaves them.
 */
export async function planLocalEntry(
  type: LocalEntryType,
  src: string,
  budget: CopyBudget,
): Promise<LocalItem[]> {
  const fail = (what: string) => sourceError(type, `${type} entry ${src}: ${what}`, src);
  const base = process.cwd();
  const source = path.resolve(base, src);
  if (source !== base && !source.startsWith(`${base}${path.sep}`))
    throw fail(`the source must be inside the working directory ${base}`);
  const real = await realpath(source).catch(() => undefined);
  if (real === undefined) throw fail('no such file or directory');
  if (real !== path.join(await realpath(base), path.relative(base, source)))
    throw fail('symbolic links are not copied');
  const items: LocalItem[] = [];
  const add = async (item: LocalItem) => {
    budget.members += 1;
    if (budget.maxMembers !== null && budget.members > budget.maxMembers)
      throw overBudget('maxMembers', budget.members, budget.maxMembers);
    if (item.kind === 'file') {
      const { size } = await lstat(item.source);
      if (size > WORKSPACE_FILE_MAX_BYTES)
        throw fail(
          `${item.source} is ${size} bytes, over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file copy carries`,
        );
      budget.bytes += size;
      if (budget.maxBytes !== null && budget.bytes > budget.maxBytes)
        throw overBudget('maxExtractedBytes', budget.bytes, budget.maxBytes);
    }
    items.push(item);
  };
  const stat = await lstat(source);
  if (type === 'local_file') {
    if (!stat.isFile()) throw fail('not a regular file');
    await add({ kind: 'file', path: '', source });
    return items;
  }
  if (!stat.isDirectory()) throw fail('not a directory');
  const walk = async (dir: string, relative: string): Promise<void> => {
    await add({ kind: 'dir', path: relative });
    const children = await readdir(dir, { withFileTypes: true });
    children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const child of children) {
      const childSource = path.join(dir, child.name);
      const childPath = relative === '' ? child.name : `${relative}/${child.name}`;
      if (child.isSymbolicLink())
        throw fail(`${childSource} is a symbolic link; symbolic links are not copied`);
      if (child.isDirectory()) await walk(childSource, childPath);
      else if (child.isFile()) await add({ kind: 'file', path: childPath, source: childSource });
    }
  };
  await walk(source, '');
  return items;
}

/** A planned file's bytes, refused if it grew past what a file write carries since it was planned. */
export async function readLocalFile(
  type: LocalEntryType,
  item: LocalItem & { kind: 'file' },
): Promise<Uint8Array> {
  const bytes = await readFile(item.source);
  if (bytes.byteLength > WORKSPACE_FILE_MAX_BYTES)
    throw sourceError(
      type,
      `${type} entry: ${item.source} is ${bytes.byteLength} bytes, over the ${WORKSPACE_FILE_MAX_BYTES} bytes a file copy carries`,
      item.source,
    );
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function sourceError(type: LocalEntryType, message: string, src: string) {
  return type === 'local_file'
    ? new SandboxLocalFileReadError(message, { src })
    : new SandboxLocalDirReadError(message, { src });
}

function overBudget(limit: 'maxExtractedBytes' | 'maxMembers', actual: number, max: number) {
  return new SandboxArchiveError(`local entries over the archive limit ${limit}: ${actual} > ${max}`, {
    limit,
    actual,
    max,
  });
}
