/**
 * Workflow patches (`patched(id)`): each marks the runs recorded after a change to what a workflow
 * does, so that runs recorded by the release before it replay the old way. docs/RELEASING.md says
 * when a change needs one and how a patch is deprecated and removed.
 *
 * The first release (0.2.0) retired every patch of the development builds with their old branches
 * and their recorded histories. Each release's own histories live in
 * test/fixtures/histories/<version>/, and test/workflows/replay.test.ts replays them all.
 */

/**
 * `bashTask` signals the reminders that watch it (`watchEnd`) when it ends. Checked only when a
 * reminder watches the task, so a run nobody watches records no marker: a 0.2.0 history replays
 * the old branch (it sent nothing, even if a watch signal reached its worker before the upgrade);
 * the new branch is covered by test/tools/bash-remind.test.ts until the next release records it.
 * Deprecate it in the release after the next (a watched task can run for days).
 */
export const END_WATCHERS_PATCH = 'end-watchers';
