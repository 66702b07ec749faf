/** A task's completion notice workflow (`<task id>-notice`), and its outcome once it has one. */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { completionNotice } from '../../src/workflows/completion-notice.js';

export const noticeOf = (client: Client, taskId: string) =>
  client.workflow.getHandle<typeof completionNotice>(`${taskId}-notice`);

/**
 * The notice's outcome (`delivered`, ...). The notice of a task that was read is started by its
 * reader, moments after the task closed: this waits (up to 5 s) for it to exist.
 */
export async function noticeOutcome(client: Client, taskId: string): Promise<string> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await noticeOf(client, taskId).result();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError) || attempt >= 100) throw err;
      await sleep(50);
    }
  }
}
