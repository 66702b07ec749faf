/**
 * Judges a finished chaos run: every task ran exactly once, its output came through bash_output
 * complete, in order and byte-exact, it ended with the exact status, and its completion notice
 * came exactly once (none for a task its session's bash_kill said it killed: the answer was its
 * notice). Each defect names the task, what was expected and what came.
 */
import { existsSync, readFileSync } from 'node:fs';

/** Defect kinds, the table's columns. */
export const LOST = 'lost';
export const DUPLICATED = 'duplicated';
export const WRONG_STATUS = 'wrong status';
export const OTHER = 'other';

export function markerCounts(markerFile) {
  const counts = new Map();
  const text = existsSync(markerFile) ? readFileSync(markerFile, 'utf8') : '';
  for (const token of text.split('\n').filter(Boolean)) counts.set(token, (counts.get(token) ?? 0) + 1);
  return counts;
}

/**
 * Notices by noticeId, each with its place in the file (`index`); repeats of an id (a retry after a
 * lost inject answer) are dropped, but counted.
 */
export function noticesById(noticesFile) {
  const byId = new Map();
  const text = existsSync(noticesFile) ? readFileSync(noticesFile, 'utf8') : '';
  let index = 0;
  for (const line of text.split('\n').filter(Boolean)) {
    const notice = JSON.parse(line);
    const seen = byId.get(notice.noticeId);
    if (seen) seen.repeats++;
    else byId.set(notice.noticeId, { ...notice, repeats: 0, index: index++ });
  }
  return byId;
}

/** A monitored task's monitor notices (`<task id>-match-<k>`), in the order of k. */
export function monitorNoticesOf(taskId, notices) {
  const found = [];
  for (const [id, notice] of notices) {
    const k = id.startsWith(`${taskId}-match-`) ? Number(id.slice(`${taskId}-match-`.length)) : Number.NaN;
    if (Number.isInteger(k)) found.push({ k, notice });
  }
  return found.sort((a, b) => a.k - b.k).map(({ notice }) => notice);
}

/**
 * A monitored task's notices: every line of its output that matches came once, in order, in
 * notices numbered 1, 2, ... each naming its pattern, and all before its completion notice.
 */
function checkMonitor(task, notices, shown, defect) {
  const monitorNotices = monitorNoticesOf(task.taskId, notices);
  const pattern = new RegExp(task.notifyOn);
  const expected = shown.split('\n').filter((line) => pattern.test(line));
  const came = [];
  monitorNotices.forEach((notice, i) => {
    const [header, ...lines] = notice.content.split('\n');
    const count = lines.length;
    const want = `background bash task ${task.taskId} printed ${count} ${count === 1 ? 'line' : 'lines'} matching /${task.notifyOn}/:`;
    if (header !== want) defect(OTHER, want, JSON.stringify(header));
    if (notice.noticeId !== `${task.taskId}-match-${i + 1}`)
      defect(LOST, `monitor notice ${task.taskId}-match-${i + 1}`, `${notice.noticeId} in its place`);
    came.push(...lines);
  });
  if (came.join('\n') !== expected.join('\n'))
    defect(
      came.length > expected.length ? DUPLICATED : LOST,
      `the ${expected.length} matching lines once each, in order`,
      `${came.length} lines: ${JSON.stringify(came.slice(0, 6))}`,
    );
  const completion = notices.get(`${task.taskId}-notice`);
  const last = monitorNotices.at(-1);
  if (completion && last && last.index > completion.index)
    defect(OTHER, 'monitor notices before the completion notice', `${last.noticeId} after it`);
  return monitorNotices.length;
}

/**
 * The session's own bash_kill answered `killed background task` and the task ended killed: that
 * answer was its notice, and none comes.
 */
function answeredEnd(task) {
  return task.kill?.answer === 'killed' && task.finalStatus?.startsWith('killed') === true;
}

/**
 * Whether a task's completion notice must come: every end's but one its session's kill answered
 * for. A kill that answered pending (which takes the answer back, best effort) or whose answer was
 * lost may end the task with a notice or without.
 */
