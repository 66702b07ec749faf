/**
 * Who hears of a task's end besides its reader and its owner: the reminders that wait for it
 * (`bash_remind` with `task_ids`). A reminder asks with `watchEnd`; the task answers each watcher
 * once, with its status line, when it ends.
 */
import {
  CancellationScope,
  defineSignal,
  getExternalWorkflowHandle,
  patched,
  setHandler,
} from '@temporalio/workflow';
import { END_WATCHERS_PATCH } from '../shared/patches.js';
import { statusLine, type TaskState } from '../shared/status-line.js';
import { ignoredUnencryptedSignal } from './unencrypted-payloads.js';

/** A reminder (its workflow id) asks to be told when the task ends. */
export const watchEndSignal = defineSignal<[{ workflowId: string }]>('watchEnd');

/** How a watched task ended, as the reminder's notice shows it. */
export interface WatchedEnd {
  taskId: string;
  statusLine: string;
}

/** A watched task tells its watcher it ended (its client does when the task had ended before it asked). */
export const watchedEndSignal = defineSignal<[WatchedEnd]>('watchedEnd');

/**
 * Takes watch requests for the run; the returned function tells every watcher of the end. A watcher
 * that has closed (cancelled, fired) is not told.
 */
export function handleEndWatchers(taskId: string): (state: TaskState) => Promise<unknown> | undefined {
  const watchers = new Set<string>();
  setHandler(watchEndSignal, (watcher) => {
    if (ignoredUnencryptedSignal(watchEndSignal.name, watcher)) return;
    watchers.add(watcher.workflowId);
  });
  // Not async: a run nobody watches makes no promise here (see handleStdinWrites).
  return (state) => {
    if (watchers.size === 0 || !patched(END_WATCHERS_PATCH)) return undefined;
    const end: WatchedEnd = { taskId, statusLine: statusLine(state) };
    return CancellationScope.nonCancellable(() =>
      Promise.all(
        [...watchers].map((workflowId) =>
          getExternalWorkflowHandle(workflowId)
            .signal(watchedEndSignal, end)
            .catch(() => undefined),
        ),
      ),
    );
  };
}
