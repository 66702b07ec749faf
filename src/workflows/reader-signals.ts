/**
 * The signals between a task's run (`bashTask`) and its output reader (`bashOutputReader`), in a
 * module of their own because each workflow sends the one the other handles.
 */
import { defineSignal } from '@temporalio/workflow';
import type { NoticeTarget, StreamTail } from '../shared/task.js';

/** To a task, from its reader (or a read): a reader exists, so tell it when the task ends. */
export const outputReaderStartedSignal = defineSignal('outputReaderStarted');

/**
 * To a reader, from its task: the task has ended, so the reader may end once idle. A task that was
 * read leaves its completion notice to the reader, which alone knows what reads showed.
 */
export const taskEndedSignal = defineSignal<[ReaderNotice?]>('taskEnded');

/** A completion notice for the reader to send, with the output no read has shown. */
export interface ReaderNotice {
  /**
   * The task whose notice it is: another task's reader ignores it (it would send that notice again).
   * Tasks of 0.2.0 send none.
   */
  taskId?: string;
  target: NoticeTarget;
  /** How the task ended (`statusLine`), for the notice's first line. */
  statusLine: string;
  /** The run's streams as its result holds them. */
  stdout: StreamTail;
  stderr: StreamTail;
  /** The task's owner search attribute, for a notice that marks itself undelivered. */
  ownerAttribute?: string;
  /** A monitor's notice workflow exists: the notice goes there, after the monitor's notices. */
  viaChannel?: boolean;
  /** The host queue whose spill files the streams' byte counts are of (`CommandOutcome.hostQueue`). */
  hostQueue?: string;
  /** The run kept a foreground call's timeout and ran into it (`BashTaskResult.timedOutAfterMs`). */
  timedOutAfterMs?: number;
}

/** To a reader, from a `bash_output` call that stopped waiting: its host read (by claim id) must not move the position. */
export const abandonReadSignal = defineSignal<[string]>('abandonRead');
