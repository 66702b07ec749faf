/**
 * What the chaos run asks the tools to run, what each run must print, and how a tool answer is
 * taken apart. Every command prints known numbered lines and a checksum, and first appends its
 * token to the run's marker file: a token there twice means the command ran twice.
 */

const quote = (text) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * A background task: `lines` lines half a second apart (10-40 s, so restarts hit it mid-run), a
 * checksum line, then `exit n % 5`. The task id is not known inside the command, so the harness
 * picks the token and maps it to the id the `bash` answer names. Every third task starts with a
 * monitor (`notify_on`) that matches every fifth line: each must come once, in order, as notices.
 */
export function backgroundTask(n, lines, markerFile) {
  const token = `bg${n}`;
  const command =
    `echo ${token} >> ${quote(markerFile)}; s=0; for i in $(seq 1 ${lines}); do echo "task ${n} line $i"; ` +
    `s=$((s+i)); sleep 0.5; done; echo "task ${n} checksum $s"; exit ${n % 5}`;
  let expected = '';
  for (let i = 1; i <= lines; i++) expected += `task ${n} line ${i}\n`;
  expected += `task ${n} checksum ${(lines * (lines + 1)) / 2}\n`;
  return {
    n,
    token,
    lines,
    command,
    notifyOn: n % 3 === 0 ? `^task ${n} line [0-9]*[05]$` : undefined,
    expected,
    exitCode: n % 5,
    taskId: undefined,
    startedAt: undefined,
    /** Everything claimed reads returned, in order: must equal `expected` (a prefix, if killed). */
    transcript: '',
    /** Claimed reads that returned new bytes: when, and how many (for the visibility metrics). */
    visible: [],
    reads: 0,
    unclaimedReads: 0,
    /** Reads answered with an error (the server down...): they may or may not have moved the position. */
    errorReads: [],
    /** Reads whose answer died with the agent host (only when quiescing timed out). */
    lostReads: 0,
    readInFlight: false,
    lastReadAt: 0,
    finalStatus: undefined,
    confirmed: false,
    kill: undefined,
    stderr: '',
    oddities: [],
  };
}

/** A foreground run: 2-10 lines (1-5 s), then `exit n % 5`; its whole answer is known. */
export function foregroundRun(n, lines, markerFile) {
  const token = `fg${n}`;
  const command =
    `echo ${token} >> ${quote(markerFile)}; for i in $(seq 1 ${lines}); do echo "fg ${n} line $i"; ` +
    `sleep 0.5; done; exit ${n % 5}`;
  let stdout = '';
  for (let i = 1; i <= lines; i++) stdout += `fg ${n} line ${i}\n`;
  // What renderRun shows: stdout, then `[exit code: N]` unless the exit was 0.
  const expected = n % 5 === 0 ? stdout : `${stdout}[exit code: ${n % 5}]`;
  return { n, token, lines, command, expected, answer: undefined };
}

const STATUS_LINE = /^\[status: (.*)\]$/;
const WORKER_UNAVAILABLE = '[task worker unavailable:';
const DROPPED = '[some output was dropped from memory';

/**
 * Takes a `bash_output` answer apart: `{stdout, stderr, status, unclaimed, dropped}`, or undefined
 * when it is not shaped like one. The status line always ends the read (a `worker unavailable` line
 * may follow it). What precedes it is the new output; renderOutputRead puts exactly one newline
 * before the status line, so a chunk ending in a partial line cannot be told from one ending in a
 * newline: our commands write whole lines with one write each, so chunks end at line ends.
 */
export function parseOutputRead(text) {
  const lines = text.split('\n');
  let unclaimed = false;
  if (lines.at(-1)?.startsWith(WORKER_UNAVAILABLE)) {
    unclaimed = true;
    lines.pop();
  }
  const status = STATUS_LINE.exec(lines.at(-1) ?? '')?.[1];
  if (status === undefined) return undefined;
  lines.pop();
  let dropped = false;
  if (lines.at(-1)?.startsWith(DROPPED)) {
    dropped = true;
    lines.pop();
  }
  let body = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  if (body === '(no new output)\n') body = '';
  let stderr = '';
  const header = body.startsWith('[stderr]\n') ? -1 : body.indexOf('\n[stderr]\n');
  const stderrAt = body.startsWith('[stderr]\n') ? 0 : header === -1 ? -1 : header + 1;
  if (stderrAt >= 0) {
    stderr = body.slice(stderrAt + '[stderr]\n'.length);
    body = body.slice(0, stderrAt);
  }
  return { stdout: body, stderr, status, unclaimed, dropped };
}

/** The status a task must end with, as the text inside `[status: ...]`. */
export function expectedStatuses(task) {
  if (task.kill?.answer === 'killed') return ['killed by SIGTERM', 'killed by SIGKILL'];
  return [`completed, exit code: ${task.exitCode}`];
}