export function expectsNotice(task) {
  if (task.kill === undefined || task.kill.answer === 'finished') return true;
  return task.kill.answer === 'killed' && !answeredEnd(task);
}

/** The statuses a task may end with, as the text inside `[status: ...]`. */
function allowedStatuses(task) {
  const completed = `completed, exit code: ${task.exitCode}`;
  // A kill that came before any worker started the command (all were down) ends it unstarted.
  const killed = ['killed by SIGTERM', 'killed by SIGKILL', 'killed before the command started'];
  switch (task.kill?.answer) {
    case 'killed':
      return killed;
    case 'pending':
      // The kill reaches the command when its host's worker is back; a command that ended on its
      // own before then keeps its real end (and its whole output), never a made-up kill.
      return [...killed, completed];
    case undefined:
    case 'finished':
      return [completed];
    default:
      // The kill's answer was lost or an error: it may or may not have applied.
      return [completed, ...killed];
  }
}

/**
 * Checks one background task. `logsText` (the task's output via `durable-bash logs`, which never
 * moves the read position) is consulted only when some read answer of the task was lost or an error,
 * so that the bash_output transcript may honestly miss bytes; every other task must be byte-exact
 * through bash_output alone.
 */
export function checkTask(task, { markers, notices, sessionId, logsText }) {
  const defects = [];
  const defect = (kind, expected, came) =>
    defects.push({ kind, subject: task.taskId ?? task.token, expected, came });
  const runs = markers.get(task.token) ?? 0;

  if (!task.taskId) {
    defect(LOST, 'started background task <id>', `bash answered ${task.startProblem} (ran ${runs} times)`);
    return { defects, bytesChecked: 0, via: 'none' };
  }
  const killedUnstarted = task.kill !== undefined && task.finalStatus === 'killed before the command started';
  if (killedUnstarted ? runs !== 0 : runs !== 1)
    defect(
      runs === 0 ? LOST : DUPLICATED,
      killedUnstarted ? 'never ran (killed before it started)' : 'ran exactly once',
      `ran ${runs} times (marker file)`,
    );

  const allowed = allowedStatuses(task);
  if (task.finalStatus === undefined) defect(LOST, `[status: ${allowed[0]}]`, 'still running at the end');
  else if (!allowed.includes(task.finalStatus)) {
    const when = task.kill ? ((task.kill.requestedAt - task.startedAt) / 1000).toFixed(1) : '';
    const kill = task.kill
      ? ` (bash_kill ${when}s after the start${task.kill.why === 'worker down' ? ', its worker down,' : ''} answered ${task.kill.text})`
      : '';
    const expected = allowed.map((status) => `[status: ${status}]`).join(' or ');
    defect(WRONG_STATUS, expected, `[status: ${task.finalStatus}]${kill}`);
  }
  if (task.kill?.answer === 'error')
    defect(OTHER, 'bash_kill answers "killed background task ..."', task.kill.text);

  // A killed task printed some whole lines of its expected output, in order. A kill that said it
  // killed counts even when the task ended otherwise (that is a wrong status, reported above).
  // One killed before its command started (a pending kill, say: its worker was down) printed nothing.
  const killed = task.finalStatus?.startsWith('killed') || task.kill?.answer === 'killed';
  const { fits, shape } = killedUnstarted
    ? { fits: (text) => text === '', shape: 'no output (killed before it started)' }
    : killed
      ? {
          fits: (text) => task.expected.startsWith(text) && (text === '' || text.endsWith('\n')),
          shape: `a prefix of ${task.expected.length} bytes ending a line`,
        }
      : { fits: (text) => text === task.expected, shape: `${task.expected.length} bytes` };
  const readAnswersMissing = task.lostReads > 0 || task.errorReads.length > 0;
  let via = 'bash_output';
  let shown = task.transcript;
  if (!fits(task.transcript) && readAnswersMissing && logsText !== undefined) {
    // Bytes a lost or failed read claimed are gone from the transcript; logs shows what the task
    // printed. Still a defect when it is the product that answered an error while moving the position.
    via = 'logs';
    shown = logsText;
    if (fits(logsText) && task.errorReads.length > 0)
      defect(
        LOST,
        'every byte shown once by bash_output',
        `reads answered errors (${task.errorReads[0]}) and ${task.expected.length - task.transcript.length} bytes never shown`,
      );
  }
  if (!fits(shown)) {
    // More bytes than the command printed means some came twice; fewer (or other) means some were lost.
    defect(
      shown.length > task.expected.length ? DUPLICATED : LOST,
      shape,
      `${shown.length} bytes via ${via}, first difference at byte ${firstDifference(shown, task.expected)}: ${excerpt(shown, task.expected)}`,
    );
  }
  if (task.stderr !== '') defect(OTHER, 'no stderr', JSON.stringify(task.stderr.slice(0, 200)));
  for (const oddity of task.oddities) defect(OTHER, 'a well-formed read', oddity);

  const monitorNotices = task.notifyOn && fits(shown) ? checkMonitor(task, notices, shown, defect) : 0;
  const notice = notices.get(`${task.taskId}-notice`);
  if (answeredEnd(task)) {
    if (notice) defect(DUPLICATED, 'no completion notice (the kill answered for the end)', notice.content);
  } else if (!notice) {
    if (expectsNotice(task)) defect(LOST, 'one completion notice', 'none');
  } else {
    if (notice.sessionId !== sessionId) defect(OTHER, `notice for ${sessionId}`, `for ${notice.sessionId}`);
    if (task.finalStatus !== undefined && !notice.content.includes(`[status: ${task.finalStatus}]`))
      defect(WRONG_STATUS, `notice saying [status: ${task.finalStatus}]`, JSON.stringify(notice.content));
  }
  return {
    defects,
    bytesChecked: fits(shown) ? shown.length : 0,
    via,
    noticeRepeats: notice?.repeats ?? 0,
    monitorNotices,
  };
}

