import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import type { Approvals } from '../client/approvals.js';
import type { BackgroundQuota } from '../client/background-quota.js';
import type { BashTasks, ForegroundOutcome } from '../client/bash-tasks.js';
import type { StartRequest } from '../client/task-start.js';
import { checkPermission, type PermissionOptions } from '../policy/permission-gate.js';
import {
  type ApprovalPrompt,
  abortedWhileWaiting,
  deniedBy,
  noDecisionInTime,
  waitingForApproval,
} from '../shared/approval.js';
import { positiveOption } from '../shared/checks.js';
import { errorResult } from '../shared/error-result.js';
import { BackgroundQuotaError, CommandNotApprovedError } from '../shared/errors.js';
import { DEFAULT_TIMEOUT_MS } from '../shared/limits.js';
import { BYTES_PER_TOKEN } from '../shared/output-budget.js';
import { backgroundStarted, renderMovedRun, renderRun } from '../shared/render.js';
import type { CommandHost, TaskId } from '../shared/task.js';
import { type Tool, type ToolExecContext, type ToolResult, textResult } from '../shared/tool-types.js';
import {
  type BashArguments,
  bashArguments,
  DEFAULT_TERMINAL,
  parseArguments,
  toInputSchema,
} from './arguments.js';
import { autoBackgroundDescription, bashDescription } from './descriptions.js';
import { presentBashCall, presentBashResult } from './present.js';

/** What may stop a `bash` call before it starts: the permission policy and the background quota. */
export interface BashGuards extends PermissionOptions {
  /** Caps each session's running background tasks. @default no cap */
  quota?: BackgroundQuota;
  /** Durable approval requests, where sessions take notices: an `ask` with no approver waits in one. */
  approvals?: Approvals;
}

/** The `bash` tool's options: its guards, and when a foreground run moves to the background. */
export interface BashToolOptions extends BashGuards {
  /**
   * A foreground call still running after this long answers with the output so far and moves its run
   * to the background (same owner, completion notice, no timeout any more). @default never
   */
  autoBackgroundAfterMs?: number;
}

/** What sets one shape of the `bash` tool apart: the arguments it lists and how they become a call. */
export interface BashToolShape<A> {
  description: string;
  parameters: z.ZodType<A>;
  /** The call to run, or an InvalidArgumentsError with the one line a bad call gets. */
  parse(args: unknown): BashCall;
  /** The arguments as durable-bash's, for the views (present.ts). @default as they came */
  asBashArguments?(args: unknown): unknown;
}

/**
 * The `bash` tool: validates, asks the permission policy (and the quota, for a background run),
 * starts one workflow per run, and renders what the model sees.
 */
export function createBashTool(tasks: BashTasks, guards: BashToolOptions = {}): Tool<BashArguments> {
  return createBashToolOfShape(tasks, guards, {
    description: bashDescription,
    parameters: bashArguments,
    parse: (args) => parseArguments(bashArguments, args),
  });
}

/** The `bash` tool taking the arguments `shape` lists; every shape runs and answers as `bash` does. */
export function createBashToolOfShape<A>(
  tasks: BashTasks,
  guards: BashToolOptions,
  shape: BashToolShape<A>,
): Tool<A> {
  const { autoBackgroundAfterMs } = guards;
  if (autoBackgroundAfterMs !== undefined) positiveOption('autoBackgroundAfterMs', autoBackgroundAfterMs);
  const asBash = shape.asBashArguments ?? ((args: unknown) => args);
  return {
    name: 'bash',
    description:
      autoBackgroundAfterMs === undefined
        ? shape.description
        : shape.description + autoBackgroundDescription(autoBackgroundAfterMs),
    parameters: shape.parameters,
    inputSchema: toInputSchema(shape.parameters),
    presentCall: (args) => presentBashCall(asBash(args)),
    presentResult: (args, result) => presentBashResult(asBash(args), result),
    async execute(args: unknown, exec: ToolExecContext = {}): Promise<ToolResult> {
      try {
        return await runBashCall(tasks, guards, shape.parse(args), exec);
      } catch (err) {
        return errorResult(err);
      }
    },
  };
}

/**
 * A checked `bash` call, as a tool hands it over: durable-bash's arguments, and a background run's
 * time limit, which only Claude Code's Bash arguments set (claude-code-bash.ts).
 */
export type BashCall = BashArguments & { backgroundTimeoutMs?: number };

