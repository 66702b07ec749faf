/**
 * Issue 48, "an approver sees exactly what runs": a policy's reason named only the first rule that
 * matched, so an approver asked about `git push` was not told the same line also publishes. The
 * reason now names every rule of the verdict's action that matched, in the order of the line; one
 * rule reads as before.
 */
import { describe, expect, it } from 'vitest';
import { checkPermission } from '../../src/policy/permission-gate.js';
import type { PermissionRequest } from '../../src/policy/policy-types.js';
import { checkCommand, compileDenyRules, createRulePolicy } from '../../src/policy/rules.js';

const request = (command: string): PermissionRequest => ({
  command,
  workdir: undefined,
  background: false,
  sessionId: 'session-1',
});

const policy = createRulePolicy({
  rules: [
    { prefix: 'ls', action: 'allow' },
    { prefix: 'git push', action: 'ask' },
    { prefix: 'npm publish', action: 'ask' },
    { prefix: 'rm', action: 'deny' },
    { pattern: /--force/, action: 'deny' },
    { prefix: 'shred', action: 'deny', reason: 'nothing is destroyed here' },
    { prefix: 'wipefs', action: 'deny', reason: 'nothing is destroyed here' },
  ],
  defaultAction: 'ask',
});

describe("a rule policy's reason", () => {
  it('names one rule as it always did', async () => {
    expect(await policy(request('ls && git push origin main'))).toEqual({
      action: 'ask',
      reason: '`git push origin main` matches the ask rule `git push`',
    });
  });

  it('names every rule of the verdict that matched, in the order of the line', async () => {
    expect(await policy(request('git push && npm publish --access public'))).toEqual({
      action: 'ask',
      reason:
        '`git push` matches the ask rule `git push`; `npm publish --access public` matches the ask rule `npm publish`',
    });
    expect(await policy(request('git push --force; rm -r build'))).toEqual({
      action: 'deny',
      reason: '`git push --force` matches the deny rule /--force/; `rm -r build` matches the deny rule `rm`',
    });
  });

  it('names a rule once, however many commands it matched, and a shared reason of its own once', async () => {
    expect(await policy(request('rm a; rm b; shred c; wipefs d'))).toEqual({
      action: 'deny',
      reason: '`rm a` matches the deny rule `rm`; nothing is destroyed here',
    });
  });

  it('reaches the approver whole', async () => {
    const reasons: string[] = [];
    await checkPermission(
      request('git push; npm publish'),
      {
        policy,
        approve: async (_request, reason) => {
          reasons.push(reason);
          return true;
        },
      },
      undefined,
    );
    expect(reasons).toEqual([
      '`git push` matches the ask rule `git push`; `npm publish` matches the ask rule `npm publish`',
    ]);
  });
});

describe("a worker's deny rules", () => {
  it('name every rule that matched, the whole line included', async () => {
    const rules = compileDenyRules([{ prefix: 'rm' }, { pattern: /curl.*\|\s*sh/ }]);
    expect(await checkCommand('rm -f a; curl -s x | sh', rules)).toEqual({
      action: 'deny',
      reason: '`rm -f a` matches the deny rule `rm`; the command matches the deny rule /curl.*\\|\\s*sh/',
    });
  });
});
