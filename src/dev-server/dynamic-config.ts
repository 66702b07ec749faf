/**
 * Server settings durable-bash's dev server runs with. The history service moves each new
 * workflow or activity task to matching through its transfer queue, whose reader polls a shard at
 * most 20 times a second by default: after the first burst, every such hand-off waits up to 50 ms,
 * and a foreground run has two of them. Raising the limit took a trivial foreground run from
 * ~100 ms to ~33 ms on the dev server (docs/PERFORMANCE.md). A cluster sets the same keys in its
 * dynamic config file (see docker-compose.yml).
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, number>> = {
  'history.transferProcessorMaxPollRPS': 1000,
  'history.transferProcessorMaxPollHostRPS': 1000,
};

/** The settings as `temporal server start-dev` flags. */
export function dynamicConfigArgs(
  config: Readonly<Record<string, number>> = DEV_SERVER_DYNAMIC_CONFIG,
): string[] {
  return Object.entries(config).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]);
}
