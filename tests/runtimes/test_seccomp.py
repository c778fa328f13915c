"""The seccomp filter: right system call numbers, refused calls inside the sandbox, nothing else."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import verifiers
from verifiers import Status
from verifiers.runtimes import LocalRuntime
from verifiers.runtimes.seccomp import ARCHES, DENIED, seccomp_program

from ..conftest import need

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}

# Each probe prints the errno of one system call made the raw way (0 when it worked).
PROBE = """
import ctypes, os, threading, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(*args):
    ctypes.set_errno(0)
    libc.syscall(*args)
    return ctypes.get_errno()
nr = {nr}
print("io_uring_setup", errno_of(nr["io_uring_setup"], 1, None))
print("keyctl", errno_of(nr["keyctl"], 0, -1, 0))
print("unshare", errno_of(nr["unshare"], 0x10000000))
print("ptrace", errno_of(nr["ptrace"], 16, 1, 0, 0))
print("bpf", errno_of(nr["bpf"], 0, None, 0))
t = threading.Thread(target=print, args=("thread", 0)); t.start(); t.join()
print("spawn", subprocess.run(["true"]).returncode)
"""


def _probe(rt: LocalRuntime) -> dict[str, int]:
    numbers = ARCHES["x86_64"][1]
    code = PROBE.format(nr={k: numbers[k] for k in DENIED if k in numbers})
    r = verifiers.score("python", code, {"inputs": [""], "outputs": [""]}, runtime=rt)
    lines = r.tests[0].actual.split("\n")
    return {name: int(value) for name, value in (line.split() for line in lines if line.strip())}


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_numbers_match_the_kernel_headers(machine: str) -> None:
    header = HEADERS[machine]
    need(header.is_file(), f"{header} missing: apt-get install linux-libc-dev")
    text = header.read_text()
    for name, number in ARCHES[machine][1].items():
        found = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)", text)
        assert found is not None, f"{name} not in {header}"
        assert int(found.group(1)) == number, (machine, name)


def test_the_program_is_well_formed() -> None:
    program = seccomp_program("x86_64")
    assert program is not None and len(program) % 8 == 0
    assert seccomp_program("sparc") is None


def test_refused_inside_the_sandbox_allowed_without_the_filter() -> None:
    need(Path("/usr/include/x86_64-linux-gnu").is_dir(), "not an x86_64 host")
    with_filter = _probe(LocalRuntime())
    assert {
        k: with_filter[k] for k in ("io_uring_setup", "keyctl", "unshare", "ptrace", "bpf")
    } == {
        "io_uring_setup": 1,
        "keyctl": 1,
        "unshare": 1,
        "ptrace": 1,
        "bpf": 1,
    }
    assert with_filter["thread"] == 0 and with_filter["spawn"] == 0
    # Without the filter the same calls reach the kernel: io_uring_setup then fails on
    # its NULL argument, and (as root) a nested user namespace is created.
    without = _probe(LocalRuntime(seccomp=False))
    assert without["io_uring_setup"] == 14  # EFAULT
    if os.geteuid() == 0:
        assert without["unshare"] == 0


def test_compilers_and_runtimes_work_under_the_filter() -> None:
    for language, code, tests in (
        (
            "javascript",
            "function add(a, b) { return a + b; }",
            {"test": "console.assert(add(1, 2) === 3);"},
        ),
        (
            "go",
            "func Add(a, b int) int {\n    return a + b\n}",
            {
                "test": (
                    'func TestAdd(t *testing.T) {\n    if Add(1, 2) != 3 {\n        t.Fatal("x")\n'
                    "    }\n}\n"
                ),
                "test_setup": 'package main\n\nimport "testing"\n',
            },
        ),
        (
            "rust",
            "fn add(a: i32, b: i32) -> i32 { a + b }",
            {
                "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {\n"
                "        assert_eq!(add(1, 2), 3);\n    }\n}\n"
            },
        ),
    ):
        r = verifiers.score(language, code, tests, runtime=LocalRuntime())
        assert r.status is Status.PASSED, (language, r.feedback)
