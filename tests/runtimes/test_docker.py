"""The Docker runtime on the real engine: conformance, case tables, hostile programs, faults.

Needs a Docker daemon and the images (``verifiers images build --offline``); under CI=true
a missing daemon or image fails instead of skipping.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

import docker
import verifiers
from verifiers import Status
from verifiers._async import run_sync
from verifiers.api import prepare_jobs
from verifiers.core import CodeVerifier, Options, Workspace
from verifiers.images import DEFAULT_IMAGE
from verifiers.languages.rust import RUST, RustLanguage
from verifiers.limits import Limits
from verifiers.registry import get_language
from verifiers.runtimes import DockerRuntime, LocalRuntime
from verifiers.runtimes.docker import OWNER_LABEL
from verifiers.specs import StdioCase, StdioTests
from verifiers.testing.cases import Case, case_tables
from verifiers.testing.conformance import RUNTIME_CHECKS, Check
from verifiers.testing.hostile import HOSTILE, Hostile

from ..conftest import need
from ..test_hostile import Host, attack, host  # noqa: F401  (the fixture)
from ..test_judges_any_language import JAVA_VALIDATOR, RUST_CHECKER, judged
from .test_isolation import MEDDLE, SUM, THREADS, memory_bomb

CASES = [(lang, case) for lang, table in case_tables().items() for case in table]
# The whole battery in Python and JavaScript; in Go, Rust, C, C++ and Java (which compile
# every attack first) the attacks the Docker issue names, to keep this file within a few
# minutes.
CORE_ATTACKS = ("fork_bomb", "heap_bomb", "disk_fill", "network_local", "daemon")
HOSTILE_CASES = [
    (lang, case)
    for lang in ("python", "javascript", "go", "rust", "c", "cpp", "java")
    for case in HOSTILE[lang]
    if lang in ("python", "javascript") or case.kind in CORE_ATTACKS
]
GOOD = "def add(a, b):\n    return a + b\n"
TESTS = {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"}


def _has_sdk() -> bool:
    try:
        import docker  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def docker_runtime() -> Iterator[DockerRuntime]:
    need(_has_sdk(), "the docker Python package is not installed (pip install '.[docker]')")
    rt = DockerRuntime(image=DEFAULT_IMAGE)
    verdict = rt.check()
    need(verdict.available, f"the docker runtime is unavailable: {verdict.detail}")
    yield rt
    verifiers.close_idle_sandboxes()


@pytest.fixture(scope="module")
def gvisor_runtime() -> Iterator[DockerRuntime]:
    """Containers under gVisor's runsc (``scripts/gvisor.sh`` installs and registers it)."""
    need(_has_sdk(), "the docker Python package is not installed (pip install '.[docker]')")
    rt = DockerRuntime(image=DEFAULT_IMAGE, docker_runtime="runsc")
    verdict = rt.check()
    need(verdict.available, f"the docker runtime under runsc is unavailable: {verdict.detail}")
    yield rt
    verifiers.close_idle_sandboxes()


def _our_containers(rt: DockerRuntime) -> list[str]:
    owner = f"{os.uname().nodename}:{os.getpid()}"
    found = rt._docker().containers.list(all=True, filters={"label": f"{OWNER_LABEL}={owner}"})
    return [c.id for c in found]


# --- the runtime conformance suite ------------------------------------------------------------


@pytest.mark.parametrize("check", RUNTIME_CHECKS, ids=lambda c: c.__name__)
def test_conformance(docker_runtime: DockerRuntime, check: Check) -> None:
    asyncio.run(check(docker_runtime))


@pytest.mark.parametrize("check", RUNTIME_CHECKS, ids=lambda c: c.__name__)
def test_conformance_under_gvisor(gvisor_runtime: DockerRuntime, check: Check) -> None:
    asyncio.run(check(gvisor_runtime))


# --- every language's case table: the same verdicts as on the local runtime ---------------------


@pytest.mark.parametrize(
    ("language", "case"), CASES, ids=[f"{lang}-{c.kind}:{c.name}" for lang, c in CASES]
)
def test_case(docker_runtime: DockerRuntime, language: str, case: Case) -> None:
    result = verifiers.score(
        language,
        case.completion,
        case.tests,
        limits=case.limits,
        runtime=docker_runtime,
        stop_on_failure=False,
    )
    assert result.status is case.expected, result.feedback
    if case.passed is not None:
        assert result.passed == case.passed
    assert result.infra_error is False
    assert result.runtime == "docker"


