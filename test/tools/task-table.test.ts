import { describe, expect, it } from 'vitest';
import type { TaskSummary } from '../../src/client/task-list.js';
import { renderTaskList } from '../../src/tools/bash-list.js';

const now = new Date('2026-05-01T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);

function task(
  taskId: string,
  status: string,
  seconds: number,
  command: string,
  extra: Partial<TaskSummary> = {},
) {
  const ended = status !== 'running';
  return {
    taskId,
    status,
    startedAt: ago(seconds),
    closedAt: ended ? ago(1) : undefined,
    command,
    description: 'Run in background',
    owner: 'session-a',
    background: true,
    ...extra,
  } satisfies TaskSummary;
}

describe('renderTaskList', () => {
  it('lists running tasks first, then ended ones, and marks an ended task whose notice was not delivered', () => {
    const listing = renderTaskList(
      [
        task('bash-00000000-0000-4000-8000-000000000001', 'completed', 7_200, 'make test', {
          noticeNotDelivered: true,
        }),
        task('bash-00000000-0000-4000-8000-000000000002', 'running', 42, 'npm run dev'),
        task('bash-00000000-0000-4000-8000-000000000003', 'killed', 300, 'sleep 600', {
          noticeNotDelivered: true,
        }),
        task('bash-00000000-0000-4000-8000-000000000004', 'completed', 90, 'echo done'),
      ],
      now,
    );
    expect(listing).toBe(
      [
        'ID                                         STATUS                            AGE  COMMAND',
        'bash-00000000-0000-4000-8000-000000000002  running                           42s  npm run dev',
        'bash-00000000-0000-4000-8000-000000000001  completed (notice not delivered)  2h   make test',
        'bash-00000000-0000-4000-8000-000000000003  killed (notice not delivered)     5m   sleep 600',
        'bash-00000000-0000-4000-8000-000000000004  completed                         1m   echo done',
      ].join('\n'),
    );
  });

  it('keeps the listing as it was when no notice is missing', () => {
    expect(
      renderTaskList([task('bash-00000000-0000-4000-8000-000000000002', 'running', 42, 'npm run dev')], now),
    ).toBe(
      [
        'ID                                         STATUS   AGE  COMMAND',
        'bash-00000000-0000-4000-8000-000000000002  running  42s  npm run dev',
      ].join('\n'),
    );
    expect(renderTaskList([], now)).toBe('(no background tasks)');
  });
});
