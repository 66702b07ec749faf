import { TestWorkflowEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { registerSearchAttributes } from '../../src/client/register-search-attributes.js';
import { findTemporalBinary, TemporalBinary } from '../../src/dev-server/binaries.js';
import { ownerSearchAttribute, statusSearchAttribute } from '../../src/shared/search-attributes.js';

describe('registerSearchAttributes', () => {
  it('adds the attributes a namespace lacks when it has some of them already (an upgrade), and again is a no-op', async () => {
    const binary = findTemporalBinary(TemporalBinary.cli);
    if (binary.kind === 'download') throw new Error('no provisioned Temporal CLI');
    // A namespace registered by an earlier version: the owner and status attributes only.
    const env = await TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: binary.path },
        searchAttributes: [ownerSearchAttribute, statusSearchAttribute],
        extraArgs: ['--log-level', 'error'],
      },
    });
    try {
      const ours = async () => {
        const { customAttributes } = await env.connection.operatorService.listSearchAttributes({
          namespace: 'default',
        });
        return Object.keys(customAttributes)
          .filter((name) => name.startsWith('BashTask'))
          .sort();
      };
      expect(await ours()).toEqual(['BashTaskOwner', 'BashTaskStatus']);
      await registerSearchAttributes(env.connection, 'default');
      expect(await ours()).toEqual(['BashTaskNotice', 'BashTaskOwner', 'BashTaskStatus']);
      await registerSearchAttributes(env.connection, 'default');
      expect(await ours()).toEqual(['BashTaskNotice', 'BashTaskOwner', 'BashTaskStatus']);
    } finally {
      await env.teardown();
    }
  });
});
