/**
 * `workspaceFiles`: one file operation in a sandbox session's workspace (src/client/workspace-files.ts).
 * One activity on the workspace's host queue, and its reply as the result; `create` first has a
 * worker of the task queue pick the host (`chooseHost`, as a task's command does). No timer, no
 * retry: a host that does not answer within WORKSPACE_OP_TIMEOUT_MS fails the operation.
 */
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CommandActivities } from '../activities/index.js';
import { WORKSPACE_OP_TIMEOUT_MS } from '../shared/limits.js';
import type { CommandHost } from '../shared/task.js';
import type { WorkspaceReply, WorkspaceRequest } from '../shared/workspace.js';
import { refuseUnencryptedInput } from './unencrypted-payloads.js';

/** The operation, and the host queue it runs on (absent for `create`: a worker picks the host). */
export interface WorkspaceFilesInput {
  request: WorkspaceRequest;
  hostQueue?: string;
}

/** A `create`'s result: the workspace's directory and the host it lives on. */
export interface WorkspaceCreated {
  op: 'create';
  root: string;
  host: CommandHost;
}

const activityOptions = {
  // A dead host answers within this instead of never; the activity itself takes milliseconds.
  scheduleToCloseTimeout: WORKSPACE_OP_TIMEOUT_MS,
  // Refusals are final, and a retried write or extract would redo what may have half happened.
  retry: { maximumAttempts: 1 },
};

export async function workspaceFiles(
  input: WorkspaceFilesInput,
  data?: Uint8Array,
): Promise<WorkspaceReply | WorkspaceCreated | Uint8Array> {
  refuseUnencryptedInput(input, data);
  if (input.request.op === 'create') {
    const { chooseHost } = proxyActivities<CommandActivities>({
      ...activityOptions,
      taskQueue: workflowInfo().taskQueue,
    });
    const host = await chooseHost();
    const reply = await onHost(host.hostQueue).workspaceFile(input.request);
    if (reply instanceof Uint8Array || reply.op !== 'create')
      throw ApplicationFailure.nonRetryable('create: unexpected reply');
    return { op: 'create', root: reply.root, host };
  }
  if (input.hostQueue === undefined)
    throw ApplicationFailure.nonRetryable(`${input.request.op}: no host queue`);
  return data === undefined
    ? onHost(input.hostQueue).workspaceFile(input.request)
    : onHost(input.hostQueue).workspaceFile(input.request, data);
}

function onHost(hostQueue: string) {
  return proxyActivities<CommandActivities>({ ...activityOptions, taskQueue: hostQueue });
}
