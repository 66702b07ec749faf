/**
 * The `bashTask` workflow: one run of one command, from resolving the request to its end, with the
 * move to the background, kills and timeouts on the command's host. Its parts: command-attempts
 * (how activities are scheduled), run-standing (foreground or background, the timeout), run-outcome
 * (how a run ends), task-end (the reader and the notice), stdin-writes.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  CancellationScope,
  condition,
  defineSignal,
  defineUpdate,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  TimeoutFailure,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { restartsNote } from '../shared/host-restart.js';
import { MAX_HOST_RESTARTS } from '../shared/limits.js';
import { KILLED_WHILE_RESOLVING_PATCH, SESSION_KILL_PATCH } from '../shared/patches.js';
import { ownerSearchAttribute } from '../shared/search-attributes.js';
import { failedState, finishedState } from '../shared/status-line.js';
import type {
  BashTaskInput,
  BashTaskResult,
  CommandHost,
  CommandOutcome,
  CommandSpec,
  HostRestart,
  NoticeTarget,
  StopResult,
  TaskId,
} from '../shared/task.js';
import { RunFailureType, TaskStatus } from '../shared/task.js';
import { ignoredSignalForOther, refuseArgumentForOther, refuseInputForOther } from './addressed-payloads.js';
import {
  commandStarted,
  continuesOnHost,
  eagerCommand,
  hostActivities,
  inBackground,
  isPastDeadline,
  isReleased,
  releaseOnHost,
  resolveCommand,
} from './command-attempts.js';
import { handleEndWatchers } from './end-watchers.js';
import { noticeChannelStartedSignal } from './notice-channel-signals.js';
import { outputReaderStartedSignal } from './reader-signals.js';
import { showRunDetails } from './run-details.js';
import {
  endWithoutOutcome,
  failedStatus,
  finish,
  isHostLoss,
  neverStarted,
  resultOf,
  setStatus,
} from './run-outcome.js';
import { deadlineOnHost, type Standing, startTimeout } from './run-standing.js';
import { handleStdinWrites } from './stdin-writes.js';
import { endAnswered, leaveNoticeToReader, startNotice, tellReader } from './task-end.js';
import {
  ignoredUnencryptedSignal,
  refuseUnencryptedArgument,
  refuseUnencryptedInput,
} from './unencrypted-payloads.js';
import { countEnded, countHostRestart, countKill, countStarted } from './workflow-metrics.js';

/** What a move to the background needs: where the completion notice goes, if anywhere. */
export interface MoveToBackgroundRequest {
  /**
   * The task it moves: a move copied to another task is refused there (its notice would go to this
   * one's session). Clients of 0.2.0 send none; their moves expire within seconds.
   */
  taskId?: TaskId;
  notice?: NoticeTarget;
  /**
   * On the server's clock: a move the workflow takes later than this is refused, since the caller
   * has stopped waiting for it (its call goes on in the foreground).
   */
  expiresAtMs: number;
}

/**
 * Moves a foreground run to the background: its timeout no longer applies and it ends with a
 * completion notice, as if started with `run_in_background`. Refused once the command has ended or
 * its timeout has fired, so an accepted move is one the run takes.
 */
export const moveToBackgroundUpdate = defineUpdate<void, [MoveToBackgroundRequest]>('moveToBackground');

/** What the owning session's own kill tells its task first (`sessionKillSignal`). */
export interface SessionKill {
  /** The task it is for: a copy sent to another task is ignored there. */
  taskId: TaskId;
  /**
   * The kill's answer tells the session of the task's end (`killed background task <id>`), so the
   * task sends it no completion notice. False takes that back: the kill waits for the task's host,
   * and its answer said nothing of the end.
   */
  answered: boolean;
}

/**
 * Sent by the owning session's `bash_kill` just before its kill (the workflow's cancellation), where
 * the session takes notices: a task that its session killed sends that session no completion
 * notice. A kill by anyone else (an operator's `durable-bash kill`, MCP's `tasks/cancel`), a
 * timeout and a lost host still notify, as does a task that had ended before the kill reached it.
 */
