import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { localSessionId } from '../../src/cli/identity.js';
import { BashTasks } from '../../src/client/bash-tasks.js';
import { mayAccess, ownerToken, sessionOfOwner } from '../../src/client/ownership.js';

describe('owner tokens', () => {
  it('percent-encode ids, keep plain ones readable, and decode back', () => {
    expect(ownerToken('3f6c-41')).toBe('session:3f6c-41');
    expect(ownerToken('a\' b\\"c')).toBe('session:a%27%20b%5C%22c');
    expect(ownerToken('')).toBe('session:');
    for (const id of ['3f6c-41', 'a\' b\\"c', 'ü€😀', '%u41', ''])
      expect(sessionOfOwner(ownerToken(id))).toBe(id);
  });

  it('give lone surrogates a token of their own, never one shared with another id', () => {
    const lone = 'a\uD800';
    expect(ownerToken(lone)).toBe('session:a%uD800');
    expect(ownerToken(lone)).not.toBe(ownerToken('a\uFFFD'));
    expect(ownerToken(lone)).not.toBe(ownerToken('a%uD800'));
  });

  it('let the owner in, also under the raw form older tasks stored, and keep others out', () => {
    expect(mayAccess(ownerToken('a b'), 'a b')).toBe(true);
    expect(mayAccess('session:a b', 'a b')).toBe(true);
    expect(mayAccess(ownerToken('a b'), 'a')).toBe(false);
    expect(mayAccess(ownerToken(''), undefined)).toBe(false);
    expect(mayAccess(undefined, undefined)).toBe(true);
  });
});

describe('the CLI identity', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('names a user with no passwd entry by uid instead of failing', () => {
    vi.spyOn(os, 'userInfo').mockImplementation(() => {
      throw new Error('uv_os_get_passwd returned ENOENT');
    });
    expect(localSessionId()).toBe(`cli:uid-${process.getuid?.()}@${os.hostname()}`);
  });
});

describe('BashTasks options', () => {
  const client = new Client({ connection: Connection.lazy() });

  it('refuse zero and negative limits that Temporal would read as "none"', () => {
    expect(() => new BashTasks({ client, noticeWindowMs: 0 })).toThrow(
      'noticeWindowMs must be a positive number, got 0',
    );
    expect(() => new BashTasks({ client, reader: { idleMs: -1 } })).toThrow(
      'reader.idleMs must be a positive number, got -1',
    );
    expect(() => new BashTasks({ client, reader: { claimsPerRun: 0 } })).toThrow(
      'reader.claimsPerRun must be a positive integer, got 0',
    );
  });
});
