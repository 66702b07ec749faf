import type { Client } from '@temporalio/client';
import { Client as TemporalClient } from '@temporalio/client';
import { Approvals } from '../client/approvals.js';
import { BackgroundQuota } from '../client/background-quota.js';
import { BashTasks, type BashTasksOptions } from '../client/bash-tasks.js';
import { Reminders } from '../client/reminders.js';
import { TaskMonitors } from '../client/task-monitors.js';
import type { Approver, PermissionPolicy } from '../policy/policy-types.js';
import { DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION } from '../shared/limits.js';
import type { Tool } from '../shared/tool-types.js';
import { type BashGuards, createBashTool } from './bash.js';
import { createBashInputTool } from './bash-input.js';
import { createBashKillTool } from './bash-kill.js';
import { createBashListTool } from './bash-list.js';
import { createBashMonitorTool } from './bash-monitor.js';
import { createBashOutputTool } from './bash-output.js';
import { createBashRemindTool } from './bash-remind.js';
import { createClaudeCodeBashTool } from './claude-code-bash.js';
import { BashArgumentsShape } from './claude-code-bash-arguments.js';
import { withToolSpan } from './tool-span.js';

export interface BashToolsOptions {
  /**
   * A connected Temporal client. Its data converter is the one tasks are stored with: a client made
   * with `encryptingDataConverter(keyring)` encrypts commands, output and failures, and stores
   * owners as keyed hashes (give the workers the same keys).
   */
  client: Client;
  /** @default the client's namespace */
  namespace?: string;
  /** The task queue the command workers serve. @default DEFAULT_TASK_QUEUE ('durable-bash') */
  taskQueue?: string;
  /**
   * The task queue this agent host's worker serves (see `createAgentWorker`); background tasks of a
   * session then end with a completion notice in it. @default no notices
   */
  agentTaskQueue?: string;
  /** How long a completion notice waits for the agent worker. @default DEFAULT_NOTICE_WINDOW_MS (1 hour) */
  noticeWindowMs?: number;
  /** How each task's `bash_output` reader workflow runs. @default READER_CLAIMS_PER_RUN claims a run, READER_IDLE_MS */
  reader?: BashTasksOptions['reader'];
  /**
   * Decides each `bash` call before anything starts: allow, deny with a reason, or ask `approve`.
   * A refused call starts nothing and answers `command denied: <reason>` or
   * `command not approved: <reason>`. `createRulePolicy` builds one from command rules; rules are a
   * convenience, not a security boundary. @default every call is allowed
   */
  policy?: PermissionPolicy;
  /**
   * The host's answer to a policy's `ask`: true, false, or `'defer'` (a durable request).
   * @default none: with `agentTaskQueue`, an `ask` waits in a durable approval request that a
   * person decides (`durable-bash approve`, the Web UI, an MCP client); without it, an `ask` is a denial
   */
  approve?: Approver;
  /**
   * How long a durable approval request waits for a decision before it is denied with a notice.
   * @default DEFAULT_APPROVAL_EXPIRY_MS (24 hours)
   */
  approvalExpiryMs?: number;
  /**
   * The background tasks one agent session may run at once; past it, a `bash` call with
   * `run_in_background` starts nothing and says so, and an approved run that would start in the
   * background does not start (its session is told by notice). `Infinity` turns the cap off; tasks
   * started with no agent session are not counted. @default DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION (20)
   */
  maxBackgroundTasksPerSession?: number;
  /**
   * The approval requests one session may have waiting for a decision; past it, a call the policy
   * asks about starts nothing and says so. `Infinity` turns the cap off (and its visibility count).
   * @default MAX_PENDING_APPROVALS_PER_SESSION (20)
   */
  maxPendingApprovalsPerSession?: number;
  /**
   * The reminders (`bash_remind`, offered with `agentTaskQueue`) one session may have pending; past
   * it, a new one sets nothing and says so. `Infinity` turns the cap off (and its visibility count:
   * the time-skipping test server has no visibility). @default MAX_REMINDERS_PER_SESSION (20)
   */
  maxRemindersPerSession?: number;
  /**
   * A foreground `bash` call still running after this long answers with the output so far and
   * `[still running after <N>ms; moved to background task <id>. Read its output with bash_output.]`;
   * the task then runs as if started with `run_in_background` (same owner, completion notice, no
   * timeout). The next `bash_output` goes on after the output already shown. @default off
   */
  autoBackgroundAfterMs?: number;
  /**
   * The longest one `bash_output` call may wait with `wait_ms`; a longer wait is cut to it.
   * @default DEFAULT_MAX_WAIT_MS (2 minutes)
   */
  maxWaitMs?: number;
  /**
   * The arguments `bash` takes: durable-bash's own, or `'claude-code'`, Claude Code's Bash's
   * (`command`, `timeout`, `description`, `run_in_background`, `dangerouslyDisableSandbox`), for a
   * Claude Code host that routes its Bash here (docs/CLAUDE-CODE.md). @default 'durable-bash'
   */
  bashArguments?: BashArgumentsShape;
  /** Eager workflow start, for a client on the `NativeConnection` of a command worker in this process (see `BashTasksOptions.eagerStart`). @default false */
  eagerStart?: boolean;
}

