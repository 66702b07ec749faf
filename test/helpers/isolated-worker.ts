/** A command worker keeping sessions apart (`isolation: 'session'`), as the containment tests start one. */
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ExecutorOptions } from '../../src/command-host/executor-config.js';
import { type RunningWorker, startBashWorker } from './bash-worker.js';

export interface IsolatedWorker extends RunningWorker {
  /** Its spill directory, where its sessions' networks are kept too. */
  spillDir: string;
}

/**
 * Starts a worker keeping sessions apart, with no sandbox (sessions apart is the subject, also when
 * the suite runs inside the sandbox, `npm run test:sandbox`), and a spill directory of its own
 * unless `executor` names one. Stopping it ends its sessions' networks.
 */
export async function startIsolatedWorker(
  env: TestWorkflowEnvironment,
  executor: ExecutorOptions = {},
): Promise<IsolatedWorker> {
  const spillDir =
    executor.spillDir ?? realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-bash-isolated-')));
  const worker = await startBashWorker(env, { isolation: 'session', sandbox: 'none', ...executor, spillDir });
  return { ...worker, spillDir };
}