/**
 * Runs a checked call as the `bash` tool does and renders its answer: the one path from a call to
 * its text, whichever shape of arguments the tool takes. Throws what the tool turns into an error result.
 */
async function runBashCall(
  tasks: BashTasks,
  guards: BashToolOptions,
  call: BashCall,
  exec: ToolExecContext,
): Promise<ToolResult> {
  const { autoBackgroundAfterMs } = guards;
  const sessionId = exec.agent?.sessionId;
  const started = await startBashRun(tasks, guards, call, {
    workdir: resolveWorkdir(call.workdir, exec.agent?.cwd),
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(exec.signal !== undefined ? { signal: exec.signal } : {}),
    ...(exec.approvalPrompt !== undefined ? { approvalPrompt: exec.approvalPrompt } : {}),
    // A caller that moves a long call to the background would not wait longer for a decision.
    ...(autoBackgroundAfterMs !== undefined ? { approvalWaitMs: autoBackgroundAfterMs } : {}),
    answerPending: true,
  });
  if ('approvalId' in started) return textResult(waitingForApproval(started.approvalId));
  const { taskId } = started;
  if (call.run_in_background === true) return textResult(backgroundStarted(taskId));
  const ended = await foregroundOutcome(tasks, guards, taskId, {
    ...(sessionId !== undefined ? { sessionId } : {}),
    ...(exec.signal !== undefined ? { signal: exec.signal } : {}),
    ...(autoBackgroundAfterMs !== undefined ? { autoBackgroundAfterMs } : {}),
  });
  if (ended.kind === 'moved') {
    return textResult(
      renderMovedRun(ended.read, taskId, ended.afterMs, os.hostname(), call.max_output_tokens),
    );
  }
  return textResult(renderRun(ended.result, os.hostname(), call.max_output_tokens));
}

/** Where a run starts: its resolved workdir, its session, and its host when the session has one. */
export interface RunPlace {
  workdir: string | undefined;
  sessionId?: string;
  /** A sandbox session's host, where its workspace is. @default whichever worker answers */
  host?: CommandHost;
  /** Aborts a wait for approval. */
  signal?: AbortSignal;
  /** Keeps a foreground run's stdin open (a sandbox command's, for its `writeStdin`); the tool's own runs never do. */
  keepStdinOpen?: boolean;
  /** Asks the caller's user about an approval request now, as well as waiting for it (MCP elicitation). */
  approvalPrompt?: ApprovalPrompt;
  /** The longest a call waits for a decision, when shorter than its timeout. @default the call's timeout */
  approvalWaitMs?: number;
  /**
   * A background call that must wait for approval answers at once with the request's id (the `bash`
   * tool). @default false: it waits for the decision, as a foreground call does
   */
  answerPending?: boolean;
}

/** A run started, or (a background call with `answerPending`) a request waiting for approval. */
export type RunStart = { taskId: TaskId } | { approvalId: string };

/**
 * Starts the run a checked `bash` call asks for, after the permission policy (and, for a background
 * run of a session, the quota) let it: the one way every entry point starts a command.
 */
export async function startBashRun(
  tasks: BashTasks,
  guards: BashGuards,
  call: BashCall,
  place: RunPlace,
): Promise<RunStart> {
  const background = call.run_in_background === true;
  const { workdir, sessionId, host } = place;
  const { approvals } = guards;
  const canDefer = approvals !== undefined && approvals.noticeFor(sessionId) !== undefined;
  const verdict = await checkPermission(
    { command: call.command, workdir, background, sessionId },
    guards,
    place.signal,
    canDefer,
  );
  const request = {
    ...startRequest(call, workdir, sessionId),
    ...(place.keepStdinOpen === true ? { keepStdinOpen: true } : {}),
    ...(host !== undefined ? { host } : {}),
  };
  if (verdict.kind === 'deferred' && approvals !== undefined && sessionId !== undefined)
    return awaitApproval(approvals, { ...request, owner: sessionId }, verdict.reason, call, place);
  const start = () => tasks.start(request);
  const taskId =
    background && sessionId !== undefined && guards.quota !== undefined
      ? await guards.quota.start(sessionId, start)
      : await start();
  return { taskId };
}

/**
 * Makes a durable approval request for the run. A background call with `answerPending` answers with
 * its id at once; any other waits for the decision within the call's timeout (asking the caller's
 * user meanwhile, when it can), and starts, or is refused in one line that names the request.
 */
