/**
 * `DurableBashSandboxClient`: the OpenAI Agents SDK's `SandboxClient` over durable-bash sessions.
 * A session is an agent session with a workspace on a worker host; its state is plain JSON, and a
 * new process resumes it with its running commands, their unread output and exit codes intact.
 */
import { randomUUID } from 'node:crypto';
import {
  type Manifest,
  normalizeSandboxClientCreateArgs,
  type SandboxArchiveLimits,
  type SandboxClient,
  type SandboxClientCreateArgs,
  type SandboxClientResumeOptions,
  SandboxConfigurationError,
  SandboxWorkspaceRootNotFoundError,
  validateSandboxArchiveLimits,
} from '@openai/agents-core/sandbox';
import { deserializeManifest, serializeManifestRecord } from '@openai/agents-core/sandbox/internal';
import { WorkspaceFiles } from '../client/workspace-files.js';
import { WorkspaceFileNotFoundError } from '../shared/errors.js';
import { isCommandHost } from '../shared/task.js';
import { isTaskIdShape } from '../shared/task-id.js';
import type { BashToolsOptions } from '../tools/create-bash-tools.js';
import { SandboxCommands } from '../tools/sandbox-commands.js';
import { sandboxCall } from './errors.js';
import {
  assertManifestSupported,
  DurableBashSandboxSession,
  type DurableBashSessionState,
  manifestWith,
  type SandboxProcess,
} from './session.js';

/** The client's options: `createBashTools`'s, and the archive limits of its sessions. */
export interface DurableBashSandboxClientOptions extends BashToolsOptions {
  /** Limits on `persistWorkspace` / `hydrateWorkspace` archives. @default the SDK's DEFAULT_SANDBOX_ARCHIVE_LIMITS */
  archiveLimits?: SandboxArchiveLimits | null;
}

/** What `create({ options })` may say of the new session. */
export interface DurableBashCreateOptions extends Record<string, unknown> {
  /** The agent session's id (the owner of its tasks). @default `sandbox-<uuid>` */
  sessionId?: string;
  /** The workspace directory on the host. @default one the host makes for the session */
  root?: string;
}

