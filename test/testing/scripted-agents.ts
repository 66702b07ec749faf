/**
 * An agent workflow of a user's own for the scripted host's tests: it starts a background command
 * through `durable-bash/workflow` (with a monitor, if asked), waits for its completion notice, and
 * reads its output.
 */
import { condition } from '@temporalio/workflow';
import { type BashNotice, onBashNotice, workflowBashTools } from '../../src/workflow-tools/index.js';

/** Starts `command` in the background, waits for its notice, reads its output: every text it saw. */
export async function awaitBackgroundTask(input: {
  taskQueue: string;
  sessionId: string;
  command: string;
  /** A monitor's pattern: its notices come first, and the wait is for the completion notice. */
  notifyOn?: string;
}): Promise<string[]> {
  const tools = workflowBashTools({ taskQueue: input.taskQueue, sessionId: input.sessionId });
  const notices: BashNotice[] = [];
  onBashNotice((notice) => notices.push(notice));
  const text = (result: { content: { text: string }[] }) =>
    result.content.map((block) => block.text).join('');
  const started = text(
    await tools.bash({
      command: input.command,
      description: 'Runs the scripted command',
      run_in_background: true,
      ...(input.notifyOn !== undefined ? { notify_on: input.notifyOn } : {}),
    }),
  );
  // The completion notice is the one without a notice id of its own.
  await condition(() => notices.some((notice) => notice.noticeId === undefined));
  const taskId = started.replace('started background task ', '');
  return [
    started,
    ...notices.map((notice) => notice.text),
    text(await tools.bash_output({ task_id: taskId })),
  ];
}
