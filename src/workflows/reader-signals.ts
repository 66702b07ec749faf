/**
 * The signals between a task's run (`bashTask`) and its output reader (`bashOutputReader`), in a
 * module of their own because each workflow sends the one the other handles.
 */
import { defineSignal } from '@temporalio/workflow';

/** To a task, from its reader (or a read): a reader exists, so tell it when the task ends. */
export const outputReaderStartedSignal = defineSignal('outputReaderStarted');

/** To a reader, from its task (or a read): the task has ended, so the reader may end once idle. */
export const taskEndedSignal = defineSignal('taskEnded');

/** To a reader, from a `bash_output` call that stopped waiting: its host read (by claim id) must not move the position. */
export const abandonReadSignal = defineSignal<[string]>('abandonRead');