# --- hostile programs: the container holds, the host stays --------------------------------------


@pytest.mark.parametrize(
    ("language", "case"),
    HOSTILE_CASES,
    ids=[f"{lang}-{case.kind}" for lang, case in HOSTILE_CASES],
)
def test_hostile_program(
    docker_runtime: DockerRuntime,
    host: Host,  # noqa: F811
    language: str,
    case: Hostile,
) -> None:
    attack(docker_runtime, host, language, case)
    assert _our_containers(docker_runtime) == [], "containers left behind"


@pytest.mark.parametrize(
    ("language", "case"),
    HOSTILE_CASES,
    ids=[f"{lang}-{case.kind}" for lang, case in HOSTILE_CASES],
)
def test_hostile_program_under_gvisor(
    gvisor_runtime: DockerRuntime,
    host: Host,  # noqa: F811
    language: str,
    case: Hostile,
) -> None:
    attack(gvisor_runtime, host, language, case)
    assert _our_containers(gvisor_runtime) == [], "containers left behind"


@pytest.mark.parametrize("oci", ["runc", "runsc"])
def test_a_memory_bomb_of_many_processes_is_the_programs_memory_limit(
    request: pytest.FixtureRequest, oci: str
) -> None:
    """Eight processes each under their own limit, together over the container's memory.

    Under runc the kernel kills a program in the container's group; under gVisor the host
    kills the gVisor kernel with it. Either way the verdict is the program's.
    """
    rt = request.getfixturevalue("gvisor_runtime" if oci == "runsc" else "docker_runtime")
    r = verifiers.score(
        "python",
        memory_bomb(8),
        {"inputs": [""], "outputs": [""]},
        runtime=rt,
        limits={
            "timeout_s": 20,
            "memory_mb": 300,
            "build_memory_mb": 300,
            "max_processes": 16,
            "disk_mb": 16,
        },
    )
    assert r.status is Status.MEMORY_LIMIT, r.feedback
    assert r.infra_error is False
    after = verifiers.score("python", GOOD, TESTS, runtime=rt)
    assert after.status is Status.PASSED, after.feedback


# --- the pool: reuse only after a proven reset ----------------------------------------------------

_LEAVE = """import os, subprocess, time
open('/sandbox/left-behind', 'w').write('x')
open('/tmp/left-behind', 'w').write('x')
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
print(open('/proc/self/cgroup').read().split('/')[-1].strip())
"""
_LOOK = """import os
me = os.getpid()
others = []
for p in os.listdir('/proc'):
    if p.isdigit() and int(p) not in (1, me):
        try:
            line = open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()
        except OSError:
            continue
        if '/opt/verifiers/agent.py' not in line:  # the supervisor's zygote is the sandbox's
            others.append(line)
files = [f for d in ('/sandbox', '/tmp', '/dev/shm') for f in os.listdir(d)]
print(open('/proc/self/cgroup').read().split('/')[-1].strip())
print('processes', others)
print('files', files)
"""


def test_a_pooled_container_is_clean_for_the_next_program() -> None:
    rt = DockerRuntime(image=DEFAULT_IMAGE, pool_size=1)
    verdict = rt.check()
    need(verdict.available, f"the docker runtime is unavailable: {verdict.detail}")
    stdio = {"inputs": [""], "outputs": ["?"]}
    first = verifiers.score("python", _LEAVE, stdio, runtime=rt)
    time.sleep(1.0)  # the reset runs after the result is out
    second = verifiers.score("python", _LOOK, stdio, runtime=rt)
    try:
        container_a = first.tests[0].actual.strip()
        container_b, processes, files = second.tests[0].actual.strip().splitlines()
        # The same container served both programs...
        assert container_a and container_a == container_b, (first.feedback, second.feedback)
        assert rt.stats["reused"] >= 1
        # ...and the second saw nothing of the first: no process, no file.
        assert processes == "processes []", processes
        assert files == "files []", files
    finally:
        verifiers.close_idle_sandboxes()


