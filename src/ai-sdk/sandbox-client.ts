/**
 * How a sandbox handle made again in a fresh process (`WORKFLOW_DESERIALIZE`) finds its Temporal
 * client: the one the process registered, else one connected as the CLI connects
 * (`TEMPORAL_ADDRESS`, the other `TEMPORAL_*` variables and the `temporal.toml` profile).
 */
import type { Client } from '@temporalio/client';
import { connectClient } from '../connection/connect.js';
import { requireNode } from '../shared/node-version.js';
import type { BashToolsOptions } from '../tools/create-bash-tools.js';
import { SandboxCommands } from '../tools/sandbox-commands.js';

/** The `createBashTools` options a deserialized handle's commands use (its task queue comes with the handle). */
export type DurableBashClientOptions = Omit<BashToolsOptions, 'client' | 'taskQueue'>;

/** The client handles of this process use, and whether the process chose it (else it was connected from the environment). */
interface Registration {
  client: Client;
  options: DurableBashClientOptions;
  registered: boolean;
  /** One commands object per task queue. */
  commands: Map<string, SandboxCommands>;
}

let registration: Promise<Registration> | undefined;

/**
 * Makes `client` (and `options`: a permission policy, an approver, quotas) the one that sandbox
 * handles deserialized in this process use. Call it before deserializing; without it, a handle
 * connects as the CLI does, with no permission policy (so a session created with one refuses to
 * start commands until its policy is registered here).
 */
export function registerDurableBashClient(client: Client, options: DurableBashClientOptions = {}): void {
  registration = Promise.resolve({ client, options, registered: true, commands: new Map() });
}

/** The registered client, or one connected from the environment (once per process; a failed connect is tried again later). */
export function sandboxRegistration(): Promise<Registration> {
  if (registration === undefined) {
    const connecting = connectClient().then(
      (client): Registration => ({ client, options: {}, registered: false, commands: new Map() }),
    );
    registration = connecting;
    connecting.catch(() => {
      if (registration === connecting) registration = undefined;
    });
  }
  return registration;
}

/** The commands of `taskQueue` over the process's client. */
export async function commandsFor(
  taskQueue: string,
): Promise<{ commands: SandboxCommands; registration: Registration }> {
  const found = await sandboxRegistration();
  let commands = found.commands.get(taskQueue);
  if (commands === undefined) {
    commands = new SandboxCommands({ ...found.options, client: found.client, taskQueue });
    found.commands.set(taskQueue, commands);
  }
  return { commands, registration: found };
}

/** The sandbox needs Node.js 22 (AI SDK 7 does); the rest of the entry point loads on Node.js 20. */
export function requireSandboxNode(): void {
  requireNode('durable-bash/ai-sdk createDurableBashSandbox', 22);
}
