import os from 'node:os';

/**
 * The session id the CLI acts as when no --owner is given: the same for a user on a host across
 * restarts, so `ps`, `logs` and `kill` find the tasks an earlier `run --background` started.
 */
export function localSessionId(): string {
  return `cli:${os.userInfo().username}@${os.hostname()}`;
}
