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

/**
 * A task whose completion notice cannot start because its id is taken hands the notice to the
 * workflow holding it, a monitor's notice workflow (`signal completionNotice`). Checked only on
 * that path, which 0.2.0 took only for a task reset and run again (it logged and sent nothing): a
 * 0.2.0 history replays the old branch. The new branch is covered by test/tools/bash-monitor.test.ts
 * until the next release records it. Deprecate it in the release after the next.
 */
export const NOTICE_CHANNEL_PATCH = 'notice-channel';

/**
 * A kill that comes while `bashTask` resolves its command (its first local activity, before any
 * host is chosen) marks the task killed, as a kill at any later point before the command starts
 * does. 0.2.0 left the status search attribute `running` on a run closed as cancelled, so listings
 * that filter on it showed it running. Checked only on that path: a 0.2.0 history replays the old
 * branch. The new branch is covered by test/workflows/bash-task.test.ts until the next release
 * records it. Deprecate it in the release after the next.
 */
export const KILLED_WHILE_RESOLVING_PATCH = 'killed-while-resolving';

/**
 * `bashOutputReader` keeps the read position in its history alone and arms its timers once per
 * interval: a read no longer writes the memo (`ModifyWorkflowProperties`) unless it is the first
 * to show the task's end, nor cancels and starts the probe timer again (a claim after the end, the
 * idle timer). Each is an action a read paid for (issue 31). Clients find the position from the
 * history (output-reader-client.ts), which old runs hold as well. Checked once as a run starts, so
 * every run of a new reader records it (one marker, in the workflow task that signals its task);
 * a 0.2.0 history replays the old branch. The new branch is covered by the reader's tests until the
 * next release records it. Deprecate it in the release after the next.
 */
export const READER_POSITION_IN_HISTORY_PATCH = 'reader-position-in-history';

/**
 * A background task killed by its owning session's own kill (`bash_kill`, which tells it so with
 * `sessionKill` first) sends that session no completion notice: the kill's answer tells it of the
 * end. `bashTask` checks it only when that signal came and the run ended killed, so a 0.2.0 history
 * (no such signal) replays the old branch, and so does one whose signal a 0.2.0 worker ignored. A
 * monitor's notice workflow (`monitorNotices`) checks it only for a completion notice handed over
 * as answered, so it closes without delivering it. The new branches are covered by
 * test/agent/completion-notice.test.ts, test/tools/bash-monitor.test.ts (both replay the runs they
 * made) and test/mcp/mcp.test.ts until the next release records them (the `background-killed` and
 * `monitored-killed` scenarios). Deprecate it in the release after the next.
 */
export const SESSION_KILL_PATCH = 'session-kill';
