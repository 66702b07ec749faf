/**
 * Which host (command worker) runs which task: a running command writes `<task id>.stdout` in its
 * worker's spill directory, and each host has its own. Scanned twice a second, so that a worker
 * kill knows the tasks it hits. (Small outputs' files are removed once a task ends, hence the scan
 * while tasks run rather than afterwards.)
 */
import { readdirSync } from 'node:fs';

export class HostTracker {
  constructor(workers) {
    this.workers = workers;
    /** task id -> worker name (the first host seen running it). */
    this.hostOf = new Map();
    this.timer = undefined;
  }

  start() {
    this.timer = setInterval(() => this.scan(), 500);
  }

  stop() {
    clearInterval(this.timer);
  }

  scan() {
    for (const worker of this.workers) {
      let names = [];
      try {
        names = readdirSync(worker.spillDir);
      } catch {
        continue; // created by the worker on its first command
      }
      for (const name of names) {
        const taskId = name.endsWith('.stdout') ? name.slice(0, -'.stdout'.length) : undefined;
        if (taskId && !this.hostOf.has(taskId)) this.hostOf.set(taskId, worker.name);
      }
    }
  }
}
