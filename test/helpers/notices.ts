/**
 * A task's completion notice workflow (`<task id>-notice`), its outcome once it has one, and a
 * session's inbox as a harness receives notices.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { AgentSessions } from '../../src/shared/notice.js';
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

/** A live session's notices as its harness received them: content and notice id, in order. */
export class NoticeInbox implements AgentSessions {
  readonly notices: Array<{ content: string; noticeId: string }> = [];
  async inject(_sessionId: string, content: string, options: { noticeId: string }): Promise<boolean> {
    this.notices.push({ content, noticeId: options.noticeId });
    return true;
  }
}
