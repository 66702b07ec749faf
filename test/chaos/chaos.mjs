/**
 * The rounds: start background tasks and foreground runs through the agent host, read every task
 * periodically with bash_output, kill some tasks, and SIGKILL + restart workers, the agent host and
 * the server at random moments. Records what every call answered; checks.mjs judges it afterwards.
 *
 * Every random choice is drawn from the seeded generator at the start of its round, in a fixed
 * order, so a seed replays the same plan (the timing of a real system still varies a little).
 */
import { HostTracker } from './host-tracker.mjs';
import { sleep, waitUntil } from './processes.mjs';
import { backgroundTask, foregroundRun, parseOutputRead } from './tasks.mjs';

/** How often each running task is read: the resolution of the visibility measurements. */
const READ_EVERY_MS = 1_500;
/** Reads in flight at once: enough for ~25 running tasks at READ_EVERY_MS on a small machine. */
const READ_CONCURRENCY = 6;

export class ChaosRun {
  constructor({ options, rng, server, workers, agent, markerFile, sessionId, log }) {
    this.options = options;
    this.rng = rng;
    this.server = server;
    this.workers = workers;
    this.agent = agent;
    this.markerFile = markerFile;
    this.sessionId = sessionId;
    this.log = log;
    this.tasks = [];
    this.foreground = [];
    /** Worker kills, for the visibility measurements: {worker, killAt, restartAt, affected}. */
    this.workerKills = [];
    this.restarts = { worker: 0, agentHost: 0, server: 0, partition: 0 };
    /** Processes that died without us killing them (restarted by the watchdog). */
    this.unplannedExits = [];
    /** Agent host kills that went ahead with guarded calls still in flight (quiescing timed out). */
    this.unquiescedAgentKills = 0;
    this.busy = new Set();
    this.readsInFlight = 0;
    this.stopped = false;
    this.hosts = new HostTracker(workers);
  }

  async run() {
    this.hosts.start();
    const reading = this.readLoop();
    const watching = this.watchdog();
    let n = 0;
    let fg = 0;
    for (let round = 0; round < this.options.rounds; round++) {
      const count = Math.floor(((round + 1) * this.options.tasks) / this.options.rounds) - n;
      const plan = this.planRound(round, n, count, fg);
      n += count;
      fg += plan.foreground.length;
      this.log(`round ${round + 1}/${this.options.rounds}: ${describePlan(plan)}`);
      await this.playRound(plan);
    }
    this.log('rounds done; waiting for every task to end');
    const ended = await waitUntil(
      () => this.tasks.every((task) => task.taskId === undefined || task.confirmed),
      this.options.drainMs,
      500,
    );
    if (!ended) this.log(`some tasks did not end within ${this.options.drainMs / 1000}s`);
    this.stopped = true;
    await Promise.all([reading, watching]);
    this.hosts.stop();
  }

