/**
 * The tools as activities on the command queue, for agents that are workflows
 * (`durable-bash/workflow`). A read, kill, list or stdin write runs the tool itself over the command
 * worker's own client, so what the agent gets is the tools' text exactly; a `bash` call only has its
 * arguments checked and its child workflow's start prepared here (the owner hashed with the
 * worker's keys), and the agent workflow starts the child itself. Checking here, not in workflow
 * code, keeps a later version's checks from changing what a recorded call did on replay.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { BashTasks } from '../client/bash-tasks.js';
import { Reminders } from '../client/reminders.js';
import { TaskMonitors } from '../client/task-monitors.js';
import { type TaskStart, taskStart } from '../client/task-start.js';
import { ownerHasherOf } from '../codec/owner-hash.js';
import { ToolCallActivityName } from '../shared/activity-names.js';
import { errorResult } from '../shared/error-result.js';
import { ToolCallError } from '../shared/errors.js';
import type { TaskId, WorkflowNoticeTarget } from '../shared/task.js';
import type { Tool, ToolResult } from '../shared/tool-types.js';
import { type BashArguments, bashArguments, parseArguments } from './arguments.js';
import { startRequest } from './bash.js';
import { createBashKillTool } from './bash-kill.js';
import { createBashMonitorTool } from './bash-monitor.js';
import { createBashRemindTool } from './bash-remind.js';
import { bashToolsCore, createBashTools } from './create-bash-tools.js';

/** The tools an agent workflow calls through `callBashTool` (`bash` itself runs as a child workflow). */
export const WORKFLOW_CALLED_TOOLS = [
  'bash_output',
  'bash_kill',
  'bash_list',
  'bash_input',
  'bash_remind',
  'bash_monitor',
] as const;
export type WorkflowCalledTool = (typeof WORKFLOW_CALLED_TOOLS)[number];

export interface ToolCall {
  tool: WorkflowCalledTool;
  /** The call's arguments as the model gave them: the tool validates them. */
  args: unknown;
  /** The agent session the call is made for (the tasks' owner); absent for a caller with no agent. */
  sessionId?: string;
  /**
   * `bash_remind`, `bash_monitor`: the agent workflow their notices are signalled to; `bash_kill`:
   * the agent workflow its tasks' ends are signalled to, which the kill's answer tells instead.
   */
  notice?: WorkflowNoticeTarget;
}

export interface TaskStartRequest {
  /** Made by the agent workflow (`uuid4()`), so a replayed start is the same start. */
  taskId: TaskId;
  /** The `bash` call's arguments as the model gave them: checked here, so the recorded answer decides. */
  args: unknown;
  /** The agent session the call is made for (the task's owner). */
  sessionId?: string;
  /** The agent workflow, told by signal when a background task ends. */
  notice?: WorkflowNoticeTarget;
}

/**
 * What `prepareTaskStart` answers: the child's start (and the call's `max_output_tokens`, which the
 * workflow renders the result with), or the tool's one-line error for the call.
 */
export type PreparedStart = { start: TaskStart; maxOutputTokens?: number } | { error: string };

export function createToolCallActivities(client: Client, taskQueue: string) {
  let tools: Map<string, Tool> | undefined;
  const tool = (name: Exclude<WorkflowCalledTool, 'bash_remind' | 'bash_monitor'>): Tool => {
    tools ??= new Map(createBashTools({ client, taskQueue }).map((each) => [each.name, each]));
    const found = tools.get(name);
    if (found === undefined) throw new TypeError(`no tool named ${name}`);
    return found;
  };
  // A reminder's notice goes to the calling agent workflow, which the call names.
  let tasks: BashTasks | undefined;
  const remindTool = (notice: WorkflowNoticeTarget | undefined): Tool => {
    tasks ??= bashToolsCore({ client, taskQueue }).tasks;
    return createBashRemindTool(new Reminders({ tasks, noticeFor: () => notice })) as Tool;
  };
  // Likewise a monitor's notices.
  const monitorTool = (notice: WorkflowNoticeTarget | undefined): Tool => {
    tasks ??= bashToolsCore({ client, taskQueue }).tasks;
    return createBashMonitorTool(new TaskMonitors({ tasks, noticeFor: () => notice })) as Tool;
  };
  // A kill by an agent workflow told of its tasks' ends: its answer is the task's notice.
  let answeringKill: Tool | undefined;
  const killTool = (notice: WorkflowNoticeTarget | undefined): Tool => {
    if (notice === undefined) return tool('bash_kill');
    tasks ??= bashToolsCore({ client, taskQueue }).tasks;
    answeringKill ??= createBashKillTool(tasks, { answersSession: true }) as Tool;
    return answeringKill;
  };
  return {
    /** Runs one tool call and answers with its result, texts and `isError` as the tool gives them. */
    async callBashTool(call: ToolCall): Promise<ToolResult> {
      // A newer agent than this worker: asking again would not help.
      if (!WORKFLOW_CALLED_TOOLS.includes(call.tool))
        throw ApplicationFailure.nonRetryable(`this worker has no tool named ${String(call.tool)}`);
      const called =
        call.tool === 'bash_remind'
          ? remindTool(call.notice)
          : call.tool === 'bash_monitor'
            ? monitorTool(call.notice)
            : call.tool === 'bash_kill'
              ? killTool(call.notice)
              : tool(call.tool);
      return called.execute(call.args, {
        ...(call.sessionId !== undefined ? { agent: { sessionId: call.sessionId } } : {}),
        signal: Context.current().cancellationSignal,
      });
    },
    /** What the agent workflow starts a task's `bashTask` child with, or why the call starts nothing. */
    async prepareTaskStart(call: TaskStartRequest): Promise<PreparedStart> {
      try {
        const args: BashArguments = parseArguments(bashArguments, call.args);
        const background = args.run_in_background === true;
        const request = startRequest(args, args.workdir, call.sessionId);
        const notice = background && call.notice ? { notice: call.notice } : {};
        return {
          start: taskStart({ ownerHasher: ownerHasherOf(client) }, request, call.taskId, notice),
          ...(args.max_output_tokens !== undefined ? { maxOutputTokens: args.max_output_tokens } : {}),
        };
      } catch (err) {
        // Bad arguments, or a monitor with no notice target: the call's one-line error.
        if (!(err instanceof ToolCallError)) throw err;
        return {
          error: errorResult(err)
            .content.map((block) => block.text)
            .join(''),
        };
      }
    },
  };
}

export type ToolCallActivities = ReturnType<typeof createToolCallActivities>;

// Their recorded names (shared/activity-names.ts), checked both ways as the command activities' are.
ToolCallActivityName satisfies { readonly [Name in keyof ToolCallActivities]: Name };
({}) as ToolCallActivities satisfies { [Name in keyof typeof ToolCallActivityName]: unknown };
