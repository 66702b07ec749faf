/**
 * The command activities' names, as histories record them and as a caller finds them among a run's
 * pending activities. Checked against the activities themselves (in activities/index.ts); renaming one would leave open
 * runs unable to replay, so a name here never changes.
 */
export const ActivityName = {
  resolveCommand: 'resolveCommand',
  chooseHost: 'chooseHost',
  runCommand: 'runCommand',
  stopCommand: 'stopCommand',
  writeStdin: 'writeStdin',
  readOutput: 'readOutput',
  releaseCommand: 'releaseCommand',
  /** A sandbox session's workspace file operation (workflows/workspace-files.ts). */
  workspaceFile: 'workspaceFile',
  /** `bash_monitor`'s pattern, set on the task's host (workflows/monitor-notices.ts). */
  setMonitor: 'setMonitor',
} as const;

/** The tool-call activities' names (agent workflows record them), likewise fixed (checked in tools/tool-call-activities.ts). */
export const ToolCallActivityName = {
  callBashTool: 'callBashTool',
  prepareTaskStart: 'prepareTaskStart',
} as const;

/** The approval request's activity (workflows/bash-approval.ts records it), likewise fixed (checked in client/approved-runs.ts). */
export const ApprovalActivityName = {
  startApprovedRun: 'startApprovedRun',
} as const;
