/**
 * Agent workflows of a user's own, calling durable-bash through `durable-bash/workflow` (imported
 * from the source here; a user imports the package's entry).
 */
import { condition, continueAsNew } from '@temporalio/workflow';
import { type BashNotice, onBashNotice, workflowBashTools } from '../../src/workflow-tools/index.js';

export interface BuildAgentInput {
  taskQueue: string;
  sessionId: string;
  /** The build command; it must print `done` when it succeeds. */
  build: string;
  /** Continue as new once the build started, to show the task outlives the run. */
  continueAsNewWhileBuilding?: boolean;
  /** Carried across a continue-as-new. */
  state?: { taskId: string; transcript: string[]; notices: BashNotice[] };
}

/**
 * Starts a background build, waits for its completion notice, reads its output and reacts: a
 * build that printed `done` is followed by a foreground deploy. Returns every text it saw.
 */
export async function buildAgent(input: BuildAgentInput): Promise<string[]> {
  const tools = workflowBashTools({ taskQueue: input.taskQueue, sessionId: input.sessionId });
  const notices: BashNotice[] = [...(input.state?.notices ?? [])];
  onBashNotice(
    (notice) => notices.push(notice),
    notices.map((notice) => notice.taskId),
  );
  const transcript = [...(input.state?.transcript ?? [])];
  const text = (result: { content: { text: string }[]; isError?: boolean }) =>
    `${result.isError ? 'error: ' : ''}${result.content.map((block) => block.text).join('')}`;
  let taskId = input.state?.taskId;
  if (taskId === undefined) {
    const started = text(
      await tools.bash({ command: input.build, description: 'Builds the project', run_in_background: true }),
    );
    transcript.push(started);
    taskId = started.replace('started background task ', '');
    transcript.push(text(await tools.bash_list({})).replace(/ +/g, ' '));
    if (input.continueAsNewWhileBuilding) {
      await continueAsNew<typeof buildAgent>({
        ...input,
        continueAsNewWhileBuilding: false,
        state: { taskId, transcript, notices },
      });
    }
  }
  await condition(() => notices.length > 0);
  transcript.push(...notices.map((notice) => notice.text));
  const output = text(await tools.bash_output({ task_id: taskId }));
  transcript.push(output);
  if (output.includes('done')) {
    transcript.push(text(await tools.bash({ command: 'echo deployed', description: 'Deploys the build' })));
  }
  transcript.push(text(await tools.bash_kill({ task_id: taskId })));
  return transcript;
}

/** One tool call, as the test gives it: what an agent workflow gets back. */
export async function oneCall(input: {
  taskQueue: string;
  sessionId?: string;
  tool: 'bash' | 'bash_output' | 'bash_kill' | 'bash_list' | 'bash_input';
  args: unknown;
}): Promise<{ text: string; isError: boolean }> {
  const tools = workflowBashTools({
    taskQueue: input.taskQueue,
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
  });
  const result = await tools[input.tool](input.args);
  return { text: result.content.map((block) => block.text).join(''), isError: result.isError === true };
}

/** Collects notices until two tasks' have come; returns them (a task's second notice is dropped). */
export async function noticeInbox(): Promise<BashNotice[]> {
  const notices: BashNotice[] = [];
  onBashNotice((notice) => notices.push(notice));
  await condition(() => notices.length >= 2);
  return notices;
}

/** Sets a reminder and waits for its notice: the tool's answer, and the notice's id and text. */
export async function remindedAgent(input: { taskQueue: string; sessionId: string }): Promise<string[]> {
  const tools = workflowBashTools({ taskQueue: input.taskQueue, sessionId: input.sessionId });
  const notices: BashNotice[] = [];
  onBashNotice((notice) => notices.push(notice));
  const set = await tools.bash_remind({ after_ms: 1_000, note: 'look at the build again' });
  await condition(() => notices.length > 0);
  return [set.content.map((block) => block.text).join(''), notices[0]?.taskId ?? '', notices[0]?.text ?? ''];
}

/**
 * Starts a background task with a monitor, moves the monitor to another pattern with bash_monitor,
 * and collects the notices until the task's completion: each notice's id and first two lines.
 */
export async function monitoredAgent(input: { taskQueue: string; sessionId: string }): Promise<string[]> {
  const tools = workflowBashTools({ taskQueue: input.taskQueue, sessionId: input.sessionId });
  const notices: BashNotice[] = [];
  onBashNotice((notice) => notices.push(notice));
  const text = (result: { content: { text: string }[] }) =>
    result.content.map((block) => block.text).join('');
  const started = text(
    await tools.bash({
      command: 'echo "ERROR one"; read -r _; echo "ERROR two"; echo "WARN two"',
      description: 'Prints errors',
      run_in_background: true,
      keep_stdin_open: true,
      notify_on: 'ERROR',
    }),
  );
  const taskId = started.replace('started background task ', '');
  await condition(() => notices.length >= 1);
  const set = text(await tools.bash_monitor({ task_id: taskId, notify_on: 'WARN' }));
  await tools.bash_input({ task_id: taskId, text: '\n' });
  await condition(() => notices.length >= 3);
  return [
    started,
    set,
    ...notices.map(
      (notice) => `${notice.noticeId ?? notice.taskId}: ${notice.text.split('\n').slice(0, 2).join(' | ')}`,
    ),
  ];
}

/** Starts a command that prints a matching line and ends at once; the notices' ids, in order, to its completion. */
export async function quickMonitoredAgent(input: {
  taskQueue: string;
  sessionId: string;
}): Promise<string[]> {
  const tools = workflowBashTools({ taskQueue: input.taskQueue, sessionId: input.sessionId });
  const notices: BashNotice[] = [];
  onBashNotice((notice) => notices.push(notice));
  await tools.bash({
    command: 'echo "ERROR fast"',
    description: 'Prints an error and ends',
    run_in_background: true,
    notify_on: 'ERROR',
  });
  await condition(() => notices.some((notice) => notice.noticeId === undefined));
  return notices.map((notice) => notice.noticeId ?? `${notice.taskId} (completion)`);
}