export const sessionKillSignal = defineSignal<[SessionKill]>('sessionKill');

/**
 * One run of one command. Resolves the request against the worker's config, runs the command
 * activity, and for a foreground run has its host end it at the run's deadline (a run resolved by
 * 0.2.0: ends it when its timer fires). A cancellation of the workflow (a kill, an aborted call)
 * reaches the activity, which ends the process group and reports how. A background task with a
 * notice target then starts its completion notice, and ends as it would without one.
 */
export async function bashTask(input: BashTaskInput): Promise<BashTaskResult> {
  refuseUnencryptedInput(input);
  // An input copied from another task's history, started under a new id, would run its command
  // again. Every run a client starts has its task id for its workflow id, those of 0.2.0 included.
  refuseInputForOther('taskId', input.taskId);
  countStarted(input.background);
  showRunDetails(input.command, { status: 'running' });
  let hasReader = false;
  setHandler(outputReaderStartedSignal, () => {
    hasReader = true;
  });
  // A monitor's notice workflow exists: the completion notice goes there, after its notices.
  let hasChannel = false;
  setHandler(noticeChannelStartedSignal, () => {
    hasChannel = true;
  });
  const standing: Standing = {
    background: input.background,
    notice: input.notice,
    movable: !input.background,
    ended: false,
  };
  let killAnswered = false;
  setHandler(sessionKillSignal, (kill) => {
    if (ignoredUnencryptedSignal(sessionKillSignal.name, kill)) return;
    if (ignoredSignalForOther(sessionKillSignal.name, 'taskId', input.taskId, kill?.taskId)) return;
    killAnswered = kill.answered === true;
  });
  const tellWatchers = handleEndWatchers(input.taskId);
  handleStdinWrites({
    taskId: input.taskId,
    // A terminal takes typing whether the run is in the background or not (a moved run's, say); so
    // does a sandbox command's open stdin. Clients of 0.2.0 set keepStdinOpen only in the background,
    // so their histories take the same writes as before: no patch (docs/RELEASING.md).
    keepStdinOpen: input.terminal !== undefined || input.keepStdinOpen === true,
    terminal: input.terminal !== undefined,
    host: () => standing.host,
    ended: () => standing.ended,
  });
  setHandler(
    moveToBackgroundUpdate,
    (request) => {
      standing.background = true;
      standing.notice = request.notice;
      standing.movable = false;
      standing.cancelTimeout?.();
      standing.release?.();
      // Listings and the command's host (see `TaskRuns.movedToBackground`) read the move here.
      upsertMemo({ background: true });
    },
    {
      validator: (request) => {
        refuseUnencryptedArgument(moveToBackgroundUpdate.name, request);
        refuseArgumentForOther(
          moveToBackgroundUpdate.name,
          'taskId',
          input.taskId,
          request.taskId,
          'optional',
        );
        // Past the deadline its host enforces, the run is timing out (a timer would have fired).
        const pastDeadline = standing.deadlineAtMs !== undefined && Date.now() >= standing.deadlineAtMs;
        if (!standing.movable || pastDeadline)
          throw new Error(
            `task ${input.taskId} cannot move to the background: it is not running in the foreground`,
          );
        if (Date.now() >= request.expiresAtMs)
          throw new Error(`task ${input.taskId} took the move to the background too late`);
      },
    },
  );
  let run: { ok: true; result: BashTaskResult } | { ok: false; error: unknown };
  try {
    run = { ok: true, result: await runTask(input, standing) };
  } catch (error) {
    run = { ok: false, error };
  }
  standing.movable = false;
  standing.ended = true;
  const state = run.ok ? finishedState(run.result) : failedState(run.error);
  countEnded(state, run.ok ? run.result : undefined);
  showRunDetails(input.command, state, standing.host?.hostId);
  // A write to stdin in flight answers before the run closes (it is told the command ended); a
  // killed run waits too (its cancellation must not cut the wait short). Checked first: most runs
  // have nothing in flight, and the scope and condition would cost them promises (see
  // handleStdinWrites); neither makes a command, so a replay takes either way alike.
  if (!allHandlersFinished()) await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  const telling = tellWatchers(state);
  if (telling !== undefined) await telling;
  if (standing.background) {
    const { notice } = standing;
    const viaChannel = hasChannel || standing.noticeChannel === true;
    const result = run.ok ? run.result : undefined;
    // Killed by its session's own kill, whose answer told the session of the end: no notice (a kill
    // that reached a command that had ended on its own did not end it, and the notice goes).
    const killedByKill = result ? result.killed === true : state.status === 'killed';
    if (notice && killAnswered && killedByKill && patched(SESSION_KILL_PATCH)) {
      await endAnswered(input.taskId, state, result, {
        hasReader,
        viaChannel: () => hasChannel || standing.noticeChannel === true,
      });
    } else if (notice && hasReader && result && !result.terminal) {
      // Reads have seen the task: its reader sends the notice, with only the output they did not
      // show (a terminal run's notice is its last screen, whatever reads showed).
      await leaveNoticeToReader(input.taskId, notice, state, result, viaChannel);
    } else {
      await Promise.all([
        notice ? startNotice(input.taskId, notice, state, result, viaChannel) : undefined,
        hasReader ? tellReader(input.taskId) : undefined,
      ]);
    }
  }
  if (!run.ok) throw run.error;
  return run.result;
}

