"""Resource limits, passed explicitly to every verification (no global state)."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, model_validator

MIB = 1024 * 1024


class Limits(BaseModel):
    """Resource limits for one program.

    Per-test limits apply to every test run separately; ``total_timeout_s``
    bounds the whole program (tests that cannot start inside the budget are
    reported as ``timeout``).

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
        total_timeout_s: Optional wall-clock budget for all tests of one program.
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

    @model_validator(mode="after")
    def _check(self) -> Limits:
        if self.total_timeout_s is not None and self.total_timeout_s < self.timeout_s:
            raise ValueError("total_timeout_s must be at least timeout_s")
        return self

    @property
    def effective_cpu_s(self) -> float:
        """The CPU-time limit actually enforced per test."""
        return self.cpu_time_s if self.cpu_time_s is not None else self.timeout_s

    def step_limits(self, *, build: bool = False) -> StepLimits:
        """Limits for one process run (a test, or a build when ``build``)."""
        timeout = self.build_timeout_s if build else self.timeout_s
        cpu = self.build_timeout_s if build else self.effective_cpu_s
        memory = self.build_memory_mb if build else self.memory_mb
        return StepLimits(
            timeout_s=timeout,
            cpu_s=max(1, math.ceil(cpu)),
            memory_bytes=memory * MIB,
            max_processes=self.max_processes if not build else max(self.max_processes, 256),
            max_file_bytes=self.max_file_mb * MIB,
            max_open_files=self.max_open_files,
            max_output_bytes=self.max_output_bytes,
        )

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
