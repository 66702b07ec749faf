/**
 * The variables a command without a terminal gets so that it never waits for a person who is not
 * there: pagers that print, prompts that fail at once, installers that take their defaults. The
 * worker's own environment wins (a variable it passes to commands keeps its value), and
 * `nonInteractiveDefaults: false` (`--no-non-interactive-defaults`) leaves all of them out.
 */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  // No terminal to draw on: programs print plain text (no colours, no cursor moves).
  TERM: 'dumb',
  // Pagers print what they are given (git, gh, man, systemctl, the AWS CLI).
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GH_PAGER: 'cat',
  MANPAGER: 'cat',
  SYSTEMD_PAGER: 'cat',
  AWS_PAGER: '',
  // git never asks for credentials or opens an editor: a commit without -m fails at once (its
  // message is empty), a merge or `rebase --continue` keeps the message it has.
  GIT_TERMINAL_PROMPT: '0',
  GCM_INTERACTIVE: 'never',
  GIT_EDITOR: 'true',
  // Package managers take their defaults instead of asking.
  DEBIAN_FRONTEND: 'noninteractive',
  npm_config_yes: 'true',
  PIP_NO_INPUT: '1',
};

/** The defaults under the worker's environment `env` (already through its env policy). */
export function withNonInteractiveDefaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...NON_INTERACTIVE_ENV, ...env };
}
