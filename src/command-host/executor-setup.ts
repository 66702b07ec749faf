/**
 * The host set up for a worker's compiled executor options, when the worker is created
 * (`CommandHost`): how tasks can be contained here (a probe cgroup made and removed), and the bwrap
 * sandbox or sessions apart (each probed with bwrap, running a private copy of the supervisor put
 * in the spill directory). `compileExecutorOptions` touches none of this.
 */
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SessionsApartUnavailableError } from '../shared/errors.js';
import { detectContainment } from './containment/cgroups.js';
import { commandEnvs } from './containment/command-env.js';
import { createSandbox } from './containment/sandbox.js';
import {
  createSessionIsolation,
  type SessionIsolation,
  type SessionIsolationOptions,
} from './containment/session-isolation.js';
import { declaredRoots, workerHome } from './containment/session-workdir.js';
import type { CompiledExecutorOptions, ExecutorConfig, IsolationRequest } from './executor-config.js';
import { SessionDisk } from './spill/session-disk.js';
import { executablePath } from './supervisor/executable-path.js';
import { supervisorPath } from './supervisor/supervisor.js';

/**
 * The config the command activities run with, from what this host offers: throws one line when a
 * declared workdir root cannot be used or the sandbox cannot start, and
 * `SessionsApartUnavailableError` when sessions are to be kept apart (`auto`, the default, or
 * `session`) and cannot be. The roots are checked, then isolation set up, before anything else, so
 * a worker that refuses has made nothing else. `temporalAddress`, the server's address as the
 * worker's connection was made to it, when known: sessions' networks refuse its addresses.
 */
export function setUpExecutor(options: CompiledExecutorOptions, temporalAddress?: string): ExecutorConfig {
  // Checked, and their links resolved, once: a launch compares real paths with them.
  const workdirs = {
    workdirRoots: declaredRoots(options.workdirRoots, workerHome()),
    workspaceDir: options.workspaceDir,
  };
  const request = options.isolationRequest;
  const isolation = isolationOf(
    'options' in request && temporalAddress !== undefined
      ? { ...request, options: { ...request.options, temporalAddress } }
      : request,
    options.spillDir,
    workdirs,
  );
  const { spillDir, sessionDiskCapBytes: capBytes } = options;
  return {
    ...options,
    workdirRoots: workdirs.workdirRoots,
    containment: detectContainment(options.wantedLimits, options.processTreeOnly),
    sandbox: options.sandboxOptions
      ? createSandbox({ ...options.sandboxOptions, ...workdirs }, supervisorPath(), options.spillDir)
      : undefined,
    ...isolation,
    ...(isolation.isolation
      ? {
          sessionDisk: new SessionDisk({
            spillDir,
            capBytes,
            isolation: isolation.isolation,
            // A worker without root: its sessions run as its own uid, and may close a directory to it.
            ownerMayOpen: process.getuid?.() !== 0,
          }),
        }
      : {}),
    commandEnvs: commandEnvs(options),
  };
}

/**
 * Sessions apart unless told `none`, or the worker refuses to start: a worker that quietly ran
 * every command as itself would hand each one the Temporal server. The sandbox, stricter, stands alone.
 */
function isolationOf(
  request: IsolationRequest,
  spillDir: string,
  workdirs: { workdirRoots: readonly string[]; workspaceDir: string },
): { isolation: SessionIsolation | undefined; isolationSummary: string } {
  switch (request.kind) {
    case 'sandbox':
      return { isolation: undefined, isolationSummary: '' };
    case 'none':
      return {
        isolation: undefined,
        isolationSummary:
          "isolation: none (--isolation none): every command runs as the worker's user, sees its processes and reaches the host's loopback (the Temporal server)",
      };
    case 'session': {
      const missing = missingMeans(request.options);
      if (missing !== undefined) throw new SessionsApartUnavailableError(missing);
      let isolation: SessionIsolation;
      try {
        isolation = createSessionIsolation({ ...request.options, ...workdirs }, supervisorPath(), spillDir);
      } catch (err) {
        // The probe's own line: a namespace, a mount or the uid switch refused here.
        throw new SessionsApartUnavailableError(err instanceof Error ? err.message : String(err));
      }
      return { isolation, isolationSummary: isolation.summary };
    }
    default: {
      const unknown: never = request;
      throw new TypeError(`unknown isolation request: ${JSON.stringify(unknown)}`);
    }
  }
}

/** The script that installs bubblewrap and slirp4netns (an installed package has it; an image may not). */
const PROVISION_SCRIPT = fileURLToPath(new URL('../../scripts/provision-sandbox.sh', import.meta.url));

/**
 * What sessions apart need and this host lacks, with how to get it; undefined when nothing is
 * missing. The programs are found as the launcher and the networks find them (session-isolation.ts,
 * session-networks.ts); the tap device is checked here for a worker with root too, whose probe
 * makes no network (in a container without the device, every command's network would fail).
 */
function missingMeans(options: SessionIsolationOptions): string | undefined {
  const root = process.getuid?.() === 0;
  const egress = options.egress !== false;
  const programs = [
    ...(root
      ? []
      : [
          {
            label: 'bwrap',
            name: options.bwrap ?? process.env.DURABLE_BASH_BWRAP ?? 'bwrap',
            pkg: 'bubblewrap',
          },
        ]),
    ...(egress
      ? [{ label: 'slirp4netns', name: options.slirp4netns ?? 'slirp4netns', pkg: 'slirp4netns' }]
      : []),
  ].filter((program) => executablePath(program.name) === undefined);
  if (programs.length > 0) {
    const where = programs
      .map(({ label, name }) => (name.includes('/') ? `no ${label} at ${name}` : `no ${name} on PATH`))
      .join(', ');
    const packages = programs.map(({ pkg }) => pkg).join(' ');
    const script = existsSync(PROVISION_SCRIPT) ? `, or bash ${PROVISION_SCRIPT}` : '';
    return `${where} (install ${programs.length === 1 ? 'it' : 'them'}: apt-get install ${packages}${script})`;
  }
  // The supervisor brings each session's loopback up, and slirp4netns its tap device, in network
  // namespaces a worker with root makes in its own user namespace: neither works without it.
  if (root && !effectiveCapability(CAP_NET_ADMIN))
    return "each session's network needs CAP_NET_ADMIN, which this worker lacks (a container: cap_add: [NET_ADMIN])";
  if (egress) {
    try {
      closeSync(openSync(TUN_DEVICE, 'r+'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      return `a session's way out (slirp4netns) needs ${TUN_DEVICE}, ${TUN_HINTS[code] ?? 'which cannot be opened here'} (${code}); --no-session-egress does without`;
    }
  }
  return undefined;
}

/** The tap device slirp4netns makes each session's way out with. */
const TUN_DEVICE = '/dev/net/tun';

/** Why the tap device cannot be opened, and what gives it, by the open's error code. */
const TUN_HINTS: Record<string, string> = {
  ENOENT: 'missing here: load the tun module, or give a container the device (devices: [/dev/net/tun])',
  EACCES: "closed to this user: make it mode 0666, as Debian's udev does",
  EPERM: 'refused here: give a container the device (devices: [/dev/net/tun])',
};

/** The capability's number (linux/capability.h). */
const CAP_NET_ADMIN = 12;

/** Whether this process holds the capability in its effective set (`CapEff` of /proc/self/status). */
function effectiveCapability(capability: number): boolean {
  const mask = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return mask !== undefined && ((BigInt(`0x${mask}`) >> BigInt(capability)) & 1n) === 1n;
}
