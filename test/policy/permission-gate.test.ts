import { describe, expect, it } from 'vitest';
import { checkPermission } from '../../src/policy/permission-gate.js';
import type { PermissionDecision, PermissionRequest } from '../../src/policy/policy-types.js';
import { CommandDeniedError, CommandNotApprovedError } from '../../src/shared/errors.js';

const request: PermissionRequest = { command: 'git push', workdir: '/w', background: false, sessionId: 's' };
const ask: PermissionDecision = { action: 'ask', reason: 'pushes need a person' };

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CommandDeniedError || err instanceof CommandNotApprovedError) return err.message;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('checkPermission', () => {
  it('lets every call through with no policy', async () => {
    await expect(checkPermission(request, {}, undefined)).resolves.toEqual({ kind: 'allowed' });
  });

  it('denies with the policy reason, on one line', async () => {
    const policy = () => ({ action: 'deny' as const, reason: 'no pushes\non Fridays' });
    expect(await refusal(checkPermission(request, { policy }, undefined))).toBe(
      'command denied: no pushes on Fridays',
    );
  });

  it('asks the approver with the request and the reason', async () => {
    const seen: unknown[] = [];
    const approve = async (r: PermissionRequest, reason: string) => {
      seen.push(r, reason);
      return true;
    };
    await checkPermission(request, { policy: async () => ask, approve }, undefined);
    expect(seen).toEqual([request, 'pushes need a person']);
  });

  it('refuses what the approver does not approve', async () => {
    for (const answer of [false, undefined, 'yes']) {
      const approve = async () => answer as boolean;
      expect(await refusal(checkPermission(request, { policy: () => ask, approve }, undefined))).toBe(
        'command not approved: pushes need a person',
      );
    }
  });

  it('treats an ask as a denial with no approver', async () => {
    expect(await refusal(checkPermission(request, { policy: () => ({ action: 'ask' }) }, undefined))).toBe(
      'command denied: the permission policy asks for approval, and no approver is configured',
    );
  });

  it('defers an ask with no approver, or an approver that defers, where the session can wait', async () => {
    const policy = () => ask;
    expect(await checkPermission(request, { policy }, undefined, true)).toEqual({
      kind: 'deferred',
      reason: 'pushes need a person',
    });
    const approve = async () => 'defer' as const;
    expect(await checkPermission(request, { policy, approve }, undefined, true)).toEqual({
      kind: 'deferred',
      reason: 'pushes need a person',
    });
    expect(await refusal(checkPermission(request, { policy, approve }, undefined, false))).toBe(
      'command not approved: pushes need a person; the approver deferred it, and approval requests need an agent host that takes notices',
    );
    await expect(
      checkPermission(request, { policy, approve: async () => true }, undefined, true),
    ).resolves.toEqual({ kind: 'allowed' });
  });

  it('stops waiting for approval when the call is aborted, and tells the approver', async () => {
    const controller = new AbortController();
    let approverSignal: AbortSignal | undefined;
    const approve = (_r: PermissionRequest, _reason: string, signal: AbortSignal) => {
      approverSignal = signal;
      return new Promise<boolean>(() => undefined);
    };
    setTimeout(() => controller.abort(), 50);
    expect(await refusal(checkPermission(request, { policy: () => ask, approve }, controller.signal))).toBe(
      'command not approved: the call was aborted while waiting for approval',
    );
    expect(approverSignal?.aborted).toBe(true);
    expect(
      await refusal(
        checkPermission(request, { policy: () => ask, approve: async () => true }, controller.signal),
      ),
    ).toBe('command not approved: the call was aborted while waiting for approval');
  });

  it('fails closed when the policy or the approver throws, or answers no decision', async () => {
    const failing = () => {
      throw new Error('rules file\nunreadable');
    };
    expect(await refusal(checkPermission(request, { policy: failing }, undefined))).toBe(
      'command denied: the permission policy failed: rules file unreadable',
    );
    expect(
      await refusal(
        checkPermission(
          request,
          { policy: () => ask, approve: () => Promise.reject(new Error('UI closed')) },
          undefined,
        ),
      ),
    ).toBe('command not approved: the approver failed: UI closed');
    const garbage = () => ({ action: 'maybe' }) as unknown as PermissionDecision;
    expect(await refusal(checkPermission(request, { policy: garbage }, undefined))).toBe(
      'command denied: the permission policy gave no decision',
    );
  });
});