async function runTask(input: BashTaskInput, standing: Standing): Promise<BashTaskResult> {
  let resolved: Awaited<ReturnType<typeof resolveCommand>>;
  try {
    resolved = await resolveCommand(input);
  } catch (err) {
    // Killed before a host was chosen: killed, as a kill at any later point before the start is.
    if (isCancellation(err) && patched(KILLED_WHILE_RESOLVING_PATCH)) setStatus(TaskStatus.killed);
    throw err;
  }
  const current = () =>
    monitored(
      standing.background && !resolved.background ? inBackground(resolved) : resolved,
      standing,
      input.notifyOn,
    );
  let host =
    resolved.hostQueue !== undefined && resolved.hostId !== undefined
      ? { hostQueue: resolved.hostQueue, hostId: resolved.hostId }
      : await chooseHostFor(current(), resolved.lostAfterMs, standing);
  standing.host = host;
  showRunDetails(input.command, { status: 'running' }, host.hostId);
  // Only a run that asked for restarts ever loops: every other run (and every run recorded before
  // restarts existed) makes the one call to runOnHost it always made, so no patch.
  let restart: HostRestart | undefined;
  // Hosts this task was lost on before its current one: a restart never goes back to one (its files
  // there, and a read position counted on them, are of an earlier run of the command).
  const lostBefore: string[] = [];
  for (;;) {
    const restartable = input.restartOnHostLoss === true && (restart?.count ?? 0) < MAX_HOST_RESTARTS;
    try {
      const spec = restart === undefined ? current() : restartedOn(current(), host, restart);
      return await runOnHost(spec, host, resolved.lostAfterMs, standing, restartable);
    } catch (err) {
      if (!(err instanceof HostLost))
        throw restart === undefined ? err : endAfterRestarts(err, restart, host);
    }
    // The lost host, back just now, may pick itself: its attempt then re-attaches to the command,
    // which was never lost.
    const next = await chooseRestartHost(current(), resolved.lostAfterMs, host, lostBefore, restart);
    if (next.hostQueue === host.hostQueue) continue;
    lostBefore.push(host.hostQueue);
    restart = { count: (restart?.count ?? 0) + 1, lostHostId: host.hostId };
    host = next;
    standing.host = host;
    // Listings read it here while the task runs (the result says it at the end); the lost host,
    // back after all, learns here that what still runs there is no longer the task's command.
    upsertMemo({ restarts: restart.count, hostQueue: host.hostQueue });
    countHostRestart();
    showRunDetails(input.command, { status: 'running' }, host.hostId);
  }
}

/**
 * The host a run restarts on after `lost` was declared lost: whichever worker of the command queue
 * answers, except those of hosts in `avoid`, which refuse (each refusal is retried, within the lost
 * window as a whole). None within the lost window, or a kill meanwhile, ends the task lost with its
 * restarts said.
 */
