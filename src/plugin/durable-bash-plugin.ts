/**
 * durable-bash in a worker and a client the user creates, in the SDK's own plugin form
 * (`@temporalio/plugin`): `Worker.create({ ..., plugins: [plugin] })` on the command queue gets the
 * `bashTask` workflows and the command activities, and runs this host's queues beside it
 * (`CommandHost`); `new Client({ ..., plugins: [plugin] })` gets the data converter. Workers of
 * other task queues are left as they are.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, ReplayWorkerOptions, Worker, WorkerOptions } from '@temporalio/worker';
import { registerSearchAttributes } from '../client/register-search-attributes.js';
import type { ExecutorOptions } from '../command-host/executor-config.js';
import { ActivityName, ToolCallActivityName } from '../shared/activity-names.js';
import {
  DEFAULT_MAX_CACHED_WORKFLOWS,
  HEARTBEAT_THROTTLE_MS,
  STICKY_QUEUE_TIMEOUT_MS,
} from '../shared/limits.js';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';
import { CommandHost } from '../worker/command-host.js';
import { checkDeploymentOptions } from '../worker/deployment-version.js';
import { bundlerOptions, ourWorkflows, workflowsPath } from '../worker/workflow-bundle.js';

export interface DurableBashPluginOptions {
  /**
   * The command queue: the worker of this task queue gets durable-bash's workflows and
   * activities, and tools and clients start tasks on it. @default DEFAULT_TASK_QUEUE ('durable-bash')
   */
  taskQueue?: string;
  /** How commands run on this host: see `createBashWorker`'s `executor`. */
  executor?: ExecutorOptions;
  /** Commands this host runs at once (its host queue's slots). @default 2000 */
  maxConcurrentCommands?: number;
  /**
   * The data converter for the worker and the client (`encryptingDataConverter(keyring)` encrypts
   * payloads). The same one must reach every client that starts or reads tasks.
   */
  dataConverter?: DataConverter;
  /** Registers durable-bash's search attributes on the namespace when the worker starts. @default true */
  registerSearchAttributes?: boolean;
}

const require = createRequire(import.meta.url);

/** The activity names durable-bash records in histories: a user's activity of one of them is refused. */
const RECORDED_NAMES: readonly string[] = [
  ...Object.values(ActivityName),
  ...Object.values(ToolCallActivityName),
];

export class DurableBashPlugin extends SimplePlugin {
  private readonly taskQueue: string;
  /**
   * The hosts of the command queue's workers configured and not yet run, in order: `Worker.create`
   * hands `runWorker` the worker, not its options.
   */
  private readonly pending: CommandHost[] = [];

  constructor(private readonly pluginOptions: DurableBashPluginOptions = {}) {
    super({
      name: 'durable-bash',
      ...(pluginOptions.dataConverter ? { dataConverter: pluginOptions.dataConverter } : {}),
    });
    this.taskQueue = pluginOptions.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    if (options.taskQueue !== this.taskQueue) return configured;
    const own = Object.keys(options.activities ?? {}).filter((name) => RECORDED_NAMES.includes(name));
    if (own.length > 0)
      throw new TypeError(
        `durable-bash: this worker already has an activity named ${own.join(', ')}, a name durable-bash records in its histories; rename yours`,
      );
    checkDeploymentOptions(configured.workerDeploymentOptions);
    if (!options.connection)
      throw new TypeError(
        "durable-bash: give the worker its connection (NativeConnection.connect), which the plugin's host queues share",
      );
    const host = new CommandHost({
      connection: options.connection,
      namespace: options.namespace ?? 'default',
      taskQueue: this.taskQueue,
      ...(this.pluginOptions.executor ? { executor: this.pluginOptions.executor } : {}),
      ...(this.pluginOptions.maxConcurrentCommands
        ? { maxConcurrentCommands: this.pluginOptions.maxConcurrentCommands }
        : {}),
      ...(options.identity ? { identity: options.identity } : {}),
      ...(configured.dataConverter ? { dataConverter: configured.dataConverter } : {}),
    });
    this.pending.push(host);
    return {
      ...configured,
      activities: { ...(configured.activities ?? {}), ...host.queueActivities },
      ...withWorkflows(configured, othersBeside(this, configured)),
      maxHeartbeatThrottleInterval: configured.maxHeartbeatThrottleInterval ?? HEARTBEAT_THROTTLE_MS,
      stickyQueueScheduleToStartTimeout:
        configured.stickyQueueScheduleToStartTimeout ?? STICKY_QUEUE_TIMEOUT_MS,
      maxCachedWorkflows: configured.maxCachedWorkflows ?? DEFAULT_MAX_CACHED_WORKFLOWS,
    };
  }

