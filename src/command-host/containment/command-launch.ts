/**
 * How a command is launched in its containment: the bwrap sandbox's launcher, or its session's
 * (sessions apart), with the inner supervisor it runs under; or the task's end when its session may
 * not run in its workdir, is over its disk cap, or cannot be had.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { type CommandSpec, RunFailureType } from '../../shared/task.js';
import { DiskCapRefusedError, type SessionDisk } from '../spill/session-disk.js';
import type { Sandbox } from './sandbox.js';
import type { SessionIsolation, SessionLaunch } from './session-isolation.js';
import { WorkdirRefusedError } from './session-workdir.js';

/** The launcher and the inner supervisor a command runs under; empty when it runs under no launcher. */
export interface CommandLaunch {
  /** The launcher's argv, up to the inner supervisor. */
  launcher?: string[];
  /** The inner supervisor's options (a session's). */
  inner?: string[];
  /** The inner supervisor's binary: the sandbox's or the sessions' private copy. */
  innerBinary?: string;
  /** A plain `rm` admitted over its session's disk cap: it runs with `cleanupEnv`'s PATH. */
  cleanup?: true;
}

/**
 * The launch of `spec`'s command under the sandbox, or in its session, or none. With `sessionDisk`
 * (a command's launch; a workspace's file operations go without), a session over its disk cap is
 * refused first.
 */
export async function commandLaunch(
  containment: {
    sandbox: Sandbox | undefined;
    isolation: SessionIsolation | undefined;
    sessionDisk?: SessionDisk | undefined;
  },
  spec: CommandSpec,
): Promise<CommandLaunch> {
  const { sandbox, isolation, sessionDisk } = containment;
  const admitted = isolation && sessionDisk ? await admit(sessionDisk, spec) : undefined;
  const launched = sandbox
    ? { ...sandboxLaunch(sandbox, spec), innerBinary: sandbox.supervisor }
    : isolation
      ? { ...(await sessionLaunch(isolation, spec)), innerBinary: isolation.supervisor }
      : {};
  return { ...launched, ...(admitted?.cleanup ? { cleanup: true as const } : {}) };
}

/** The session's disk cap's word on the launch, or the task's end in its one line: nothing ran. */
async function admit(sessionDisk: SessionDisk, spec: CommandSpec): Promise<{ cleanup: boolean }> {
  try {
    return await sessionDisk.admit(spec);
  } catch (err) {
    if (!(err instanceof DiskCapRefusedError)) throw err;
    throw ApplicationFailure.create({
      type: RunFailureType.overDiskCap,
      message: err.message,
      nonRetryable: true,
    });
  }
}

/** How the command runs in its session, or the task's end when its workdir or its session cannot be had. */
async function sessionLaunch(isolation: SessionIsolation, spec: CommandSpec): Promise<SessionLaunch> {
  try {
    return await isolation.launch(spec);
  } catch (err) {
    if (err instanceof WorkdirRefusedError) throw workdirRefused(err);
    throw ApplicationFailure.create({
      type: RunFailureType.spawnFailed,
      message: `the command's session could not be set up: ${err instanceof Error ? err.message : String(err)}`,
      nonRetryable: true,
    });
  }
}

/** The sandbox's launch of a command, or the task's end when its session may not run in its workdir. */
function sandboxLaunch(sandbox: Sandbox, spec: CommandSpec): SessionLaunch {
  try {
    return sandbox.launch(spec);
  } catch (err) {
    if (!(err instanceof WorkdirRefusedError)) throw err;
    throw workdirRefused(err);
  }
}

/** The task's end, in the refusal's one line: nothing ran. */
function workdirRefused(err: WorkdirRefusedError): ApplicationFailure {
  return ApplicationFailure.create({
    type: RunFailureType.workdirNotFound,
    message: err.message,
    nonRetryable: true,
  });
}
