/**
 * The harness's side of the agent host process (agent-host.mjs): starts it, sends tool calls over
 * its stdin, matches answers from its stdout, and tells which answers died with it.
 *
 * Why a gate: a `bash_output` answer lost with a SIGKILLed agent host may already have moved the
 * task's durable read position, so its bytes would be gone from the transcript for reasons of the
 * harness, not the product; a lost background `bash` answer would leave a task whose id we never
 * learn. So the agent host is only SIGKILLed while no such call is in flight (`quiesce`): guarded
 * calls wait at the gate meanwhile. Foreground runs are not guarded: one whose answer dies with the
 * host is counted, not a defect, and its workflow still runs once (the marker file shows it).
 */
import path from 'node:path';
import { createInterface } from 'node:readline';
import { killHard, sleep, spawnLogged, stopGracefully, waitUntil } from './processes.mjs';

const AGENT_HOST = path.resolve('test/chaos/agent-host.mjs');

export class AgentLink {
  constructor({ dist, runDir, runId, server, noticesFile, noticeWindowMs }) {
    this.dist = dist;
    this.runId = runId;
    this.server = server;
    this.noticesFile = noticesFile;
    this.noticeWindowMs = noticeWindowMs;
    this.logFile = path.join(runDir, 'agent-host.log');
    this.proc = undefined;
    this.ready = false;
    this.nextId = 1;
    /** id -> { resolve, guarded } of calls sent to the current process. */
    this.pending = new Map();
    this.gateClosed = false;
    this.lostAnswers = 0;
  }

  /** Starts the agent host; retries while it cannot connect (the server may be down). Bounded. */
  async start(timeoutMs = 120_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const proc = spawnLogged(
        'node',
        [AGENT_HOST, this.dist, this.server.address, this.noticesFile, String(this.noticeWindowMs)],
        { logFile: this.logFile, env: { CHAOS_RUN: this.runId }, pipeStdout: true, pipeStdin: true },
      );
      this.proc = proc;
      proc.child.stdin.on('error', () => undefined); // writes to a killed host fail; its calls count as lost
      let up = false;
      createInterface({ input: proc.child.stdout }).on('line', (line) => {
        // The SDK's core may log to stdout while the server is away: only JSON lines are answers.
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          return;
        }
        if (message.ready) up = true;
        else this.answer(message);
      });
      proc.exited.then(() => this.died(proc));
      await waitUntil(() => up || proc.hasExited(), 60_000);
      if (up && !proc.hasExited()) {
        this.ready = true;
        return Date.now();
      }
      await killHard(proc);
      if (Date.now() > deadline) throw new Error(`agent host did not start: ${proc.stderr().slice(-2000)}`);
      await sleep(1_000);
    }
  }

  answer(message) {
    const call = this.pending.get(message.id);
    if (!call) return;
    this.pending.delete(message.id);
    call.resolve({ text: message.text, isError: message.isError, threw: message.threw === true });
  }

  /** Every call the dead process had not answered resolves as lost. */
  died(proc) {
    if (proc === this.proc) this.ready = false;
    for (const [id, call] of this.pending) {
      if (call.proc !== proc) continue;
      this.pending.delete(id);
      this.lostAnswers++;
      call.resolve({ lost: true });
    }
  }

  /**
   * Calls a tool in the agent host. Resolves `{text, isError}`, or `{lost: true}` when the host died
   * before answering, or `{unsent: true}` when no host was up to take it within `waitMs`.
   * `guarded` calls wait while the gate is closed (see the top of this file).
   */
  async call(tool, args, sessionId, { guarded = true, waitMs = 180_000 } = {}) {
    const sendable = await waitUntil(() => this.ready && !(guarded && this.gateClosed), waitMs, 50);
    if (!sendable) return { unsent: true };
    const id = this.nextId++;
    const proc = this.proc;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve, guarded, proc });
      proc.child.stdin.write(`${JSON.stringify({ id, tool, args, sessionId })}\n`);
    });
  }

  guardedInFlight() {
    return [...this.pending.values()].filter((call) => call.guarded).length;
  }

  /**
   * Closes the gate and waits (bounded) until no guarded call is in flight. Returns whether it got
   * there; if not, the kill goes ahead and the lost answers are counted and cross-checked.
   */
  async quiesce(timeoutMs = 30_000) {
    this.gateClosed = true;
    return waitUntil(() => this.guardedInFlight() === 0, timeoutMs, 20);
  }

  openGate() {
    this.gateClosed = false;
  }

  kill() {
    this.ready = false;
    return killHard(this.proc);
  }

  /** Closes stdin (the host shuts its worker down and exits), SIGKILL if it does not. */
  async stop() {
    this.ready = false;
    if (!this.proc || this.proc.hasExited()) return;
    this.proc.child.stdin.end();
    await Promise.race([this.proc.exited, sleep(10_000)]);
    await stopGracefully(this.proc, 5_000);
  }
}
