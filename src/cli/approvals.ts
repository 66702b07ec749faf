import os from 'node:os';
import { Approvals } from '../client/approvals.js';
import { BashTasks } from '../client/bash-tasks.js';
import { ApprovalError } from '../shared/errors.js';
import { MAX_LISTED_APPROVALS } from '../shared/limits.js';
import { approvalTable } from '../tools/task-table.js';
import type { CodecFlags } from './codec-options.js';
import type { ServerOptions } from './options.js';
import { withClient } from './with-client.js';

export interface ApprovalsFlags extends ServerOptions, CodecFlags {
  /** Only this session's requests. */
  owner?: string;
}

export interface DecideFlags extends ServerOptions, CodecFlags {
  /** Who decides, as the request's history records it. @default `<user>@<host>` */
  by?: string;
  /** Why (a denial's reason is shown to the model). */
  reason?: string;
}

/** `durable-bash approvals`: the pending requests, the oldest first. */
export function runApprovals(flags: ApprovalsFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const approvals = new Approvals({ tasks: new BashTasks({ client, taskQueue: flags.taskQueue }) });
    const pending = await approvals.list(flags.owner, MAX_LISTED_APPROVALS);
    process.stdout.write(`${approvalTable(pending, new Date())}\n`);
    return 0;
  });
}

/**
 * `durable-bash approve <id>` and `deny <id>`: the decision, by `--by` (this user at this host
 * unless given). Prints `approved <id>` or `denied <id>`, or the one-line refusal (exit 1).
 */
export function runDecide(approvalId: string, approved: boolean, flags: DecideFlags): Promise<number> {
  return withClient(flags, async (client) => {
    const approvals = new Approvals({ tasks: new BashTasks({ client, taskQueue: flags.taskQueue }) });
    const by = flags.by ?? `${os.userInfo().username}@${os.hostname()}`;
    try {
      const answer = await approvals.decide(approvalId, {
        approved,
        by,
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
      });
      process.stdout.write(`${answer}\n`);
      return 0;
    } catch (err) {
      if (!(err instanceof ApprovalError)) throw err;
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
  });
}
