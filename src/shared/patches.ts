/**
 * Workflow patches (`patched(id)`): each marks the runs recorded after a change to what a workflow
 * does, so that runs recorded by the release before it replay the old way. docs/RELEASING.md says
 * when a change needs one and how a patch is deprecated and removed.
 *
 * None is in force: the first release (0.2.0) retired every patch of the development builds with
 * their old branches and their recorded histories. Each release's own histories live in
 * test/fixtures/histories/<version>/, and test/workflows/replay.test.ts replays them all.
 */
export {};
