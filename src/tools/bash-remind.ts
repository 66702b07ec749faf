import type { Reminders } from '../client/reminders.js';
import { errorResult } from '../shared/error-result.js';
import { ReminderError } from '../shared/errors.js';
import { reminderCancelled, reminderSet } from '../shared/reminder.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from '../shared/tool-types.js';
import { type BashRemindArguments, bashRemindArguments, parseArguments, toInputSchema } from './arguments.js';
import { bashRemindDescription } from './descriptions.js';
import { consoleView } from './present.js';

/**
 * The `bash_remind` tool: sets a reminder of the calling session (a durable timer whose notice
 * comes through the session's notice path), or cancels one. A call with no agent session, or on a
 * host that takes no notices, sets nothing and says so.
 */
export function createBashRemindTool(reminders: Reminders): Tool<BashRemindArguments> {
  return {
    name: 'bash_remind',
    description: bashRemindDescription,
    parameters: bashRemindArguments,
    inputSchema: toInputSchema(bashRemindArguments),
    presentCall: presentRemindCall,
    presentResult: (_args, result) => consoleView(result.content.map((block) => block.text).join('')),
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        const call = parseArguments(bashRemindArguments, args);
        const sessionId = exec.agent?.sessionId;
        if (sessionId === undefined)
          throw new ReminderError(
            'reminders belong to an agent session, and this call has none: nothing was set',
          );
        if (call.cancel !== undefined) {
          await reminders.cancel(sessionId, call.cancel);
          return textResult(reminderCancelled(call.cancel));
        }
        const afterMs = call.after_ms ?? 0;
        const taskIds = call.task_ids ?? [];
        const reminderId = await reminders.set(sessionId, { afterMs, note: call.note ?? '', taskIds });
        return textResult(reminderSet(reminderId, afterMs, taskIds));
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/** A `bash_remind` call as a UI shows it: when it fires and its note, or the id it cancels. */
function presentRemindCall(args: unknown) {
  const parsed = bashRemindArguments.safeParse(args);
  if (!parsed.success)
    return { card: 'generic' as const, title: 'bash_remind', kind: 'other' as const, rawInput: args };
  const { cancel, after_ms: afterMs, note } = parsed.data;
  return cancel !== undefined
    ? {
        card: 'generic' as const,
        title: `Cancel reminder ${cancel}`,
        kind: 'other' as const,
        rawInput: cancel,
      }
    : {
        card: 'generic' as const,
        title: `Remind in ${afterMs}ms`,
        kind: 'other' as const,
        content: [{ type: 'text' as const, text: note ?? '' }],
      };
}
