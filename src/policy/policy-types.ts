/** The permission seam of the `bash` tool: what a policy is asked, and what it may answer. */

/** What a policy sees of a `bash` call, before anything starts. */
export interface PermissionRequest {
  /** The command, exactly as the model gave it. */
  command: string;
  /** The workdir, resolved against the session's cwd; undefined when the worker's default applies. */
  workdir: string | undefined;
  /** `run_in_background` was set. */
  background: boolean;
  /** The calling agent session; undefined for a call with no agent. */
  sessionId: string | undefined;
}

/** A policy's answer: run it, refuse it (the reason is shown to the model), or ask the host. */
export type PermissionDecision =
  | { action: 'allow' }
  | { action: 'deny'; reason: string }
  | { action: 'ask'; reason?: string };

/** Decides each `bash` call before anything starts. A policy that throws denies the call. */
export type PermissionPolicy = (
  request: PermissionRequest,
) => PermissionDecision | Promise<PermissionDecision>;

/**
 * The host's approval of an `ask` (a prompt to a person, a supervisor agent): true runs the call,
 * false refuses it, `'defer'` makes a durable approval request that outlives the host (where the
 * session takes notices). `signal` aborts when the call is aborted; the call then ends unapproved
 * whatever this resolves to.
 */
export type Approver = (
  request: PermissionRequest,
  reason: string,
  signal: AbortSignal,
) => Promise<boolean | 'defer'>;

/** What a matching rule does, from the least strict to the strictest. */
export const RuleAction = { allow: 'allow', ask: 'ask', deny: 'deny' } as const;
export type RuleAction = (typeof RuleAction)[keyof typeof RuleAction];

/**
 * Which commands a rule matches: by `prefix`, the words a simple command starts with (`git push`
 * matches `git push origin main`, and `rm` matches `/bin/rm`); by `pattern`, a regular expression
 * tested against each simple command's words joined by spaces (and, for `ask` and `deny` rules,
 * against the whole command line as given).
 */
export type CommandMatch = { prefix: string; pattern?: never } | { pattern: RegExp | string; prefix?: never };

export type CommandRule = CommandMatch & {
  action: RuleAction;
  /** Shown to the model (and the approver) in place of the default reason. */
  reason?: string;
};

/** A worker's deny rule: the rule format without an action. */
export type DenyRule = CommandMatch & { reason?: string };