  /** Draws every choice of a round up front (see the top of the file). */
  planRound(round, firstTask, count, firstForeground) {
    const { rng, options } = this;
    const roundMs = options.roundMs;
    const tasks = [];
    for (let i = 0; i < count; i++) {
      const task = backgroundTask(firstTask + i + 1, rng.int(20, 80), this.markerFile);
      task.startOffset = rng.int(0, Math.floor(roundMs * 0.5));
      task.killAfterMs = rng.chance(0.2) ? rng.int(3_000, 15_000) : undefined;
      tasks.push(task);
    }
    const foreground = [];
    for (let i = 0; i < options.foregroundPerRound; i++) {
      const run = foregroundRun(firstForeground + i + 1, rng.int(2, 10), this.markerFile);
      run.offset = rng.int(0, roundMs - 8_000);
      foreground.push(run);
    }
    const events = [];
    const firstWorker = rng.int(0, 1);
    events.push({
      kind: 'worker',
      worker: firstWorker,
      offset: rng.int(8_000, Math.floor(roundMs * 0.6)),
      downMs: rng.int(1_000, 20_000),
      killPick: rng.next(),
    });
    if (!options.quick && rng.chance(0.5)) {
      events.push({
        kind: 'worker',
        worker: 1 - firstWorker,
        offset: rng.int(5_000, roundMs - 10_000),
        downMs: rng.int(1_000, 20_000),
        killPick: rng.next(),
      });
    }
    // A worker host cut off from the server, where it has a network of its own (as root): once in
    // the last round, and by chance in the others.
    // The worker this round does not SIGKILL first, so the two do not fall on one host at once.
    const partitioned = this.workers[1 - firstWorker];
    if (partitioned.network && (round === options.rounds - 1 || rng.chance(0.5)))
      events.push({
        kind: 'partition',
        worker: 1 - firstWorker,
        offset: rng.int(5_000, Math.floor(roundMs * 0.6)),
        downMs: rng.int(2_000, 20_000),
      });
    // Each kind happens at least once in a run: the agent host in round 1, the server in round 2.
    if (round === 0 || rng.chance(0.6))
      events.push({
        kind: 'agentHost',
        offset: rng.int(5_000, roundMs - 10_000),
        downMs: rng.int(1_000, 5_000),
      });
    if (round === Math.min(1, options.rounds - 1) || rng.chance(0.5))
      events.push({
        kind: 'server',
        offset: rng.int(5_000, roundMs - 10_000),
        downMs: rng.int(1_000, 5_000),
      });
    return { round, roundMs, tasks, foreground, events };
  }

  async playRound(plan) {
    const started = Date.now();
    const at = (offset, action) => sleep(offset).then(action);
    const jobs = [
      ...plan.tasks.map((task) => at(task.startOffset, () => this.startTask(task))),
      ...plan.foreground.map((run) => at(run.offset, () => this.runForeground(run))),
      ...plan.events.map((event) => at(event.offset, () => this.chaosEvent(event))),
    ];
    await Promise.all(jobs);
    await sleep(Math.max(0, started + plan.roundMs - Date.now()));
  }

  /**
   * Starts a background task. An error answer (the server is down) must mean nothing started, so
   * the start is retried with the same token for up to a minute: a start that ran after all would
   * show as the token twice in the marker file.
   */
  async startTask(task) {
    this.tasks.push(task);
    const deadline = Date.now() + 60_000;
    let id;
    for (;;) {
      const answer = await this.agent.call(
        'bash',
        {
          command: task.command,
          description: `chaos task ${task.n}`,
          run_in_background: true,
          ...(task.notifyOn ? { notify_on: task.notifyOn } : {}),
        },
        this.sessionId,
      );
      id = answer.text === undefined ? undefined : /^started background task (\S+)$/.exec(answer.text)?.[1];
      if (id) break;
      task.startProblem = describeAnswer(answer);
      if (!answer.isError || answer.threw || Date.now() > deadline) return;
      task.startErrors = (task.startErrors ?? 0) + 1;
      await sleep(1_000);
    }
    task.taskId = id;
    task.startedAt = Date.now();
    if (task.killAfterMs !== undefined) {
      await sleep(task.killAfterMs);
      await this.killTask(task, 'planned');
    }
  }

  async killTask(task, why) {
    if (task.kill || task.finalStatus) return;
    task.kill = { why, requestedAt: Date.now(), answer: undefined, text: undefined };
    const answer = await this.agent.call('bash_kill', { task_id: task.taskId }, this.sessionId);
    task.kill.text = describeAnswer(answer);
    if (answer.text === undefined) task.kill.answer = 'unknown';
    // The server was down: the one-line error of the contract; the kill may not have applied.
    else if (answer.isError && answer.text.startsWith('Temporal is unreachable'))
      task.kill.answer = 'unreachable';
    else if (answer.isError) task.kill.answer = 'error';
    else if (answer.text.startsWith('killed background task')) task.kill.answer = 'killed';
    // A kill while the task's worker is down: it takes effect once a worker on that host is back.
    else if (answer.text.startsWith(`kill of background task ${task.taskId} is pending`))
      task.kill.answer = 'pending';
    else if (answer.text.includes('had already finished')) task.kill.answer = 'finished';
    else task.kill.answer = 'error';
  }

