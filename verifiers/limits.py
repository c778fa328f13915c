"""Resource limits, passed explicitly to every verification (no global state)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, model_validator

MIB = 1024 * 1024
#: What a sandbox holds beyond its programs' memory and scratch space: the supervisor, the
#: zygote and a judge (Python interpreters), in MiB (see :meth:`Limits.sandbox_memory_mb`).
SANDBOX_OVERHEAD_MB = 192
#: The size of a sandbox's ``/dev/shm``, in MiB.
SHM_MB = 64
#: Processes a sandbox holds beyond its programs' ``max_processes`` (supervisor, zygote,
#: judges and what they start).
SANDBOX_OVERHEAD_PIDS = 32
#: Where a kernel does not enforce ``RLIMIT_DATA`` (gVisor), a process's memory is bounded
#: by its address space instead: ``memory_mb`` plus this much, in MiB, for runtimes that
#: reserve address space they never use (Go's heap arenas need about 650 MiB, Node's
#: code range and cages about 550 MiB) and for builds. Programs of other runtimes get
#: their ``memory_mb`` alone. Elsewhere it is unused.
RUNTIME_RESERVE_MB = 1024
#: The default time budget of a program that runs past failures, in units of ``timeout_s``.
DEFAULT_BUDGET_TIMEOUTS = 2.0


class Limits(BaseModel):
    """Resource limits for one program.

    Per-test limits apply to every test run separately; a time budget bounds the
    whole program's tests: ``total_timeout_s`` when given, else, for programs whose run
    does not end at their first failure (every policy but ``binary``),
    ``budget_timeouts * timeout_s``. A test still running when the budget runs out is
    stopped there (``timeout``); the tests after it are ``not_run`` and count as failed.

    Attributes:
        timeout_s: Wall-clock limit per test, in seconds.
        cpu_time_s: CPU-time limit per test; defaults to ``timeout_s``.
        memory_mb: Memory per process (private writable memory: heap, anonymous
            mappings). Exceeding it is ``memory_limit``.
        max_processes: Processes and threads the program may have at once.
        max_file_mb: Largest file the program may write.
        max_open_files: Open file descriptors per process.
        max_output_bytes: Cap per output stream (stdout, stderr); exceeding it
            is ``output_limit``.
        disk_mb: Size of the writable scratch space (working directory and /tmp).
        build_timeout_s: Wall-clock limit of a build (compile) step.
        build_memory_mb: Memory limit of a build step.
        total_timeout_s: Wall-clock budget for all tests of one program, whatever the
            policy.
        budget_timeouts: Without ``total_timeout_s``, the budget of a program that runs
            past failures, in units of ``timeout_s`` (default 2: one looping test and
            time for the rest); None for no default budget.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=5.0, gt=0, le=3600)
    cpu_time_s: float | None = Field(default=None, gt=0, le=3600)
    memory_mb: int = Field(default=1024, ge=32, le=1024 * 1024)
    max_processes: int = Field(default=64, ge=1, le=100_000)
    max_file_mb: int = Field(default=64, ge=1, le=1024 * 1024)
    max_open_files: int = Field(default=256, ge=16, le=1_000_000)
    max_output_bytes: int = Field(default=16 * MIB, ge=1024, le=1024 * MIB)
    disk_mb: int = Field(default=256, ge=1, le=1024 * 1024)
    build_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    build_memory_mb: int = Field(default=2048, ge=32, le=1024 * 1024)
    total_timeout_s: float | None = Field(default=None, gt=0)
    budget_timeouts: float | None = Field(default=DEFAULT_BUDGET_TIMEOUTS, ge=1, le=10_000)

    @model_validator(mode="after")
    def _check(self) -> Limits:
        if self.total_timeout_s is not None and self.total_timeout_s < self.timeout_s:
            raise ValueError("total_timeout_s must be at least timeout_s")
        return self

    def budget_s(self, stop_on_failure: bool) -> float | None:
        """The time budget of a program's tests (None: unbounded), see the class docstring."""
        if self.total_timeout_s is not None:
            return self.total_timeout_s
        if stop_on_failure or self.budget_timeouts is None:
            return None
        return self.budget_timeouts * self.timeout_s

    @property
    def effective_cpu_s(self) -> float:
        """The CPU-time limit actually enforced per test."""
        return self.cpu_time_s if self.cpu_time_s is not None else self.timeout_s

    def step_limits(self, *, build: bool = False, runtime_reserve: bool = False) -> StepLimits:
        """Limits for one process run (a test, or a build when ``build``).

        ``runtime_reserve`` is for programs whose runtime reserves address space it does
        not use (Go, Node); builds always have it (compilers are such programs). See
        :data:`RUNTIME_RESERVE_MB`.
        """
        timeout = self.build_timeout_s if build else self.timeout_s
        cpu = self.build_timeout_s if build else self.effective_cpu_s
        memory = self.build_memory_mb if build else self.memory_mb
        reserve = RUNTIME_RESERVE_MB * MIB if build or runtime_reserve else 0
        return StepLimits(
            timeout_s=timeout,
            cpu_s=max(1, math.ceil(cpu)),
            memory_bytes=memory * MIB,
            max_processes=self.max_processes if not build else max(self.max_processes, 256),
            max_file_bytes=self.max_file_mb * MIB,
            max_open_files=self.max_open_files,
            max_output_bytes=self.max_output_bytes,
            address_reserve_bytes=reserve,
        )

    def sandbox_memory_mb(self, build: bool = False) -> int:
        """The memory of all of a sandbox's processes together, its scratch files included.

        ``memory_mb`` (or ``build_memory_mb`` for a sandbox that builds) for its programs,
        the scratch space (``/tmp`` and the work directory, ``disk_mb`` each, and
        :data:`SHM_MB` of ``/dev/shm``: files there are memory too), and
        :data:`SANDBOX_OVERHEAD_MB` for the supervisor. Scratch files can therefore never
        leave the supervisor without memory: when the sandbox runs out, its programs are
        what the kernel kills, and the run is ``memory_limit``.
        """
        programs = max(self.memory_mb, self.build_memory_mb if build else 0)
        return programs + 2 * self.disk_mb + SHM_MB + SANDBOX_OVERHEAD_MB

    def judge_limits(self) -> StepLimits:
        """Limits of a judge: trusted test code that runs beside a test, as long as it runs.

        Its own time is the test's; its memory is at least 1 GiB (tests may hold large
        expected values); its output cap is the test's (the verdict carries the value a
        program returned).
        """
        return StepLimits(
            timeout_s=self.timeout_s,
            cpu_s=max(1, math.ceil(self.timeout_s)) + 1,
            memory_bytes=max(self.memory_mb, 1024) * MIB,
            max_processes=max(self.max_processes, 16),
            max_file_bytes=self.max_file_mb * MIB,
            max_open_files=max(self.max_open_files, 256),
            max_output_bytes=self.max_output_bytes,
            address_reserve_bytes=RUNTIME_RESERVE_MB * MIB,
        )


class StepLimits(BaseModel):
    """Limits of one process run, in the units the sandbox enforces."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float
    cpu_s: int
    memory_bytes: int
    max_processes: int
    max_file_bytes: int
    max_open_files: int
    max_output_bytes: int
    #: Address space allowed beyond ``memory_bytes`` where memory can be bounded only by
    #: address space (see :data:`RUNTIME_RESERVE_MB`).
    address_reserve_bytes: int = 0
