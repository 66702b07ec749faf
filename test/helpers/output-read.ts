/** The render tests' input: a read of a running task, changed as each test needs. */
import type { OutputRead } from '../../src/shared/read-position.js';

/** The host the render tests read from, and that their reads' spill files are on. */
export const READ_HOST = 'host-a';

/** A read of a running task on READ_HOST with nothing new, changed by `overrides`: the render tests' input. */
export function outputRead(overrides: Partial<OutputRead> = {}): OutputRead {
  return {
    state: { status: 'running' },
    stdout: { text: '', droppedBytes: 0 },
    stderr: { text: '', droppedBytes: 0 },
    host: READ_HOST,
    unclaimed: false,
    ...overrides,
  };
}
