import { readFileSync } from 'node:fs';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';

/**
 * Histories recorded on the dev server (`fetchHistory()`, stored as protobufjs objects). Replaying
 * them against today's bundle proves that a change to the workflows stays deterministic for runs
 * already in flight: `completion-notice-delivered` is a completion notice's own run. The `bashOutputReader` runs come from each of its versions: v1 always ended when
 * idle, v2 waited without a timer while its task ran, v3 tells and probes its task. The `host-queue-*`
 * runs come from the version that runs each command on its host's own queue: a completed task, a
 * foreground timeout, and a kill sent while the host's worker was down (the stop activity). The
 * `eager-first-attempt-*` runs come from the version whose first attempt runs on the workflow's own
 * queue (patch `command-first-attempt-eager`): a completed run, and one whose worker restarted
 * (the eager attempt failed, the host queue's attempt re-attached) and that was then killed.
 * `moved-to-background` is a foreground run that the `moveToBackground` update moved (patch
 * `move-to-background`): its timer cancelled, its foreground attempt released, a background attempt
 * re-attached, and a completion notice at its end. `stdin-written-and-closed` is a background run
 * started with `keepStdinOpen` that took two `writeStdin` updates (each a write activity on its
 * host's queue), the second closing its stdin. The runs of the version that reads on the host
 * (issue 13): `host-reads-stdin-killed` sends its stdin write and its kill's stop to the host's
 * control queue (patch `control-queue`);
 * `output-reader-v4-host-reads` is its reader, whose `read` updates ran `readOutput` there; and
 * `moved-to-background-released-on-host` is a foreground run moved to the background whose move
 * also sent `releaseCommand` to the host (patch `move-releases-on-host`).
 * `stop-ends-run-killed-while-down` is a run killed while its host's worker was down whose stop's
 * recorded end closed it with the crashed worker's attempt still open (its stop said `unattended`). The runs of `bashTask`
 * before per-host queues are retired with their path (src/shared/patches.ts).
 */
const fixtures = [
  'completion-notice-delivered',
  'output-reader-v1-continued-as-new',
  'output-reader-v1-idle-end',
  'output-reader-v2-continued-as-new',
  'output-reader-v2-idle-end',
  'output-reader-v3-first-run',
  'output-reader-v3-idle-end',
  'host-queue-completed',
  'host-queue-timed-out',
  'host-queue-killed-while-down',
  'eager-first-attempt-completed',
  'eager-first-attempt-reattached-then-killed',
  'moved-to-background',
  'stdin-written-and-closed',
  'host-reads-stdin-killed',
  'output-reader-v4-host-reads',
  'moved-to-background-released-on-host',
  'stop-ends-run-killed-while-down',
] as const;

/**
 * Read with `History.fromObject` rather than the SDK's JSON reader: in this dependency tree
 * `@temporalio/common` and `@temporalio/proto` each carry their own protobufjs 8, and
 * `historyFromJSON` fails across the two copies ("type must be a Type").
 */
function history(name: (typeof fixtures)[number]) {
  const json = readFileSync(new URL(`../fixtures/histories/${name}.json`, import.meta.url), 'utf8');
  return proto.temporal.api.history.v1.History.fromObject(JSON.parse(json));
}

describe('workflow replay', () => {
  it.each(fixtures)('replays the recorded %s history without nondeterminism', async (name) => {
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history(name)),
    ).resolves.toBeUndefined();
  });
});
