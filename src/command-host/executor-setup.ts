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
import type { CompiledExecutorOptions, ExecutorConfig, IsolationRequest } from './executor-config.js';
import { supervisorPath } from './supervisor/supervisor.js';

/**
 * The config the command activities run with, from what this host offers: throws one line when the
 * sandbox cannot start, or when sessions must be kept apart (`isolation: 'session'`) and cannot be.
 * `temporalAddress`, the server's address as the worker's connection was made to it, when known:
 * sessions' networks refuse its addresses.
 */
export function setUpExecutor(options: CompiledExecutorOptions, temporalAddress?: string): ExecutorConfig {
  const request = options.isolationRequest;
  return {
    ...options,
    containment: detectContainment(options.wantedLimits, options.processTreeOnly),
    sandbox: options.sandboxOptions
      ? createSandbox(options.sandboxOptions, supervisorPath(), options.spillDir)
      : undefined,
    ...isolationOf(
      'options' in request && temporalAddress !== undefined
        ? { ...request, options: { ...request.options, temporalAddress } }
        : request,
      options.spillDir,
    ),
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
        isolation = createSessionIsolation(request.options, supervisorPath(), spillDir);
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
