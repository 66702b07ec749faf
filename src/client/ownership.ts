/**
 * The ownership fence: a task belongs to the agent session that started it. The owner is stored as
 * a search attribute with a prefix, so an empty session id is a real owner, distinct from none.
 */

import { createHash } from 'node:crypto';
import { isOwnerHash, type OwnerHasher } from '../codec/owner-hash.js';

const OWNER_PREFIX = 'session:';

/**
 * The search attribute value for a session's ownership. The id is percent-encoded, so the value
 * holds no quote, backslash or space: visibility stores differ in how they unescape those (the dev
 * server's SQLite store matches none of `\\`, `"`), while plain ids like UUIDs read as they are.
 * A lone surrogate, which `encodeURIComponent` refuses, becomes `%uXXXX` (never output otherwise,
 * since `%` itself is encoded), so distinct ids keep distinct tokens.
 */
export function ownerToken(sessionId: string): string {
  let encoded = '';
  for (const char of sessionId) {
    const code = char.codePointAt(0) ?? 0;
    encoded +=
      code >= 0xd800 && code <= 0xdfff
        ? `%u${code.toString(16).toUpperCase()}`
        : encodeURIComponent(char).replace(
            /[!'()*]/g,
            (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
          );
  }
  return `${OWNER_PREFIX}${encoded}`;
}

/**
 * A session's key on worker hosts: its commands share an identity there (a uid, a network), apart
 * from other sessions'. A hash of the owner token, so it names no session id in task inputs and
 * host file names; hex, so it is safe in both.
 */
export function sessionKey(sessionId: string): string {
  return createHash('sha256')
    .update(`durable-bash session\0${ownerToken(sessionId)}`)
    .digest('hex')
    .slice(0, 32);
}

/**
 * Whether a caller (its session id, or undefined for a caller with no agent) may touch a task. A
 * task started with encryption on stores a keyed hash (see codec/owner-hash.ts): only a caller
 * whose client holds that key (`hasher`) can match it.
 */
export function mayAccess(
  storedOwner: string | undefined,
  callerSessionId: string | undefined,
  hasher?: OwnerHasher,
): boolean {
  if (storedOwner === undefined) return true;
  if (callerSessionId === undefined) return false;
  if (isOwnerHash(storedOwner)) return hasher?.matches(storedOwner, ownerToken(callerSessionId)) ?? false;
  if (storedOwner === ownerToken(callerSessionId)) return true;
  // Tasks started before owners were encoded store the id as it was. An id with a `%` may spell
  // another session's token (`%22` is the token of `"`), so only ids without one match that way.
  return !callerSessionId.includes('%') && storedOwner === `${OWNER_PREFIX}${callerSessionId}`;
}

/** The session id an owner token stands for. */
export function sessionOfOwner(token: string): string {
  const encoded = token.startsWith(OWNER_PREFIX) ? token.slice(OWNER_PREFIX.length) : token;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded; // Not one of ours: show it as stored.
  }
}
