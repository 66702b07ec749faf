/**
 * Finding 4 of issue 48: programs that run other commands were missing from the wrapper list, so
 * `chrt 10 rm x` passed a deny rule on `rm`. Each program named in the issue is read with the
 * options it takes before its command (or, where it takes its command as a string or from its
 * input, makes the line uncertain), and a program known to run its arguments whose options are not
 * read is uncertain. The commands that are installed here are run through a real worker in
 * policy-bash-evaluation.test.ts; these are the deny rules' verdicts on each form.
 */
import { describe, expect, it } from 'vitest';
import { checkCommand, compileDenyRules, createRulePolicy } from '../../src/policy/rules.js';

const denyRm = compileDenyRules([{ prefix: 'rm' }]);
const verdict = (line: string) => checkCommand(line, denyRm);
const matched = { action: 'deny', reason: '`rm x` matches the deny rule `rm`' };
const uncertain = (why: string) => ({
  action: 'deny',
  reason: `cannot check the command with certainty: ${why}`,
});

describe('a deny rule on rm', () => {
  it.each([
    'chrt 10 rm x',
    'chrt -o 0 rm x',
    'chrt --sched-runtime 5 -d 0 rm x',
    'taskset 03 rm x',
    'taskset -c 0,1 rm x',
    'setpriv --reuid 1000 --init-groups rm x',
    'setpriv --nnp -- rm x',
    'unshare -r --mount-proc -f rm x',
    'unshare --propagation private -m rm x',
    'nsenter -t 1 -m -u rm x',
    'nsenter --target 1 --mount=/proc/1/ns/mnt rm x',
    'prlimit --nofile=1024:2048 rm x',
    'systemd-run --user --scope -p MemoryMax=1G rm x',
    'systemd-run -u unit --wait rm x',
    'numactl --interleave=all rm x',
    'numactl -C 0-3 -m 0 rm x',
    'setarch x86_64 -R rm x',
    'setarch -R rm x',
    'linux32 --3gb rm x',
    'fakeroot -- rm x',
    'fakeroot -s state rm x',
    'eatmydata rm x',
    'eatmydata -- rm x',
    "faketime '2020-01-01 00:00:00' rm x",
    'faketime -f +2d rm x',
    'valgrind --tool=memcheck -q rm x',
    'proot -r / -b /tmp -w /tmp rm x',
    'firejail --noprofile --net=none rm x',
    "sg wheel 'rm x'",
    "sg - wheel -c 'rm x'",
    'flock -w 5 /tmp/lock rm x',
    "flock /tmp/lock -c 'rm x'",
    "script -q -c 'rm x' /dev/null",
  ])('denies rm run by %s', async (line) => {
    expect(await verdict(line)).toEqual(matched);
  });

  it.each([
    ['at now + 1 minute', 'at runs commands it reads from standard input or a file'],
    ['batch', 'batch runs commands it reads from standard input or a file'],
    ['sg wheel', 'sg starts a shell that reads its commands from standard input'],
    ['unshare -r', 'unshare starts a shell that reads its commands from standard input'],
    ['nsenter -t 1 -a', 'nsenter starts a shell that reads its commands from standard input'],
    ['fakeroot', 'fakeroot starts a shell that reads its commands from standard input'],
    ['proot -r /', 'proot starts a shell that reads its commands from standard input'],
    ['firejail --net=none', 'firejail starts a shell that reads its commands from standard input'],
    ['setarch x86_64', 'setarch starts a shell that reads its commands from standard input'],
    ['chroot /', 'chroot starts a shell that reads its commands from standard input'],
    ['systemd-run --shell', 'systemd-run starts a shell that reads its commands from standard input'],
    ['sudo -s', 'sudo starts a shell that reads its commands from standard input'],
    ['su -', 'su starts a shell that reads its commands from standard input'],
    ['script out.log', 'script starts a shell that reads its commands from standard input'],
    ["bash -ic 'ls'", 'bash -i is interactive: its prompts and history run what this check does not read'],
    ["firejail -c 'rm x'", 'firejail -c runs a command that this check does not read'],
    [
      "faketime --date-prog ./d '1 day ago' ls",
      'faketime --date-prog runs a command that this check does not read',
    ],
    ["proot -q 'qemu-arm' ls", 'proot -q runs a command that this check does not read'],
    [
      'systemd-run -p ExecStartPre=/bin/rm -p x ls',
      'systemd-run runs the command of a property: ExecStartPre=/bin/rm',
    ],
    ['chrt --new-option 5 rm x', 'chrt has an option this check does not know: --new-option'],
    ['nice --adj 5 rm x', 'nice has an option this check does not know: --adj'],
    ['taskset -Q 1 rm x', 'taskset has an option this check does not know: -Q'],
    ['env --frob rm x', 'env has an option this check does not know: --frob'],
    ['strace -f rm x', 'strace runs a command that this check does not read'],
    ["ssh host 'rm x'", 'ssh runs a command that this check does not read'],
    ['tmux new-session -d rm x', 'tmux runs a command that this check does not read'],
    ['parallel rm ::: x', 'parallel runs a command that this check does not read'],
    ['echo rm x | xargs chrt -o 0', 'chrt runs a command xargs reads from its input'],
  ])('is uncertain about %s', async (line, why) => {
    expect(await verdict(line)).toEqual(uncertain(why));
  });

  it('still allows what those programs do without a command', async () => {
    for (const line of [
      'chrt -p 1234',
      'chrt -m',
      'taskset -p 03 1234',
      'prlimit --pid 1234 --nofile=1024',
      // prlimit refuses a command with a pid: nothing runs.
      'prlimit -n1024 -p1 rm x',
      'setpriv --dump',
      'numactl --hardware',
      'setarch --list',
      'at -l',
      'command -v rm',
      'sudo -l rm',
      'ionice -c 3 -p 1234',
      'flock 9',
      'chrt -o 0 ls',
      'valgrind ./a.out',
    ]) {
      expect(await verdict(line), line).toEqual({ action: 'allow', reason: 'no rule refuses it' });
    }
  });

  it('asks under a session policy where a deny rule denies', async () => {
    const policy = createRulePolicy({ rules: [{ prefix: 'ls', action: 'allow' }], defaultAction: 'allow' });
    expect(
      await policy({ command: 'strace ls', workdir: undefined, background: false, sessionId: 's' }),
    ).toEqual({
      action: 'ask',
      reason: 'cannot check the command with certainty: strace runs a command that this check does not read',
    });
  });
});

