import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { runFailure } from '../../src/shared/run-failure.js';
import { failedState, KILLED_BEFORE_START, statusLine } from '../../src/shared/status-line.js';
import { RunFailureType } from '../../src/shared/task.js';
import { shellExitCode } from '../../src/tools/sandbox-commands.js';

const attempt = (cause: Error) =>
  new ActivityFailure(
    'activity failed',
    'runCommand',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'worker',
    cause,
  );

const tombstone = () =>
  ApplicationFailure.create({
    type: RunFailureType.killedBeforeStart,
    message: KILLED_BEFORE_START,
    nonRetryable: true,
  });

describe('the status of a task killed before its command started', () => {
  it.each([
    ['its workflow was cancelled', new CancelledFailure('Workflow canceled')],
    ['its attempt was cancelled', attempt(new CancelledFailure('Activity cancelled'))],
    ['its attempt met the tombstone the kill left', attempt(tombstone())],
    ['its run failed with that tombstone', tombstone()],
  ])('is killed, never failed, when %s', (_, failure) => {
    expect(failedState(failure)).toEqual({ status: 'killed' });
    expect(statusLine(failedState(failure))).toBe('[status: killed before the command started]');
  });

  it('keeps failed for a command that could not run, and lost for a lost worker', () => {
    const workdir = attempt(
      ApplicationFailure.create({
        type: RunFailureType.workdirNotFound,
        message: 'workdir does not exist or is not a directory: /nope',
        nonRetryable: true,
      }),
    );
    expect(statusLine(failedState(workdir))).toBe(
      '[status: failed: workdir does not exist or is not a directory: /nope]',
    );
    const lost = attempt(new TimeoutFailure('heartbeat', undefined, TimeoutType.HEARTBEAT));
    expect(statusLine(failedState(lost))).toBe('[status: lost: its worker stopped answering]');
  });

  it('is a RunFailedError of status killed for a caller waiting on the run', () => {
    for (const cause of [new CancelledFailure('Workflow canceled'), attempt(tombstone())]) {
      const error = runFailure('bash-1', new Error('workflow failed', { cause }));
      expect({ status: error.status, message: error.message }).toEqual({
        status: 'killed',
        message: 'killed before the command started',
      });
    }
  });

  it('exits 1 in a sandbox, as a command that never ran', () => {
    expect(shellExitCode({ status: 'killed' })).toBe(1);
    expect(shellExitCode({ status: 'killed', signal: 'SIGTERM' })).toBe(143);
  });
});