  async runForeground(run) {
    this.foreground.push(run);
    run.answer = await this.agent.call(
      'bash',
      { command: run.command, description: `chaos foreground ${run.n}` },
      this.sessionId,
      { guarded: false },
    );
  }

  async chaosEvent(event) {
    // A partition and a SIGKILL of the same worker take turns, never overlap.
    const name =
      event.kind === 'worker' || event.kind === 'partition' || event.kind === 'partition'
        ? this.workers[event.worker].name
        : event.kind;
    if (this.busy.has(name)) return; // already down (an earlier event or the watchdog has it)
    this.busy.add(name);
    try {
      if (event.kind === 'worker') await this.bounceWorker(this.workers[event.worker], event);
      else if (event.kind === 'partition') await this.partitionWorker(this.workers[event.worker], event);
      else if (event.kind === 'agentHost') await this.bounceAgentHost(event);
      else await this.bounceServer(event);
    } catch (err) {
      this.log(`chaos event ${name} failed: ${err.message}`);
      this.eventFailures = [...(this.eventFailures ?? []), `${name}: ${err.message}`];
    } finally {
      this.busy.delete(name);
    }
  }

  /**
   * SIGKILL a worker (its supervisors, if any, are left alone: they are meant to outlive it), kill
   * one of its running tasks while it is down, and start it again with the same identity.
   */
  async bounceWorker(worker, { downMs, killPick }) {
    this.hosts.scan();
    const running = this.tasks.filter(
      (task) => task.taskId && !task.finalStatus && this.hosts.hostOf.get(task.taskId) === worker.name,
    );
    const killAt = Date.now();
    await worker.kill();
    this.restarts.worker++;
    this.log(`SIGKILL worker ${worker.name} (${running.length} tasks on it), down ${downMs}ms`);
    const victims = running.filter((task) => !task.kill);
    const killing =
      victims.length > 0
        ? this.killTask(victims[Math.floor(killPick * victims.length)], 'worker down')
        : undefined;
    await sleep(downMs);
    const restartAt = await worker.start();
    this.workerKills.push({ worker: worker.name, killAt, restartAt, affected: running.map((t) => t.taskId) });
    await killing;
  }

  /**
   * Cuts a worker host off from the server (its network's slirp4netns stopped) for `downMs`, and
   * kills one of its running tasks meanwhile (the kill waits for the host), then joins it again.
   * Its worker and commands run on throughout.
   */
  async partitionWorker(worker, { downMs }) {
    this.hosts.scan();
    const running = this.tasks.filter(
      (task) =>
        task.taskId && !task.finalStatus && !task.kill && this.hosts.hostOf.get(task.taskId) === worker.name,
    );
    worker.network.cut();
    this.restarts.partition++;
    this.log(
      `cut worker ${worker.name} off from the server (${running.length} tasks on it), for ${downMs}ms`,
    );
    const killing = running.length > 0 ? this.killTask(this.rng.pick(running), 'host cut off') : undefined;
    await sleep(downMs);
    worker.network.restore();
    await killing;
  }

  async bounceAgentHost({ downMs }) {
    const quiet = await this.agent.quiesce();
    if (!quiet) this.unquiescedAgentKills++;
    await this.agent.kill();
    this.agent.openGate(); // calls now wait for the new host instead
    this.restarts.agentHost++;
    this.log(`SIGKILL agent host${quiet ? '' : ' (guarded calls in flight)'}, down ${downMs}ms`);
    await sleep(downMs);
    await this.agent.start();
  }

  async bounceServer({ downMs }) {
    await this.server.kill();
    this.restarts.server++;
    this.log(`SIGKILL server, down ${downMs}ms`);
    await sleep(downMs);
    await this.server.start();
  }

