import os from 'node:os';
import { userName } from '../agent-host/names.js';

/**
 * The session id the CLI acts as when no --owner is given: the same for a user on a host across
 * restarts, so `ps`, `logs` and `kill` find the tasks an earlier `run --background` started. A user
 * with no passwd entry (a container run with a bare uid) is named by uid.
 */
export function localSessionId(): string {
  return `cli:${userName()}@${os.hostname()}`;
}
