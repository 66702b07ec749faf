/**
 * Workflow patches (`patched(id)`): each marks the runs recorded after a change, so runs recorded
 * before it replay the old way. The policy:
 *
 * - A change to what a workflow does (a command, an order, a new await) that runs already recorded
 *   could meet on replay goes behind a new patch here, with a replay fixture in
 *   test/fixtures/histories recorded before the change (test/workflows/replay.test.ts).
 * - A patch becomes `deprecatePatch(id)` once no worker that recorded runs without it can still
 *   have one open (a release and the longest a task lives later), and is removed with its old
 *   branch one release after that, with the fixtures that only the old branch replays.
 * - durable-bash has not been released yet (no tag, not on npm): every patch below marks
 *   development histories, and all may be retired together before 1.0.
 * - Retired so far: the runs recorded before per-host queues, whose command ran once on the shared
 *   queue (no `lostAfterMs` in their spec). Their path and their four fixtures (background-completed,
 *   background-completed-with-notice, background-killed, background-tells-reader) were removed
 *   together; no worker of a release ever recorded one.
 */

/**
 * Stops and stdin writes go to the host's control queue; runs recorded before it sent them to the
 * host queue. Fixtures: host-reads-stdin-killed (with it), host-queue-killed-while-down and
 * stdin-written-and-closed (before it).
 */
export const CONTROL_QUEUE_PATCH = 'control-queue';

/** Marks a foreground run that moved to the background (the update was new). Fixtures: moved-to-background*. */
export const MOVE_TO_BACKGROUND_PATCH = 'move-to-background';

/**
 * The command's first attempt goes on the workflow's own queue, eagerly dispatched. Fixtures:
 * eager-first-attempt-* (with it), host-queue-* (before it). Runs recorded since the spec says so
 * (`eagerFirstAttempt`, fixtures eager-first-attempt-by-spec*) no longer call it: the call came
 * right after `resolveCommand`, and when that local activity's result reached the workflow in the
 * next workflow task (seen under load), SDK 1.24 replays the result one task early, before it
 * has learnt of the marker, so the run no longer replays (fixture eager-patch-after-local-activity-wft).
 */
export const EAGER_PATCH = 'command-first-attempt-eager';

/**
 * A move to the background tells the host at once. Fixtures: moved-to-background-released-on-host
 * (with it), moved-to-background (before it).
 */
export const RELEASE_ON_HOST_PATCH = 'move-releases-on-host';

/**
 * An ended background task signals its output reader. Fixtures with it: host-reads-stdin-killed,
 * moved-to-background*; every run recorded before it ran on the shared queue and is retired, so
 * this is the next patch to become `deprecatePatch`.
 */
export const TELL_READER_PATCH = 'tell-output-reader-the-task-ended';

/**
 * The output reader tells its task it started and probes whether the task still runs. Fixtures:
 * output-reader-v3-* and v4 (with it), output-reader-v1-* and v2-* (before it).
 */
export const PROBE_PATCH = 'reader-tells-and-probes-its-task';

/**
 * A completion notice whose window ran out marks itself for its session's `bash_list` (the owner
 * and `BashTaskNotice` search attributes). Fixtures: completion-notice-expired-marked (with it),
 * completion-notice-expired-unmarked (before it: a notice that had its task's owner, recorded by a
 * worker that did not mark).
 */
export const MARK_UNDELIVERED_PATCH = 'notice-marks-itself-undelivered';

/**
 * A task that reads have seen leaves its completion notice to its reader, which leaves out the
 * output they showed (one signal, as before, now carrying the notice; the notice is the reader's
 * child). Fixtures: notice-after-reads-task and notice-after-reads-reader (with it);
 * moved-to-background* and host-reads-stdin-killed (before it: the task started the notice and
 * signalled its reader).
 */
export const NOTICE_AFTER_READS_PATCH = 'notice-leaves-out-what-reads-showed';
