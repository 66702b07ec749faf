// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are bash, not templates
/**
 * Finding 4 of issue 48, end to end: under a worker's `--deny rm`, bash 5.2 ran `rm` from strings it
 * evaluates itself (a subscript in a variable name or in arithmetic, the `@P` transformation, the
 * `BASH_ENV` a later bash expands, a history entry `fc -s` changes), through programs that run their
 * arguments (`chrt`, `sg`, `ssh-agent`, `choom`, `git -c alias.*`, ...) and through the commands
 * git's environment names (`GIT_EDITOR`, `GIT_EXTERNAL_DIFF`, `GIT_SSH`). A real worker with
 * `denyCommands` on a real dev server refuses each line before anything runs, the file stays, and
 * the harmless forms of the same builtins still run.
 */
import { existsSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/shared/tool-types.js';
import { createBashTools } from '../../src/tools/create-bash-tools.js';
import { useDevServerWithWorker } from '../helpers/bash-worker.js';
import { agent, text, toolsByName } from '../helpers/tool-calls.js';

/** The workdir, where each line tries to remove the file `v`. */
const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'policy-')));
const victim = path.join(dir, 'v');

const suite = useDevServerWithWorker({ executor: { defaultWorkdir: dir, denyCommands: [{ prefix: 'rm' }] } });

/** Runs `command` through the bash tool of a client that allows everything: the worker's rules decide. */
async function run(command: string): Promise<string> {
  const tools = toolsByName(createBashTools({ client: suite.env.client, taskQueue: suite.worker.taskQueue }));
  return text(
    await (tools.bash as Tool).execute({ command, description: 'policy attack' }, agent('attacker')),
  );
}

const denied = (why: string) => `denied by the worker: cannot check the command with certainty: ${why}`;

beforeEach(() => {
  writeFileSync(victim, 'keep me\n');
});

