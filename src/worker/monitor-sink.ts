/**
 * Where a command host's monitors send their batches: the task's notice workflow, by
 * signal-with-start (one action for the signal and, the first time, the start). A notice workflow
 * that has closed (the task ended and its completion notice went) takes nothing more: the batch,
 * from an attempt that outlived its task, is dropped.
 */
import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { MonitorSink } from '../command-host/monitor/line-monitor.js';
import {
  MONITOR_LINES_SIGNAL,
  MONITOR_NOTICES_WORKFLOW,
  type MonitorNoticesInput,
  noticeWorkflowId,
} from '../shared/monitor.js';

/** The sink of a host whose workflows run on `taskQueue` (the command queue). */
export function monitorSinkOf(client: Client, taskQueue: string): MonitorSink {
  return {
    async send(taskId, { target, ownerAttribute }, batch) {
      const input: MonitorNoticesInput = {
        taskId,
        target,
        ...(ownerAttribute !== undefined ? { ownerAttribute } : {}),
      };
      try {
        await client.workflow.signalWithStart(MONITOR_NOTICES_WORKFLOW, {
          workflowId: noticeWorkflowId(taskId),
          taskQueue,
          args: [input],
          signal: MONITOR_LINES_SIGNAL,
          signalArgs: [{ ...batch, taskId }],
          // Its id is the completion notice's: once that went, no second one may start.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          staticSummary: `Notices for ${taskId}`,
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    },
  };
}
