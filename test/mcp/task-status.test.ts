/**
 * A background task as an MCP task, without a server: its workflow's state mapped onto the task
 * states, the status line as the status message, the ttl from the namespace's retention; and the
 * notice of a task whose result the client fetched, settled in the session's notice file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NoticeStore, noticeIdOf, taskIdOfNotice } from '../../src/mcp/notice-store.js';
import { isTerminalStatus, mcpTask, mcpTaskStatus } from '../../src/mcp/task-status.js';
import { MCP_TASK_POLL_INTERVAL_MS } from '../../src/shared/limits.js';

const taskId = 'bash-6cb64e0f-598e-4af4-ad3d-e32ce63ff505';
const startedAt = new Date('2026-12-02T10:00:00.000Z');
const closedAt = new Date('2026-12-02T10:05:00.000Z');

describe('mcpTaskStatus', () => {
  it.each([
    ['RUNNING', false, 'working'],
    ['CONTINUED_AS_NEW', false, 'working'],
    ['COMPLETED', false, 'completed'],
    ['FAILED', false, 'failed'],
    ['TERMINATED', false, 'failed'],
    ['TIMED_OUT', false, 'failed'],
    ['CANCELLED', false, 'cancelled'],
    // Once a kill is asked for, the task stays cancelled however its command ends.
    ['RUNNING', true, 'cancelled'],
    ['COMPLETED', true, 'cancelled'],
    ['FAILED', true, 'cancelled'],
  ] as const)('maps a %s workflow (kill requested: %s) to %s', (workflowStatus, killRequested, status) => {
    expect(mcpTaskStatus({ workflowStatus, killRequested })).toBe(status);
  });

  it('calls completed, failed and cancelled terminal', () => {
    expect(
      ['working', 'input_required', 'completed', 'failed', 'cancelled'].filter((s) =>
        isTerminalStatus(s as never),
      ),
    ).toEqual(['completed', 'failed', 'cancelled']);
  });
});

describe('mcpTask', () => {
  it('gives a running task its start as both times, no ttl, and the running status line', () => {
    expect(
      mcpTask({
        taskId,
        workflowStatus: 'RUNNING',
        killRequested: false,
        state: { status: 'running' },
        startedAt,
        retentionMs: 86_400_000,
      }),
    ).toEqual({
      taskId,
      status: 'working',
      statusMessage: '[status: running]',
      createdAt: '2026-12-02T10:00:00.000Z',
      lastUpdatedAt: '2026-12-02T10:00:00.000Z',
      ttl: null,
      pollInterval: MCP_TASK_POLL_INTERVAL_MS,
    });
  });

  it("counts an ended task's ttl from its start to its deletion: its run plus the retention", () => {
    expect(
      mcpTask({
        taskId,
        workflowStatus: 'COMPLETED',
        killRequested: false,
        state: { status: 'completed', exitCode: 3 },
        startedAt,
        closedAt,
        retentionMs: 86_400_000,
      }),
    ).toEqual({
      taskId,
      status: 'completed',
      statusMessage: '[status: completed, exit code: 3]',
      createdAt: '2026-12-02T10:00:00.000Z',
      lastUpdatedAt: '2026-12-02T10:05:00.000Z',
      ttl: 300_000 + 86_400_000,
      pollInterval: MCP_TASK_POLL_INTERVAL_MS,
    });
  });

  it('says the status line of a killed and of a lost task, and no ttl when the retention is unknown', () => {
    const killed = mcpTask({
      taskId,
      workflowStatus: 'COMPLETED',
      killRequested: true,
      state: { status: 'killed', signal: 'SIGTERM' },
      startedAt,
      closedAt,
    });
    expect(killed).toMatchObject({
      status: 'cancelled',
      statusMessage: '[status: killed by SIGTERM]',
      ttl: null,
    });
    const lost = mcpTask({
      taskId,
      workflowStatus: 'FAILED',
      killRequested: false,
      state: { status: 'lost', reason: 'no worker on its host came back' },
      startedAt,
      closedAt,
    });
    expect(lost).toMatchObject({
      status: 'failed',
      statusMessage: '[status: lost: no worker on its host came back]',
    });
  });
});

describe('settled notices', () => {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'durable-bash-notices-'));
  afterAll(() => rmSync(stateDir, { recursive: true, force: true }));
  const store = () => new NoticeStore(mkdtempSync(path.join(stateDir, 'store-')), 's');

  it("names a task's notice by its notice workflow, and reads the task back", () => {
    expect(noticeIdOf(taskId)).toBe(`${taskId}-notice`);
    expect(taskIdOfNotice(noticeIdOf(taskId))).toBe(taskId);
    expect(taskIdOfNotice('n1')).toBeUndefined();
    expect(taskIdOfNotice('x/y-notice')).toBeUndefined();
  });

  it('drops a pending notice, and refuses one that arrives after', () => {
    const notices = store();
    notices.record('n1', 'one');
    notices.record('n2', 'two');
    notices.settle('n1');
    notices.settle('n3');
    expect(notices.unlogged()).toEqual([{ noticeId: 'n2', content: 'two' }]);
    expect(notices.record('n3', 'three')).toBe(false);
    expect(notices.take()).toEqual(['two']);
  });
});
