import type { Approvals } from '../client/approvals.js';
import type { BashTasks } from '../client/bash-tasks.js';
import type { Reminders } from '../client/reminders.js';
import type { TaskFilter, TaskSummary } from '../client/task-list.js';
import { errorResult } from '../shared/error-result.js';
import { LIST_LIMIT, LIST_SCAN_LIMIT } from '../shared/limits.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from '../shared/tool-types.js';
import { type BashListArguments, bashListArguments, parseArguments, toInputSchema } from './arguments.js';
import { bashListDescription } from './descriptions.js';
import { presentListCall, presentTaskResult } from './present.js';
import { approvalTable, reminderTable, taskTable } from './task-table.js';

export const NO_BACKGROUND_TASKS = '(no background tasks)';

/**
 * The `bash_list` tool: the calling session's background tasks (started so or moved there), running
 * ones only unless `all`, and, either way, the ended ones the session never heard of: their
 * completion notice was not delivered and no `bash_output` read has shown their end (their status
 * says `(notice not delivered)`). The fence holds here too: a session sees only its own tasks, and
 * a caller with no agent session only the tasks no session owns (the ones it could read or kill).
 * Under them, the session's requests still waiting for approval (where a policy can ask), then its
 * pending reminders.
 */
export function createBashListTool(
  tasks: BashTasks,
  reminders?: Reminders,
  approvals?: Approvals,
): Tool<BashListArguments> {
  return {
    name: 'bash_list',
    description: bashListDescription,
    parameters: bashListArguments,
    inputSchema: toInputSchema(bashListArguments),
    presentCall: presentListCall,
    presentResult: presentTaskResult,
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const running = parseArguments(bashListArguments, args).all !== true;
        const sessionId = exec.agent?.sessionId;
        const filter: TaskFilter =
          sessionId === undefined
            ? { unowned: true, running }
            : { owner: sessionId, running, undeliveredNotices: true };
        const [scanned, waiting, pending] = await Promise.all([
          tasks.list(filter, LIST_SCAN_LIMIT),
          sessionId !== undefined && approvals !== undefined ? approvals.list(sessionId, LIST_LIMIT) : [],
          sessionId !== undefined && reminders !== undefined ? reminders.list(sessionId, LIST_LIMIT) : [],
        ]);
        const now = new Date();
        const after = [
          ...(waiting.length > 0 ? [approvalTable(waiting, now)] : []),
          ...(pending.length > 0 ? [reminderTable(pending, now)] : []),
        ]
          .map((table) => `\n\n${table}`)
          .join('');
        const background = scanned.filter((task) => task.background !== false);
        const shown = renderTaskList(background.slice(0, LIST_LIMIT), now);
        const more = background.length - LIST_LIMIT;
        // The scan stopped at its limit: older tasks exist that were not even looked at.
        const atLeast = scanned.length >= LIST_SCAN_LIMIT ? 'at least ' : '';
        if (more > 0) return textResult(`${shown}\n[${atLeast}${more} more tasks not shown]${after}`);
        return textResult(`${shown}${after}`);
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/**
 * The listing the model reads: running tasks first, then ended ones, each kept in the order given
 * (the server's, marked tasks not otherwise listed last); a header row.
 */
export function renderTaskList(tasks: TaskSummary[], now: Date): string {
  if (tasks.length === 0) return NO_BACKGROUND_TASKS;
  const running = tasks.filter((task) => task.closedAt === undefined);
  const ended = tasks.filter((task) => task.closedAt !== undefined);
  return taskTable([...running, ...ended], now);
}