  /** A replay worker gets durable-bash's workflows too, so histories of both replay. */
  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    const configured = super.configureReplayWorker(options);
    return { ...configured, ...withWorkflows(configured, othersBeside(this, configured)) };
  }

  /** A bundle the user builds with the plugin (`bundleWorkflowCode({ plugins })`) gets durable-bash's workflows too. */
  override configureBundler(options: BundleOptions): BundleOptions {
    return {
      ...super.configureBundler(options),
      workflowsPath: combinedWorkflows(options.workflowsPath),
      webpackConfigHook: withOurHook(options.webpackConfigHook),
    };
  }

  override async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    const host = worker.options.taskQueue === this.taskQueue ? this.pending.shift() : undefined;
    if (!host) return super.runWorker(worker, next);
    if (this.pluginOptions.registerSearchAttributes !== false && worker.connection)
      await registerSearchAttributes(worker.connection, worker.options.namespace);
    await host.prepare();
    const hostRun = host.run();
    try {
      await super.runWorker(worker, next);
    } finally {
      host.shutdown();
      await hostRun;
    }
  }
}

/** durable-bash in a worker and client the user creates; see `DurableBashPlugin`. */
export function durableBashPlugin(options?: DurableBashPluginOptions): DurableBashPlugin {
  return new DurableBashPlugin(options);
}

/**
 * The worker's workflows with durable-bash's: its own `workflowsPath` joined to ours in one entry
 * module; with no workflows of its own, the bundle `npm run build` wrote (or ours to bundle); a
 * prebuilt bundle of its own must have been built with the plugin (`configureBundler`).
 */
function withWorkflows(
  options: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'>,
  fromSource: boolean,
): Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'> {
  if (options.workflowBundle) return { workflowBundle: options.workflowBundle };
  const bundling = {
    bundlerOptions: {
      ...options.bundlerOptions,
      webpackConfigHook: withOurHook(options.bundlerOptions?.webpackConfigHook),
    },
  };
  if (options.workflowsPath) return { workflowsPath: combinedWorkflows(options.workflowsPath), ...bundling };
  return fromSource ? { workflowsPath: workflowsPath(), ...bundling } : ourWorkflows(bundling);
}

/**
 * The worker has other plugins or workflow interceptors: our workflows are bundled from source, not
 * taken prebuilt, since a prebuilt bundle cannot take the interceptor modules they add (the SDK
 * would ignore them: `OpenTelemetryPlugin`'s workflow spans, say).
 */
function othersBeside(
  plugin: DurableBashPlugin,
  options: Pick<WorkerOptions, 'plugins' | 'interceptors'>,
): boolean {
  return (
    (options.plugins ?? []).some((other) => other !== plugin && other.name !== plugin.name) ||
    (options.interceptors?.workflowModules?.length ?? 0) > 0
  );
}

/**
 * The bundler's hook with ours after it: durable-bash's `.js` specifiers may name `.ts` sources,
 * and the modules the SDK adds to the joined entry (in a scratch directory) are found where
 * durable-bash finds `@temporalio/workflow`, the one copy the user's workflows import too.
 */
function withOurHook(
  theirs: BundleOptions['webpackConfigHook'],
): NonNullable<BundleOptions['webpackConfigHook']> {
  const ours = bundlerOptions.webpackConfigHook as NonNullable<BundleOptions['webpackConfigHook']>;
  const modules = path.resolve(
    path.dirname(require.resolve('@temporalio/workflow/package.json')),
    '..',
    '..',
  );
  return (config) => {
    const hooked = ours(theirs ? theirs(config) : config);
    const existing = hooked.resolve?.modules ?? ['node_modules'];
    hooked.resolve = { ...hooked.resolve, modules: [...existing, modules] };
    return hooked;
  };
}

/** An entry module exporting the user's workflows (if any) and durable-bash's. */
function combinedWorkflows(theirs: string | undefined): string {
  if (!theirs) return workflowsPath();
  const dir = path.join(os.tmpdir(), `durable-bash-workflows-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const hash = createHash('sha256').update(theirs).digest('hex').slice(0, 12);
  const entry = path.join(dir, `${path.basename(theirs).replace(/\W/g, '_')}-${hash}.ts`);
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(theirs)};\nexport * from ${JSON.stringify(workflowsPath())};\n`,
  );
  return entry;
}
