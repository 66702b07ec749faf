/**
 * A background task as an MCP task (the 2025-11-25 experimental tasks): where its workflow stands,
 * mapped onto the task states `working`, `completed`, `failed` and `cancelled`. Pure: the reads
 * from Temporal are in mcp-tasks.ts.
 */
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { MCP_TASK_POLL_INTERVAL_MS } from '../shared/limits.js';
import { statusLine, type TaskState } from '../shared/status-line.js';

/** What the server holds of a task, as the MCP task is made from it. */
export interface TaskFacts {
  taskId: string;
  /** How its workflow stands: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, ... */
  workflowStatus: string;
  /** A kill was asked for (`bash_kill`, `tasks/cancel`, `durable-bash kill`): the workflow's cancel request. */
  killRequested: boolean;
  /** Where the task stands, as `bash_output`'s status line says it. */
  state: TaskState;
  startedAt: Date;
  closedAt?: Date;
  /** How long the namespace keeps a closed workflow; undefined when the server did not say. */
  retentionMs?: number;
}

/** The MCP task a background task is: its id is the workflow id, its status message the status line. */
export function mcpTask(facts: TaskFacts): Task {
  const { startedAt, closedAt, retentionMs } = facts;
  return {
    taskId: facts.taskId,
    status: mcpTaskStatus(facts),
    statusMessage: statusLine(facts.state),
    createdAt: startedAt.toISOString(),
    lastUpdatedAt: (closedAt ?? startedAt).toISOString(),
    // A running task is kept while it runs; Temporal deletes a closed one after its retention.
    ttl:
      closedAt === undefined || retentionMs === undefined
        ? null
        : closedAt.getTime() - startedAt.getTime() + retentionMs,
    pollInterval: MCP_TASK_POLL_INTERVAL_MS,
  };
}

/**
 * A task that a kill was asked for is `cancelled` from that moment, however its command then ends
 * (the spec: a cancelled task stays cancelled). A run that ended with a result is `completed`,
 * whatever its exit code or signal (a normal tool result); one that ended without (lost, could not
 * start, terminated) answers `isError`, which the 2025-11-25 spec calls `failed`.
 */
export function mcpTaskStatus(facts: Pick<TaskFacts, 'workflowStatus' | 'killRequested'>): Task['status'] {
  if (facts.killRequested || facts.workflowStatus === 'CANCELLED') return 'cancelled';
  if (facts.workflowStatus === 'RUNNING' || facts.workflowStatus === 'CONTINUED_AS_NEW') return 'working';
  return facts.workflowStatus === 'COMPLETED' ? 'completed' : 'failed';
}

/** Whether a task's status can no longer change. */
export function isTerminalStatus(status: Task['status']): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
