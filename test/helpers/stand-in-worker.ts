/**
 * A worker with stand-in command activities, for tests whose subject is the bashTask workflow's own
 * logic on the time-skipping server: `resolveCommand` makes a spec for a host that is the worker's
 * own queue, and the test supplies `runCommand` and `stopCommand`.
 */
import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { DEFAULT_LOST_AFTER_MS } from '../../src/shared/limits.js';
import type { BashTaskInput, CommandOutcome, CommandSpec, StopResult } from '../../src/shared/task.js';
import { controlTaskQueue } from '../../src/shared/task-queues.js';

export interface StandIns {
  /** Merged over the resolved spec (its host is the worker's own queue). */
  spec?: Partial<CommandSpec>;
  /** The command attempt; `started()` resolves the body's `commandStarted`. */
  runCommand(spec: CommandSpec, taskQueue: string, started: () => void): Promise<CommandOutcome>;
  stopCommand(): Promise<StopResult>;
}

/** Runs `body` with the stand-ins on a fresh queue; it gets the queue and a promise of the command's start. */
export async function withStandInWorker<T>(
  env: TestWorkflowEnvironment,
  standIns: StandIns,
  body: (taskQueue: string, commandStarted: Promise<void>) => Promise<T>,
): Promise<T> {
  const taskQueue = `stand-in-${randomUUID()}`;
  let started: () => void = () => undefined;
  const commandStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    // A cancellation reaches an activity only in a heartbeat's answer; the SDK would otherwise send
    // heartbeats at most once a minute (0.8 of the stand-in's hours-long heartbeat timeouts).
    maxHeartbeatThrottleInterval: 50,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities: {
      async resolveCommand(input: BashTaskInput): Promise<CommandSpec> {
        return {
          taskId: input.taskId,
          command: input.command,
          workdir: '/',
          background: input.background,
          taskQueue,
          hostQueue: taskQueue,
          hostId: 'stand-in',
          lostAfterMs: DEFAULT_LOST_AFTER_MS,
          ...(input.background ? {} : { timeoutMs: input.timeoutMs }),
          ...standIns.spec,
        };
      },
      runCommand: (spec: CommandSpec) => standIns.runCommand(spec, taskQueue, started),
      stopCommand: () => standIns.stopCommand(),
    },
  });
  // The host's control queue, where stops go (as a real host's worker serves it).
  const control = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: controlTaskQueue(taskQueue),
    activities: { stopCommand: () => standIns.stopCommand() },
  });
  const done = body(taskQueue, commandStarted);
  const [result] = await Promise.all([worker.runUntil(done), control.runUntil(done.catch(() => undefined))]);
  return result;
}

/** Heartbeats every 50 ms (of the server's clock) until the attempt is cancelled, as a running command's activity does. */
export async function heartbeatUntilCancelled(): Promise<void> {
  const context = Context.current();
  for (;;) {
    context.heartbeat();
    const cancelled = await Promise.race([
      context.cancelled.then(
        () => false,
        () => true,
      ),
      context.sleep(50).then(() => false),
    ]);
    if (cancelled) return;
  }
}
