/**
 * The tools as activities on the command queue, for agents that are workflows
 * (`durable-bash/workflow`). A read, kill, list or stdin write runs the tool itself over the command
 * worker's own client, so what the agent gets is the tools' text exactly; a `bash` call only has its
 * child workflow's start prepared here (the owner hashed with the worker's keys), and the agent
 * workflow starts the child itself.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { type StartRequest, type TaskStart, taskStart } from '../client/task-start.js';
import { ownerHasherOf } from '../codec/owner-hash.js';
import type { TaskId, WorkflowNoticeTarget } from '../shared/task.js';
import { createBashTools } from '../tools/create-bash-tools.js';
import type { Tool, ToolResult } from '../tools/types.js';

/** The tools an agent workflow calls through `callBashTool` (`bash` itself runs as a child workflow). */
export const WORKFLOW_CALLED_TOOLS = ['bash_output', 'bash_kill', 'bash_list', 'bash_input'] as const;
export type WorkflowCalledTool = (typeof WORKFLOW_CALLED_TOOLS)[number];

export interface ToolCall {
  tool: WorkflowCalledTool;
  /** The call's arguments as the model gave them: the tool validates them. */
  args: unknown;
  /** The agent session the call is made for (the tasks' owner); absent for a caller with no agent. */
  sessionId?: string;
}

export interface TaskStartRequest {
  /** Made by the agent workflow (`uuid4()`), so a replayed start is the same start. */
  taskId: TaskId;
  request: StartRequest;
  /** The agent workflow, told by signal when a background task ends. */
  notice?: WorkflowNoticeTarget;
}

export function createToolCallActivities(client: Client, taskQueue: string) {
  let tools: Map<string, Tool> | undefined;
  const tool = (name: WorkflowCalledTool): Tool => {
    tools ??= new Map(createBashTools({ client, taskQueue }).map((each) => [each.name, each]));
    const found = tools.get(name);
    if (found === undefined) throw new TypeError(`no tool named ${name}`);
    return found;
  };
  return {
    /** Runs one tool call and answers with its result, texts and `isError` as the tool gives them. */
    async callBashTool(call: ToolCall): Promise<ToolResult> {
      if (!WORKFLOW_CALLED_TOOLS.includes(call.tool))
        throw new TypeError(`no tool named ${String(call.tool)}`);
      return tool(call.tool).execute(call.args, {
        ...(call.sessionId !== undefined ? { agent: { sessionId: call.sessionId } } : {}),
        signal: Context.current().cancellationSignal,
      });
    },
    /** What the agent workflow starts a task's `bashTask` child with. */
    async prepareTaskStart(start: TaskStartRequest): Promise<TaskStart> {
      const context = { ownerHasher: ownerHasherOf(client), noticeFor: () => ({}) };
      return taskStart(context, start.request, start.taskId, start.notice ? { notice: start.notice } : {});
    },
  };
}

export type ToolCallActivities = ReturnType<typeof createToolCallActivities>;
