/** What wakes a read that waits for a task's output: a watch on its spill files, backed by a poll. */
import { type FSWatcher, watch } from 'node:fs';

/**
 * Wakes a waiting read when a spill file changes (inotify through `fs.watch`), or after a poll's
 * interval: a watch that cannot be made (a host out of inotify watches) leaves the poll alone.
 */
export class SpillWatch {
  private readonly watchers: FSWatcher[] = [];
  private wakeUp: (() => void) | undefined;

  constructor(...files: string[]) {
    for (const file of files) {
      try {
        const watcher = watch(file, { persistent: false }, () => this.wakeUp?.());
        watcher.on('error', () => watcher.close());
        this.watchers.push(watcher);
      } catch {
        // No watch (the file is gone, or no inotify watch is left): the poll still wakes the read.
      }
    }
  }

  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(1, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }

  close(): void {
    this.wakeUp = undefined;
    for (const watcher of this.watchers) watcher.close();
  }
}
