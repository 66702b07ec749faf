import { execFileSync } from 'node:child_process';

/** The command lines of this machine's processes that match `pattern`. */
export function processesMatching(pattern: RegExp): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => pattern.test(line));
}

/**
 * Polls `condition` every `intervalMs` until it holds, or fails after `timeoutMs` (with what
 * `explain` says of the state then).
 */
export async function waitFor(
  condition: () => boolean,
  timeoutMs = 10_000,
  intervalMs = 50,
  explain?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs}ms${explain ? `: ${explain()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
