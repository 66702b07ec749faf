import os from 'node:os';
import { type ApprovalDescription, type ApprovalState, Approvals } from '../client/approvals.js';
import { BashTasks } from '../client/bash-tasks.js';
import { ApprovalError, tooManyBackgroundTasks, UnencryptedPayloadError } from '../shared/errors.js';
import { MAX_LISTED_APPROVALS } from '../shared/limits.js';
import { shownLineRows, shownRows } from '../shared/shown-text.js';
import type { BashTaskInput } from '../shared/task.js';
import { age, approvalListing } from '../tools/task-table.js';
import type { CodecFlags } from './codec-options.js';
import type { ServerOptions } from './options.js';
import { withClient } from './with-client.js';

export interface ApprovalsFlags extends ServerOptions, CodecFlags {
  /** Only this session's requests. */
  owner?: string;
}

export interface DecideFlags extends ServerOptions, CodecFlags {
  /** Who decides, as the request's history records it. @default `<user>@<host>` */
  by?: string;
  /** Why (a denial's reason is shown to the model). */
  reason?: string;
}

/**
 * How wide the approval texts are laid out when stdout is not a terminal (a pipe, a file): a
 * terminal's own width otherwise, so that it never wraps a row itself.
 */
const PIPED_WIDTH_CHARS = 100;

/** The width rows are laid out to: the terminal's, or PIPED_WIDTH_CHARS. */
function outputWidth(): number {
  return process.stdout.isTTY ? process.stdout.columns : PIPED_WIDTH_CHARS;
}

/** `durable-bash approvals`: the pending requests, the oldest first, each command whole. */
export function runApprovals(flags: ApprovalsFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const approvals = new Approvals({ tasks: new BashTasks({ client, taskQueue: flags.taskQueue }) });
    const pending = await approvals.list(flags.owner, MAX_LISTED_APPROVALS);
    process.stdout.write(`${approvalListing(pending, new Date(), outputWidth())}\n`);
    return 0;
  });
}

/**
 * `durable-bash approvals show <id>`: one request as it would run, every field in the shown form;
 * `no approval request <id>` (exit 1) for an id that names none here.
 */
export function runShow(approvalId: string, flags: ServerOptions & CodecFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const approvals = new Approvals({ tasks: new BashTasks({ client, taskQueue: flags.taskQueue }) });
    try {
      const description = await approvals.describe(approvalId);
      process.stdout.write(`${approvalShown(description, new Date(), outputWidth())}\n`);
      return 0;
    } catch (err) {
      if (!(err instanceof ApprovalError || err instanceof UnencryptedPayloadError)) throw err;
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
  });
}

/** Width of a field's label in `approvals show`: the longest, `approval`, and two spaces. */
const SHOW_LABEL_CHARS = 10;

/** Where each command line starts in `approvals show`: a gutter, so a line of the command cannot pass for a field. */
const COMMAND_GUTTER = '| ';

/**
 * A request as `approvals show` prints it: a field a line (a long one in rows, a row ending in a
 * lone `\` going on in the next), the command last, a line of it a row behind the `| ` gutter.
 */
export function approvalShown(description: ApprovalDescription, now: Date, widthChars: number): string {
  const { run } = description;
  const valueWidth = Math.max(40, widthChars) - SHOW_LABEL_CHARS;
  const field = (label: string, rows: string[]) =>
    rows.map((row, i) => `${(i === 0 ? label : '').padEnd(SHOW_LABEL_CHARS)}${row}`);
  const later =
    description.callerWaitMs !== undefined
      ? [
          `if approved after its caller stops waiting (${description.callerWaitMs}ms): ${runsAs(description.lateRun ?? run)}`,
        ]
      : [];
  return [
    ...field('approval', [description.approvalId]),
    ...field('status', shownRows(stateText(description.state, description.expiresAt, now), valueWidth)),
    ...field('session', shownRows(description.sessionId, valueWidth)),
    ...field('age', [
      `${age(description.requestedAt, now)} (requested ${description.requestedAt.toISOString()})`,
    ]),
    ...field('runs', [runsAs(run), ...later]),
    ...field(
      'workdir',
      run.workdir !== undefined ? shownRows(run.workdir, valueWidth) : ["the worker's default"],
    ),
    ...field('reason', shownRows(description.reason, valueWidth)),
    ...field(
      'command',
      shownLineRows(run.command, valueWidth - COMMAND_GUTTER.length).map((row) =>
        `${COMMAND_GUTTER}${row}`.trimEnd(),
      ),
    ),
  ].join('\n');
}

/** How a run runs: in the background, or in the foreground with its timeout; on a terminal. */
function runsAs(run: BashTaskInput): string {
  const timeout =
    run.timeoutMs !== undefined
      ? `, timeout ${run.timeoutMs}ms`
      : run.background
        ? ''
        : ", the worker's default timeout";
  const terminal =
    run.terminal !== undefined ? `, on a ${run.terminal.cols}x${run.terminal.rows} terminal` : '';
  return `in the ${run.background ? 'background' : 'foreground'}${timeout}${terminal}`;
}

/** Where a request stands, in the shown form's words. */
function stateText(state: ApprovalState, expiresAt: Date, now: Date): string {
  switch (state.kind) {
    case 'waiting':
      return `waiting for a decision (denied if none by ${expiresAt.toISOString()}, in ${age(now, expiresAt)})`;
    case 'approved':
      return `approved by ${state.by}: started task ${state.taskId}`;
    case 'refused':
      return `approved by ${state.by}, but the run did not start: ${tooManyBackgroundTasks(state.running, state.limit)}`;
    case 'denied':
      return `denied by ${state.by}${state.reason !== undefined ? `: ${state.reason}` : ''}`;
    case 'expired':
      return `expired with no decision after ${state.afterMs}ms`;
    case 'closed':
      return `closed (${state.status}) with no decision`;
  }
}

/**
 * `durable-bash approve <id>` and `deny <id>`: the decision, by `--by` (this user at this host
 * unless given). Prints `approved <id>` or `denied <id>`, or the one-line refusal (exit 1).
 */
export function runDecide(approvalId: string, approved: boolean, flags: DecideFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const approvals = new Approvals({ tasks: new BashTasks({ client, taskQueue: flags.taskQueue }) });
    const by = flags.by ?? `${os.userInfo().username}@${os.hostname()}`;
    try {
      const answer = await approvals.decide(approvalId, {
        approved,
        by,
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
      });
      process.stdout.write(`${answer}\n`);
      return 0;
    } catch (err) {
      if (!(err instanceof ApprovalError)) throw err;
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
  });
}