  /** Restarts any process of the run that died without us killing it, and counts it. */
  async watchdog() {
    while (!this.stopped) {
      await sleep(1_000);
      const parts = [
        ...this.workers.map((worker) => ({ name: worker.name, part: worker })),
        { name: 'agentHost', part: this.agent },
        { name: 'server', part: this.server },
      ];
      for (const { name, part } of parts) {
        if (this.busy.has(name) || !part.proc?.hasExited()) continue;
        this.busy.add(name);
        this.unplannedExits.push({ name, at: Date.now(), stderr: part.proc.stderr().slice(-500) });
        this.log(`${name} exited on its own; restarting it`);
        try {
          await part.start();
        } catch (err) {
          this.log(`restarting ${name} failed: ${err.message}`);
        } finally {
          this.busy.delete(name);
        }
      }
    }
  }

  /** Reads every started, unfinished task every READ_EVERY_MS, one read per task at a time. */
  async readLoop() {
    while (!this.stopped) {
      const now = Date.now();
      for (const task of this.tasks) {
        if (this.readsInFlight >= READ_CONCURRENCY) break;
        if (!task.taskId || task.confirmed || task.readInFlight || now - task.lastReadAt < READ_EVERY_MS)
          continue;
        this.readTask(task);
      }
      await sleep(100);
    }
    await waitUntil(() => this.readsInFlight === 0, 100_000);
  }

  async readTask(task) {
    task.readInFlight = true;
    this.readsInFlight++;
    try {
      const answer = await this.agent.call('bash_output', { task_id: task.taskId }, this.sessionId);
      this.takeRead(task, answer);
    } finally {
      task.readInFlight = false;
      task.lastReadAt = Date.now();
      this.readsInFlight--;
    }
  }

  takeRead(task, answer) {
    if (answer.unsent) return;
    task.reads++;
    if (answer.lost) {
      task.lostReads++;
      return;
    }
    if (answer.isError) {
      task.errorReads.push(answer.text.split('\n')[0].slice(0, 200));
      return;
    }
    const read = parseOutputRead(answer.text);
    if (!read) {
      task.oddities.push(`unparsable bash_output answer: ${JSON.stringify(answer.text.slice(0, 200))}`);
      return;
    }
    // A read no worker took moved nothing; its output will be shown again, so it is not appended.
    if (read.unclaimed) {
      task.unclaimedReads++;
      return;
    }
    if (read.dropped) task.oddities.push('a read said output was dropped from memory');
    task.stderr += read.stderr;
    if (task.finalStatus !== undefined) {
      // The read after the final one: nothing more may come, and the status may not change.
      if (read.stdout !== '')
        task.oddities.push(`bytes after the final status: ${JSON.stringify(read.stdout)}`);
      if (read.status !== task.finalStatus)
        task.oddities.push(`status changed from "${task.finalStatus}" to "${read.status}"`);
      task.confirmed = true;
      return;
    }
    task.transcript += read.stdout;
    if (read.stdout !== '') task.visible.push({ at: Date.now(), bytes: read.stdout.length });
    if (read.status !== 'running') {
      task.finalStatus = read.status;
      task.lastReadAt = 0; // confirm at once
    }
  }
}

function describePlan(plan) {
  const events = plan.events.map((event) =>
    event.kind === 'worker' || event.kind === 'partition'
      ? `${event.kind === 'worker' ? 'worker' : 'partition'}#${event.worker}@${(event.offset / 1000).toFixed(1)}s/${event.downMs}ms`
      : `${event.kind}@${(event.offset / 1000).toFixed(1)}s/${event.downMs}ms`,
  );
  return `${plan.tasks.length} tasks, ${plan.foreground.length} foreground, chaos: ${events.join(', ')}`;
}

/** An answer as a defect message quotes it. */
export function describeAnswer(answer) {
  if (answer.unsent) return '(never sent: no agent host took it in time)';
  if (answer.lost) return '(answer lost with the agent host)';
  return `${answer.isError ? 'error: ' : ''}${JSON.stringify(answer.text.slice(0, 300))}`;
}
