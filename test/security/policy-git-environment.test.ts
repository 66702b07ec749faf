/**
 * A review of issue 48's policy work: git reads from its environment the commands its `-c` keys
 * give (`GIT_EDITOR='rm x' git commit` runs rm, as `git -c core.editor='rm x' commit` does), and
 * the editors and pagers other programs run too (EDITOR, VISUAL, PAGER). The value of a variable a
 * shell runs is read as a script, and of one git runs as a program (GIT_SSH, GIT_ASKPASS,
 * SSH_ASKPASS, GIT_PROXY_COMMAND) as that program's name, wherever it is assigned: before the
 * command, through `env` or `sudo`, or exported earlier in the line. GIT_EXEC_PATH (and `git
 * --exec-path=DIR`) names where git finds the programs it runs: uncertain.
 */
import { describe, expect, it } from 'vitest';
import { checkCommand, compileDenyRules, createRulePolicy } from '../../src/policy/rules.js';

const denyRm = compileDenyRules([{ prefix: 'rm' }]);
const verdict = (line: string) => checkCommand(line, denyRm);
const matched = (command: string) => ({
  action: 'deny',
  reason: `\`${command}\` matches the deny rule \`rm\``,
});
const uncertain = (why: string) => ({
  action: 'deny',
  reason: `cannot check the command with certainty: ${why}`,
});
const runTime = (name: string, shown: string) =>
  `${name} holds a command another program runs, and its value is known only at run time: ${shown}`;

describe("a deny rule on rm, with git's environment", () => {
  it.each([
    "GIT_EDITOR='rm x' git commit",
    "GIT_SEQUENCE_EDITOR='rm x' git rebase -i HEAD~2",
    "GIT_PAGER='rm x' git log",
    "GIT_SSH_COMMAND='rm x' git fetch",
    "GIT_EXTERNAL_DIFF='rm x' git diff",
    "EDITOR='rm x' git commit",
    "VISUAL='rm x' git commit",
    "PAGER='rm x' git log",
    "env GIT_EDITOR='rm x' git commit",
    "env -i PAGER='rm x' git log",
    "sudo GIT_EDITOR='rm x' git commit",
    "systemd-run --setenv=GIT_EDITOR='rm x' git commit",
    "export GIT_EDITOR='rm x'; git commit",
    "declare -x GIT_PAGER='rm x'; git log",
    "declare -x 'GIT_PAGER=rm x'; git log",
    "command export GIT_PAGER='rm x'; git log",
    "GIT_EDITOR='true; rm x' git commit",
  ])('denies rm read from %s', async (line) => {
    expect(await verdict(line)).toEqual(matched('rm x'));
  });

  it.each([
    ['GIT_SSH=rm git fetch', 'rm'],
    ['GIT_ASKPASS=/bin/rm git push', '/bin/rm'],
    ['SSH_ASKPASS=rm git push', 'rm'],
    ['GIT_PROXY_COMMAND=rm git fetch git://host/repo', 'rm'],
    ['export GIT_SSH=rm; git fetch', 'rm'],
  ])('denies the program %s names, which git runs with arguments of its own', async (line, program) => {
    expect(await verdict(line)).toEqual(matched(program));
  });

  it.each([
    ['GIT_EDITOR=$e git commit', runTime('GIT_EDITOR', 'GIT_EDITOR=$e')],
    ['export GIT_PAGER="$p"; git log', runTime('GIT_PAGER', 'GIT_PAGER="$p"')],
    ["GIT_EDITOR+=' x' git commit", runTime('GIT_EDITOR', "GIT_EDITOR+=' x'")],
    ['read -r GIT_EDITOR; export GIT_EDITOR; git commit', runTime('GIT_EDITOR', 'GIT_EDITOR=…')],
    ['command export GIT_PAGER=$p; git log', runTime('GIT_PAGER', 'GIT_PAGER=$p')],
    // git appends the host and its command to GIT_SSH_COMMAND: ssh runs a command on that host.
    ["GIT_SSH_COMMAND='ssh -i key' git fetch", 'ssh runs a command that this check does not read'],
    [
      'GIT_EXEC_PATH=/tmp/x git status',
      'GIT_EXEC_PATH names where git finds the programs it runs: GIT_EXEC_PATH=/tmp/x',
    ],
    [
      'git --exec-path=/tmp/x status',
      'git --exec-path names where git finds the programs it runs: --exec-path=/tmp/x',
    ],
  ])('is uncertain about %s', async (line, why) => {
    expect(await verdict(line)).toEqual(uncertain(why));
  });

  it('reads a plain pager or editor, and a program, as the commands they are', async () => {
    for (const line of [
      'GIT_PAGER=cat git log',
      "EDITOR='vim -n' VISUAL=true git commit",
      'GIT_ASKPASS=./askpass.sh git --version',
    ])
      expect(await verdict(line), line).toEqual({ action: 'allow', reason: 'no rule refuses it' });
    expect(await checkCommand("GIT_PAGER='less -R' git log", compileDenyRules([{ prefix: 'less' }]))).toEqual(
      {
        action: 'deny',
        reason: '`less -R` matches the deny rule `less`',
      },
    );
  });

  it('asks under a session policy about the command a variable holds', async () => {
    const policy = createRulePolicy({ rules: [{ prefix: 'git', action: 'allow' }], defaultAction: 'ask' });
    const decide = (command: string) =>
      policy({ command, workdir: undefined, background: false, sessionId: 's' });
    expect(await decide("GIT_EDITOR='rm x' git commit")).toEqual({
      action: 'ask',
      reason: '`rm x` is not covered by any rule',
    });
    expect(await decide('GIT_EXEC_PATH=/tmp/x git status')).toEqual({
      action: 'ask',
      reason:
        'cannot check the command with certainty: GIT_EXEC_PATH names where git finds the programs it runs: GIT_EXEC_PATH=/tmp/x',
    });
    expect(await decide('git commit')).toEqual({ action: 'allow' });
  });
});