/**
 * A review of the wrapper tables found more programs that run their arguments: each is read by
 * its options (its getopt string, or its own loop, in its source) where they can be read, or is
 * uncertain. tini and choom read options after their command too (GNU getopt without `+`): an
 * option word after the command makes the line uncertain, as the words the command gets then
 * depend on the environment (`POSIXLY_CORRECT`) and the C library.
 */
describe('a deny rule on rm, with the programs a review found missing', () => {
  it.each([
    'ssh-agent rm x',
    'ssh-agent -t 60 -a /tmp/agent.sock rm x',
    'dbus-launch --exit-with-session rm x',
    'dbus-launch --config-file session.conf rm x',
    'dbus-run-session -- rm x',
    'dbus-run-session --config-file=session.conf rm x',
    'systemd-inhibit --what=idle --why "a build" rm x',
    'runcon system_u:system_r:unconfined_t:s0 rm x',
    'runcon -t unconfined_t rm x',
    'runcon -c -u user_u rm x',
    'ip netns exec blue rm x',
    'ip vrf exec blue rm x',
    'ip -all netns exec rm x',
    'tini -- rm x',
    'tini -s -e 143 rm x',
    'tini -g -- rm x',
    'dumb-init rm x',
    'dumb-init -c --rewrite 15:2 rm x',
    'gosu nobody rm x',
    'su-exec nobody:nogroup rm x',
    'chpst -u nobody -m 100000 rm x',
    'choom -n 0 rm x',
    'choom -n 0 -- rm x',
    'rlwrap -a -H history rm x',
    'rlwrap --always-readline --logfile=log rm x',
    'lckdo -w lockfile rm x',
    'ifne -n rm x',
    'nq -q rm x',
    'catchsegv rm x',
    '/usr/bin/time -f %e rm x',
    'pkexec --user root rm x',
    'doas -u root rm x',
    'runuser -u nobody -- rm x',
    "su -c 'rm x'",
    "su -lc 'rm x' root",
    "su -s /bin/bash -c 'rm x' nobody",
    "runuser -l nobody -c 'rm x'",
  ])('denies rm run by %s', async (line) => {
    expect(await verdict(line)).toEqual(matched);
  });

  it.each([
    ['perf record -g -- rm x', 'perf runs a command that this check does not read'],
    ['perf stat rm x', 'perf runs a command that this check does not read'],
    ['ltrace -f rm x', 'ltrace runs a command that this check does not read'],
    ['srun -N 2 rm x', 'srun runs a command that this check does not read'],
    ['mpirun -np 2 rm x', 'mpirun runs a command that this check does not read'],
    ['mpiexec -n 2 rm x', 'mpiexec runs a command that this check does not read'],
    ['tsp rm x', 'tsp runs a command that this check does not read'],
    ['tini rm -rf x', 'tini reads options after its command too: -rf'],
    ['choom -n 0 rm -f x', 'choom reads options after its command too: -f'],
    ['ip -batch cmds', 'ip -batch runs the ip commands a file holds'],
    ['ip -force -b -', 'ip -batch runs the ip commands a file holds'],
    ['ip netns e blue rm x', 'ip runs a command that this check does not read'],
    ['ip -n blue netns exec blue rm x', 'ip runs a command that this check does not read'],
    ['ip $args', 'the arguments of ip are computed at run time'],
    ['rlwrap -z ./filter cat', 'rlwrap -z runs a command that this check does not read'],
    [
      'dbus-run-session --dbus-daemon=./d ls',
      'dbus-run-session --dbus-daemon runs a command that this check does not read',
    ],
    [
      'exec -a rm busybox x',
      'exec -a gives the command another name, which a multi-call program such as busybox runs',
    ],
    [
      'chpst -b rm busybox x',
      'chpst -b gives the command another name, which a multi-call program such as busybox runs',
    ],
    ['ssh-agent -x rm x', 'ssh-agent has an option this check does not know: -x'],
  ])('is uncertain about %s', async (line, why) => {
    expect(await verdict(line)).toEqual(uncertain(why));
  });

  it('still allows what those programs do without a command', async () => {
    for (const line of [
      'ssh-agent',
      'ssh-agent -k',
      'dbus-launch --sh-syntax',
      'systemd-inhibit --list',
      'runcon',
      'ip addr show dev eth0',
      'ip netns list',
      'ip -4 -br route',
      'tini --version',
      'dumb-init --version',
      'gosu --help',
      'choom -p 1',
      'lckdo -t lockfile',
      'nq -w',
      'ifne',
      'tini -s -- ls -l',
      'choom -n 0 -- ls -l',
    ]) {
      expect(await verdict(line), line).toEqual({ action: 'allow', reason: 'no rule refuses it' });
    }
  });

  it('reads a program named as a property of an object as any other program', async () => {
    // The tables were plain objects: `constructor -x` found Object's constructor and threw.
    for (const line of ['constructor -x rm', 'toString --x rm', 'hasOwnProperty -p x'])
      expect(await verdict(line), line).toEqual({ action: 'allow', reason: 'no rule refuses it' });
  });
});
