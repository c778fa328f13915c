"""A seccomp filter for sandboxed programs: system calls no test program needs are refused.

The namespace sandbox leaves the host kernel reachable through every system call. This
filter (classic BPF, built here without libseccomp, loaded by bubblewrap's ``--seccomp``)
takes away the ones that widen that surface and that no stdin/stdout or unit-test program
needs: new namespaces and mounts (a nested user namespace is where most recent
privilege-escalation bugs start), kernel keyrings, eBPF, perf events, userfaultfd,
io_uring, ptrace and cross-process memory access, module loading, kexec, and the clock
and administration calls. They fail with ``EPERM``; ``clone3`` fails with ``ENOSYS`` so
that the C library falls back to ``clone``, whose namespace flags are checked. System
calls of another ABI (x32, or 32-bit calls on a 64-bit kernel) are refused.

Supported machines: x86_64 and aarch64. Elsewhere :func:`seccomp_program` returns None
and the sandbox runs without the filter (``verifiers doctor`` says so).
"""

from __future__ import annotations

import errno
import platform
import struct

# Classic BPF opcodes.
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_X32_SYSCALL_BIT = 0x40000000

# Offsets in struct seccomp_data.
_NR = 0
_ARCH = 4
_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0]

# clone flags that create namespaces (CLONE_NEWNS .. CLONE_NEWNET, CLONE_NEWCGROUP).
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000
_CLONE_NAMESPACES |= 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080

#: The refused system calls (every one that exists on the machine).
DENIED = [
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "syslog",
    "vhangup",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "lookup_dcookie",
]

_X86_64 = {
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
    "chroot": 161, "move_mount": 429, "open_tree": 428, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "mount_setattr": 442, "keyctl": 250, "add_key": 248,
    "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "ptrace": 101,
    "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
    "quotactl": 179, "open_by_handle_at": 304, "name_to_handle_at": 303, "syslog": 103,
    "vhangup": 153, "iopl": 172, "ioperm": 173, "settimeofday": 164, "clock_settime": 227,
    "adjtimex": 159, "lookup_dcookie": 212, "clone": 56, "clone3": 435,
}  # fmt: skip
_AARCH64 = {
    "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
    "move_mount": 429, "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442, "keyctl": 219, "add_key": 217, "request_key": 218,
    "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "ptrace": 117, "process_vm_readv": 270,
    "process_vm_writev": 271, "pidfd_getfd": 438, "kexec_load": 104, "kexec_file_load": 294,
    "init_module": 105, "finit_module": 273, "delete_module": 106, "reboot": 142,
    "swapon": 224, "swapoff": 225, "acct": 89, "quotactl": 60, "open_by_handle_at": 265,
    "name_to_handle_at": 264, "syslog": 116, "vhangup": 58, "settimeofday": 170,
    "clock_settime": 112, "adjtimex": 171, "lookup_dcookie": 18, "clone": 220, "clone3": 435,
}  # fmt: skip

#: machine -> (AUDIT_ARCH value, system call numbers)
ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, _X86_64),
    "aarch64": (0xC00000B7, _AARCH64),
}


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (default: this one) as bytes of ``struct sock_filter``."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, numbers = arch
    denied = sorted({numbers[name] for name in DENIED if name in numbers})
    # Layout: arch check, load nr, x32 check, one test per denied call, clone3, clone, allow.
    # Jump targets are symbolic until the end: "allow", "eperm", "enosys", "clone".
    program: list[tuple[int, int, object, object]] = [
        (_LD_W_ABS, _ARCH, 0, 0),
        (_JEQ_K, audit_arch, 1, 0),
        (_RET_K, _RET_ERRNO | errno.EPERM, 0, 0),
        (_LD_W_ABS, _NR, 0, 0),
        (_JGE_K, _X32_SYSCALL_BIT, "eperm", 0),
    ]
    program += [(_JEQ_K, nr, "eperm", 0) for nr in denied]
    program += [
        (_JEQ_K, numbers["clone3"], "enosys", 0),
        (_JEQ_K, numbers["clone"], "clone", 0),
        (_RET_K, _RET_ALLOW, 0, 0),
    ]
    labels = {"clone": len(program)}
    program += [
        (_LD_W_ABS, _ARG0_LOW, 0, 0),
        (_JSET_K, _CLONE_NAMESPACES, "eperm", 0),
        (_RET_K, _RET_ALLOW, 0, 0),
    ]
    labels["eperm"] = len(program)
    program.append((_RET_K, _RET_ERRNO | errno.EPERM, 0, 0))
    labels["enosys"] = len(program)
    program.append((_RET_K, _RET_ERRNO | errno.ENOSYS, 0, 0))

    out = bytearray()
    for index, (code, k, jt, jf) in enumerate(program):
        jumps = []
        for target in (jt, jf):
            offset = labels[target] - index - 1 if isinstance(target, str) else int(str(target))
            if not 0 <= offset <= 255:
                raise ValueError(f"seccomp jump out of range at instruction {index}")
            jumps.append(offset)
        out += struct.pack("<HBBI", code, jumps[0], jumps[1], k)
    return bytes(out)