async function chooseRestartHost(
  spec: CommandSpec,
  lostAfterMs: number,
  lost: CommandHost,
  avoid: string[],
  restart: HostRestart | undefined,
): Promise<CommandHost> {
  const { chooseHost } = proxyActivities<CommandActivities>({
    taskQueue: spec.taskQueue,
    scheduleToStartTimeout: lostAfterMs,
    scheduleToCloseTimeout: lostAfterMs,
    startToCloseTimeout: '10 seconds',
    // A refusal is an avoided host's answer: retried soon, so another worker gets the choice.
    retry: { initialInterval: '1 second', maximumInterval: '5 seconds' },
  });
  try {
    return await chooseHost(avoid);
  } catch (err) {
    const why = isCancellation(err)
      ? 'it was killed before it started again on another host'
      : // No worker took it in time, or every one that did refused it until the window closed.
        err instanceof ActivityFailure &&
          (err.cause instanceof TimeoutFailure || err.retryState === 'TIMEOUT')
        ? `no other worker of task queue ${spec.taskQueue} took the command within ${lostAfterMs}ms`
        : undefined;
    if (why === undefined) {
      setStatus(TaskStatus.failed);
      throw err;
    }
    throw lostAfterRestarts(`its host ${lost.hostId} was lost, and ${why}`, restart?.count);
  }
}

/** A restarting run ended lost: its status set, the reason followed by how often it restarted. */
function lostAfterRestarts(
  reason: string,
  restarts: number | undefined,
  details?: unknown[],
): ApplicationFailure {
  setStatus(TaskStatus.lost);
  return ApplicationFailure.create({
    type: RunFailureType.commandLost,
    message: `${reason}${restartsNote(restarts)}`,
    nonRetryable: true,
    ...(details !== undefined ? { details } : {}),
  });
}

/** Thrown by runOnHost in place of the lost end, for a run that restarts on another host. */
class HostLost extends Error {}

/**
 * How a restarted run that ends without an outcome says so: lost, with its restarts, when its
 * host is lost again past the bound, when its workdir is not on the new host (it never ran
 * there), or when a kill came before it started there. Anything else (a command that could not
 * run) as it is.
 */
function endAfterRestarts(err: unknown, restart: HostRestart, host: CommandHost): unknown {
  // The command ran on the lost host, so "killed before the command started" would not be true.
  if (isCancellation(err)) {
    return lostAfterRestarts(
      `its host ${restart.lostHostId} was lost, and it was killed before it started again on ${host.hostId}`,
      restart.count,
    );
  }
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure)) return err;
  let reason: string;
  if (cause.type === RunFailureType.commandLost) reason = cause.message;
  else if (cause.type === RunFailureType.workdirNotFound)
    reason = `its host ${restart.lostHostId} was lost, and on ${host.hostId}: ${cause.message}`;
  else return err;
  return lostAfterRestarts(reason, restart.count, cause.details ?? []);
}

/** The spec of a command's restart on `host`: a first start there, never an eager attempt or a re-attach. */
function restartedOn(spec: CommandSpec, host: CommandHost, restart: HostRestart): CommandSpec {
  const { eagerFirstAttempt, commandStarted, ...rest } = spec;
  return { ...rest, hostQueue: host.hostQueue, hostId: host.hostId, restart };
}

/**
 * A background run with a notice target tells its host where a monitor's notices go (and its
 * `notify_on`): any such task can be given a monitor later (`bash_monitor`). The activity's input
 * is not part of what a replay compares, so a run from before monitors replays unchanged.
 */
function monitored(spec: CommandSpec, standing: Standing, notifyOn?: string): CommandSpec {
  const target = standing.notice;
  if (!spec.background || target === undefined) return spec;
  const ownerAttribute =
    'workflowId' in target ? undefined : workflowInfo().typedSearchAttributes.get(ownerSearchAttribute);
  return {
    ...spec,
    monitor: {
      target,
      ...(ownerAttribute !== undefined ? { ownerAttribute } : {}),
      ...(notifyOn !== undefined ? { notifyOn } : {}),
    },
  };
}