def test_containers_of_a_killed_process_are_removed_by_the_next() -> None:
    # A process killed mid-run leaves its pooled containers running (their agents wait on
    # an input nobody closes); the next process's first use of Docker removes them.
    rt = DockerRuntime(image=DEFAULT_IMAGE, pool_size=1)
    verdict = rt.check()
    need(verdict.available, f"the docker runtime is unavailable: {verdict.detail}")
    one = "{'inputs': [''], 'outputs': ['1']}"
    child = (
        "import os, signal, verifiers\nfrom verifiers.runtimes import DockerRuntime\n"
        f"rt = DockerRuntime(image={DEFAULT_IMAGE!r}, pool_size=1)\n"
        f"r = verifiers.score('python', 'print(1)', {one}, runtime=rt)\n"
        "print(r.status.value, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.stdout.strip() == "passed", done.stderr[-2000:]
    client = docker.from_env()
    owned = {"label": "org.verifiers.owner"}
    left = {
        c.id
        for c in client.containers.list(all=True, filters=owned)
        if not _owner_alive(c.labels["org.verifiers.owner"])
    }
    assert left, "the killed process left no container to remove"
    fresh = DockerRuntime(image=DEFAULT_IMAGE, pool_size=1)
    two = {"inputs": [""], "outputs": ["2"]}
    assert verifiers.score("python", "print(2)", two, runtime=fresh).ok
    assert not left & {c.id for c in client.containers.list(all=True, filters=owned)}
    verifiers.close_idle_sandboxes()


def _owner_alive(owner: str) -> bool:
    machine, _, pid = owner.rpartition(":")
    if machine != socket.gethostname() or not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- faults: sandbox_error, never the program's fault; then it works again -----------------------


def test_a_container_killed_mid_run_is_a_sandbox_error_and_the_pool_heals() -> None:
    rt = DockerRuntime(image=DEFAULT_IMAGE, pool_size=1)
    need(rt.check().available, "the docker runtime is unavailable")
    slow = "import time\ntime.sleep(3)\n" + GOOD
    stop = threading.Event()

    def killer() -> None:
        client = rt._docker()
        while not stop.is_set():
            for cid in _our_containers(rt):
                with contextlib.suppress(Exception):
                    client.api.kill(cid)
            time.sleep(0.2)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        killed = verifiers.score("python", slow, TESTS, runtime=rt)
    finally:
        stop.set()
        thread.join()
    assert killed.status is Status.SANDBOX_ERROR, killed.feedback
    assert killed.infra_error
    assert "not the program's fault" in killed.feedback
    started = rt.stats["started"]
    # The pool replaces what it lost: the next verifications work.
    for _ in range(3):
        assert verifiers.score("python", GOOD, TESTS, runtime=rt).status is Status.PASSED
    assert rt.stats["started"] > started
    verifiers.close_idle_sandboxes()
    assert _our_containers(rt) == []


def test_a_missing_image_is_a_sandbox_error() -> None:
    rt = DockerRuntime(image="verifiers/no-such-image:latest")
    verdict = rt.check()
    if "not reachable" in verdict.detail or "docker Python package" in verdict.detail:
        need(False, verdict.detail)
    assert not verdict.available
    assert "missing" in verdict.detail and "verifiers images build" in verdict.detail
    result = verifiers.score("python", GOOD, TESTS, runtime=rt)
    assert result.status is Status.SANDBOX_ERROR and result.infra_error
    assert "verifiers/no-such-image:latest is missing" in result.feedback


def test_an_unreachable_daemon_is_a_sandbox_error(monkeypatch: pytest.MonkeyPatch) -> None:
    need(_has_sdk(), "the docker Python package is not installed (pip install '.[docker]')")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    rt = DockerRuntime()
    verdict = rt.check()
    assert not verdict.available
    assert "not reachable" in verdict.detail and "/nonexistent/docker.sock" in verdict.detail
    result = verifiers.score("python", GOOD, TESTS, runtime=rt)
    assert result.status is Status.SANDBOX_ERROR and result.infra_error
    assert "Docker daemon is not reachable" in result.feedback


# --- toolchains: the runtime's, and their artefacts never cross runtimes -------------------------


def test_build_keys_carry_the_runtime_toolchain(
    docker_runtime: DockerRuntime, runtime: LocalRuntime
) -> None:
    lang = RustLanguage()
    spec = lang.parse_tests({"inputs": [""], "outputs": ["1\n"]})
    program = lang.build_program('fn main() { println!("1"); }', spec, [0], Limits())
    assert "{rustc}" in program.build.argv  # type: ignore[union-attr]
    on_docker = CodeVerifier(lang, docker_runtime)._keyed(program).build_key
    on_local = CodeVerifier(lang, runtime)._keyed(program).build_key
    assert on_docker and on_local and on_docker != on_local
    tool = docker_runtime.toolchain(RUST)
    assert tool.placeholders["{rustc}"] == "/usr/bin/rustc"


def test_cached_results_are_per_image(docker_runtime: DockerRuntime, runtime: LocalRuntime) -> None:
    # A result found with one image is never the answer for another image or runtime.
    cache = verifiers.ResultCache()
    python_image = DockerRuntime(image=DEFAULT_IMAGE.replace("/all:", "/python:"))
    need(python_image.check().available, "the verifiers/python image is missing")
    keys = {
        job.result_key(cache)
        for rt in (docker_runtime, python_image, runtime)
        for job in prepare_jobs(
            [{"language": "python", "completion": GOOD, "tests": TESTS}],
            None,
            None,
            rt,
            None,
            None,
        )
    }
    assert len(keys) == 3
    first = verifiers.score("python", GOOD, TESTS, runtime=docker_runtime, cache=cache)
    again = verifiers.score("python", GOOD, TESTS, runtime=docker_runtime, cache=cache)
    other = verifiers.score("python", GOOD, TESTS, runtime=python_image, cache=cache)
    assert not first.cached and again.cached and not other.cached


def test_a_second_image_build_is_cached() -> None:
    from verifiers import images

    rt = DockerRuntime(image=DEFAULT_IMAGE)
    need(rt.check().available, "the docker runtime is unavailable")
    started = time.monotonic()
    report = images.build(offline=True, log=lambda _: None)
    assert report.seconds == {}, f"rebuilt {sorted(report.seconds)}: the images were not current"
    assert time.monotonic() - started < 60


def test_a_program_cannot_change_a_pooled_containers_supervisor() -> None:
    rt = DockerRuntime(image=DEFAULT_IMAGE, pool_size=1)
    verdict = rt.check()
    need(verdict.available, f"the docker runtime is unavailable: {verdict.detail}")
    try:
        meddler = verifiers.score("python", MEDDLE, SUM, runtime=rt)
        assert meddler.status is Status.PASSED, meddler.feedback
        assert "prlimit 1" in meddler.tests[0].stderr  # EPERM: the supervisor is another uid
        time.sleep(1.0)  # the reset runs after the result is out
        after = verifiers.score("python", THREADS, SUM, runtime=rt, limits={"timeout_s": 10})
        assert after.status is Status.PASSED, after.feedback
        assert rt.stats["reused"] >= 1 and rt.stats["discarded"] == 0, rt.stats
    finally:
        verifiers.close_idle_sandboxes()


def test_workspace_files_in_and_out_of_a_container(docker_runtime: DockerRuntime) -> None:
    verifier = CodeVerifier(get_language("python"), docker_runtime)
    workspace = Workspace(files={"d/in.txt": b"given"}, fetch=("out.txt", "/tmp/t", "link"))
    code = (
        "import os\nprint(open('d/in.txt').read())\nopen('out.txt', 'w').write('made')\n"
        "open('/tmp/t', 'w').write('tmp')\nos.symlink('/opt/verifiers/agent.py', 'link')\n"
    )
    spec = StdioTests(cases=[StdioCase(input="", output="given\n")])
    options = Options(limits=Limits(timeout_s=5), extract=False, workspace=workspace)
    result = run_sync(verifier.verify(code, spec, options))
    assert result.ok, result.feedback
    assert workspace.fetched == {"out.txt": b"made", "/tmp/t": b"tmp"}
    assert workspace.skipped["link"].startswith("not a regular file")


@pytest.mark.parametrize("language", ["java", "rust"])
def test_a_checker_in_any_language_judges_in_a_container(
    docker_runtime: DockerRuntime, language: str
) -> None:
    """A judge's toolchain comes from the image too: built by its language's own build."""
    source, protocol = {"java": (JAVA_VALIDATOR, "kattis"), "rust": (RUST_CHECKER, "testlib")}[
        language
    ]
    spec = judged(language, source, protocol)
    right = verifiers.score(
        "python", "print(sum(map(int, input().split())))", spec, runtime=docker_runtime
    )
    assert right.status is Status.PASSED, right.feedback
    wrong = verifiers.score("python", "print(0)", spec, runtime=docker_runtime)
    assert wrong.status is Status.FAILED and not wrong.infra_error, wrong.feedback
    assert "wrong answer" in wrong.tests[0].message
