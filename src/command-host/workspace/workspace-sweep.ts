/**
 * Removes the workspaces nobody uses any more (docs/SANDBOXES.md, "Cleanup"): one made here under
 * the workspace directory (a root its caller chose is theirs to remove) whose last use
 * (workspace-use.ts) is older than the spill retention, and in which no command of this host may
 * still run: no task's attempt record names a workdir inside it without its end recorded. It goes
 * as `destroy` removes one: emptied as its session, then its directory.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { SPILL_SWEEP_INTERVAL_MS } from '../../shared/limits.js';
import type { CompiledExecutorOptions } from '../executor-config.js';
import type { AttemptRecord } from '../supervisor/task-files.js';
import { runWorkspaceRequest, SESSION_KEY, type WorkspaceHostConfig } from './workspace-host.js';
import { workspaceRootOf } from './workspace-use.js';

export type WorkspaceSweepConfig = WorkspaceHostConfig & Pick<CompiledExecutorOptions, 'spillRetentionMs'>;

/** Sweeps at most once per SPILL_SWEEP_INTERVAL_MS, as the spill directory's sweep. */
export class WorkspaceSweeper {
  private lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly config: WorkspaceSweepConfig) {}

  /** The roots removed; none when the last sweep is less than an interval old. */
  async sweepIfDue(nowMs = Date.now()): Promise<string[]> {
    if (nowMs - this.lastSweepMs < SPILL_SWEEP_INTERVAL_MS) return [];
    this.lastSweepMs = nowMs;
    return sweepWorkspaces(this.config, nowMs);
  }
}

/** Removes each unused workspace (see the file's header); returns their roots. */
export async function sweepWorkspaces(config: WorkspaceSweepConfig, nowMs = Date.now()): Promise<string[]> {
  const idle = await idleWorkspaces(config.workspaceDir, nowMs - config.spillRetentionMs);
  if (idle.length === 0) return [];
  // Read only when some workspace is idle: most sweeps stat a few directories and stop.
  const busy = await workspacesInUse(config);
  const removed: string[] = [];
  for (const { sessionKey, root } of idle) {
    if (busy.has(root)) continue;
    try {
      await runWorkspaceRequest(config, { op: 'destroy', workspace: { sessionKey, root } });
      removed.push(root);
    } catch {
      // Left for the next sweep (a launch that failed, a file the session cannot remove).
    }
  }
  return removed;
}

/** The workspaces under `workspaceDir` last used before `beforeMs`. */
async function idleWorkspaces(
  workspaceDir: string,
  beforeMs: number,
): Promise<{ sessionKey: string; root: string }[]> {
  const idle: { sessionKey: string; root: string }[] = [];
  for (const sessionKey of await names(workspaceDir)) {
    if (!SESSION_KEY.test(sessionKey)) continue;
    for (const id of await names(path.join(workspaceDir, sessionKey))) {
      const root = path.join(workspaceDir, sessionKey, id);
      const stat = await fs.stat(root).catch(() => undefined);
      if (stat?.isDirectory() && stat.mtimeMs < beforeMs) idle.push({ sessionKey, root });
    }
  }
  return idle;
}

/** The workspaces a task of this host may still run in: its attempt names a workdir there, and no end is recorded. */
async function workspacesInUse(config: WorkspaceSweepConfig): Promise<Set<string>> {
  const inUse = new Set<string>();
  for (const name of await names(config.spillDir)) {
    if (!name.endsWith('.attempt')) continue;
    const base = path.join(config.spillDir, name.slice(0, -'.attempt'.length));
    const attempt = await fs
      .readFile(`${base}.attempt`, 'utf8')
      .then((text) => JSON.parse(text) as AttemptRecord)
      .catch(() => undefined);
    const root = attempt?.workdir && workspaceRootOf(config.workspaceDir, attempt.workdir);
    if (!root || inUse.has(root)) continue;
    const ended = await fs.access(`${base}.exit`).then(
      () => true,
      () => false,
    );
    if (!ended) inUse.add(root);
  }
  return inUse;
}

async function names(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}
