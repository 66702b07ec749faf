import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import type { BashWorker } from '../../src/worker/bash-worker.js';
import { startedTaskId } from '../helpers/background-task.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { cli } from '../helpers/cli.js';

// Sessions apart, as test/containment/isolation.test.ts has them (root, bwrap and slirp4netns:
// scripts/provision-sandbox.sh): what `--owner` gives a command, its uid and network, shows then.
const suite = useDevServerWithWorker({ executor: { isolation: 'session', sandbox: 'none' } });

/** `durable-bash <command> --address … --task-queue … <rest>`: a command against this file's server and worker. */
const onWorker = (command: string, ...rest: string[]) =>
  cli(
    [command, '--address', suite.env.address, '--task-queue', suite.worker.taskQueue, ...rest],
    // No --owner means the CLI's own session (cli:<user>@<host>), not one from the environment.
    { DURABLE_BASH_OWNER: undefined },
  );

/** `durable-bash run --background` for `owner`; the task's id from the line it prints. */
async function runInBackground(owner: string, command: string, ...flags: string[]): Promise<string> {
  const started = await onWorker('run', '--owner', owner, '--background', ...flags, '--', command);
  if (started.code !== 0) throw new Error(`durable-bash run --background failed: ${JSON.stringify(started)}`);
  return startedTaskId(started.stdout, '\n');
}

const finished = (taskId: string) => suite.env.client.workflow.getHandle(taskId).result();

