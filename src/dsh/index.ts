/**
 * `durable-bash/dsh`: durable-bash as a plugin of the DeepSeek harness (`@deepseek-ai/dsh-tools`).
 * It registers durable-bash's tools as the harness's tool definitions and runs the agent worker
 * in-process, so completion notices land in the owning agent's session. Load it instead of the
 * harness's own `tool-bash` and its executor (both register `bash`; the registry refuses a
 * duplicate name).
 */

import type { Context } from '@deepseek-ai/cordis';
import type {} from '@deepseek-ai/dsh-agent';
import type {} from '@deepseek-ai/dsh-tools';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { type AgentHost, startAgentHost } from '../agent-host/agent-host.js';
import { encryptingDataConverter } from '../codec/data-converter.js';
import { loadKeyring } from '../codec/keyring.js';
import { connectClient } from '../connection/connect.js';
import { resolveConnectionConfig } from '../connection/connection-config.js';
import { connectNativeConnection } from '../connection/native-connection.js';
import { textRulePolicy } from '../policy/rules.js';
import { Config, type ConfigInput, defaultAgentTaskQueue } from './config.js';
import { createHarnessSessions } from './notices.js';
import { toToolDefinition } from './tool-definition.js';

export { REMEMBERED_NOTICE_IDS } from '../shared/notice.js';
export { Config, type ConfigInput, defaultAgentTaskQueue } from './config.js';
export { createHarnessSessions, type HarnessSessionsOptions } from './notices.js';
export {
  TOOL_TEXT_SCHEMA,
  type ToolTextValue,
  toHarnessSchema,
  toolExecContext,
  toToolDefinition,
} from './tool-definition.js';

/** The Cordis plugin name. */
export const name = 'durable-bash';

/** The harness services the plugin needs: the tool registry and the agent registry. */
export const inject = ['tools', 'agents'];

/**
 * Connects to Temporal (encrypting when the config or the environment names codec keys), starts
 * the agent host on `agentTaskQueue`, and registers every tool. The returned disposer (run when the
 * plugin is unloaded) stops the agent worker and closes both connections; the tool registrations
 * are undone with the plugin's context. A harness that already has a `bash` (its own tool-bash)
 * refuses the name: the plugin then fails to load with that error, and nothing is left open.
 */
export async function apply(ctx: Context, config: Config): Promise<() => Promise<void>> {
  const connectionConfig = resolveConnectionConfig({
    ...(config.address !== undefined ? { address: config.address } : {}),
    ...(config.namespace !== undefined ? { namespace: config.namespace } : {}),
    ...(config.profile !== undefined ? { profile: config.profile } : {}),
    ...(config.configFile !== undefined ? { configFile: config.configFile } : {}),
  });
  const keyring = loadKeyring({ keyFile: config.codecKeyFile });
  const dataConverter = keyring === undefined ? undefined : encryptingDataConverter(keyring);
  const agentTaskQueue = config.agentTaskQueue ?? defaultAgentTaskQueue();
  const policy = textRulePolicy(config.permissions ?? {});
  let client: Client | undefined;
  let connection: NativeConnection | undefined;
  let host: AgentHost | undefined;
  const registrations: Array<() => void> = [];
  try {
    client = await connectClient(connectionConfig, dataConverter);
    connection = await connectNativeConnection(connectionConfig);
    host = await startAgentHost({
      client,
      connection,
      taskQueue: config.taskQueue,
      agentTaskQueue,
      sessions: createHarnessSessions(() => ctx.agents, { followup: config.followup }),
      tools: {
        ...(config.noticeWindowMs !== undefined ? { noticeWindowMs: config.noticeWindowMs } : {}),
        ...(config.maxBackgroundTasksPerSession !== undefined
          ? { maxBackgroundTasksPerSession: config.maxBackgroundTasksPerSession }
          : {}),
        ...(policy !== undefined ? { policy } : {}),
        ...(config.approvalExpiryMs !== undefined ? { approvalExpiryMs: config.approvalExpiryMs } : {}),
      },
    });
    for (const tool of host.tools) registrations.push(ctx.tools.register(toToolDefinition(tool)));
  } catch (error) {
    for (const unregister of registrations.reverse()) unregister();
    await host?.close();
    await connection?.close().catch(() => undefined);
    await client?.connection.close().catch(() => undefined);
    throw error;
  }
  // A worker that fails is reported, never an unhandled rejection that would end the harness.
  host.running.catch((error: unknown) => {
    console.error(`durable-bash/dsh: the agent worker on ${agentTaskQueue} stopped: ${String(error)}`);
  });
  const [openClient, openConnection, runningHost] = [client, connection, host];
  return async () => {
    await runningHost.close();
    await openConnection.close();
    await openClient.connection.close();
  };
}

/** The plugin as one object, for `ctx.plugin(durableBash, config)`. */
const durableBash = { name, inject, Config, apply } as const;
export default durableBash;
export type { ConfigInput as DurableBashConfig };
