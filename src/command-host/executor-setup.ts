/**
 * The host set up for a worker's compiled executor options, when the worker is created
 * (`CommandHost`): how tasks can be contained here (a probe cgroup made and removed), and the bwrap
 * sandbox or sessions apart (each probed with bwrap, running a private copy of the supervisor put
 * in the spill directory). `compileExecutorOptions` touches none of this.
 */
import { detectContainment } from './containment/cgroups.js';
import { commandEnvs } from './containment/command-env.js';
import { createSandbox } from './containment/sandbox.js';
import { createSessionIsolation, type SessionIsolation } from './containment/session-isolation.js';
import { declaredRoots } from './containment/session-workdir.js';
import type { CompiledExecutorOptions, ExecutorConfig, IsolationRequest } from './executor-config.js';
import { supervisorPath } from './supervisor/supervisor.js';

/**
 * The config the command activities run with, from what this host offers: throws one line when a
 * declared workdir root cannot be used, when the sandbox cannot start, or when sessions must be
 * kept apart (`isolation: 'session'`) and cannot be.
 */
export function setUpExecutor(options: CompiledExecutorOptions): ExecutorConfig {
  // Checked, and their links resolved, once: a launch compares real paths with them.
  const workdirs = { workdirRoots: declaredRoots(options.workdirRoots), workspaceDir: options.workspaceDir };
  return {
    ...options,
    workdirRoots: workdirs.workdirRoots,
    containment: detectContainment(options.wantedLimits, options.processTreeOnly),
    sandbox: options.sandboxOptions
      ? createSandbox({ ...options.sandboxOptions, ...workdirs }, supervisorPath(), options.spillDir)
      : undefined,
    ...isolationOf(options.isolationRequest, options.spillDir, workdirs),
    commandEnvs: commandEnvs(options),
  };
}

/**
 * Sessions apart when asked for (`session`: or the worker refuses to start) or when the host offers
 * the means (`auto`); else none, with what that leaves open. The sandbox, stricter, stands alone.
 */
function isolationOf(
  request: IsolationRequest,
  spillDir: string,
  workdirs: { workdirRoots: readonly string[]; workspaceDir: string },
): { isolation: SessionIsolation | undefined; isolationSummary: string } {
  const none = (why: string) => ({
    isolation: undefined,
    isolationSummary: `isolation: none (${why}): every command runs as the worker's user, sees its processes and reaches the host's loopback (the Temporal server)`,
  });
  switch (request.kind) {
    case 'sandbox':
      return { isolation: undefined, isolationSummary: '' };
    case 'none':
      return none('--isolation none');
    case 'auto':
    case 'session': {
      let isolation: SessionIsolation;
      try {
        isolation = createSessionIsolation({ ...request.options, ...workdirs }, supervisorPath(), spillDir);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (request.kind === 'session') throw new Error(`sessions cannot be kept apart on this host: ${why}`);
        return none(why);
      }
      return { isolation, isolationSummary: isolation.summary };
    }
    default: {
      const unknown: never = request;
      throw new TypeError(`unknown isolation request: ${JSON.stringify(unknown)}`);
    }
  }
}