async function awaitApproval(
  approvals: Approvals,
  request: StartRequest & { owner: string },
  reason: string,
  call: BashArguments,
  place: RunPlace,
): Promise<RunStart> {
  const answerPending = request.background && place.answerPending === true;
  const waitMs = Math.min(
    call.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    place.approvalWaitMs ?? Number.POSITIVE_INFINITY,
  );
  const question = await approvals.request(request, reason, answerPending ? undefined : waitMs);
  const { approvalId } = question;
  const asking = new AbortController();
  if (place.approvalPrompt !== undefined) {
    // Whatever they answer goes to the request, where the first decision from anywhere wins.
    void place
      .approvalPrompt(question, asking.signal)
      .then((decision) => (decision === undefined ? undefined : approvals.decide(approvalId, decision)))
      .catch(() => undefined);
  }
  if (answerPending) return { approvalId };
  try {
    const outcome = await approvals.outcome(approvalId, waitMs, place.signal);
    if (outcome === undefined) {
      await approvals.callerLeft(approvalId);
      throw new CommandNotApprovedError(
        place.signal?.aborted ? abortedWhileWaiting(approvalId) : noDecisionInTime(approvalId, waitMs),
      );
    }
    switch (outcome.kind) {
      case 'approved':
        if (outcome.background) throw new CommandNotApprovedError(noDecisionInTime(approvalId, waitMs));
        return { taskId: outcome.taskId as TaskId };
      case 'refused':
        // Approved, but the session was at its background quota when the run would have started.
        throw new BackgroundQuotaError(outcome.running, outcome.limit);
      case 'denied':
        throw new CommandNotApprovedError(deniedBy(outcome));
      case 'expired':
        throw new CommandNotApprovedError(`request ${approvalId} expired with no decision`);
    }
  } finally {
    asking.abort();
  }
}

/**
 * Waits for a foreground run as the `bash` tool does: its result, or its output so far once it
 * moved to the background after `autoBackgroundAfterMs` (the quota admitting the move).
 */
export function foregroundOutcome(
  tasks: BashTasks,
  guards: BashGuards,
  taskId: TaskId,
  options: { sessionId?: string; signal?: AbortSignal; autoBackgroundAfterMs?: number },
): Promise<ForegroundOutcome> {
  const { sessionId, signal, autoBackgroundAfterMs } = options;
  const { quota } = guards;
  return tasks.foregroundResult(taskId, {
    ...(signal !== undefined ? { signal } : {}),
    ...(autoBackgroundAfterMs !== undefined ? { autoBackgroundAfterMs } : {}),
    ...(sessionId !== undefined ? { owner: sessionId } : {}),
    ...(sessionId !== undefined && quota !== undefined
      ? { admitMove: (move: () => Promise<boolean>) => quota.move(sessionId, taskId, move) }
      : {}),
  });
}

/** The run a `bash` call asks for (with its workdir resolved), as the client starts it. */
export function startRequest(
  call: BashCall,
  workdir: string | undefined,
  owner: string | undefined,
): StartRequest {
  const background = call.run_in_background === true;
  return {
    command: call.command,
    description: call.description,
    background,
    ...(workdir !== undefined ? { workdir } : {}),
    ...(call.timeoutMs !== undefined && !background ? { timeoutMs: call.timeoutMs } : {}),
    ...(call.backgroundTimeoutMs !== undefined && background
      ? { backgroundTimeoutMs: call.backgroundTimeoutMs }
      : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(call.keep_stdin_open === true ? { keepStdinOpen: true } : {}),
    ...(call.notify_on !== undefined ? { notifyOn: call.notify_on } : {}),
    ...(call.on_host_loss === 'restart' && background ? { restartOnHostLoss: true } : {}),
    ...(call.max_output_tokens !== undefined && !background
      ? { shownOutputBytes: call.max_output_tokens * BYTES_PER_TOKEN }
      : {}),
    ...(call.tty === true
      ? { terminal: { cols: call.cols ?? DEFAULT_TERMINAL.cols, rows: call.rows ?? DEFAULT_TERMINAL.rows } }
      : {}),
  };
}

/**
 * Absolute workdirs stand as given; a relative one is taken against the session's cwd. With no
 * session cwd, the worker resolves what is left against its own default.
 */
function resolveWorkdir(workdir: string | undefined, sessionCwd: string | undefined): string | undefined {
  if (sessionCwd === undefined) return workdir;
  return path.resolve(sessionCwd, workdir ?? '.');
}
