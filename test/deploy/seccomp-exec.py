"""Runs a program under a Docker seccomp profile, as the container engine would load it (through
libseccomp), for the tests that run the container's worker without a container engine
(test/deploy/container-worker.test.ts).

    python3 seccomp-exec.py <profile.json> <program> [args...]

Only what deploy/seccomp.json uses is read: defaultAction, archMap, and rules of names with
SCMP_ACT_ALLOW or SCMP_ACT_ERRNO (errnoRet). Anything else in the profile is refused, so the
emulation never quietly differs from the profile.
"""

import ctypes
import json
import os
import sys

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000
NR_SCMP_ERROR = -1
KNOWN_KEYS = {"comment", "defaultAction", "archMap", "syscalls"}
KNOWN_RULE_KEYS = {"names", "action", "errnoRet", "comment"}


def action(name, errno):
    if name == "SCMP_ACT_ALLOW":
        return SCMP_ACT_ALLOW
    if name == "SCMP_ACT_ERRNO":
        return SCMP_ACT_ERRNO | (errno & 0xFFFF)
    sys.exit(f"seccomp-exec: action {name} is not emulated")


def main():
    profile_file, program = sys.argv[1], sys.argv[2:]
    with open(profile_file) as f:
        profile = json.load(f)
    if set(profile) - KNOWN_KEYS:
        sys.exit(f"seccomp-exec: keys {sorted(set(profile) - KNOWN_KEYS)} are not emulated")
    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_arch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    lib.seccomp_arch_resolve_name.restype = ctypes.c_uint32
    lib.seccomp_arch_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_arch_native.restype = ctypes.c_uint32
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]

    ctx = lib.seccomp_init(action(profile["defaultAction"], 1))
    # As the engine does: the native architecture and the sub-architectures the profile maps to it.
    arch_of = lambda name: lib.seccomp_arch_resolve_name(name.removeprefix("SCMP_ARCH_").lower().encode())
    native = lib.seccomp_arch_native()
    for entry in profile.get("archMap", []):
        if arch_of(entry["architecture"]) != native:
            continue
        for sub in entry.get("subArchitectures") or []:
            if lib.seccomp_arch_add(ctx, arch_of(sub)) != 0:
                sys.exit(f"seccomp-exec: cannot add the architecture {sub}")
    for rule in profile["syscalls"]:
        if set(rule) - KNOWN_RULE_KEYS:
            sys.exit(f"seccomp-exec: rule keys {sorted(set(rule) - KNOWN_RULE_KEYS)} are not emulated")
        act = action(rule["action"], rule.get("errnoRet", 1))
        for name in rule["names"]:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            # As the engine does: a name this libseccomp does not know is skipped.
            if nr == NR_SCMP_ERROR:
                continue
            if lib.seccomp_rule_add(ctx, act, nr, 0) != 0:
                sys.exit(f"seccomp-exec: cannot add the rule for {name}")
    if lib.seccomp_load(ctx) != 0:
        sys.exit("seccomp-exec: cannot load the filter")
    os.execvp(program[0], program)


main()