/**
 * The command's host, picked by whichever worker of the command queue answers first. The foreground
 * timeout and a kill already hold while no worker answers; none within the lost window ends it lost.
 */
async function chooseHostFor(
  spec: CommandSpec,
  lostAfterMs: number,
  standing: Standing,
): Promise<CommandHost> {
  const { chooseHost } = proxyActivities<CommandActivities>({
    taskQueue: spec.taskQueue,
    scheduleToStartTimeout: lostAfterMs,
    startToCloseTimeout: '10 seconds',
  });
  const choosing = new CancellationScope();
  const timeout = startTimeout(spec, () => choosing.cancel(), standing);
  try {
    return await choosing.run(() => chooseHost());
  } catch (err) {
    const firedAfterMs = timeout.firedAfterMs();
    if (firedAfterMs !== undefined && isCancellation(err)) throw neverStarted(spec, firedAfterMs);
    if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
      setStatus(TaskStatus.lost);
      throw ApplicationFailure.create({
        type: RunFailureType.commandLost,
        message: `no worker of task queue ${spec.taskQueue} took the command within ${lostAfterMs}ms`,
        nonRetryable: true,
      });
    }
    // A kill while no worker took the command yet is a kill (the run ends cancelled).
    setStatus(failedStatus(err));
    throw err;
  } finally {
    timeout.cancel();
  }
}

/**
 * Runs the command on its host. A kill (the workflow's cancellation), or the timeout of a run that
 * keeps a timer, goes to the host twice: as the cancellation of the running attempt, which ends
 * the group and reports the outcome, and as a stop activity of its own. The stop reaches the host
 * when no attempt runs (the server completes such a cancellation without telling any worker) and
 * when an attempt that was asked to stop is retried without the request; its recorded end is the
 * truth. It takes effect as soon as a worker on that host polls again.
 */
