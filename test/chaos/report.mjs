/** The run's measurements and its table. */

/**
 * Output visibility across worker restarts, from the periodic reads of the tasks that were running
 * on a worker when it was SIGKILLed: the gap between the last new output a read showed before the
 * worker came back and the first one after, and the time from the worker polling again to that
 * first new output. Resolution: the read interval. A task that showed nothing new after the
 * restart (it ended lost, or its last line came before) is counted as not resumed.
 */
export function visibilityAcrossRestarts(run) {
  const byId = new Map(run.tasks.filter((task) => task.taskId).map((task) => [task.taskId, task]));
  const samples = [];
  let notResumed = 0;
  for (const kill of run.workerKills) {
    const nextKill = run.workerKills.find(
      (other) => other.worker === kill.worker && other.killAt > kill.killAt,
    );
    for (const id of kill.affected) {
      const task = byId.get(id);
      if (!task) continue;
      const before = task.visible.filter((seen) => seen.at < kill.restartAt).at(-1);
      const after = task.visible.find(
        (seen) => seen.at >= kill.restartAt && (nextKill === undefined || seen.at < nextKill.killAt),
      );
      if (!after) {
        // Killed on purpose or finished before the kill: nothing more was due.
        if (!task.kill && task.transcript !== task.expected) notResumed++;
        continue;
      }
      samples.push({
        gapMs: after.at - (before?.at ?? task.startedAt),
        restartToOutputMs: after.at - kill.restartAt,
      });
    }
  }
  const max = (key) => (samples.length === 0 ? undefined : Math.max(...samples.map((s) => s[key])));
  const median = (key) => {
    const sorted = samples.map((s) => s[key]).sort((a, b) => a - b);
    return sorted.length === 0 ? undefined : sorted[Math.floor((sorted.length - 1) / 2)];
  };
  return {
    resumed: samples.length,
    notResumed,
    maxGapMs: max('gapMs'),
    maxRestartToOutputMs: max('restartToOutputMs'),
    medianRestartToOutputMs: median('restartToOutputMs'),
  };
}

/** A plain two-column table. */
export function table(rows) {
  const width = Math.max(...rows.map(([label]) => label.length));
  const line = `+${'-'.repeat(width + 2)}+${'-'.repeat(14)}+`;
  return [
    line,
    ...rows.map(([label, value]) => `| ${label.padEnd(width)} | ${String(value).padStart(12)} |`),
    line,
  ].join('\n');
}

export const seconds = (ms) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)}s`);
