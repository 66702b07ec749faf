/**
 * The tools for an agent that is itself a workflow. `bash` starts the task's `bashTask` as a child
 * workflow on the command queue (its id `bash-<uuid>` from the workflow's deterministic `uuid4()`):
 * a foreground run is waited for, a background one outlives the agent workflow and ends with
 * `bashNoticeSignal` to it. `bash_output`, `bash_kill`, `bash_list`, `bash_input`, `bash_remind` and
 * `bash_monitor` run the tools
 * themselves in an activity on the command queue (`callBashTool`), so every text is the tools' own,
 * reads keep their durable position, and workflow code does no I/O.
 */
import {
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  uuid4,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';
import { errorResult } from '../shared/error-result.js';
import { DEFAULT_MAX_WAIT_MS } from '../shared/limits.js';
import { backgroundStarted, renderRun } from '../shared/render.js';
import { runFailure } from '../shared/run-failure.js';
import type { TaskId } from '../shared/task.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { type ToolResult, textResult } from '../shared/tool-types.js';
import type { ToolCallActivities, WorkflowCalledTool } from '../tools/tool-call-activities.js';
import type { bashTask } from '../workflows/bash-task.js';

export interface WorkflowBashToolsOptions {
  /**
   * The agent session the calls are made for: it owns the tasks they start, and only it may read,
   * kill or write to them (as `tool.execute(args, { agent: { sessionId } })`). @default no owner
   */
  sessionId?: string;
  /** The command queue the durable-bash workers serve. @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
  /**
   * The host the agent's files are read on: a result names a spill file only when its task ran on
   * this host (`os.hostname()` there), else `(unavailable)`. @default none: always `(unavailable)`
   */
  readerHost?: string;
  /** A background task ends with `bashNoticeSignal` to this workflow. @default true */
  notify?: boolean;
}

export interface WorkflowBashTools {
  bash(args: unknown): Promise<ToolResult>;
  bash_output(args: unknown): Promise<ToolResult>;
  bash_kill(args: unknown): Promise<ToolResult>;
  bash_list(args?: unknown): Promise<ToolResult>;
  bash_input(args: unknown): Promise<ToolResult>;
  /** A reminder whose notice comes to this workflow as `bashNoticeSignal` (its `taskId` the reminder's id). */
  bash_remind(args: unknown): Promise<ToolResult>;
  /** A task's monitor, whose notices come to this workflow as `bashNoticeSignal` (its `taskId` the task's). */
  bash_monitor(args: unknown): Promise<ToolResult>;
}

/** Time a tool call's activity may take beyond its longest wait (`wait_ms` is cut to DEFAULT_MAX_WAIT_MS). */
const TOOL_CALL_SLACK_MS = 30_000;

/** The tools, for workflow code. Each call answers as the tool does, with `isError` for a failure it expects. */
export function workflowBashTools(options: WorkflowBashToolsOptions = {}): WorkflowBashTools {
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const timeouts = { taskQueue, startToCloseTimeout: DEFAULT_MAX_WAIT_MS + TOOL_CALL_SLACK_MS };
  // A listing and a start's preparation may run again. A read, a write to stdin or a kill may
  // not: a second read would skip what the first one claimed, a second write would write twice, a
  // second kill would answer that the task had already finished. A command worker lost during one
  // of those fails the call (an ActivityFailure), for the agent to decide.
  const retried = proxyActivities<ToolCallActivities>({
    ...timeouts,
    retry: { maximumInterval: '10 seconds' },
  });
  const once = proxyActivities<ToolCallActivities>({ ...timeouts, retry: { maximumAttempts: 1 } });
  const call = (tool: WorkflowCalledTool) => (args: unknown) =>
    (tool === 'bash_list' ? retried : once).callBashTool({
      tool,
      args,
      ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    });

  async function bash(args: unknown): Promise<ToolResult> {
    const taskId = `bash-${uuid4()}` as TaskId;
    const prepared = await retried.prepareTaskStart({
      taskId,
      args,
      ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
      ...(options.notify !== false ? { notice: { workflowId: workflowInfo().workflowId } } : {}),
    });
    if ('error' in prepared) return textResult(prepared.error, true);
    const { start } = prepared;
    const child = {
      workflowId: taskId,
      taskQueue,
      args: [start.input] as Parameters<typeof bashTask>,
      typedSearchAttributes: start.typedSearchAttributes,
      memo: start.memo,
      staticSummary: start.staticSummary,
      staticDetails: start.staticDetails,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    };
    if (start.input.background) {
      await startChild<typeof bashTask>('bashTask', {
        ...child,
        parentClosePolicy: ParentClosePolicy.ABANDON,
      });
      return textResult(backgroundStarted(taskId));
    }
    try {
      const result = await executeChild<typeof bashTask>('bashTask', {
        ...child,
        // The agent workflow closing kills its foreground command, as an aborted call does.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      });
      return textResult(renderRun(result, options.readerHost ?? '', prepared.maxOutputTokens));
    } catch (err) {
      if (isCancellation(err) || !(err instanceof ChildWorkflowFailure)) throw err;
      return errorResult(runFailure(taskId, err));
    }
  }

  return {
    bash,
    bash_output: call('bash_output'),
    // Told of its tasks' ends, the workflow learns a kill's from its answer: the task sends no notice.
    bash_kill: (args: unknown) => callNotifying('bash_kill', args),
    bash_list: (args: unknown = {}) => call('bash_list')(args),
    bash_input: call('bash_input'),
    bash_remind: (args: unknown) => callNotifying('bash_remind', args),
    bash_monitor: (args: unknown) => callNotifying('bash_monitor', args),
  };

  /** A tool whose notices come to this workflow: the call names it. */
  function callNotifying(
    tool: 'bash_remind' | 'bash_monitor' | 'bash_kill',
    args: unknown,
  ): Promise<ToolResult> {
    return once.callBashTool({
      tool,
      args,
      ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
      ...(options.notify !== false ? { notice: { workflowId: workflowInfo().workflowId } } : {}),
    });
  }
}