export class DurableBashSandboxClient
  implements SandboxClient<DurableBashCreateOptions, DurableBashSessionState>
{
  readonly backendId = 'durable-bash';
  readonly supportsDefaultOptions = true;
  private readonly commands: SandboxCommands;
  private readonly files: WorkspaceFiles;
  private readonly archiveLimits: SandboxArchiveLimits | null | undefined;

  constructor(options: DurableBashSandboxClientOptions) {
    validateSandboxArchiveLimits(options.archiveLimits);
    this.commands = new SandboxCommands(options);
    this.files = new WorkspaceFiles({
      client: options.client,
      ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
    });
    this.archiveLimits = options.archiveLimits;
  }

  /**
   * A new session: a new agent session id (unless `options.sessionId` names one), an empty
   * workspace on a host of the task queue, and the manifest's files and directories written into
   * it. The manifest's root (`/workspace` by default) names that directory to the model. A
   * manifest with what a workspace cannot hold is refused before anything is made.
   */
  create(
    args?: SandboxClientCreateArgs<DurableBashCreateOptions> | Manifest,
    manifestOptions?: DurableBashCreateOptions,
  ): Promise<DurableBashSandboxSession> {
    return sandboxCall(async () => {
      const {
        manifest,
        options = {},
        archiveLimits,
      } = normalizeSandboxClientCreateArgs(args, manifestOptions);
      assertManifestSupported(manifest);
      validateSandboxArchiveLimits(archiveLimits);
      const sessionId = options.sessionId ?? `sandbox-${randomUUID()}`;
      if (typeof sessionId !== 'string' || sessionId.trim() === '')
        throw new SandboxConfigurationError(
          `invalid sessionId: expected a non-blank string, got ${JSON.stringify(sessionId)}`,
        );
      const workspace = await this.files.create(
        sessionId,
        options.root !== undefined ? { root: options.root } : {},
      );
      const session = this.session(
        {
          // The entries come in through applyManifest, which writes each before the manifest lists it.
          manifest: manifestWith(manifest, { entries: {} }),
          sessionId,
          host: workspace.host,
          workspaceRoot: workspace.root,
          processes: {},
          nextProcessId: 1,
        },
        archiveLimits === undefined ? this.archiveLimits : archiveLimits,
      );
      if (Object.keys(manifest.entries).length > 0) await session.applyManifest(manifest);
      return session;
    });
  }

  /** The session `state` describes, in this process: its tasks went on running; its workspace must still be there. */
  resume(
    state: DurableBashSessionState,
    options: SandboxClientResumeOptions<DurableBashCreateOptions> = {},
  ): Promise<DurableBashSandboxSession> {
    return sandboxCall(async () => {
      const limits = options.archiveLimits === undefined ? this.archiveLimits : options.archiveLimits;
      validateSandboxArchiveLimits(limits);
      const session = this.session(state, limits);
      const workspace = { sessionId: state.sessionId, host: state.host, root: state.workspaceRoot };
      const root = await this.files.stat(workspace, '.').catch((err: unknown) => {
        if (err instanceof WorkspaceFileNotFoundError) return undefined;
        throw err;
      });
      if (root?.type !== 'dir')
        throw new SandboxWorkspaceRootNotFoundError(
          `the workspace ${state.workspaceRoot} of sandbox session ${state.sessionId} is gone from host ${state.host.hostId}`,
        );
      return session;
    });
  }

  /** Kills the session's tasks and removes its workspace (as the session's `delete`). */
  async delete(state: DurableBashSessionState): Promise<void> {
    await this.session(state, this.archiveLimits).delete();
  }

  /** The state as plain JSON: session id, host, workspace, the process ids' tasks, the next id, the manifest. */
  async serializeSessionState(state: DurableBashSessionState): Promise<Record<string, unknown>> {
    return {
      sessionId: state.sessionId,
      host: { hostId: state.host.hostId, hostQueue: state.host.hostQueue },
      workspaceRoot: state.workspaceRoot,
      processes: structuredClone(state.processes),
      nextProcessId: state.nextProcessId,
      manifest: serializeManifestRecord(state.manifest),
    };
  }

  /** Reads what `serializeSessionState` wrote; anything else is refused with one line naming the field. */
  async deserializeSessionState(state: Record<string, unknown>): Promise<DurableBashSessionState> {
    const bad = (field: string, expected: string) =>
      new SandboxConfigurationError(
        `invalid durable-bash session state: ${field} should be ${expected}, got ${JSON.stringify(state[field]) ?? 'nothing'}`,
      );
    const { sessionId, host, workspaceRoot, processes, nextProcessId } = state;
    if (typeof sessionId !== 'string' || sessionId === '') throw bad('sessionId', 'a non-empty string');
    if (!isCommandHost(host)) throw bad('host', '{ hostId, hostQueue }');
    if (typeof workspaceRoot !== 'string' || !workspaceRoot.startsWith('/'))
      throw bad('workspaceRoot', 'an absolute path');
    if (!isProcesses(processes)) throw bad('processes', 'a map of process ids to { taskId, tty }');
    if (typeof nextProcessId !== 'number' || !Number.isSafeInteger(nextProcessId) || nextProcessId < 1)
      throw bad('nextProcessId', 'a positive integer');
    const persisted =
      typeof state.manifest === 'object' && state.manifest !== null ? state.manifest : undefined;
    const manifest = deserializeManifest(persisted as Record<string, unknown> | undefined);
    return { sessionId, host, workspaceRoot, processes, nextProcessId, manifest };
  }

  private session(state: DurableBashSessionState, archiveLimits: SandboxArchiveLimits | null | undefined) {
    return new DurableBashSandboxSession(state, {
      commands: this.commands,
      files: this.files,
      ...(archiveLimits !== undefined ? { archiveLimits } : {}),
    });
  }
}

function isProcesses(value: unknown): value is Record<string, SandboxProcess> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([id, process]) => {
    if (!/^[1-9]\d*$/.test(id) || typeof process !== 'object' || process === null) return false;
    const { taskId, tty } = process as Record<string, unknown>;
    return typeof taskId === 'string' && isTaskIdShape(taskId) && typeof tty === 'boolean';
  });
}
