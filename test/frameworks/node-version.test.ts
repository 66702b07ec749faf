import { describe, expect, it } from 'vitest';

describe('the frameworks run', () => {
  it('runs under the Node.js 24 that scripts/provision-node.sh provides', () => {
    expect(process.versions.node).toMatch(/^24\./);
  });
});