/** The client and the guards every tool (and every sandbox session) of one set of options shares. */
export interface BashToolsCore {
  tasks: BashTasks;
  /** The permission policy, its approver and the background quota, checked before each start. */
  guards: BashGuards;
  /** The sessions' reminders, when this host takes notices (`agentTaskQueue`). */
  reminders?: Reminders;
  /** The sessions' task monitors, when this host takes notices (`agentTaskQueue`). */
  monitors?: TaskMonitors;
}

/** The tasks client and the guards `options` ask for, built once for the tools or a sandbox. */
export function bashToolsCore(options: BashToolsOptions): BashToolsCore {
  const client =
    options.namespace === undefined || options.namespace === options.client.options.namespace
      ? options.client
      : new TemporalClient({ ...options.client.options, namespace: options.namespace });
  const tasks = new BashTasks({
    client,
    ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
    ...(options.agentTaskQueue !== undefined ? { agentTaskQueue: options.agentTaskQueue } : {}),
    ...(options.noticeWindowMs !== undefined ? { noticeWindowMs: options.noticeWindowMs } : {}),
    ...(options.reader !== undefined ? { reader: options.reader } : {}),
    ...(options.eagerStart ? { eagerStart: true } : {}),
  });
  const quotaLimit = options.maxBackgroundTasksPerSession ?? DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION;
  const quota = quotaLimit === Number.POSITIVE_INFINITY ? undefined : new BackgroundQuota(tasks, quotaLimit);
  const { agentTaskQueue } = tasks;
  const reminders =
    agentTaskQueue === undefined
      ? undefined
      : new Reminders({
          tasks,
          ...(options.maxRemindersPerSession !== undefined
            ? { maxPerSession: options.maxRemindersPerSession }
            : {}),
          noticeFor: (owner) => ({
            sessionId: owner,
            taskQueue: agentTaskQueue,
            windowMs: tasks.noticeWindowMs,
          }),
        });
  const monitors =
    agentTaskQueue === undefined
      ? undefined
      : new TaskMonitors({
          tasks,
          noticeFor: (owner) => ({
            sessionId: owner,
            taskQueue: agentTaskQueue,
            windowMs: tasks.noticeWindowMs,
          }),
        });
  // Only where a decision's notice can arrive: a host that takes notices.
  const approvals =
    agentTaskQueue === undefined
      ? undefined
      : new Approvals({
          tasks,
          ...(options.approvalExpiryMs !== undefined ? { expiryMs: options.approvalExpiryMs } : {}),
          ...(options.maxPendingApprovalsPerSession !== undefined
            ? { maxPendingPerSession: options.maxPendingApprovalsPerSession }
            : {}),
          // An approved run counts against the quota this host sets, wherever it starts.
          ...(quota !== undefined ? { maxBackgroundTasksPerSession: quota.limit } : {}),
        });
  return {
    tasks,
    ...(reminders !== undefined ? { reminders } : {}),
    ...(monitors !== undefined ? { monitors } : {}),
    guards: {
      ...(options.policy !== undefined ? { policy: options.policy } : {}),
      ...(options.approve !== undefined ? { approve: options.approve } : {}),
      ...(quota !== undefined ? { quota } : {}),
      ...(approvals !== undefined ? { approvals } : {}),
    },
  };
}

/** The model-facing tools, each run a Temporal workflow on the given namespace and task queue. */
export function createBashTools(options: BashToolsOptions): Tool[] {
  const { tasks, guards, reminders, monitors } = bashToolsCore(options);
  const bashOptions = {
    ...guards,
    ...(options.autoBackgroundAfterMs !== undefined
      ? { autoBackgroundAfterMs: options.autoBackgroundAfterMs }
      : {}),
  };
  const tools: Tool[] = [
    options.bashArguments === BashArgumentsShape.claudeCode
      ? (createClaudeCodeBashTool(tasks, bashOptions) as Tool)
      : (createBashTool(tasks, bashOptions) as Tool),
    createBashOutputTool(tasks, {
      ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
    }) as Tool,
    // A session that takes its notices here learns of a kill's end from its answer.
    createBashKillTool(tasks, { answersSession: tasks.agentTaskQueue !== undefined }) as Tool,
    // A session's waiting requests are listed where a policy or an approver can make them.
    createBashListTool(
      tasks,
      reminders,
      options.policy !== undefined || options.approve !== undefined ? guards.approvals : undefined,
    ) as Tool,
    createBashInputTool(tasks) as Tool,
    // Only where a reminder's notice can arrive: a host that takes notices.
    ...(reminders !== undefined ? [createBashRemindTool(reminders) as Tool] : []),
    ...(monitors !== undefined ? [createBashMonitorTool(monitors) as Tool] : []),
  ];
  return tools.map(withToolSpan);
}
