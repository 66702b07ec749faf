/** The render tests' inputs: a read of a running task and a run's result, changed as each test needs. */
import type { OutputRead } from '../../src/shared/read-position.js';
import type { BashTaskResult } from '../../src/shared/task.js';

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

/** `text` as a result's tail carries bytes that are not text. */
export const b64 = (text: string) => Buffer.from(text).toString('base64');

/** The result of a run on READ_HOST that exited 0 and printed nothing, changed by `overrides`. */
export function runResult(overrides: Partial<BashTaskResult> = {}): BashTaskResult {
  return {
    exitCode: 0,
    signal: null,
    stdout: { bytes: 0, tailBase64: b64('') },
    stderr: { bytes: 0, tailBase64: b64('') },
    host: READ_HOST,
    ...overrides,
  };
}
