import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('the built package', () => {
  it("imports in plain Node (no loader) by its name, through package.json's exports", () => {
    const script = `
      import { createBashTools, createBashWorker, bundleWorkflows } from 'durable-bash';
      console.log([typeof createBashTools, typeof createBashWorker, typeof bundleWorkflows].join(' '));`;
    const out = execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('function function function\n');
  });

  it('bundles its workflows from the compiled files', async () => {
    const script = `
      import { DefaultLogger } from '@temporalio/worker';
      import { bundleWorkflows } from 'durable-bash';
      const { code } = await bundleWorkflows(new DefaultLogger('WARN'));
      console.log(code.includes('bashTask') ? 'ok' : 'missing');`;
    const out = execFileSync('node', ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out).toBe('ok\n');
  });
});