describe('a worker denying rm', () => {
  it.each([
    ["test -v 'a[$(rm v)]'", 'test -v takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    ["[[ -v 'a[$(rm v)]' ]]", '[[ -v takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    [
      "printf -v 'a[$(rm v)]' y",
      'printf -v takes a variable name whose subscript bash evaluates: a[$(rm v)]',
    ],
    ["read 'a[$(rm v)]' <<< y", 'read takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    ["declare -a 'a[$(rm v)]=1'", 'declare takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    ["typeset -a 'a[$(rm v)]=1'", 'typeset takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    [
      "f() { local 'a[$(rm v)]=1'; }; f",
      'local takes a variable name whose subscript bash evaluates: a[$(rm v)]',
    ],
    ["declare -x 'a[$(rm v)]=1'", 'declare takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    ["let 'a[$(rm v)]=1'", 'arithmetic on a value known only at run time: a[$(rm v)]=1'],
    ["x='a[$(rm v)]'; (( x ))", 'arithmetic on a value known only at run time: (( x ))'],
    ["x='a[$(rm v)]'; echo $((x))", 'arithmetic on a value known only at run time: $((x))'],
    [
      "x='$(rm v)'; echo ${x@P}",
      'the @P transformation expands a value as a prompt, running its commands: ${x@P}',
    ],
    ["a=(1); unset 'a[$(rm v)]'", 'unset takes a variable name whose subscript bash evaluates: a[$(rm v)]'],
    ["x='a[$(rm v)]'; [[ $x -eq 1 ]]", 'arithmetic on a value known only at run time: $x -eq 1'],
    ["a=(1); i='a[$(rm v)]'; echo ${a[$i]}", 'arithmetic on a value known only at run time: a[$i]'],
    ["x='a[$(rm v)]'; echo ${!x}", 'an indirect expansion reads a variable named at run time: ${!x}'],
    [
      "sleep 0 & wait -n -p 'a[$(rm v)]'",
      'wait -p takes a variable name whose subscript bash evaluates: a[$(rm v)]',
    ],
    ["x='a[$(rm v)]'; y=abc; echo ${y:0:$x}", 'arithmetic on a value known only at run time: ${y:0:$x}'],
    ["x='a[$(rm v)]'; a=([x]=1)", 'arithmetic on a value known only at run time: [x]=1'],
    ["x='a[$(rm v)]'; declare -i n; n=$x", 'declare -i makes each later assignment arithmetic: declare -i n'],
    [
      "declare -n r='a[$(rm v)]'; r=1",
      "declare -n names a variable bash evaluates at each use: r='a[$(rm v)]'",
    ],
    ['v=\'([$(rm v)]=1)\'; declare -a a="$v"', 'declare expands an array value again: a="$v"'],
    [
      "PS4='$(rm v)'; set -x; :",
      "PS4 is expanded as a prompt each time bash traces a command: PS4='$(rm v)'",
    ],
    ["compgen -W '$(rm v)' a", 'compgen -W expands its word list, running what it holds: $(rm v)'],
    [
      "BASH_ENV='$(rm v)' bash -c :",
      "BASH_ENV is expanded, and the file it names run, when a non-interactive bash starts: BASH_ENV='$(rm v)'",
    ],
    [
      "export BASH_ENV='$(rm v)'; bash -c :",
      "BASH_ENV is expanded, and the file it names run, when a non-interactive bash starts: BASH_ENV='$(rm v)'",
    ],
    [
      "declare -x BASH_ENV='$(rm v)'; bash -c :",
      "BASH_ENV is expanded, and the file it names run, when a non-interactive bash starts: BASH_ENV='$(rm v)'",
    ],
    [
      "env BASH_ENV='$(rm v)' bash -c :",
      'BASH_ENV is expanded, and the file it names run, when a non-interactive bash starts: BASH_ENV=$(rm v)',
    ],
    [
      "mapfile -t PS4 <<< '$(rm v)'; set -x; :",
      'PS4 is expanded as a prompt each time bash traces a command: PS4=…',
    ],
    [
      "declare -n r=PS4; r='$(rm v)'; set -x; :",
      'declare -n gives PS4 another name, under which its assignments are not checked: r=PS4',
    ],
    ['set -o history\necho v\nfc -s echo=rm', 'fc runs a command of the history list again: fc -s echo=rm'],
  ])('refuses %s, and the file stays', async (line, why) => {
    expect(await run(line)).toBe(denied(why));
    expect(existsSync(victim)).toBe(true);
  });

  it.each([
    ['chrt -o 0 rm v', '`rm v` matches the deny rule `rm`'],
    ['taskset 1 rm v', '`rm v` matches the deny rule `rm`'],
    ['setpriv --nnp rm v', '`rm v` matches the deny rule `rm`'],
    ['unshare -f rm v', '`rm v` matches the deny rule `rm`'],
    ['prlimit --nofile=1024 rm v', '`rm v` matches the deny rule `rm`'],
    ['setarch x86_64 -R rm v', '`rm v` matches the deny rule `rm`'],
    ['linux64 rm v', '`rm v` matches the deny rule `rm`'],
    ["sg root 'rm v'", '`rm v` matches the deny rule `rm`'],
    ['flock lock rm v', '`rm v` matches the deny rule `rm`'],
    ["script -qc 'rm v' /dev/null", '`rm v` matches the deny rule `rm`'],
    [
      "git -c alias.x='!rm v' x",
      'cannot check the command with certainty: git -c sets an alias, which can stand for another git command: alias.x=!rm v',
    ],
    [
      'strace -o /dev/null rm v',
      'cannot check the command with certainty: strace runs a command that this check does not read',
    ],
    ['ssh-agent -a ./agent.sock rm v', '`rm v` matches the deny rule `rm`'],
    ['choom -n 0 rm v', '`rm v` matches the deny rule `rm`'],
    [
      'perf stat -o /dev/null rm v',
      'cannot check the command with certainty: perf runs a command that this check does not read',
    ],
  ])('refuses %s, run through a program that runs its arguments', async (line, why) => {
    expect(await run(line)).toBe(`denied by the worker: ${why}`);
    expect(existsSync(victim)).toBe(true);
  });

  it.each([
    [
      "git init -q .; GIT_EDITOR='rm v; true' git -c user.name=a -c user.email=a@b commit -q --allow-empty",
      'rm v',
    ],
    [
      "git init -q .; echo a > f; git add f; echo b > f; env TMPDIR=. GIT_EXTERNAL_DIFF='rm v; true' git diff",
      'rm v',
    ],
    ['git init -q .; export GIT_SSH=rm; git ls-remote ssh://v/x', 'rm'],
  ])('refuses %s, whose variable holds the command git runs', async (line, command) => {
    expect(await run(line)).toBe(`denied by the worker: \`${command}\` matches the deny rule \`rm\``);
    expect(existsSync(victim)).toBe(true);
  });

  it('still runs a start-up file named plainly, a plain pager and the wrappers read here', async () => {
    expect(
      await run(
        [
          "BASH_ENV=/dev/null bash -c 'echo bash-env'",
          'GIT_PAGER=cat git --no-pager version | cut -c1-11',
          'choom -n 0 echo choom',
          'ssh-agent -a ./agent.sock echo agent',
        ].join('\n'),
      ),
    ).toBe('bash-env\ngit version\nchoom\nagent\n');
    expect(existsSync(victim)).toBe(true);
  });

  it('still runs the harmless forms of the same builtins', async () => {
    expect(
      await run(
        [
          'echo $((1 + 2)) $(( 16#ff - $# ))',
          'test -f v && echo found',
          'read line <<< read; echo $line',
          "printf -v out '%s' printed; echo $out",
          '[[ $# -eq 0 && -v HOME ]] && echo tested',
          'declare -A m=([k]=assoc); echo "${m[@]}"',
          'git -c user.name=x --no-pager version | cut -c1-11',
          'chrt -o 0 echo chrt',
        ].join('\n'),
      ),
    ).toBe('3 255\nfound\nread\nprinted\ntested\nassoc\ngit version\nchrt\n');
    expect(existsSync(victim)).toBe(true);
  });
});
