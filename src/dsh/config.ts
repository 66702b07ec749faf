/** The plugin's configuration, as the harness validates it (zod 4 is a Standard Schema). */
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues.js';

export { hostAgentTaskQueue as defaultAgentTaskQueue } from '../agent-host/names.js';

const positiveMs = z.number().int().positive();

export const Config = z.strictObject({
  /** `host:port` of the Temporal frontend. @default $TEMPORAL_ADDRESS, else the profile's, else 'localhost:7233' */
  address: z.string().min(1).optional(),
  /** @default $TEMPORAL_NAMESPACE, else the profile's, else 'default' */
  namespace: z.string().min(1).optional(),
  /** The `temporal.toml` profile to read (TLS and API keys come from it and `TEMPORAL_*`). */
  profile: z.string().min(1).optional(),
  /** The `temporal.toml` file. @default $TEMPORAL_CONFIG_FILE, else the standard path */
  configFile: z.string().min(1).optional(),
  /** The task queue the command workers serve. @default 'durable-bash' */
  taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  /**
   * This harness process's own task queue, served by the plugin's in-process agent worker; each
   * agent host needs its own and should keep it across restarts (notices due while it was down
   * are delivered when it is back). @default `durable-bash-agent@<hostname>`
   */
  agentTaskQueue: z.string().min(1).optional(),
  /** How long a completion notice waits for this host's worker. @default 1 hour */
  noticeWindowMs: positiveMs.optional(),
  /**
   * Deliver a completion notice with `agent.followup` when the owning agent is idle, so it wakes
   * and starts a turn; otherwise (and always when off) `agent.inject`: context for the next
   * model request, not a wake-up. @default false
   */
  followup: z.boolean().default(false),
  /**
   * A permission policy for `bash` calls (docs/PERMISSIONS.md): command prefixes or `/regex/`
   * strings by action, and the action for a command no rule matches. An `ask` waits in a durable
   * approval request (`durable-bash approvals`, `approve`, `deny`). @default every call is allowed
   */
  permissions: z
    .strictObject({
      allow: z.array(z.string().min(1)).optional(),
      ask: z.array(z.string().min(1)).optional(),
      deny: z.array(z.string().min(1)).optional(),
      defaultAction: z.enum(['allow', 'ask', 'deny']).optional(),
    })
    .optional(),
  /** How long an approval request waits for a decision before it is denied. @default 24 hours */
  approvalExpiryMs: positiveMs.optional(),
  /** Background tasks one session may run at once (see `createBashTools`). @default 20 */
  maxBackgroundTasksPerSession: z.number().int().positive().optional(),
  /**
   * Encryption at rest, as the fleet's workers have it (docs/ENCRYPTION.md): a key file, one
   * `<key id>=<base64 of 32 bytes>` a line, the current key first. @default
   * $DURABLE_BASH_CODEC_KEY_FILE, else $DURABLE_BASH_CODEC_KEYS, else no encryption
   */
  codecKeyFile: z.string().min(1).optional(),
});

/** The configuration a harness config file (or `ctx.plugin(plugin, config)`) gives. */
export type ConfigInput = z.input<typeof Config>;
/** The configuration after defaults. */
export type Config = z.output<typeof Config>;
