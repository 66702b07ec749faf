import type { MetricsExporterConfig } from '@temporalio/worker';

/**
 * The SDK runtime's Prometheus exporter as durable-bash serves it, for `Runtime.install`: the
 * runtime's own metrics (`temporal_…`) and durable-bash's (`durable_bash_…`, docs/OPERATIONS.md)
 * on http://<bindAddress>/metrics, counters ending in `_total` and durations in seconds, as
 * Prometheus names them.
 */
export function prometheusMetrics(bindAddress: string): MetricsExporterConfig {
  return { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } };
}
