/**
 * What a tree of files holds on disk, as `du` counts it: `st_blocks * 512` of every entry (the
 * directories too), links never followed, a file with several names counted once. The walk runs on
 * the worker's main thread in slices, so a huge tree never stalls it, and stops at a bound.
 */
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * What a walk found: bytes on disk, and entries counted; `complete` is false when there were more
 * entries than its bound (it stopped at the one past it).
 */
export interface DiskUse {
  bytes: number;
  files: number;
  complete: boolean;
}

/**
 * Entries walked before the walk lets the event loop run: synchronous `lstat` calls take 2-4 µs
 * each here (a walk of 100,100 files took 330-390 ms, against 1.2-1.5 s for the same walk through
 * libuv's thread pool), so a slice holds the loop for 3-10 ms.
 */
const SLICE_FILES = 1_000;

/**
 * The bytes that `roots` (files or directories, missing ones counting for nothing) hold on disk,
 * and how many entries they are, walked until more than `maxFiles` entries were counted. Entries that vanish
 * during the walk count for nothing. `ownerMayOpen`: a directory whose mode closes it to the
 * walker is opened to its owner (u+rx) first, for a walker that is that owner without the right
 * to read past modes (a worker without root, whose sessions run as its own uid).
 */
export async function diskUsage(
  roots: readonly string[],
  maxFiles: number,
  ownerMayOpen = false,
): Promise<DiskUse> {
  const seen = new Set<string>();
  const dirs: string[] = [];
  let bytes = 0;
  let files = 0;
  /** Counts an entry; false once there are more than `maxFiles`. */
  const count = (entry: string): boolean => {
    const stat = lstatSync(entry, { throwIfNoEntry: false });
    if (stat === undefined) return true;
    files += 1;
    const inode = `${stat.dev}:${stat.ino}`;
    if (stat.nlink > 1 && !stat.isDirectory()) {
      if (seen.has(inode)) return files <= maxFiles;
      seen.add(inode);
    }
    bytes += stat.blocks * 512;
    if (stat.isDirectory()) dirs.push(entry);
    return files <= maxFiles;
  };
  for (const root of roots) if (!count(root)) return { bytes, files, complete: false };
  let sliced = 0;
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    for (const name of listDir(dir, ownerMayOpen)) {
      if (!count(path.join(dir, name))) return { bytes, files, complete: false };
      if (++sliced === SLICE_FILES) {
        sliced = 0;
        await nextTurn();
      }
    }
  }
  return { bytes, files, complete: true };
}

/** A directory's names; none when it is gone, or closed to the walker (and not opened, see `diskUsage`). */
function listDir(dir: string, ownerMayOpen: boolean): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' || !ownerMayOpen) return [];
  }
  try {
    const stat = lstatSync(dir);
    if (stat.uid !== process.getuid?.()) return [];
    chmodSync(dir, (stat.mode & 0o7777) | 0o500);
    return readdirSync(dir);
  } catch {
    return [];
  }
}
