/**
 * What a command host counts, through the SDK runtime's metric meter: served with the runtime's
 * own metrics wherever its telemetry goes (`durable-bash worker --metrics-port`, or a Runtime the
 * user installed). Labels are bounded: no task ids, owners or commands. Names: docs/OPERATIONS.md.
 */
import type { MetricCounter, MetricGauge } from '@temporalio/common';
import { ApplicationFailure } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import { RunFailureType } from '../shared/task.js';
import { LostReason } from './supervisor/command-end.js';

type LostReasonKey = keyof typeof LostReason;

/** The metric name's label value for a lost reason: `supervisorKilled` → `supervisor_killed`. */
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

class HostMetrics {
  private following = 0;
  // Made at first use, not at import: the user may install the Runtime after importing this.
  private made:
    | {
        started: MetricCounter;
        startFailures: MetricCounter;
        running: MetricGauge;
        reattached: MetricCounter;
        lost: MetricCounter;
        stops: MetricCounter;
        reads: MetricCounter;
      }
    | undefined;

  private get metrics() {
    if (this.made) return this.made;
    const meter = Runtime.instance().metricMeter;
    this.made = {
      started: meter.createCounter(
        'durable_bash_commands_started',
        'commands',
        'Commands a supervisor started',
      ),
      startFailures: meter.createCounter(
        'durable_bash_supervisor_start_failures',
        'commands',
        'Commands whose supervisor could not start them',
      ),
      running: meter.createGauge(
        'durable_bash_commands_running',
        'int',
        'commands',
        'Commands an attempt of this worker follows now',
      ),
      reattached: meter.createCounter(
        'durable_bash_reattaches',
        'attempts',
        'Attempts that attached to a command an earlier attempt started',
      ),
      lost: meter.createCounter('durable_bash_commands_lost', 'commands', 'Commands found lost, by reason'),
      stops: meter.createCounter(
        'durable_bash_stops',
        'stops',
        'Stops (kills, timeouts) served on this host',
      ),
      reads: meter.createCounter('durable_bash_reads_served', 'reads', 'Output reads served from this host'),
    };
    return this.made;
  }

  commandStarted(): void {
    this.metrics.started.add(1);
  }
  supervisorStartFailed(): void {
    this.metrics.startFailures.add(1);
  }
  /** An attempt began following a command (`detached` when it stops): every host of the process counts. */
  attached(): void {
    this.metrics.running.set(++this.following);
  }
  detached(): void {
    this.metrics.running.set(--this.following);
  }
  reattached(): void {
    this.metrics.reattached.add(1);
  }
  /** Counts a command found lost, when `err` says one was (by its reason, one of LostReason). */
  lostIf(err: unknown): void {
    if (!(err instanceof ApplicationFailure) || err.type !== RunFailureType.commandLost) return;
    const reason = (Object.keys(LostReason) as LostReasonKey[]).find(
      (key) => LostReason[key] === err.message,
    );
    this.metrics.lost.add(1, { reason: reason ? snake(reason) : 'other' });
  }
  stopServed(): void {
    this.metrics.stops.add(1);
  }
  readServed(): void {
    this.metrics.reads.add(1);
  }
}

/** The process's host metrics: one set, whatever number of command hosts it runs. */
export const hostMetrics = new HostMetrics();