async function runOnHost(
  resolved: CommandSpec,
  host: CommandHost,
  lostAfterMs: number,
  standing: Standing,
  restartable = false,
): Promise<BashTaskResult> {
  // The foreground timeout: the host's to enforce (the spec carries the deadline), or a timer here.
  const onHost =
    resolved.hostKeepsDeadline === true && resolved.timeoutMs !== undefined
      ? deadlineOnHost(resolved, standing)
      : undefined;
  const spec = onHost?.spec ?? resolved;
  const { runCommand, stopCommand } = hostActivities(spec, host.hostQueue, lostAfterMs);
  let command = new CancellationScope();
  // The eager attempt's last heartbeat, when the host queue's attempts took over from it: a task
  // lost before any of those heartbeated ends with the output the server last knew.
  let eagerProgress: unknown;
  let outcome = command
    .run(async () => {
      // The first attempt on the workflow's own queue, when this workflow's worker is the host:
      // it is handed to that worker with the workflow task's completion (eager dispatch), a
      // matching round trip less for every run. Any other worker refuses it (WrongHost) without
      // starting anything, and a lost worker leaves it to the host queue's attempts, which
      // re-attach.
      // (`resolveCommand` names a host queue only when its worker serves the command queue itself,
      // and says so in the spec: never a patch, which, called right after the local activity,
      // fails to replay when the activity's result came in the next workflow task.)
      if (spec.hostQueue !== undefined && spec.eagerFirstAttempt === true) {
        try {
          return await eagerCommand(spec)(spec);
        } catch (err) {
          if (!continuesOnHost(err)) throw err;
          if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure)
            eagerProgress = err.cause.lastHeartbeatDetails;
          if (commandStarted(err)) return runCommand({ ...spec, commandStarted: true });
        }
      }
      return runCommand(spec);
    })
    .then(
      (ended) => ({ ok: true as const, ended }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  let stopping: Promise<StopResult> | undefined;
  // The end a stop recorded settles the run when no attempt on the host follows the command: the
  // one still open was left by a worker that crashed with the kill in flight, and would hold the
  // run until its heartbeat timeout, long after the command ended.
  let endedByStop: (settled: { ok: true; ended: CommandOutcome }) => void = () => undefined;
  const stopEnded = new Promise<{ ok: true; ended: CommandOutcome }>((resolve) => {
    endedByStop = resolve;
  });
  const stop = () => {
    // A run being killed or timed out can no longer move to the background.
    standing.movable = false;
    if (stopping !== undefined) return void command.cancel();
    // A run moved to the background is stopped as one (its monitor's last lines go first).
    const stopped = standing.background && !spec.background ? monitored(inBackground(spec), standing) : spec;
    stopping = CancellationScope.nonCancellable(() => stopCommand(stopped));
    // No patch: a stop recorded before `unattended` existed never has it, so such runs replay as they ran.
    stopping.then(
      (stopped) => {
        if (stopped.kind === 'ended' && stopped.unattended) endedByStop({ ok: true, ended: stopped.outcome });
      },
      () => undefined, // Read again below, where a failed stop is reported.
    );
    command.cancel();
  };
  const settledOrStopped = () => Promise.race([outcome, stopEnded]);
  const timeout = onHost?.timeout ?? startTimeout(spec, stop, standing);
  // A kill that comes while the command runs ends it: its result says so (see `killTask`). One that
  // reaches a command that had already ended on its own (its supervisor says it stopped nothing)
  // says that instead.
  let killed = false;
  CancellationScope.current().cancelRequested.catch(() => {
    killed = true;
    countKill();
    stop();
  });
  const ended = (outcome: CommandOutcome) => {
    if (outcome.noticeChannel === true) standing.noticeChannel = true;
    const result = {
      ...resultOf(spec, outcome, timeout.firedAfterMs()),
      ...(spec.restart !== undefined ? { restarts: spec.restart.count } : {}),
    };
    return finish(killed ? { ...result, killed: outcome.stoppedWhileRunning !== false } : result);
  };
  let released = false;
  if (spec.timeoutMs !== undefined) {
    standing.release = () => {
      released = true;
      command.cancel();
      // The cancellation reaches the attempt only in a heartbeat's response; this, at once.
      void releaseOnHost(spec.taskId, host.hostQueue);
    };
  }
  try {
    let settled = await settledOrStopped();
    standing.release = undefined;
    if (released && !settled.ok && stopping === undefined) {
      // Moved to the background: the foreground attempt let go of the command (or never started
      // it), and an attempt without the foreground's deadline and time limit takes over.
      const background = monitored(inBackground(spec), standing);
      const commandStarted = isReleased(settled.error);
      command = new CancellationScope();
      outcome = command
        .run(() =>
          hostActivities(background, host.hostQueue, lostAfterMs).runCommand({
            ...background,
            ...(commandStarted ? { commandStarted } : {}),
          }),
        )
        .then(
          (ended) => ({ ok: true as const, ended }),
          (error: unknown) => ({ ok: false as const, error }),
        );
      settled = await settledOrStopped();
    }
    // An attempt's outcome comes from the supervisor's recorded end, as a stop's would: the
    // command has ended, and its tails are whole.
    if (settled.ok) return ended(settled.ended);
    if (isPastDeadline(settled.error) && spec.timeoutMs !== undefined)
      throw neverStarted(spec, spec.timeoutMs);
    if (stopping === undefined) {
      if (restartable && isHostLoss(settled.error)) throw new HostLost();
      throw endWithoutOutcome(settled.error, host, lostAfterMs, eagerProgress);
    }
    let stopped: StopResult;
    try {
      stopped = await stopping;
    } catch (stopError) {
      throw endWithoutOutcome(stopError, host, lostAfterMs, eagerProgress);
    }
    if (stopped.kind === 'ended') return ended(stopped.outcome);
    const firedAfterMs = timeout.firedAfterMs();
    if (firedAfterMs !== undefined) throw neverStarted(spec, firedAfterMs);
    // Killed before the command started: the run ends cancelled, or failed with the tombstone the
    // kill left (its status is killed either way), unless the command had failed on its own first.
    setStatus(failedStatus(settled.error));
    throw settled.error;
  } finally {
    timeout.cancel();
  }
}
