import { describe, expect, it } from 'vitest';
import { loadBashGrammar } from '../../src/policy/bash-grammar.js';
import { splitWith } from '../../src/policy/split-commands.js';

const grammar = await loadBashGrammar();
const splitCommands = (line: string) => splitWith(grammar, line);

/** Each simple command's words as written (leading assignments dropped), joined by spaces. */
const commands = (line: string) => splitCommands(line).commands.map((unit) => unit.layers[0]?.join(' '));
/** Every layer of every simple command: what rules are held against. */
const layers = (line: string) =>
  splitCommands(line).commands.flatMap((unit) => unit.layers.map((l) => l.join(' ')));
const uncertain = (line: string) => splitCommands(line).uncertain;

describe('splitCommands', () => {
  it('splits lists and pipelines into their simple commands', () => {
    expect(commands('a && b || c; d | e & f |& g')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(commands('echo one\necho two\n\n')).toEqual(['echo one', 'echo two']);
    expect(uncertain('a && b || c; d | e & f')).toEqual([]);
  });

  it('keeps quoted and escaped separators inside their word', () => {
    expect(commands(`echo 'a; rm x' "b && c" d\\;e`)).toEqual(['echo a; rm x b && c d;e']);
    expect(commands('echo "a\nb"')).toEqual(['echo a\nb']);
  });

  it('removes quotes and escapes from command names, as bash does', () => {
    expect(commands(`\\rm -rf x; 'rm' y; "r"m z; r''m w`)).toEqual(['rm -rf x', 'rm y', 'rm z', 'rm w']);
    expect(commands(`$'\\x72\\155' -rf /`)).toEqual(['rm -rf /']);
  });

  it('finds commands in command substitutions, backquotes and process substitutions', () => {
    expect(commands('echo "$(curl x | sh)" `id`')).toEqual([
      'curl x',
      'sh',
      'id',
      'echo $(curl x | sh) `id`',
    ]);
    expect(commands('diff <(sort a) >(tee b)')).toEqual(['sort a', 'tee b', 'diff <(sort a) >(tee b)']);
    expect(commands('echo $(echo $(rm -rf /))')).toContain('rm -rf /');
    expect(commands('echo `echo \\`rm x\\``')).toContain('rm x');
  });

  it('finds commands in subshells, groups and function bodies', () => {
    expect(commands('(cd a; make) | tee x')).toEqual(['cd a', 'make', 'tee x']);
    expect(commands('{ a; b; } > out')).toEqual(['a', 'b']);
    expect(commands('f() { rm -rf /; }; f')).toEqual(['rm -rf /', 'f']);
    expect(commands('function g { shred x; }')).toEqual(['shred x']);
  });

  it('finds commands in if, while, for and case', () => {
    expect(commands('if test -f x; then rm x; elif true; then :; else echo no; fi')).toEqual([
      'test -f x',
      'rm x',
      'true',
      ':',
      'echo no',
    ]);
    expect(commands('while read l; do echo "$l"; done < file')).toEqual(['read l', 'echo $l']);
    expect(commands('for f in $(ls); do rm "$f"; done')).toEqual(['ls', 'rm $f']);
    expect(commands('for ((i=0; i<3; i++)); do echo $i; done')).toEqual(['echo $i']);
    expect(commands('case $x in a) rm y;; b|c) ls;; (*) pwd;; esac; after')).toEqual([
      'rm y',
      'ls',
      'pwd',
      'after',
    ]);
    expect(commands('[[ -f x && $(id -u) == 0 ]] && echo root')).toEqual(['id -u', 'echo root']);
  });

  it('drops leading assignments, and finds the substitutions in them', () => {
    expect(commands('FOO=1 BAR="a b" make')).toEqual(['make']);
    expect(commands('X=$(rm -rf /)')).toEqual(['rm -rf /']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
    expect(commands('arr=(a $(rm z) b); echo ${arr[@]}')).toEqual(['rm z', 'echo ${arr[@]}']);
    // A quoted name is no assignment: bash runs a command called `FOO=1`.
    expect(commands('"FOO=1" cmd')).toEqual(['FOO=1 cmd']);
  });

  it('looks through wrappers such as sudo, env, nohup, timeout and xargs', () => {
    expect(layers('sudo -u root rm -rf /')).toEqual(['sudo -u root rm -rf /', 'rm -rf /']);
    expect(layers('env -i PATH=/bin FOO=bar nice -n 5 timeout -s KILL 10 git push')).toEqual([
      'env -i PATH=/bin FOO=bar nice -n 5 timeout -s KILL 10 git push',
      'nice -n 5 timeout -s KILL 10 git push',
      'timeout -s KILL 10 git push',
      'git push',
    ]);
    expect(layers('nohup time -p stdbuf -oL command exec xargs -n1 -I{} curl {}')).toContain('curl {}');
    expect(layers('/usr/bin/sudo -- /bin/rm x')).toEqual(['/usr/bin/sudo -- /bin/rm x', '/bin/rm x']);
    expect(layers('chrt -o 0 taskset -c 1 setpriv --nnp unshare -f prlimit --nofile=8 make')).toEqual([
      'chrt -o 0 taskset -c 1 setpriv --nnp unshare -f prlimit --nofile=8 make',
      'taskset -c 1 setpriv --nnp unshare -f prlimit --nofile=8 make',
      'setpriv --nnp unshare -f prlimit --nofile=8 make',
      'unshare -f prlimit --nofile=8 make',
      'prlimit --nofile=8 make',
      'make',
    ]);
    expect(layers('command -v rm')).toEqual(['command -v rm']);
  });

  it("skips git's global options, and reads a pager git -c sets as a script", () => {
    expect(layers('git -C repo --no-pager -c user.name=x push -f')).toEqual([
      'git -C repo --no-pager -c user.name=x push -f',
      'git push -f',
    ]);
    expect(layers('git -c core.pager=less log')).toEqual(['git -c core.pager=less log', 'git log', 'less']);
    expect(uncertain('git -c alias.p=push p')).toEqual([
      'git -c sets an alias, which can stand for another git command: alias.p=push',
    ]);
  });

  it('parses the strings bash -c, sh -c, eval, su -c, env -S and watch run', () => {
    expect(commands(`bash -c 'rm y; ls'`)).toEqual(['bash -c rm y; ls', 'rm y', 'ls']);
    expect(commands(`sh -ec "curl x | sh"`)).toEqual(['sh -ec curl x | sh', 'curl x', 'sh']);
    expect(commands(`bash -o pipefail -lc 'make'`)).toContain('make');
    expect(commands(`eval "rm -rf" /tmp/x`)).toEqual(['eval rm -rf /tmp/x', 'rm -rf /tmp/x']);
    expect(commands(`su -c 'reboot' root`)).toContain('reboot');
    expect(commands(`env -S 'rm -rf' /`)).toContain('rm -rf /');
    expect(commands(`watch -n 1 'ps aux; free'`)).toEqual(['watch -n 1 ps aux; free', 'ps aux', 'free']);
    expect(commands(`find . -name '*.o' -exec rm {} \\; -exec sh -c 'shred "$1"' _ {} +`)).toEqual([
      `find . -name *.o -exec rm {} ; -exec sh -c shred "$1" _ {} +`,
      'rm {}',
      'sh -c shred "$1" _ {}',
      'shred $1',
    ]);
    expect(commands(`bash -c "bash -c 'sh -c \\"rm -rf /\\"'"`)).toContain('rm -rf /');
  });

  it('reads unquoted here-documents for substitutions and leaves quoted ones alone', () => {
    expect(commands('cat <<EOF > f\nhello $(whoami)\nEOF\necho done')).toEqual([
      'cat',
      'whoami',
      'echo done',
    ]);
    expect(commands("cat <<'EOF'\n$(nope)\nEOF\nls")).toEqual(['cat', 'ls']);
    expect(commands('cat <<-EOF\n\t`id`\n\tEOF\nls')).toEqual(['cat', 'id', 'ls']);
    // Two here-documents on one command are beyond the grammar: uncertain, and each line of the
    // second body is read as a command (what bash may run is among them).
    expect(commands('cat <<A <<B\na\nA\n$(b)\nB\nls')).toEqual(['cat', 'b', '$(b)', 'B', 'ls']);
    expect(uncertain('cat <<A <<B\na\nA\n$(b)\nB\nls')).toEqual([
      'bash syntax the grammar cannot read: `<`',
      'the command name is computed at run time: $(b)',
    ]);
    expect(uncertain('cat <<EOF\nhello\nEOF')).toEqual([]);
  });

  it('tells arithmetic from subshells as bash does', () => {
    expect(commands('echo $((1 + 2)); ((x++))')).toEqual(['echo $((1 + 2))']);
    // Bash reads `$((echo hi) )` as a substitution of a subshell; the grammar fails on it, so the
    // line is uncertain, and the words it could not read count as a command.
    expect(commands('echo $((echo hi) )')).toEqual(['echo', 'echo hi']);
    expect(uncertain('echo $((echo hi) )')).toEqual(['bash syntax the grammar cannot read: `$((echo hi) )`']);
    expect(commands('echo $(( $(rm x) + 1 ))')).toEqual(['rm x', 'echo $(( $(rm x) + 1 ))']);
  });

  it('ignores comments', () => {
    expect(commands('echo hi # ; rm x\nls')).toEqual(['echo hi', 'ls']);
    expect(commands('echo a#b')).toEqual(['echo a#b']);
  });

  it('reports what it cannot read with certainty', () => {
    expect(uncertain("echo 'unterminated")).toEqual(['an unterminated single quote']);
    expect(uncertain('echo "unterminated')).toEqual(['an unterminated double quote']);
    expect(uncertain('echo $(ls')).toEqual(['a command substitution without its closing `)`']);
    expect(uncertain('echo `ls')).toEqual(['an unterminated backquote']);
    expect(uncertain('ls )')).toEqual(['an unmatched `)`']);
    expect(uncertain('cat <<EOF\nno end')).toEqual(['a here-document without its closing line `EOF`']);
    expect(uncertain('cat <<EOF')).toEqual(['a here-document without its body']);
    // A delimiter is never expanded: `$X` ends at the line `$X`, as bash and the grammar read it.
    expect(uncertain('cat <<$X\n$X')).toEqual([]);
    expect(uncertain('$CMD --flag')).toEqual(['the command name is computed at run time: $CMD']);
    expect(uncertain('"$(echo rm)" -rf /')).toEqual(['the command name is computed at run time: $(echo rm)']);
    // The grammar takes a leading `{` for a group and fails: uncertain all the same.
    expect(uncertain('{rm,-rf,/}')).toEqual(['bash syntax the grammar cannot read: `{rm,-rf,/}`']);
    expect(uncertain('x{rm,-rf,/}')).toEqual(['the command name is a pattern bash may expand: x{rm,-rf,/}']);
    expect(uncertain('/bin/r? -rf /')).toEqual(['the command name is a pattern bash may expand: /bin/r?']);
    expect(uncertain('eval "$(ssh-agent -s)"')).toEqual(['eval runs a string computed at run time']);
    expect(uncertain('bash -c "$SCRIPT"')).toEqual(['bash runs a string computed at run time']);
    expect(uncertain('sudo $OPTS rm x')).toEqual(['the options of sudo are computed at run time']);
  });

  it('still reports the commands it found when it is uncertain', () => {
    const split = splitCommands('rm -rf / ; echo "oops');
    expect(split.commands.map((unit) => unit.layers[0]?.join(' '))).toEqual(['rm -rf /', 'echo oops']);
    expect(split.uncertain).toEqual(['an unterminated double quote']);
  });

  it('gives up on nesting too deep to check, saying so', () => {
    const deep = `${'$('.repeat(100)}rm x${')'.repeat(100)}`;
    expect(uncertain(deep)).toEqual(['the command nests too deeply to check']);
  });

  it('stays linear on long and hostile input', () => {
    const started = Date.now();
    splitCommands('echo $(( '.repeat(2000));
    splitCommands('a; '.repeat(50_000));
    splitCommands(`${'"'.repeat(10_001)}`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

/**
 * What bash evaluates beyond a command's words (bash-evaluation.ts): each line below ran `rm` under
 * a deny rule on bash 5.2, or runs nothing bash could hide (checked with a stand-in `rm` on PATH).
 */
describe('splitCommands on what bash evaluates itself', () => {
  it('is uncertain where bash evaluates a value set elsewhere as code, saying why', () => {
    const run = 'arithmetic on a value known only at run time';
    const cases: [string, string][] = [
      ['x=$1; echo $((x + 1))', `${run}: $((x + 1))`],
      ['echo $[x]', `${run}: $[x]`],
      ['(( i++ ))', `${run}: (( i++ ))`],
      ['for ((i = 0; i < n; i++)); do :; done', `${run}: for ((i = 0; i < n; i++))`],
      ["let 'y = x'", `${run}: y = x`],
      ['[[ $n -gt 3 ]]', `${run}: $n -gt 3`],
      ['[[ -v a[i] ]]', '[[ -v takes a variable name whose subscript bash evaluates: a[i]'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      ['echo ${a[i]}', `${run}: a[i]`],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      ['echo ${s:1:$n} ${@:n}', `${run}: \${s:1:$n}`],
      ['a[i]=1', `${run}: a[i]`],
      ['a=([i]=1)', `${run}: [i]=1`],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      ['echo ${!name}', 'an indirect expansion reads a variable named at run time: ${!name}'],
      [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
        'echo "${p@P}"',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
        'the @P transformation expands a value as a prompt, running its commands: ${p@P}',
      ],
      ['read -r "$name"', 'read takes a variable name computed at run time: $name'],
      ["printf -v 'a[i]' %s y", 'printf -v takes a variable name whose subscript bash evaluates: a[i]'],
      ["unset -v 'a[i]'", 'unset takes a variable name whose subscript bash evaluates: a[i]'],
      ['declare -i n', 'declare -i makes each later assignment arithmetic: declare -i n'],
      ['local -n ref=$1', 'local -n names a variable bash evaluates at each use: ref=$1'],
      ["declare -a a='([i]=1)'", `${run}: [i]=1`],
      ["PS4='+ $(date) '", "PS4 is expanded as a prompt each time bash traces a command: PS4='+ $(date) '"],
      [
        'shopt -s -o histexpand',
        'history expansion can run a command the line does not show: shopt -s -o histexpand',
      ],
      [
        'set -o history -o histexpand',
        'history expansion can run a command the line does not show: set -o history -o histexpand',
      ],
      ['GIT_CONFIG_KEY_0=$k git status', 'GIT_CONFIG_KEY_0 names a git configuration key at run time'],
      ['GIT_CONFIG_KEY_1=core.editor git commit', 'GIT_CONFIG_KEY_1 sets a command git runs: core.editor'],
      ['git --config-env=core.pager=PAGER log', 'git --config-env sets a command git runs: core.pager=PAGER'],
    ];
    for (const [line, reason] of cases) expect(uncertain(line)[0], line).toBe(reason);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
    expect(uncertain('echo ${s:1:$n} ${@:n}')).toHaveLength(2);
  });

  it('stays certain where bash evaluates only numbers, or refuses the name', () => {
    for (const line of [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      'echo $((1 + 2)) $(( 0x1f | 8#17 | 2#101 | 64#z )) $(( $# + $? + ${#x} + ${#a[@]} ))',
      '(( 3 > 2 ))',
      'for ((;;)); do break; done',
      '[[ $# -eq 0 && -v HOME && $x == y ]]',
      '[ "$x" -eq 1 ] && test "$y" -lt 2',
      'read -r -p "name: " line; read -a words',
      'printf -v out %s y; wait -n -p pid',
      'unset -f f; unset x y',
      'declare -A m=([k]=v); declare -a arr=(1 2); local x=1; declare -n r=x',
      "export 'a[$(rm x)]=1'; readonly 'a[$(rm x)]'",
      "getopts ab 'a[$(rm x)]'; mapfile 'a[$(rm x)]'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
      'echo ${a[0]} ${a[-1]} ${a[@]} ${!a[@]} ${!pre@} ${!#} ${x:1:2} ${x:-d} ${x@Q} ${x@E}',
      `x='a[$(rm x)]'; shift $x; printf %d "$x"; expr $x + 1`,
      'set -x; set -o errexit; shopt -s extglob',
    ])
      expect(uncertain(line), line).toEqual([]);
  });
});

/**
 * What tree-sitter-bash 0.25.1 misreads, and what the splitter makes of it: each case ends
 * uncertain (a policy asks or denies, never allows) or is read again the way bash reads it.
 * docs/PERMISSIONS.md lists them.
 */
describe('splitCommands on what the grammar misreads', () => {
  const isUncertain = (line: string) => expect(uncertain(line), line).not.toEqual([]);

  it('is uncertain where the grammar fails or accepts what bash refuses', () => {
    // tree-sitter-bash #346: a here-document whose first line goes on with `;`, or a redirect then `|`.
    isUncertain("cat <<'EOF'; echo done\nhello\nEOF");
    isUncertain("cat <<'EOF' 2>&1 | tail -5\nhello\nEOF");
    // #305: a here-document operator at the start of the line.
    isUncertain('<<-EOF echo "Hello\n  World"\nEOF');
    // #283: an empty delimiter.
    isUncertain("cat <<''\nbody\n\n");
    // The case ends at the word `esac` of `echo esac`, with no error; rm is still found.
    isUncertain('case x in a) echo esac; rm -rf /;; esac');
    expect(commands('case x in a) echo esac; rm -rf /;; esac')).toContain('rm -rf /');
    // `ina` split into `in` and `a`; `;;` outside a case; `{}` read as an empty group.
    isUncertain('case / ina) rm;; esac');
    isUncertain('ls;; rm x');
    isUncertain('a; {}; b');
    // A word with a blank in it (`sudo { {`), a subshell as a word, words after a group's redirect.
    isUncertain('sudo { { rm; }; rm; }');
    isUncertain('FOO=1 if (rm); then :; fi');
    isUncertain('f() { a; } > f x');
    // A here-document closed at `EOF; done` or past a nested one's end; a body read as code.
    isUncertain('for i in 1; do cat <<EOF\nhi\nEOF; done');
    isUncertain("cat <<EOF\n$(cat <<'EOF'\nx\nEOF\n)\nEOF\n");
    isUncertain('echo <<EOF\n\\(a # <(x ";") | b $(rm))\nEOF\n');
    // A delimiter cut at its quote, and an unterminated backquote inside `${ }`.
    isUncertain("cat <<'EOF'x\nrm y\nEOF'x\n");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash syntax, not a template
    isUncertain('echo ${x:-`}');
    // `\ #` is a word to bash: rm runs; the grammar reads a comment.
    isUncertain('echo \\ # ; rm -rf /');
    expect(commands('echo \\ # ; rm -rf /')).toContain('rm -rf /');
  });

  it('reads again, as bash does, what the grammar splits or drops', () => {
    // Words after a redirection's target are arguments: `rm > f x` runs `rm x`.
    expect(commands('rm > f rm x')).toEqual(['rm rm x']);
    // Adjacent parts the grammar gives as two words are one.
    expect(commands('if a; then FOO=1 b -rf`rm x`; fi')).toEqual(['a', 'rm x', 'b -rf`rm x`']);
    // The `\ ` the grammar drops before a word is its first character.
    expect(commands('echo \\ rm {\\ -rf')).toEqual(['echo  rm { -rf']);
    expect(commands('\\ rm x')).toEqual([' rm x']);
    // Backquotes in a here-document body, and `` `a``b` `` as two substitutions.
    expect(commands('cat <<EOF\n`id`\nEOF\n')).toEqual(['cat', 'id']);
    expect(commands('echo `a``b`')).toEqual(['a', 'b', 'echo `a``b`']);
    // `$((x))` in a here-document is arithmetic, not a subshell.
    expect(commands('cat <<EOF\n$((rm))\nEOF\n')).toEqual(['cat']);
    // `[ ... ]` word for word, and `<(x)` inside `[[ ]]`.
    expect(commands('[ -\\ x ]')).toEqual(['[ - x ]']);
    expect(commands('[[ -n x<(rm y) ]]')).toEqual(['rm y']);
    // A carriage return is part of a word; a newline in double quotes stays.
    expect(commands('true \r# ; rm x')).toEqual(['true \r#', 'rm x']);
    expect(commands('echo "a\nb"')).toEqual(['echo a\nb']);
    // `time for`: the grammar splits the loop into commands; each is still read.
    expect(commands('time for x in a; do rm $x; done')).toEqual(['time for x in a', 'rm $x']);
  });
});
