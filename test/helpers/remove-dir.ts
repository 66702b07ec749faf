import { rmSync } from 'node:fs';

/**
 * Removes a directory a worker or its supervisors wrote in. A supervisor told to end its command
 * records the end a moment later, so a file can appear while the tree is being removed (ENOTEMPTY):
 * the removal is tried again, as rmSync's own retries do, for up to about a second.
 */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