describe('durable-bash run --background, ps, logs, kill', () => {
  it('lists an owner’s tasks as a table: id, status, age, command', async () => {
    const owner = `ps-${randomUUID()}`;
    const done = await runInBackground(owner, 'echo done');
    await finished(done);
    const failed = await runInBackground(owner, 'exit 4');
    await finished(failed);
    const sleeping = await runInBackground(owner, 'sleep 60');
    let listing = '';
    await expect
      .poll(async () => {
        listing = (await onWorker('ps', '--owner', owner)).stdout;
        return listing.trimEnd().split('\n').length;
      })
      .toBe(4);
    const rows = listing.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID {2,}STATUS {2,}AGE {2,}COMMAND$/);
    expect(rows[1]).toMatch(new RegExp(`^${sleeping} +running +\\d+s +sleep 60$`));
    // Running tasks first, then the latest to end.
    expect(rows[2]).toMatch(new RegExp(`^${failed} +completed +\\d+s +exit 4$`));
    expect(rows[3]).toMatch(new RegExp(`^${done} +completed +\\d+s +echo done$`));
    expect((await onWorker('ps', '--owner', `other-${randomUUID()}`)).stdout).toBe(
      'ID  STATUS  AGE  COMMAND\n',
    );
    expect((await onWorker('ps', '--all')).stdout).toContain(sleeping);
    // The query to paste into the Web UI's filter box lists the same three.
    const { stdout: query } = await onWorker('ps', '--owner', owner, '--query');
    expect(query).toBe(`WorkflowType = 'bashTask' AND BashTaskOwner = 'session:${owner}'\n`);
    // It needs no server.
    expect((await onWorker('ps', '--owner', owner, '--query', '--address', '127.0.0.1:1')).stdout).toBe(
      query,
    );
    const listed: string[] = [];
    for await (const execution of suite.env.client.workflow.list({ query: query.trim() }))
      listed.push(execution.workflowId);
    expect(listed.sort()).toEqual([done, failed, sleeping].sort());
    expect(await onWorker('kill', '--owner', owner, sleeping)).toEqual({
      code: 0,
      stdout: `killed background task ${sleeping}\n`,
      stderr: '',
    });
    expect(await onWorker('kill', '--owner', owner, sleeping)).toEqual({
      code: 0,
      stdout: `task ${sleeping} had already finished\n`,
      stderr: '',
    });
  });

  it('prints a terminal task’s screen with logs, and its bytes with --raw', async () => {
    const owner = `logs-${randomUUID()}`;
    const taskId = await runInBackground(
      owner,
      "printf 'one\\033[1;1Htwo'",
      '--tty',
      '--cols',
      '20',
      '--rows',
      '3',
    );
    await finished(taskId);
    expect(await onWorker('logs', '--owner', owner, taskId)).toEqual({
      code: 0,
      stdout: 'two\n[screen: 20x3, cursor at row 1, column 4]\n',
      stderr: '[status: completed, exit code: 0]\n',
    });
    expect(await onWorker('logs', '--owner', owner, '--raw', taskId)).toEqual({
      code: 0,
      stdout: 'one\x1b[1;1Htwo',
      stderr: '[status: completed, exit code: 0]\n',
    });
    expect(
      await onWorker('run', '--tty', '--cols', '30', '--rows', '2', '--', 'tput cols; tput lines'),
    ).toEqual({
      code: 0,
      stdout: '30\n2\n[screen: 30x2, cursor at row 2, column 1]\n',
      stderr: '',
    });
  });

  it('prints a task’s output with logs, without moving bash_output’s read position', async () => {
    const owner = `logs-${randomUUID()}`;
    const taskId = await runInBackground(owner, 'echo out; echo err >&2; exit 2');
    await finished(taskId);
    expect(await onWorker('logs', '--owner', owner, taskId)).toEqual({
      code: 0,
      stdout: 'out\n',
      stderr: 'err\n[status: completed, exit code: 2]\n',
    });
    const bashOutput = createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }).find(
      (tool) => tool.name === 'bash_output',
    ) as Tool;
    expect(await bashOutput.execute({ task_id: taskId }, { agent: { sessionId: owner } })).toEqual({
      content: [{ type: 'text', text: 'out\n[stderr]\nerr\n[status: completed, exit code: 2]' }],
    });
    // Still all of it: logs is an operator's view from the start.
    expect((await onWorker('logs', '--owner', owner, taskId)).stdout).toBe('out\n');
  });

  it('follows a running task until it ends', async () => {
    const owner = `follow-${randomUUID()}`;
    const taskId = await runInBackground(owner, 'for i in 1 2 3 4; do echo tick $i; sleep 0.3; done');
    expect(await onWorker('logs', '--owner', owner, '--follow', taskId)).toEqual({
      code: 0,
      stdout: 'tick 1\ntick 2\ntick 3\ntick 4\n',
      stderr: '[status: completed, exit code: 0]\n',
    });
  });

  it('keeps the ownership fence and names unknown tasks', async () => {
    const taskId = await runInBackground(`fence-${randomUUID()}`, 'sleep 30');
    expect(await onWorker('logs', '--owner', 'intruder', taskId)).toEqual({
      code: 1,
      stdout: '',
      stderr: `durable-bash: task ${taskId} belongs to another session\n`,
    });
    expect(await onWorker('kill', '--owner', 'intruder', taskId)).toEqual({
      code: 1,
      stdout: '',
      stderr: `task ${taskId} belongs to another session\n`,
    });
    expect(await onWorker('logs', 'bash-unknown')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'durable-bash: unknown bash task bash-unknown\n',
    });
    await suite.env.client.workflow.getHandle(taskId).cancel();
  });

  it('writes lines to the stdin of a task started with --keep-stdin-open, then closes it', async () => {
    const owner = `input-${randomUUID()}`;
    const taskId = await runInBackground(
      owner,
      'while read -r line; do echo "got $line"; done; echo "rest: $line"',
      '--keep-stdin-open',
    );
    expect(await onWorker('input', '--owner', owner, taskId, '--', 'six', 'times', 'seven')).toEqual({
      code: 0,
      stdout: `wrote 16 bytes to the stdin of task ${taskId}\n`,
      stderr: '',
    });
    expect(
      await onWorker('input', '--owner', owner, '--no-newline', '--close', taskId, '--', 'last'),
    ).toEqual({
      code: 0,
      stdout: `wrote 4 bytes to the stdin of task ${taskId} and closed it\n`,
      stderr: '',
    });
    await finished(taskId);
    // A last line with no newline is what `read` leaves in its variable at end of file.
    expect(await onWorker('logs', '--owner', owner, taskId)).toEqual({
      code: 0,
      stdout: 'got six times seven\nrest: last\n',
      stderr: '[status: completed, exit code: 0]\n',
    });
    expect(await onWorker('input', '--owner', owner, taskId, '--', 'late')).toEqual({
      code: 1,
      stdout: '',
      stderr: `task ${taskId} has ended; nothing was written\n`,
    });
  });
});

