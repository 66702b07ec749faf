/** The checks every way of keeping sessions apart must pass (docs/CONTAINMENT.md), with root and without. */
import { expect } from 'vitest';
import type { SessionTools } from './session-tools.js';

/**
 * The measured attempts: while a task of `victim` prints a secret, `attacker` tries to read the
 * worker's environment and the task's output, see the victim and the worker, reach the Temporal
 * server, and says its uid. Resolves with what each attempt gave, a line each (the victim's task is
 * killed first).
 */
export async function measuredAttempts(
  victim: SessionTools,
  attacker: SessionTools,
  target: { workerPid: number; spillDir: string; temporalPort: string },
): Promise<string[]> {
  const secret = `secret-${process.pid}-${Date.now()}`;
  const taskId = await victim.start(`echo ${secret}; exec sleep 60`);
  await expect.poll(() => victim.read(taskId)).toBe(`${secret}\n[status: running]`);
  const { workerPid, spillDir, temporalPort } = target;
  const attempts = [
    `cat /proc/${workerPid}/environ >/dev/null 2>&1 && echo read the worker || echo no worker`,
    `grep -rqs ${secret} ${spillDir} /tmp && echo found the output || echo no output`,
    'ps -e -o comm= | grep -qx sleep && echo sees the victim || echo no victim',
    `ps -e -o pid= | grep -qw ${workerPid} && echo sees the worker || echo no worker process`,
    `(exec 3<>/dev/tcp/127.0.0.1/${temporalPort}) 2>/dev/null && echo reached temporal || echo no temporal`,
    'u=$(id -u); [ "$u" -ge 1879048192 ] && echo a session uid || echo uid $u',
  ];
  const gave = (await attacker.run(attempts.join('; '))).trim().split('\n');
  expect(await victim.kill(taskId)).toBe(`killed background task ${taskId}`);
  return gave;
}

/**
 * A session's tasks together, and apart from another's: `alice` writes in the workdir, keeps a
 * file in her /tmp across calls that `bob` does not see, and serves the workdir on her localhost at
 * `port` to her next call, not to bob's.
 */
export async function sessionKeepsTogether(
  alice: SessionTools,
  bob: SessionTools,
  port: number,
): Promise<void> {
  expect(await alice.run('echo made > made.txt && cat made.txt')).toBe('made\n');
  expect(await alice.run('echo kept > /tmp/note && echo ok')).toBe('ok\n');
  expect(await alice.run('cat /tmp/note')).toBe('kept\n');
  expect(await bob.run('cat /tmp/note 2>&1 || true')).toBe('cat: /tmp/note: No such file or directory\n');
  const server = await alice.start(
    `python3 -c "import http.server as h; h.HTTPServer(('127.0.0.1', ${port}), h.SimpleHTTPRequestHandler).serve_forever()"`,
  );
  const fetch = `python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:${port}/made.txt').read().decode(), end='')" 2>&1 | tail -1`;
  await expect.poll(() => alice.run(fetch)).toBe('made\n');
  expect(await bob.run(fetch)).toMatch(/Connection refused/);
  expect(await alice.kill(server)).toBe(`killed background task ${server}`);
}
