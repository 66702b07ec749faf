/**
 * A review of issue 48's policy work: bash 5.2 expands `BASH_ENV` when a non-interactive bash
 * starts (`BASH_ENV='$(rm x)' bash -c :` runs rm), an interactive POSIX shell expands `ENV`, and an
 * interactive bash its prompts and `PROMPT_COMMAND`; `fc -s` runs a command of the history list
 * changed. Each assignment of these variables, in any form (before a command, `export`, `declare
 * -x`, `env`, `read`, `mapfile`, a `for` loop, a name reference), is judged where it is made, since
 * the shell that reads the value may be started later or by another program: denied under a
 * worker's deny rules, asked under a session policy. The lines that run rm through a real worker
 * are in policy-bash-evaluation.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { checkCommand, compileDenyRules, createRulePolicy } from '../../src/policy/rules.js';

const denyRm = compileDenyRules([{ prefix: 'rm' }]);
const verdict = (line: string) => checkCommand(line, denyRm);
const uncertain = (why: string) => ({
  action: 'deny',
  reason: `cannot check the command with certainty: ${why}`,
});
const bashEnv = (shown: string) =>
  `BASH_ENV is expanded, and the file it names run, when a non-interactive bash starts: ${shown}`;
const env = (shown: string) =>
  `ENV is expanded, and the file it names run, when an interactive sh starts: ${shown}`;

describe('a deny rule on rm, with the variables a shell expands when it starts', () => {
  it.each([
    ["BASH_ENV='$(rm x)' bash -c :", bashEnv("BASH_ENV='$(rm x)'")],
    ["export BASH_ENV='$(rm x)'; bash -c :", bashEnv("BASH_ENV='$(rm x)'")],
    ["declare -x BASH_ENV='`rm x`'; bash script.sh", bashEnv("BASH_ENV='`rm x`'")],
    ["env BASH_ENV='$(rm x)' bash -c :", bashEnv('BASH_ENV=$(rm x)')],
    ["sudo BASH_ENV='$(rm x)' bash -c :", bashEnv('BASH_ENV=$(rm x)')],
    ["systemd-run -E BASH_ENV='$(rm x)' bash -c :", bashEnv('BASH_ENV=$(rm x)')],
    ['BASH_ENV=$f bash -c :', bashEnv('BASH_ENV=$f')],
    ['BASH_ENV=/dev/stdin bash -c : <<< "rm x"', bashEnv('BASH_ENV=/dev/stdin')],
    ['read -r BASH_ENV; export BASH_ENV; bash -c :', bashEnv('BASH_ENV=…')],
    ["for BASH_ENV in '$(rm x)'; do export BASH_ENV; bash -c :; done", bashEnv('BASH_ENV=…')],
    ["ENV='$(rm x)' sh -i", env("ENV='$(rm x)'")],
    ["export ENV='$(rm x)'; script -qc 'bash --posix -i' /dev/null", env("ENV='$(rm x)'")],
    ["PS1='$(rm x)' bash -i", "PS1 is expanded as a prompt by an interactive bash: PS1='$(rm x)'"],
    [
      "mapfile -t PS4 <<< '$(rm x)'; set -x; :",
      'PS4 is expanded as a prompt each time bash traces a command: PS4=…',
    ],
    [
      "declare -n r=PS4; r='$(rm x)'; set -x; :",
      'declare -n gives PS4 another name, under which its assignments are not checked: r=PS4',
    ],
    [
      "declare -n r; r=PS4; r='$(rm x)'; set -x; :",
      'declare -n without a target names the variable it is assigned next: r',
    ],
    ['n=PS4; export "$n=\\$(rm x)"; set -x; :', 'export assigns a variable named at run time: $n=$(rm x)'],
    ['set -o history\necho x\nfc -s echo=rm', 'fc runs a command of the history list again: fc -s echo=rm'],
    // `-el` is `-e l`: the editor `l`, not `-l`'s listing.
    ['fc -el', 'fc runs a command of the history list again: fc -el'],
  ])('denies %s', async (line, why) => {
    expect(await verdict(line)).toEqual(uncertain(why));
  });

  it('reads PROMPT_COMMAND as the command an interactive bash runs before each prompt', async () => {
    expect(await verdict("PROMPT_COMMAND='rm x' bash -i")).toEqual({
      action: 'deny',
      reason: '`rm x` matches the deny rule `rm`',
    });
  });

  it('still allows a start-up file named plainly, and what only reads or unsets these variables', async () => {
    for (const line of [
      'BASH_ENV=~/.bash_env bash -c :',
      'export ENV=/etc/shrc',
      "declare PS4='+ '; set -x; :",
      'unset BASH_ENV ENV PS4; test -v PAGER && [[ -v EDITOR ]]',
      'fc -l; fc -ln -5',
      'declare -n r=HOME; getopts ab PS4',
    ]) {
      expect(await verdict(line), line).toEqual({ action: 'allow', reason: 'no rule refuses it' });
    }
  });

  it('asks under a session policy where a deny rule denies', async () => {
    const policy = createRulePolicy({ rules: [{ prefix: 'bash', action: 'allow' }], defaultAction: 'allow' });
    expect(
      await policy({
        command: "BASH_ENV='$(rm x)' bash -c :",
        workdir: undefined,
        background: false,
        sessionId: 's',
      }),
    ).toEqual({
      action: 'ask',
      reason: `cannot check the command with certainty: ${bashEnv("BASH_ENV='$(rm x)'")}`,
    });
  });
});
