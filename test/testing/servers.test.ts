import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('durable-bash/testing', () => {
  it("starts both provisioned servers in plain Node, through package.json's exports", () => {
    const script = `
      import { createDevServerEnv, createTimeSkippingEnv } from 'durable-bash/testing';
      const skipping = await createTimeSkippingEnv();
      const started = Date.now();
      await skipping.sleep('1 day');
      const skipped = Date.now() - started < 5000;
      await skipping.teardown();
      const dev = await createDevServerEnv();
      const { customAttributes } = await dev.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      await dev.teardown();
      const ours = Object.keys(customAttributes).filter((name) => name.startsWith('BashTask'));
      console.log(skipped, ours.sort().join(' '));`;
    const out = execFileSync('node', ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, DURABLE_BASH_TEST_ADDRESS: '' },
    });
    expect(out).toBe('true BashTaskNotice BashTaskOwner BashTaskStatus\n');
  });
});
