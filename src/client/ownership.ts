/**
 * The ownership fence: a task belongs to the agent session that started it. The owner is stored as
 * a search attribute with a prefix, so an empty session id is a real owner, distinct from none.
 */

const OWNER_PREFIX = 'session:';

/** The search attribute value for a session's ownership. */
export function ownerToken(sessionId: string): string {
  return `${OWNER_PREFIX}${sessionId}`;
}

/** Whether a caller (its session id, or undefined for a caller with no agent) may touch a task. */
export function mayAccess(storedOwner: string | undefined, callerSessionId: string | undefined): boolean {
  if (storedOwner === undefined) return true;
  return callerSessionId !== undefined && storedOwner === ownerToken(callerSessionId);
}
