import type { TaskMonitors } from '../client/task-monitors.js';
import { errorResult } from '../shared/error-result.js';
import { MonitorError } from '../shared/errors.js';
import { monitorCleared, monitorSet } from '../shared/monitor.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from '../shared/tool-types.js';
import {
  type BashMonitorArguments,
  bashMonitorArguments,
  parseArguments,
  toInputSchema,
} from './arguments.js';
import { bashMonitorDescription } from './descriptions.js';
import { consoleView } from './present.js';

/**
 * The `bash_monitor` tool: sets, replaces or clears the monitor of a running background task of
 * the calling session. A call with no agent session sets nothing and says so.
 */
export function createBashMonitorTool(monitors: TaskMonitors): Tool<BashMonitorArguments> {
  return {
    name: 'bash_monitor',
    description: bashMonitorDescription,
    parameters: bashMonitorArguments,
    inputSchema: toInputSchema(bashMonitorArguments),
    presentCall: presentMonitorCall,
    presentResult: (_args, result) => consoleView(result.content.map((block) => block.text).join('')),
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const call = parseArguments(bashMonitorArguments, args);
        const sessionId = exec.agent?.sessionId;
        if (sessionId === undefined)
          throw new MonitorError(
            'a monitor notifies an agent session, and this call has none: nothing was set',
          );
        await monitors.set(sessionId, call.task_id, call.notify_on);
        return textResult(
          call.notify_on === null ? monitorCleared(call.task_id) : monitorSet(call.task_id, call.notify_on),
        );
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/** A `bash_monitor` call as a UI shows it: the task and its pattern, or that it clears it. */
function presentMonitorCall(args: unknown) {
  const parsed = bashMonitorArguments.safeParse(args);
  if (!parsed.success)
    return { card: 'generic' as const, title: 'bash_monitor', kind: 'other' as const, rawInput: args };
  const { task_id: taskId, notify_on: pattern } = parsed.data;
  return {
    card: 'generic' as const,
    title: pattern === null ? `Stop monitoring ${taskId}` : `Monitor ${taskId} for /${pattern}/`,
    kind: 'other' as const,
    rawInput: parsed.data,
  };
}
