/**
 * Finding 4 of issue 48: prefix rules matched exact words, so `git -C . push` and `git -c
 * alias.p=push p` passed the docs' own `git push` ask example. A `git` rule now skips git's global
 * options, and a `-c` that sets an alias (or a key that makes git run a command) is uncertain.
 */
import { describe, expect, it } from 'vitest';
import type { PermissionDecision } from '../../src/policy/policy-types.js';
import { checkCommand, compileDenyRules, createRulePolicy } from '../../src/policy/rules.js';

const policy = createRulePolicy({
  rules: [
    { prefix: 'git status', action: 'allow' },
    { prefix: 'git push', action: 'ask' },
  ],
  defaultAction: 'allow',
});
const decide = (command: string): Promise<PermissionDecision> =>
  Promise.resolve(policy({ command, workdir: undefined, background: false, sessionId: 's' }));
const denyPush = compileDenyRules([{ prefix: 'git push' }]);

describe('a git push rule', () => {
  it.each([
    ['git -C . push', '`git push` matches the ask rule `git push`'],
    ['git --no-pager push origin main', '`git push origin main` matches the ask rule `git push`'],
    ['git -P push', '`git push` matches the ask rule `git push`'],
    ['git -c user.name=x -c color.ui=never push', '`git push` matches the ask rule `git push`'],
    ['git --git-dir=.git --work-tree . push', '`git push` matches the ask rule `git push`'],
    ['git --git-dir .git --namespace=n push', '`git push` matches the ask rule `git push`'],
    ['git --bare --literal-pathspecs push', '`git push` matches the ask rule `git push`'],
    ['git --config-env=user.name=NAME push', '`git push` matches the ask rule `git push`'],
    ['sudo git -C repo push -f', '`git push -f` matches the ask rule `git push`'],
  ])('asks about %s', async (line, reason) => {
    expect(await decide(line)).toEqual({ action: 'ask', reason });
  });

  it.each([
    ['git -c alias.p=push p', 'git -c sets an alias, which can stand for another git command: alias.p=push'],
    ['git -c Alias.P=push P', 'git -c sets an alias, which can stand for another git command: Alias.P=push'],
    [
      'git --config-env=alias.p=CMD p',
      'git --config-env sets an alias, which can stand for another git command: alias.p=CMD',
    ],
    [
      'git -c help.autocorrect=immediate psuh',
      'git -c sets a key that can make git run a command: help.autocorrect=immediate',
    ],
    [
      'git -c include.path=/tmp/cfg p',
      'git -c sets a key that can make git run a command: include.path=/tmp/cfg',
    ],
    [
      'git -c core.hooksPath=/tmp/h commit',
      'git -c sets a key that can make git run a command: core.hooksPath=/tmp/h',
    ],
    ['git -c "$opt" p', 'git -c sets a configuration computed at run time'],
    ['git $opts p', 'the options of git are computed at run time'],
    ['git --frobnicate p', 'git has a global option this check does not know: --frobnicate'],
    // git runs its subcommands' programs, hooks and transports (`git-<name>`) from that directory.
    [
      'git --exec-path=/usr/lib/git-core push',
      'git --exec-path names where git finds the programs it runs: --exec-path=/usr/lib/git-core',
    ],
    [
      'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p',
      'GIT_CONFIG_KEY_0 sets an alias, which can stand for another git command: alias.p',
    ],
    [
      "export GIT_CONFIG_PARAMETERS=\"'alias.p'='push'\"; git p",
      'GIT_CONFIG_PARAMETERS gives git configuration this check does not read',
    ],
  ])('asks about %s, which it cannot read', async (line, why) => {
    expect(await decide(line)).toEqual({
      action: 'ask',
      reason: `cannot check the command with certainty: ${why}`,
    });
  });

  it('reads a -c pager or editor as the command git runs through a shell', async () => {
    expect(await checkCommand("git -c core.pager='git push' -p log", denyPush)).toEqual({
      action: 'deny',
      reason: '`git push` matches the deny rule `git push`',
    });
    expect(await checkCommand('git -c core.pager=cat -c core.editor=true log', denyPush)).toEqual({
      action: 'allow',
      reason: 'no rule refuses it',
    });
  });

  it('denies every form under a deny rule, and lets other git commands run', async () => {
    for (const line of ['git -C . push', 'git --no-pager push', 'git -c alias.p=push p'])
      expect((await checkCommand(line, denyPush)).action, line).toBe('deny');
    for (const line of [
      'git -C . status',
      'git --no-pager log',
      'git --version',
      'git -c user.name=x commit -m y',
    ])
      expect(await checkCommand(line, denyPush), line).toEqual({
        action: 'allow',
        reason: 'no rule refuses it',
      });
    expect(await decide('git -C . status')).toEqual({ action: 'allow' });
  });
});