/** Checks a foreground run: it ran once, and an answer that came is exactly the expected text. */
export function checkForeground(run, { markers, neverStarted = false }) {
  const defects = [];
  const defect = (kind, expected, came) => defects.push({ kind, subject: run.token, expected, came });
  const runs = markers.get(run.token) ?? 0;
  const answer = run.answer;
  // An answer lost with the agent host is counted, not a defect; its workflow still ran once.
  const lostAnswer = answer?.lost === true;
  // Unless the host died before its start reached the server (the call still in its stdin pipe):
  // no workflow on the server names the run, so nothing was lost and nothing may run.
  if (lostAnswer && runs === 0 && neverStarted)
    return { defects, lostAnswer, neverStarted: true, bytesChecked: 0 };
  // An error answer (Temporal unreachable while the server restarts) is what the tool documents for
  // an infrastructure failure: counted, not a defect, as long as the command ran at most once.
  const errorAnswer = answer?.isError === true && !answer.threw;
  if (answer?.unsent) defect(LOST, 'an answer', 'never sent: no agent host took it');
  else if (runs > 1 || (runs === 0 && !errorAnswer))
    defect(runs === 0 ? LOST : DUPLICATED, 'ran exactly once', `ran ${runs} times`);
  if (answer && !answer.lost && !answer.unsent && !errorAnswer && answer.text !== run.expected) {
    defect(answer.isError ? OTHER : WRONG_STATUS, JSON.stringify(run.expected), JSON.stringify(answer.text));
  }
  return {
    defects,
    lostAnswer,
    errorAnswer: errorAnswer ? answer.text.split('\n')[0] : undefined,
    bytesChecked: answer?.text === run.expected ? run.expected.length : 0,
  };
}

function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function excerpt(shown, expected) {
  const at = firstDifference(shown, expected);
  const from = Math.max(0, at - 20);
  return `expected ${JSON.stringify(expected.slice(from, at + 40))}, got ${JSON.stringify(shown.slice(from, at + 40))}`;
}
