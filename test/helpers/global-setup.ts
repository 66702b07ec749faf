import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { bundleWorkflows } from '../../src/worker/workflow-bundle.js';

declare module 'vitest' {
  export interface ProvidedContext {
    workflowBundlePath: string;
  }
}

/** Bundles the workflows once for the whole run; every test worker loads the same bundle. */
export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-bundle-'));
  const file = path.join(dir, 'workflows.js');
  writeFileSync(file, (await bundleWorkflows(new DefaultLogger('WARN'))).code);
  project.provide('workflowBundlePath', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
