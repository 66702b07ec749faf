/** How long Temporal keeps a closed workflow in a namespace: the ttl of an ended MCP task. */
import type { Client } from '@temporalio/client';
import { CONNECT_TIMEOUT_MS } from '../shared/limits.js';

/** The client's namespace's retention in milliseconds; undefined when the server does not say (or refuses). */
export async function namespaceRetentionMs(client: Client): Promise<number | undefined> {
  try {
    const described = await client.withDeadline(Date.now() + CONNECT_TIMEOUT_MS, () =>
      client.workflowService.describeNamespace({ namespace: client.options.namespace }),
    );
    const retention = described.config?.workflowExecutionRetentionTtl;
    if (retention?.seconds == null) return undefined;
    return Number(retention.seconds.toString()) * 1000 + Math.floor((retention.nanos ?? 0) / 1e6);
  } catch {
    // A key allowed to run workflows may not be allowed to describe the namespace.
    return undefined;
  }
}
