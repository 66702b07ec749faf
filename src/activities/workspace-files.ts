import { ApplicationFailure } from '@temporalio/activity';
import type { ExecutorConfig } from '../command-host/executor-config.js';
import { runWorkspaceRequest, WorkspaceRefusal } from '../command-host/workspace/workspace-host.js';
import type { WorkspaceReply, WorkspaceRequest } from '../shared/workspace.js';

/**
 * One file operation in a sandbox session's workspace, on the workspace's host (its own queue): the
 * reply, or the bytes of a read or an archive (one binary payload). A refusal ends it with an
 * ApplicationFailure whose type the client maps back to its error class; none is worth a retry.
 */
export function createWorkspaceFile(config: ExecutorConfig) {
  return async function workspaceFile(
    request: WorkspaceRequest,
    data?: Uint8Array,
  ): Promise<WorkspaceReply | Uint8Array> {
    try {
      return await runWorkspaceRequest(config, request, data);
    } catch (err) {
      if (!(err instanceof WorkspaceRefusal)) throw err;
      throw ApplicationFailure.create({
        type: err.failure.type,
        message: err.message,
        details: [err.failure.facts],
        nonRetryable: true,
      });
    }
  };
}
