"""The zygote's one-step fork: a candidate is the agent's child without a process between.

``_fork_sibling`` is ``clone(CLONE_PARENT)`` wrapped in Python's own fork hooks; these tests
run it for real in a throwaway interpreter (the agent module is stdlib-only) and check what
the zygote relies on: the new process is its parent's parent's child (waitable there, with
its usage), and the interpreter in it works as after ``os.fork`` (imports, threads, locks).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

import verifiers.runtimes

AGENT = Path(verifiers.runtimes.__file__).parent / "_agent.py"

SCRIPT = textwrap.dedent(
    """
    import importlib.util, os, resource, sys
    spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    r, w = os.pipe()
    middle = os.fork()
    if middle == 0:  # plays the zygote: its child must become this script's
        pid = agent._fork_sibling()
        if pid == 0:
            import json, threading  # a fresh import and a thread work after the fork
            box = []
            t = threading.Thread(target=box.append, args=(json.dumps([os.getppid()]),))
            t.start()
            t.join()
            sum(range(3_000_000))  # some CPU, to be seen in the usage
            os.write(w, box[0].encode())
            os._exit(7)
        os._exit(0 if pid > 0 else 3)
    os.close(w)
    _, status = os.waitpid(middle, 0)
    assert os.WEXITSTATUS(status) == 0, "the zygote's side did not fork"
    reported = os.read(r, 100).decode()
    pid, status, usage = os.wait4(-1, 0)  # this script's child, not the zygote's
    print(reported, os.getpid(), os.WEXITSTATUS(status), usage.ru_utime > 0)
    """
)


def _pidfds() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
        return True
    except (AttributeError, OSError):
        return False


def test_the_one_step_fork_is_used_where_it_works() -> None:
    """x86_64 and aarch64 with pidfds: clone(CLONE_PARENT); anywhere else: forking twice."""
    script = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('agent', sys.argv[1])\n"
        "agent = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(agent)\n"
        "print(agent._clone_works)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(AGENT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    expected = platform.machine() in ("x86_64", "aarch64") and _pidfds()
    assert out.stdout.split() == [str(expected)]


def test_fork_sibling_makes_a_child_of_the_parent() -> None:
    if platform.machine() not in ("x86_64", "aarch64") or not _pidfds():
        # The zygote forks twice here; the fallback is what the test below checks.
        test_fork_sibling_is_refused_where_clone_is_unknown()
        return
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(AGENT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    reported_parent, script_pid, code, used_cpu = out
    assert reported_parent == f"[{script_pid}]"
    assert code == "7"
    assert used_cpu == "True"


def test_fork_sibling_is_refused_where_clone_is_unknown() -> None:
    """Without a known clone number the zygote forks twice (the caller's fallback)."""
    script = textwrap.dedent(
        """
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("agent", sys.argv[1])
        agent = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(agent)
        agent._clone_works = False
        print(agent._fork_sibling())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(AGENT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.split() == ["-1"]
