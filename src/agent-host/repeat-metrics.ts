/**
 * The agent host's own count of notices it dropped as repeats (an inject retried after its answer
 * was lost), through the SDK runtime's meter; the workflows count notices delivered and dropped
 * for their window or session (src/workflows/workflow-metrics.ts).
 */
import type { MetricCounter } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';

// Made at first use, not at import: the user may install the Runtime after importing this.
let repeats: MetricCounter | undefined;

export function countRepeatDropped(): void {
  repeats ??= Runtime.instance().metricMeter.createCounter(
    'durable_bash_notices_dropped',
    'notices',
    'Completion notices dropped, by reason',
  );
  repeats.add(1, { reason: 'repeated' });
}