describe('durable-bash run --owner', () => {
  it('runs a foreground command as the session, as a background one: its uid, its network, its task', async () => {
    expect((suite.worker.worker as BashWorker).containment).toContain(
      'isolation: sessions apart (a uid per session',
    );
    const owner = `owner-${randomUUID()}`;
    const workdir = mkdtempSync(path.join(realpathSync(os.tmpdir()), 'durable-bash-owner-'));
    writeFileSync(path.join(workdir, 'hello.txt'), `hello from ${owner}\n`);
    // What a connection to the session's localhost gets: the file, or the error that ended it.
    writeFileSync(
      path.join(workdir, 'fetch.py'),
      [
        'import sys, urllib.request',
        'try:',
        "    print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/hello.txt', timeout=5).read().decode(), end='')",
        'except OSError as err:',
        '    print(err)',
      ].join('\n'),
    );
    const serve = 'id -u; exec python3 -u -m http.server 0 --bind 127.0.0.1';
    const server = await runInBackground(owner, serve, '--workdir', workdir);
    let served = '';
    await expect
      .poll(async () => {
        served = (await onWorker('logs', '--owner', owner, server)).stdout;
        return served;
      })
      .toMatch(/^\d+\nServing HTTP on 127\.0\.0\.1 port \d+ /);
    const [, uid, port] = /^(\d+)\nServing HTTP on 127\.0\.0\.1 port (\d+) /.exec(served) ?? [];
    const fetch = `python3 fetch.py ${port}`;
    const refused = { code: 0, stdout: '<urlopen error [Errno 111] Connection refused>\n', stderr: '' };

    // The same session in the foreground: it reaches the server on its localhost, as its uid.
    expect(await onWorker('run', '--owner', owner, '--workdir', workdir, '--', fetch)).toEqual({
      code: 0,
      stdout: `hello from ${owner}\n`,
      stderr: '',
    });
    expect(await onWorker('run', '--owner', owner, '--', 'id -u')).toEqual({
      code: 0,
      stdout: `${uid}\n`,
      stderr: '',
    });
    // Another session, and the CLI's own (no --owner), have their own uid and network.
    expect(
      await onWorker('run', '--owner', `other-${randomUUID()}`, '--workdir', workdir, '--', fetch),
    ).toEqual(refused);
    expect(await onWorker('run', '--workdir', workdir, '--', fetch)).toEqual(refused);
    for (const other of [['--owner', `other-${randomUUID()}`], []]) {
      const { stdout } = await onWorker('run', ...other, '--', 'id -u');
      expect(stdout).toMatch(/^\d+\n$/);
      expect(stdout).not.toBe(`${uid}\n`);
    }

    // The foreground runs are the session's tasks: ps lists them, the latest to end first.
    const row = (status: string, command: string) =>
      new RegExp(`^bash-[0-9a-f-]{36} +${status} +\\d+s +${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    let rows: string[] = [];
    await expect
      .poll(async () => {
        rows = (await onWorker('ps', '--owner', owner)).stdout.trimEnd().split('\n').slice(1);
        return rows.length;
      })
      .toBe(3);
    expect(rows[0]).toMatch(row('running', serve));
    expect(rows[1]).toMatch(row('completed', 'id -u'));
    expect(rows[2]).toMatch(row('completed', fetch));
    // Without --owner, run and ps are the CLI's own session, as run --background always was.
    await expect
      .poll(async () => (await onWorker('ps')).stdout.trimEnd().split('\n'))
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(row('completed', 'id -u')),
          expect.stringMatching(row('completed', fetch)),
        ]),
      );

    expect(await onWorker('kill', '--owner', owner, server)).toEqual({
      code: 0,
      stdout: `killed background task ${server}\n`,
      stderr: '',
    });
    rmSync(workdir, { recursive: true, force: true });
  });
});
