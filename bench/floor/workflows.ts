/**
 * Temporal's own floors, as plain Temporal code with nothing of durable-bash in it: the minimum
 * round trip (a workflow running one trivial activity) and the burst floor's unit (a workflow
 * running one activity that heartbeats once a minute until it is ended; with a spawn, the same
 * activity running a command), the round trip with the guarantees a durable-bash run keeps (a
 * local activity before the activity, one heartbeat in it, a search attribute upserted at the end),
 * and the units of a notice, a reminder and a read. Bundled by the bench (bundleWorkflowCode) for a
 * worker in the bench process.
 */

import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import {
  condition,
  defineSignal,
  defineUpdate,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type * as activities from './activities.js';

const { trivial } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

const { heartbeatUntilCancelled, spawnUntilCancelled } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 day',
  // A few minutes, as a durable-bash task's command activity has.
  heartbeatTimeout: '150 seconds',
  retry: { maximumAttempts: 1 },
});

export async function roundTripFloor(): Promise<void> {
  await trivial();
}

const { resolveTrivially } = proxyLocalActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });
const { heartbeatOnce } = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 seconds',
  heartbeatTimeout: '150 seconds',
  retry: { maximumAttempts: 1 },
});

/** A keyword attribute the bench's server has registered (durable-bash's status attribute). */
const statusAttribute = defineSearchAttributeKey('BashTaskStatus', SearchAttributeType.KEYWORD);

/**
 * The round trip with a durable-bash run's three guarantees, as plain Temporal code pays for them: a
 * local activity's marker before the activity (the host and config a run records), one heartbeat
 * in the activity (the attach heartbeat), a search attribute upserted at the end (the status). Five
 * actions, as a foreground run's.
 */
export async function guardedRoundTripFloor(): Promise<void> {
  const resolved = await resolveTrivially();
  await heartbeatOnce(resolved);
  upsertSearchAttributes([{ key: statusAttribute, value: 'completed' }]);
}

export async function burstFloor(): Promise<void> {
  await heartbeatUntilCancelled();
}

/** The burst floor's unit with the command run: its activity spawns `bash -c command` and keeps it. */
export async function burstSpawnFloor(command: string): Promise<void> {
  await spawnUntilCancelled(command);
}

/** A message Temporal delivers to a worker elsewhere: each signal, one activity (a notice's floor). */
export const messageSignal = defineSignal('message');

/** Runs one trivial activity per `message` signal, in turn, until `count` ran (signal-with-start it). */
export async function messageFloor(count: number): Promise<void> {
  let pending = 0;
  setHandler(messageSignal, () => {
    pending++;
  });
  for (let done = 0; done < count; done++) {
    await condition(() => pending > 0);
    pending--;
    await trivial();
  }
}

/** A durable timer, then one trivial activity (a reminder's floor). */
export async function timerFloor(ms: number): Promise<void> {
  await sleep(ms);
  await trivial();
}

/** A read's floor: an update whose handler runs one trivial activity, answered by the workflow. */
export const readUpdate = defineUpdate<void>('read');

/** Answers `read` updates (each running one activity) until cancelled. */
export async function updateFloor(): Promise<void> {
  setHandler(readUpdate, async () => {
    await trivial();
  });
  await condition(() => false);
}
