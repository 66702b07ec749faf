/**
 * When a workspace was last used: its directory's mtime, set by each workspace operation and each
 * command attempt in it. The workspace sweep (workspace-sweep.ts) removes the ones unused for the
 * spill retention.
 */
import { utimesSync } from 'node:fs';
import path from 'node:path';

/**
 * The workspace made here that `dir` lies in (`<workspaceDir>/<session key>/<id>`), if any. A
 * root its caller chose elsewhere is not this host's to sweep, so it has none.
 */
export function workspaceRootOf(workspaceDir: string, dir: string): string | undefined {
  if (!dir.startsWith(`${workspaceDir}/`)) return undefined;
  const [key, id] = dir.slice(workspaceDir.length + 1).split('/');
  if (!key || !id) return undefined;
  return path.join(workspaceDir, key, id);
}

/** Marks the workspace `dir` lies in as used now; nothing for a directory outside the workspaces. */
export function markWorkspaceUsed(workspaceDir: string, dir: string): void {
  const root = workspaceRootOf(workspaceDir, dir);
  if (root === undefined) return;
  try {
    const now = new Date();
    utimesSync(root, now, now);
  } catch {
    // Gone (destroyed, or never made): nothing to keep.
  }
}
