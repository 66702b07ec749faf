/**
 * What the Temporal Web UI shows as a task's current details: its status line, its host and its
 * command. Set with `setCurrentDetails`, which the workflow's metadata query answers: nothing goes
 * into the history, so runs recorded before it replay unchanged.
 */
import { setCurrentDetails } from '@temporalio/workflow';
import { markdownCodeBlock } from '../shared/shown-markdown.js';
import { statusLine, type TaskState } from '../shared/status-line.js';

/** Shows the run's state now; `hostId` once the command has a host. */
export function showRunDetails(command: string, state: TaskState, hostId?: string): void {
  setCurrentDetails(runDetails(command, state, hostId));
}

/** The details' markdown: the status line and the host on one line, then the command in a block it cannot end. */
function runDetails(command: string, state: TaskState, hostId?: string): string {
  const where = hostId === undefined ? 'host: not chosen yet' : `host: ${hostId}`;
  return `${statusLine(state)} ${where}\n\n${markdownCodeBlock(command, 'bash')}`;
}
