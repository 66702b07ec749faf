/**
 * Writes each command attempt's record (`TaskFiles.attempt`) before its command starts, into a file
 * made ahead of time. A new file is a new inode, and on the worker's main thread, beside the
 * server and the command's launch, its creation took about half a millisecond of every foreground
 * run (docs/PERFORMANCE.md); a spare file, made once the run is past its start and end, is
 * written and renamed into place instead. Each spare is used once and becomes a task's record, so
 * a task's files are what they were.
 */
import { closeSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { AttemptRecord, TaskFiles } from './task-files.js';

/** Spares kept: enough for the attempts that start together before the next refill. */
const SPARES_KEPT = 2;

/**
 * How long after an attempt's start its spare is replaced: past the command's launch and the
 * run's end, which need the CPU more (an attempt that comes sooner writes a new file, as before).
 */
const REFILL_DELAY_MS = 50;

/** A spare's name: `.attempt-spare.<worker pid>.<serial>`, the spill sweeper's to remove once its worker is gone. */
export const ATTEMPT_SPARE = /^\.attempt-spare\.(\d+)\.\d+$/;

interface Spare {
  file: string;
  fd: number;
}

/** A worker's attempt records, written through spare files in its spill directory. */
export class AttemptRecords {
  private readonly spares: Spare[] = [];
  private serial = 0;
  private refillTimer: NodeJS.Timeout | undefined;

  constructor(private readonly spillDir: string) {}

  /**
   * Keeps the running attempt's task token beside the task's files: a worker that restarts after a
   * crash fails that attempt at once, so the retry re-attaches now rather than after the heartbeat
   * timeout. Whole or not at all, as a rename makes it.
   */
  remember(files: TaskFiles, attempt: AttemptRecord): void {
    const text = JSON.stringify(attempt);
    const spare = this.spares.pop();
    if (spare !== undefined) {
      try {
        if (writeSync(spare.fd, text) === Buffer.byteLength(text)) {
          renameSync(spare.file, files.attempt);
          return;
        }
      } catch {
        // Swept by another worker of this directory, or a full disk: written as a new file below.
      } finally {
        closeSync(spare.fd);
      }
      // Not left for the sweep, which keeps a live worker's spares.
      rmSync(spare.file, { force: true });
    }
    const tmp = `${files.attempt}.tmp.${process.pid}`;
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, files.attempt);
  }

  /** Makes the spares the next attempts use, a moment from now (`REFILL_DELAY_MS`). */
  refillSoon(): void {
    this.refillTimer ??= setTimeout(() => {
      this.refillTimer = undefined;
      this.refill();
    }, REFILL_DELAY_MS).unref();
  }

  /** Makes the spares the next attempts use. */
  refill(): void {
    try {
      while (this.spares.length < SPARES_KEPT) {
        const file = path.join(this.spillDir, `.attempt-spare.${process.pid}.${this.serial++}`);
        // Exclusive and never through a link: a name some other process made is not taken over.
        this.spares.push({ file, fd: openSync(file, 'wx', 0o600) });
      }
    } catch {
      // An attempt without a spare writes a new file, as before.
    }
  }
}
