"""The Docker runtime: each program runs in a container of a verifiers image.

A container runs the same sandbox agent as the local runtime (``_agent.py``, bind-mounted
read-only from the host at ``/opt/verifiers/agent.py``) as its PID 1, and the host speaks
the same framed protocol to it through the Docker API's attached stream (stdin raw;
stdout and stderr multiplexed with 8-byte frame headers, demultiplexed here). Containers
are created through the ``docker`` Python SDK with:

* ``--network none``, a read-only root filesystem, size-limited tmpfs mounts for the work
  directory (``/sandbox``) and ``/tmp``;
* a memory limit of the program's ``memory_mb`` (its build's, if it builds) plus the
  sandbox's overhead (swap equal to it: no swap), a ``--pids-limit`` of its
  ``max_processes`` plus the overhead's (scaled under gVisor), a CPU quota: what the local
  runtime's cgroups bound, so that ``memory_mb`` means the same on both runtimes;
* every capability dropped but the supervisor's (setuid, setgid, kill, and chown,
  dac_override, dac_read_search, fowner to clean up), ``no-new-privileges``, Docker's
  default seccomp profile. The agent starts as root, becomes the supervisor uid keeping
  only those, and runs programs as the container's own uid (unique on the host while the
  container lives, because ``RLIMIT_NPROC`` counts a uid's processes host-wide when there
  is no user namespace) with no capability at all, and judges as the judge uid;
* optionally ``--runtime=runsc`` (gVisor) for a kernel boundary.

The program's files are read-only to it: the host writes them into a per-container
directory bind-mounted read-only at ``/opt/program``. Toolchains come from the image:
the image's labels (``org.verifiers.tool.NAME``) say where its ``python``, ``node``,
``go``, ``rustc`` and crate and cache directories are, and the runtime resolves a
program's toolchain placeholders to them (see :mod:`verifiers.program`).

**Pooled containers are reused only after a proven reset.** On the engine loop, idle
containers are kept ready (``pool_size`` per scratch-space size). After a program the
agent kills every process in the container, empties ``/sandbox``, ``/tmp``, ``/dev/shm``
and ``/dev/mqueue`` and checks that the container is as new (no process but itself, no
file in those directories, no System V IPC object, no kernel key, its working directory
unchanged), and the host empties the program directory; a container that fails the
check, dies, or served ``max_uses`` programs is removed and replaced. Programs that need
host directories (a large SQLite database) get a container of their own, used once.

Faults are ``sandbox_error`` results, never the program's: an unreachable daemon or a
missing image makes :meth:`DockerRuntime.check` fail and sessions raise
:class:`~verifiers.errors.RuntimeUnavailableError` (checked again after a pause, so
verification resumes once the fault is fixed); a container that dies mid-run raises
:class:`~verifiers.errors.SandboxError`, and the pool starts another.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import shutil
import socket
import struct
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from verifiers._async import in_engine, on_shutdown, run_in_thread
from verifiers.errors import RuntimeUnavailableError, SandboxError
from verifiers.images import BUILD_HINT, DEFAULT_IMAGE, TOOL_LABEL, VERSION_LABEL, sdk
from verifiers.limits import SANDBOX_OVERHEAD_PIDS, SHM_MB, Limits
from verifiers.program import Program, Toolchain, ToolchainSpec
from verifiers.runtimes.base import (
    AgentConnection,
    AgentSession,
    AvailabilityCheck,
    ProbedRuntime,
    UidPool,
    agent_source,
    empty_directory,
    sandbox_environment,
    write_program_files,
)
from verifiers.runtimes.seccomp import seccomp_program

log = logging.getLogger("verifiers.runtimes.docker")
T = TypeVar("T")

PROGRAM_DIR = "/opt/program"
WORK_DIR = "/sandbox"
AGENT_PATH = "/opt/verifiers/agent.py"
#: Label on every container this runtime creates (for finding leftovers).
OWNER_LABEL = "org.verifiers.owner"
UID_BASE = 100_000
#: Most containers alive at once (each has a slot: a program directory).
SLOTS = 4096
#: The agent's and the judges' uids in every container (programs get one of their own).
SUPERVISOR_UID = 99_998
JUDGE_UID = 99_999
#: Capabilities a container keeps: the supervisor's (see the agent).
SUPERVISOR_CAPS = ("CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "KILL", "SETGID", "SETUID")
MAX_USES = 256
#: Under gVisor a container's pids limit counts the host threads and processes of the
#: gVisor kernel (about 43 at rest and 5 for each task it runs here), not the sandbox's
#: own tasks, which RLIMIT_NPROC bounds inside: the host bound is scaled to match.
GVISOR_BASE_PIDS = 64
GVISOR_PIDS_PER_TASK = 8
_STDOUT, _STDERR = 1, 2


@dataclass(frozen=True)
class _Probe:
    ok: bool
    detail: str
    image_id: str = ""
    tools: Mapping[str, str] = field(default_factory=dict)
    #: The OCI runtime is gVisor's runsc (found from the path the engine runs).
    gvisor: bool = False


#: Containers are pooled by what they were made for: scratch space, memory, processes, and
#: the memory of a build (0 for programs without one: their container is not sized for it).
PoolKey = tuple[int, int, int, int]


def _key(limits: Limits, builds: bool) -> PoolKey:
    build = limits.build_memory_mb if builds else 0
    return (limits.disk_mb, limits.memory_mb, limits.max_processes, build)


class _Container:
    """One live container: its agent connection, its slot and what it served."""

    def __init__(self, runtime: DockerRuntime, slot: int, container_id: str, uid_lock: int) -> None:
        self.runtime = runtime
        self.slot = slot
        self.id = container_id
        self.uid_lock = uid_lock
        self.session: AgentSession | None = None
        self.uses = 0
        self.removed = False
        self._sock: socket.socket | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._demux: asyncio.Future[None] | None = None

    @property
    def program_dir(self) -> str:
        return self.runtime._slot_dir(self.slot)

    async def out_of_memory(self, seen: int) -> bool:
        """Whether the container, its agent gone, was killed for memory.

        Docker's flag says a process of the container was: a container whose agent
        reported such a kill is never pooled again, so on one that is, it is this one.
        """
        del seen  # the flag cannot be counted; see above
        return await _blocking(self.runtime._oom_killed, self.id)

    async def remove(self) -> None:
        """Kill and remove the container (its processes die with its PID 1), free its slot."""
        if self.removed:
            return
        self.removed = True
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
        elif self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        try:
            await _blocking(self.runtime._remove_container, self.id)
        finally:
            if self._demux is not None:
                self._demux.cancel()
                with contextlib.suppress(BaseException):
                    await self._demux
            self.runtime._release_slot(self.slot)
            UidPool.give(self.uid_lock)


class DockerRuntime(ProbedRuntime[_Probe]):
    """Runs programs in containers of a verifiers image (see the module documentation).

    Args:
        image: The image (default ``verifiers/all:latest``; build it with
            ``verifiers images build``).
        pool_size: Idle containers kept started per scratch-space size, on the engine
            loop (default: 2; 0 turns the pool off: a container per program).
        memory_mb: Memory of a container (swap equal to it: no swap); default: the
            program's :meth:`~verifiers.Limits.sandbox_memory_mb` (its memory, its scratch
            space and the supervisor's overhead), as the local runtime's cgroups bound it.
        cpus: CPU quota of a container.
        pids_limit: Most processes and threads in a container; default: the program's
            ``max_processes`` plus :data:`~verifiers.limits.SANDBOX_OVERHEAD_PIDS`.
        docker_runtime: OCI runtime (``runsc`` for gVisor; default: the daemon's).
        base_url: Docker daemon address (default: ``DOCKER_HOST``, else the local socket).
            Bind mounts need the daemon on this machine.
        start_timeout_s: How long a container may take to start.
        max_uses: Programs one pooled container serves before it is replaced.
        uid_base: Programs run as uids from ``uid_base`` (one per live container, unique on
            the host: a lock file per uid).
    """

    name = "docker"

    def __init__(
        self,
        *,
        image: str = DEFAULT_IMAGE,
        pool_size: int = 2,
        memory_mb: int | None = None,
        cpus: float = 1.0,
        pids_limit: int | None = None,
        docker_runtime: str | None = None,
        base_url: str | None = None,
        start_timeout_s: float = 60.0,
        max_uses: int = MAX_USES,
        uid_base: int = UID_BASE,
    ) -> None:
        if pool_size < 0:
            raise ValueError(f"pool_size: expected 0 or more, got {pool_size}")
        self.image = image
        self.pool_size = pool_size
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.docker_runtime = docker_runtime
        self.base_url = base_url
        self.start_timeout_s = start_timeout_s
        self.max_uses = max_uses
        self.uid_base = uid_base
        self.uids = UidPool(uid_base, SLOTS, "/run/verifiers-uids")
        self._client: Any = None
        self._availability = AvailabilityCheck(self._run_probe)
        self._lock = threading.Lock()
        self._free_slots = list(range(SLOTS))
        self._root: str | None = None
        self._idle: dict[PoolKey, list[_Container]] = {}
        self._starting: dict[PoolKey, int] = {}
        self._recycling: dict[PoolKey, int] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self._shutdown_hook = False
        self._swept = False
        self._exiting = False
        self._leaked: list[str] = []
        #: Counters: containers started, programs served by a reused container, containers
        #: discarded (failed reset, died, worn out) and removals that failed.
        self.stats = {"started": 0, "reused": 0, "discarded": 0, "remove_failed": 0}

    def __repr__(self) -> str:
        return f"DockerRuntime(image={self.image!r}, pool_size={self.pool_size})"

    # --- the daemon and the image ------------------------------------------------------------

    def _docker(self) -> Any:
        if self._client is None:
            docker = sdk()
            try:
                if self.base_url:
                    self._client = docker.DockerClient(base_url=self.base_url, timeout=120)
                else:
                    self._client = docker.from_env(timeout=120)
            except Exception as err:
                raise RuntimeUnavailableError(
                    f"the Docker daemon is not reachable ({self._where()}): {err}"
                ) from err
        return self._client

    def _where(self) -> str:
        return self.base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"

    def _run_probe(self) -> _Probe:
        try:
            client = self._docker()
            version = client.version()
        except RuntimeUnavailableError as err:
            self._client = None
            return _Probe(False, str(err))
        except Exception as err:
            self._client = None
            return _Probe(False, f"the Docker daemon is not reachable ({self._where()}): {err}")
        errors = sdk().errors
        try:
            image = client.images.get(self.image)
        except errors.ImageNotFound:
            return _Probe(False, f"the image {self.image} is missing: build it with {BUILD_HINT}")
        except Exception as err:
            return _Probe(False, f"could not inspect the image {self.image}: {err}")
        labels = image.labels or {}
        tools = {
            k.removeprefix(TOOL_LABEL): v for k, v in labels.items() if k.startswith(TOOL_LABEL)
        }
        if "python" not in tools:
            return _Probe(
                False, f"{self.image} is not a verifiers image (no {TOOL_LABEL}python label)"
            )
        gvisor = self._gvisor(client)
        try:
            python = run_in_thread(self._trial(_Probe(True, "", image.id, tools, gvisor)))
        except (SandboxError, RuntimeUnavailableError) as err:
            return _Probe(False, f"a container of {self.image} did not start: {err}")
        versions = ", ".join(
            f"{k.removeprefix(VERSION_LABEL)} {v}"
            for k, v in sorted(labels.items())
            if k.startswith(VERSION_LABEL)
        )
        runtime = self.docker_runtime or "default OCI runtime"
        detail = (
            f"Docker {version.get('Version', '?')} ({runtime}); image {self.image} "
            f"({image.short_id}), Python {python}; {versions}"
        )
        return _Probe(True, detail, image.id, tools, gvisor)

    def _gvisor(self, client: Any) -> bool:
        """Whether the OCI runtime containers get is gVisor's ``runsc``."""
        try:
            info = client.info()
        except Exception:
            return False
        name = self.docker_runtime or info.get("DefaultRuntime") or "runc"
        path = str((info.get("Runtimes") or {}).get(name, {}).get("path") or name)
        return os.path.basename(path).startswith("runsc")

    async def _trial(self, probe: _Probe) -> str:
        async with self._cold(Program(files={}, tests=()), Limits(), {}, probe) as session:
            return str(session.info.get("python", "?"))

    def _require(self) -> _Probe:
        probe = self._ensure_probe()
        if not probe.ok:
            raise RuntimeUnavailableError(f"docker runtime unavailable: {probe.detail}")
        if not self._swept:
            # A process killed or crashed left its containers running (their agents wait on
            # an input nobody closes): the first use in this process removes those of this
            # host's processes that are gone.
            self._swept = True
            try:
                removed = self.remove_leftovers()
            except Exception as err:  # the sweep is housekeeping: the run goes on without it
                log.warning("could not remove leftover containers: %s", err)
            else:
                if removed:
                    log.info("removed %d containers left by processes that ended", removed)
        return probe

    def cache_identity(self) -> str:
        """What results depend on beyond the program: the image (by id) and the OCI runtime.

        :class:`~verifiers.ResultCache` keys on it, so results found with one image are
        never answers for another.
        """
        probe = self._ensure_probe()
        image = probe.image_id or f"{self.image} (unavailable)"
        return f"docker {image} {self.docker_runtime or 'runc'}"

    def toolchain(self, spec: ToolchainSpec) -> Toolchain:
        """A language's toolchain as the image provides it (the image's tool labels).

        Raises:
            RuntimeUnavailableError: The daemon or image is unavailable, or the image
                lacks the toolchain.
        """
        probe = self._require()
        values = {}
        for placeholder in spec.placeholders:
            path = probe.tools.get(placeholder.strip("{}"))
            if path is None:
                family = spec.image.family if spec.image is not None else spec.name
                raise RuntimeUnavailableError(
                    f"the image {self.image} has no {spec.name} toolchain; use {DEFAULT_IMAGE} "
                    f"or build it: verifiers images build --offline --only {family}"
                )
            values[placeholder] = path
        return Toolchain(
            spec.name, values, f"docker image {probe.image_id}", (), f"{spec.name} in {self.image}"
        )

    # --- slots: a uid and a program directory per live container -----------------------------

    def _take_slot(self) -> int:
        with self._lock:
            if not self._free_slots:
                raise SandboxError("every container slot is in use")
            return self._free_slots.pop(0)

    def _release_slot(self, slot: int) -> None:
        if self._root is not None:
            # Not _slot_dir: at exit the root may be gone already, and must stay gone.
            with contextlib.suppress(OSError):
                empty_directory(os.path.join(self._root, f"slot-{slot}"))
        with self._lock:
            self._free_slots.append(slot)

    def _slot_dir(self, slot: int) -> str:
        with self._lock:
            if self._root is None:
                self._root = tempfile.mkdtemp(prefix="verifiers-docker-")
                os.chmod(self._root, 0o755)
                atexit.register(self._at_exit)
                agent = os.path.join(self._root, "agent.py")
                with open(agent, "wb") as f:
                    f.write(agent_source())
                os.chmod(agent, 0o444)
            root = self._root
        path = os.path.join(root, f"slot-{slot}")
        os.makedirs(path, mode=0o755, exist_ok=True)
        return path

    # --- containers ----------------------------------------------------------------------------

    def _create(
        self, probe: _Probe, slot: int, uid: int, key: PoolKey, host_paths: tuple[str, ...]
    ) -> str:
        """Create a container (blocking; run in a thread). Returns its id."""
        types = sdk().types
        LogConfig, Mount = types.LogConfig, types.Mount

        disk_mb, memory_mb, processes, build_mb = key
        sandbox = Limits(
            disk_mb=disk_mb, memory_mb=memory_mb, build_memory_mb=max(build_mb, 32)
        ).sandbox_memory_mb(build=build_mb > 0)
        memory = self.memory_mb or sandbox
        tasks = processes + SANDBOX_OVERHEAD_PIDS
        if probe.gvisor:
            tasks = GVISOR_BASE_PIDS + GVISOR_PIDS_PER_TASK * tasks
        pids = self.pids_limit or tasks
        program_dir = self._slot_dir(slot)
        assert self._root is not None
        mounts = [
            Mount(AGENT_PATH, os.path.join(self._root, "agent.py"), type="bind", read_only=True),
            Mount(PROGRAM_DIR, program_dir, type="bind", read_only=True),
            *(Mount(p, p, type="bind", read_only=True) for p in host_paths),
        ]
        python = probe.tools["python"]
        # The SDK's filter in every program, beside Docker's profile for the container
        # (which gVisor does not apply: there the agent's filter is the only one).
        filter_program = seccomp_program()
        seccomp_args = ["--seccomp", filter_program.hex()] if filter_program else []
        # Docker mounts tmpfs noexec unless told: compiled programs run from /sandbox.
        scratch = f"rw,exec,nosuid,nodev,size={disk_mb}m"
        options: dict[str, Any] = {
            "command": [
                python,
                "-s",
                "-B",
                AGENT_PATH,
                "--uid",
                str(uid),
                "--supervisor-uid",
                str(SUPERVISOR_UID),
                "--judge-uid",
                str(JUDGE_UID),
                "--workdir",
                WORK_DIR,
                *seccomp_args,
            ],
            # Root only to become the supervisor, with the supervisor's capabilities alone.
            "user": "0:0",
            "environment": sandbox_environment(python, WORK_DIR),
            "working_dir": WORK_DIR,
            "hostname": "sandbox",
            "network_mode": "none",
            "read_only": True,
            "tmpfs": {
                WORK_DIR: f"{scratch},mode=0755,uid={uid},gid={uid}",
                "/tmp": f"{scratch},mode=1777",
            },
            "shm_size": f"{SHM_MB}m",
            "mounts": mounts,
            "pids_limit": pids,
            "mem_limit": f"{memory}m",
            "memswap_limit": f"{memory}m",
            "nano_cpus": int(self.cpus * 1e9),
            "cap_drop": ["ALL"],
            "cap_add": list(SUPERVISOR_CAPS),
            "security_opt": ["no-new-privileges"],
            "stdin_open": True,
            "tty": False,
            "detach": True,
            "log_config": LogConfig(type="none"),
            "labels": {OWNER_LABEL: f"{socket.gethostname()}:{os.getpid()}"},
        }
        if self.docker_runtime:
            options["runtime"] = self.docker_runtime
        container = self._docker().containers.create(self.image, **options)
        return str(container.id)

    def _attach_and_start(self, container_id: str) -> socket.socket:
        """Attach to the container's stdio (before it starts: nothing is missed), then start it."""
        api = self._docker().api
        raw = api.attach_socket(
            container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
        )
        inner = getattr(raw, "_sock", raw)
        if not isinstance(inner, socket.socket):
            raise RuntimeUnavailableError(
                "the docker runtime needs the daemon's local socket (unix:// or tcp:// without TLS)"
            )
        # Take the descriptor over (detach, not dup: a second descriptor of the same socket
        # left open by the HTTP objects would keep epoll reporting it after asyncio closed
        # ours, a busy loop), then close the HTTP response so its connection is not reused.
        sock = socket.socket(fileno=inner.detach())
        response = getattr(raw, "_response", None)
        if response is not None:
            with contextlib.suppress(Exception):
                response.close()
        try:
            api.start(container_id)
        except Exception:
            sock.close()
            raise
        return sock

    def _oom_killed(self, container_id: str) -> bool:
        api = self._docker().api
        # The engine records the kill when the container has stopped.
        with contextlib.suppress(Exception):
            api.wait(container_id, timeout=5)
        state = api.inspect_container(container_id).get("State") or {}
        return bool(state.get("OOMKilled"))

    def _remove_container(self, container_id: str) -> None:
        errors = sdk().errors
        try:
            self._docker().api.remove_container(container_id, force=True)
        except errors.NotFound:
            pass
        except errors.APIError as err:
            if "already in progress" in str(err):
                return
            # Kept and tried again later; the verification's result does not depend on it.
            self.stats["remove_failed"] += 1
            log.warning("could not remove container %s: %s", container_id[:12], err)
            with self._lock:
                self._leaked.append(container_id)
        except Exception as err:
            self.stats["remove_failed"] += 1
            log.warning("could not remove container %s: %s", container_id[:12], err)
            with self._lock:
                self._leaked.append(container_id)

    async def _start(
        self, probe: _Probe, key: PoolKey, host_paths: tuple[str, ...], files: Program
    ) -> _Container:
        """A started container with the program's files in place and its agent ready."""
        slot = self._take_slot()
        uid, uid_lock = -1, -1
        container: _Container | None = None
        try:
            uid, uid_lock = self.uids.take()
            write_program_files(self._slot_dir(slot), files)
            try:
                cid = await _blocking(self._create, probe, slot, uid, key, host_paths)
            except RuntimeUnavailableError:
                raise
            except Exception as err:
                raise SandboxError(f"could not create a container of {self.image}: {err}") from err
            container = _Container(self, slot, cid, uid_lock)
            try:
                sock = await _blocking(self._attach_and_start, cid)
            except RuntimeUnavailableError:
                raise
            except Exception as err:
                raise SandboxError(f"could not start a container of {self.image}: {err}") from err
            container._sock = sock
            self.stats["started"] += 1
            await self._connect(probe, container, sock)
            return container
        except BaseException:
            if container is not None:
                await container.remove()
            else:
                self._release_slot(slot)
                UidPool.give(uid_lock)
            raise

    async def _connect(self, probe: _Probe, container: _Container, sock: socket.socket) -> None:
        raw_reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        container._writer = writer
        stdout = asyncio.StreamReader(limit=1 << 20)
        python = probe.tools["python"]
        placeholders = {
            "{program_dir}": PROGRAM_DIR,
            "{work_dir}": WORK_DIR,
            "{python}": python,
        }
        conn = AgentConnection(
            None,
            placeholders,
            reader=stdout,
            writer=writer,
            killer=container.remove,
            out_of_memory=container.out_of_memory,
        )
        container._demux = asyncio.ensure_future(_demultiplex(raw_reader, stdout, conn))
        info = await conn.wait_ready(self.start_timeout_s)
        container.session = AgentSession(
            conn, PROGRAM_DIR, WORK_DIR, sandbox_environment(python, WORK_DIR), info
        )

    # --- sessions ------------------------------------------------------------------------------

    def session(
        self, program: Program, limits: Limits
    ) -> contextlib.AbstractAsyncContextManager[AgentSession]:
        """Open a container holding ``program`` (see :class:`~verifiers.protocols.Runtime`)."""
        probe = self._require()
        values: dict[str, str] = {}
        for spec in program.toolchains:
            values.update(self.toolchain(spec).placeholders)
        if self.pool_size and not program.host_paths and in_engine():
            return self._pooled(program, limits, values, probe)
        return self._cold(program, limits, values, probe)

    @contextlib.asynccontextmanager
    async def _cold(
        self, program: Program, limits: Limits, values: Mapping[str, str], probe: _Probe
    ) -> AsyncIterator[AgentSession]:
        key = _key(limits, program.build is not None)
        container = await self._start(probe, key, program.host_paths, program)
        try:
            assert container.session is not None
            session = container.session
            session.conn.placeholders.update(values)
            await session.setup(program)
            yield session
        finally:
            await container.remove()

    @contextlib.asynccontextmanager
    async def _pooled(
        self, program: Program, limits: Limits, values: Mapping[str, str], probe: _Probe
    ) -> AsyncIterator[AgentSession]:
        if not self._shutdown_hook:
            self._shutdown_hook = True
            on_shutdown(self.close_idle)
        key = _key(limits, program.build is not None)
        container = await self._take(probe, key, program)
        finished = False
        try:
            session = container.session
            assert session is not None
            base = {"{program_dir}": PROGRAM_DIR, "{work_dir}": WORK_DIR}
            base["{python}"] = probe.tools["python"]
            session.conn.placeholders = {**base, **values}
            await session.setup(program)
            yield session
            finished = True
        finally:
            if finished and not container.session.conn.broken:  # type: ignore[union-attr]
                # Cleaning up is off the caller's path: the result is ready.
                self._recycling[key] = self._recycling.get(key, 0) + 1
                self._background(self._recycle(probe, container, key))
            else:
                self.stats["discarded"] += 1
                await container.remove()
                self._fill(probe, key)

    async def _take(self, probe: _Probe, key: PoolKey, program: Program) -> _Container:
        while True:
            idle = self._idle.get(key) or []
            if not idle:
                break
            container = idle.pop()
            try:
                write_program_files(container.program_dir, program)
            except OSError as err:
                log.info("discarding a pooled container: %s", err)
                self.stats["discarded"] += 1
                await container.remove()
                continue
            container.uses += 1
            self.stats["reused"] += 1
            return container
        container = await self._start(probe, key, (), program)
        container.uses = 1
        return container

    async def _recycle(self, probe: _Probe, container: _Container, key: PoolKey) -> None:
        try:
            await self._recycle_once(container, key)
        finally:
            self._recycling[key] -= 1
            # A container that did not come back is replaced.
            self._fill(probe, key)

    async def _recycle_once(self, container: _Container, key: PoolKey) -> None:
        session = container.session
        assert session is not None
        try:
            reply, _ = await session.conn.request({"op": "reset"}, timeout=10)
        except SandboxError as err:
            reason: str | None = str(err)
        else:
            reason = None if reply.get("clean") else str(reply.get("reason") or "not clean")
        if reason is None and session.conn.oom_kills_seen:
            # Docker's out-of-memory flag could not be told apart from a later one.
            reason = "a program in it was killed for memory"
        if reason is None and container.uses >= self.max_uses:
            reason = f"served {container.uses} programs"
        if reason is None and len(self._idle.get(key, [])) >= self.pool_size:
            reason = "enough idle containers"
        if reason is None:
            try:
                empty_directory(container.program_dir)
            except OSError as err:
                reason = f"could not empty its program directory: {err}"
        if reason is not None:
            log.debug("removing a container: %s", reason)
            self.stats["discarded"] += 1
            await container.remove()
            return
        self._idle.setdefault(key, []).append(container)

    def _fill(self, probe: _Probe, key: PoolKey) -> None:
        """Start containers in the background until ``pool_size`` are idle, starting or resetting.

        A container being reset counts: it comes back in a millisecond or two, so that one
        verification after another keeps reusing the same containers and starts none.
        """
        want = (
            self.pool_size
            - len(self._idle.get(key, []))
            - self._starting.get(key, 0)
            - self._recycling.get(key, 0)
        )
        if self._exiting:
            return
        for _ in range(max(0, want)):
            self._starting[key] = self._starting.get(key, 0) + 1
            self._background(self._prestart(probe, key))

    async def _prestart(self, probe: _Probe, key: PoolKey) -> None:
        try:
            container = await self._start(probe, key, (), Program(files={}, tests=()))
        except (SandboxError, RuntimeUnavailableError, OSError) as err:
            log.warning("could not start a pooled container: %s", err)
            return
        finally:
            self._starting[key] -= 1
        self._idle.setdefault(key, []).append(container)

    async def warm_up(self, limits: Limits | None = None, builds: bool = False) -> None:
        """Start the pool for ``limits`` now and wait for it (``builds``: for programs that build).

        Call it on the engine loop (``verifiers._async.on_engine``) before timing anything.
        """
        probe = self._require()
        if not self._shutdown_hook:
            self._shutdown_hook = True
            on_shutdown(self.close_idle)
        key = _key(limits or Limits(), builds)
        self._fill(probe, key)
        while self._starting.get(key, 0) > 0:
            await asyncio.sleep(0.05)

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close_idle(self) -> None:
        """Remove every idle pooled container (and retry removals that failed)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        idle = [c for group in self._idle.values() for c in group]
        self._idle.clear()
        await asyncio.gather(*(c.remove() for c in idle), return_exceptions=True)
        with self._lock:
            leaked, self._leaked = self._leaked, []
        for container_id in leaked:
            await _blocking(self._remove_container, container_id)
        self._drop_root()

    def _at_exit(self) -> None:
        # Runs before the engine's shutdown hooks remove the idle containers (atexit is
        # last in, first out): start no more, and leave directories in use to close_idle().
        self._exiting = True
        self._drop_root()

    def _drop_root(self) -> None:
        """Remove the program directories when no container uses one (they come back on use)."""
        with self._lock:
            if self._root is None or len(self._free_slots) != SLOTS:
                return
            root, self._root = self._root, None
        shutil.rmtree(root, ignore_errors=True)

    def remove_leftovers(self) -> int:
        """Remove containers that processes of this host which have exited left behind.

        Returns:
            How many were removed.
        """
        client = self._docker()
        host = socket.gethostname()
        removed = 0
        for container in client.containers.list(all=True, filters={"label": OWNER_LABEL}):
            owner = container.labels.get(OWNER_LABEL, "")
            name, _, pid = owner.rpartition(":")
            if name != host or not pid.isdigit() or _alive(int(pid)):
                continue
            self._remove_container(container.id)
            removed += 1
        return removed


async def _demultiplex(
    raw: asyncio.StreamReader, stdout: asyncio.StreamReader, conn: AgentConnection
) -> None:
    """Split Docker's multiplexed stream: stdout to the agent reader, stderr to diagnostics."""
    try:
        while True:
            header = await raw.readexactly(8)
            kind, size = header[0], struct.unpack(">I", header[4:])[0]
            data = await raw.readexactly(size)
            if kind == _STDOUT:
                stdout.feed_data(data)
            elif kind == _STDERR:
                conn.add_diagnostics(data)
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        pass
    finally:
        stdout.feed_eof()


async def _blocking(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread, or right here once the interpreter is exiting.

    At exit the default executor takes no new work, and the idle containers are removed
    then: removing them inline beats leaking them.
    """
    try:
        return await asyncio.to_thread(fn, *args)
    except RuntimeError as err:
        if "shutdown" not in str(err):
            raise
        return fn(*args)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
