/**
 * Commands of a sandbox session (docs/SANDBOXES.md): what the framework adapters (OpenAI Agents'
 * sandbox client, the AI SDK 7 sandbox session) call to run a command. A call takes the `bash`
 * tool's arguments and goes through the `bash` tool's own checks, permission policy and quota
 * (`startBashRun`), pinned to the session's host and kept inside its workspace.
 */
import os from 'node:os';
import path from 'node:path';
import type { BashTasks, ForegroundOutcome } from '../client/bash-tasks.js';
import { InvalidArgumentsError, UnknownTaskError } from '../shared/errors.js';
import { DEFAULT_MAX_WAIT_MS } from '../shared/limits.js';
import type { TaskState } from '../shared/status-line.js';
import type { CommandHost, TaskId } from '../shared/task.js';
import { bashArguments, parseArguments } from './arguments.js';
import { type BashGuards, foregroundOutcome, startBashRun } from './bash.js';
import { type BashToolsOptions, bashToolsCore } from './create-bash-tools.js';

/** Where a sandbox session's commands run: its session, its host, its workspace. */
export interface SandboxScope {
  /** The agent session: the owner of its tasks, and its identity on the host when sessions are apart. */
  sessionId: string;
  /** The worker host the workspace lives on; every command of the session runs there. */
  host: CommandHost;
  /** The workspace directory on that host: a relative workdir resolves against it, and none leaves it. */
  root: string;
}

/** A sandbox session's commands, over the same tasks client and guards the tools use. */
export class SandboxCommands {
  readonly tasks: BashTasks;
  readonly guards: BashGuards;
  /** The longest one read may wait for output (the `bash_output` tool's cap). */
  readonly maxWaitMs: number;

  constructor(options: BashToolsOptions) {
    const { tasks, guards } = bashToolsCore(options);
    this.tasks = tasks;
    this.guards = guards;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  }

  /**
   * Starts a run of the `bash` tool's arguments (`command`, `description`, `run_in_background`,
   * `tty`, ...) in the session: checked as the tool checks them, its workdir inside the workspace.
   * Throws the tool's one-line errors (`InvalidArgumentsError`, `CommandDeniedError`, ...).
   * `keepStdinOpen` keeps a foreground run's stdin open, as a framework's exec without a terminal
   * expects (the model's `write_stdin`): outside the tool's arguments, which allow it only in the
   * background.
   */
  async start(
    scope: SandboxScope,
    args: unknown,
    options: { signal?: AbortSignal; keepStdinOpen?: boolean } = {},
  ): Promise<TaskId> {
    const call = parseArguments(bashArguments, args);
    // Without `answerPending`, a run that waits for approval has started (or been refused) by now.
    const started = await startBashRun(this.tasks, this.guards, call, {
      workdir: workspaceWorkdir(scope.root, call.workdir),
      sessionId: scope.sessionId,
      host: scope.host,
      ...options,
    });
    if (!('taskId' in started)) throw new TypeError('a sandbox command cannot be left waiting for approval');
    return started.taskId;
  }

  /** Waits for a foreground run, moving it to the background after `autoBackgroundAfterMs` (as `bash` does). */
  foreground(
    scope: SandboxScope,
    taskId: TaskId,
    options: { signal?: AbortSignal; autoBackgroundAfterMs?: number } = {},
  ): Promise<ForegroundOutcome> {
    return foregroundOutcome(this.tasks, this.guards, taskId, { sessionId: scope.sessionId, ...options });
  }

  /**
   * Kills every running task of the session (each whole process tree, as `bash_kill`) and waits for
   * their ends: those visibility lists, and `known` (the adapter's own, which a listing may not show
   * yet). Answers how many were running.
   */
  async killAll(scope: SandboxScope, known: readonly TaskId[] = []): Promise<number> {
    const listed = await this.tasks.list({ owner: scope.sessionId, running: true }, MAX_LISTED_TASKS);
    const taskIds = new Set([...known, ...listed.map((task) => task.taskId)]);
    const kills = await Promise.all(
      [...taskIds].map((taskId) =>
        this.tasks.kill(taskId, scope.sessionId).catch((err: unknown) => {
          // A task that a listing showed but that is gone, or not this session's, is not ours to end.
          if (err instanceof UnknownTaskError) return 'already-finished' as const;
          throw err;
        }),
      ),
    );
    return kills.filter((kill) => kill !== 'already-finished').length;
  }
}

/**
 * The longest description a sandbox command's task gets from the command: a line that fits a row
 * of `durable-bash ps` and of the Web UI's workflow list beside the id.
 */
const COMMAND_DESCRIPTION_CHARS = 80;

/**
 * The `bash` tool's `description` (display only) for a sandbox command, which comes without one:
 * the command's first line, cut to COMMAND_DESCRIPTION_CHARS.
 */
export function commandDescription(command: string): string {
  const line = command.trim().split('\n')[0] ?? '';
  if (line === '') return 'Run a command';
  return line.length > COMMAND_DESCRIPTION_CHARS
    ? `${line.slice(0, COMMAND_DESCRIPTION_CHARS - 3)}...`
    : line;
}

/** The most running tasks one `killAll` lists (a session's background cap is 20 by default). */
const MAX_LISTED_TASKS = 1000;

/**
 * A command's workdir in the workspace: the root itself, a path relative to it, or an absolute path
 * inside it. Anything else is refused before the run starts.
 */
export function workspaceWorkdir(root: string, workdir: string | undefined): string {
  const resolved = path.resolve(root, workdir ?? '.');
  const relative = path.relative(root, resolved);
  if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) return resolved;
  throw new InvalidArgumentsError(
    `invalid workdir: ${JSON.stringify(workdir)} is outside the session's workspace ${root}`,
  );
}

/**
 * The exit code an ended task reports, as a shell would: its own, 128 + the signal's number for a
 * kill, and 1 when the command never ran (it could not, or a kill came before it started) or its
 * worker was lost (the status line says which).
 */
export function shellExitCode(state: TaskState): number {
  switch (state.status) {
    case 'running':
      throw new Error('a running task has no exit code');
    case 'completed':
      return state.exitCode;
    case 'killed': {
      if (state.signal === undefined) return 1;
      const number = os.constants.signals[state.signal as NodeJS.Signals];
      return number === undefined ? 1 : 128 + number;
    }
    case 'failed':
    case 'lost':
      return 1;
    default: {
      const unreachable: never = state;
      return unreachable;
    }
  }
}
