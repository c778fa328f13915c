"""SandboxFusion compatibility: ``POST /run_code`` with SandboxFusion's request and answer.

Clients of SandboxFusion (veRL's ``sandbox_fusion`` reward, the ``sandbox-fusion`` client
package) send one program and its stdin and compare stdout themselves. Here such a run is
a stdin/stdout test with one case, verified by the same pipeline as any other (no code
extraction: the request holds the code itself); its stdout comes back whole through the
verifier's ``observe`` callback, and the test's facts (exit code, signal, time, limit hit)
become SandboxFusion's ``compile_result`` and ``run_result``.

Shapes (from SandboxFusion's ``sandbox/server/sandbox_api.py``): the request has ``code``,
``language``, ``stdin``, ``compile_timeout``, ``run_timeout``, ``memory_limit_MB``,
``files`` and ``fetch_files``; the answer has ``status`` (``Success``, ``Failed`` or
``SandboxError``), ``message``, ``compile_result`` and ``run_result`` (each ``status``:
``Finished``, ``Error`` or ``TimeLimitExceeded``, with ``execution_time``, ``return_code``,
``stdout``, ``stderr``), ``executor_pod_name`` and ``files``. What is honoured and what is
not is tabled in ``docs/service.md``.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from verifiers.core import Workspace
from verifiers.errors import SpecError
from verifiers.limits import Limits
from verifiers.results import Result, Status, TestResult, clean_text

#: SandboxFusion language names this server runs, and the language each one is here.
LANGUAGES: dict[str, str] = {
    "python": "python",
    "nodejs": "javascript",
    "js": "javascript",
    "javascript": "javascript",
    "go": "go",
    "rust": "rust",
}
#: Languages that SandboxFusion compiles first (their build is its ``compile_result``).
COMPILED = frozenset({"go", "rust"})
#: Most files a request may give the program, and their decoded size in all.
MAX_FILES = 256
MAX_FILES_BYTES = 16 * 1024 * 1024
#: Most files a request may ask back, and their size in all (larger ones are left out).
MAX_FETCH = 64
MAX_FETCH_BYTES = 16 * 1024 * 1024
#: SandboxFusion's request fields and the limits they set, for clamping to the server's caps.
CLAMPED = (
    ("run_timeout", "timeout_s", "s"),
    ("compile_timeout", "build_timeout_s", "s"),
    ("memory_limit_MB", "memory_mb", " MB"),
)

CommandStatus = Literal["Finished", "Error", "TimeLimitExceeded"]
RunStatus = Literal["Success", "Failed", "SandboxError"]


class RunCodeRequest(BaseModel):
    """SandboxFusion's ``/run_code`` request (unknown fields are ignored, as there)."""

    model_config = ConfigDict(extra="ignore")

    code: str
    language: str
    stdin: str | None = None
    compile_timeout: float = 10.0
    run_timeout: float = 10.0
    memory_limit_MB: int = -1
    files: dict[str, str | None] = Field(default_factory=dict)
    fetch_files: list[str] = Field(default_factory=list)


class CommandRunResult(BaseModel):
    """One command of a run: the build or the program."""

    status: CommandStatus
    execution_time: float | None = None
    return_code: int | None = None
    stdout: str | None = None
    stderr: str | None = None


class RunCodeResponse(BaseModel):
    """SandboxFusion's ``/run_code`` answer."""

    status: RunStatus
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


def sandbox_error(message: str) -> RunCodeResponse:
    """The answer when the run could not happen here (SandboxFusion's ``SandboxError``)."""
    return RunCodeResponse(status="SandboxError", message=message)


def unsupported(request: RunCodeRequest) -> str | None:
    """Why this server cannot run the request, or None."""
    if request.language not in LANGUAGES:
        names = ", ".join(sorted(LANGUAGES))
        return f"language {request.language!r} is not supported by this server ({names})"
    return None


def _relative(path: str, field: str) -> str:
    """``path`` as a clean path inside the work directory, or SpecError."""
    clean = posixpath.normpath(path)
    if not path or path.startswith("/") or clean == "." or clean.split("/")[0] == "..":
        raise SpecError(field, "expected a path inside the working directory")
    if "\0" in path:
        raise SpecError(field, "a path cannot hold a NUL character")
    return clean


def workspace_of(request: RunCodeRequest) -> Workspace | None:
    """The files the program starts with (base64 decoded) and the files to send back.

    Raises:
        SpecError: A path leaves the working directory, a content is not base64, or there
            are more (or larger) files than :data:`MAX_FILES` and :data:`MAX_FILES_BYTES`,
            or more to fetch than :data:`MAX_FETCH`.
    """
    files: dict[str, bytes] = {}
    size = 0
    given = {k: v for k, v in request.files.items() if v is not None}
    if len(given) > MAX_FILES:
        raise SpecError("files", f"at most {MAX_FILES} files, got {len(given)}")
    for path, content in given.items():
        field = f"files.{path}"
        clean = _relative(path, field)
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise SpecError(field, "the content is not base64") from None
        size += len(data)
        if size > MAX_FILES_BYTES:
            raise SpecError("files", f"more than {MAX_FILES_BYTES} bytes in all once decoded")
        files[clean] = data
    if len(request.fetch_files) > MAX_FETCH:
        raise SpecError("fetch_files", f"at most {MAX_FETCH} files, got {len(request.fetch_files)}")
    for n, path in enumerate(request.fetch_files):
        if not path.startswith("/"):
            _relative(path, f"fetch_files[{n}]")
    if not files and not request.fetch_files:
        return None
    return Workspace(
        files=files,
        fetch=tuple(dict.fromkeys(request.fetch_files)),
        max_fetch_bytes=MAX_FETCH_BYTES,
    )


def limits_of(
    request: RunCodeRequest, base: Limits, caps: Mapping[str, float] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The limits of the run, and a note for each one clamped to the server's cap.

    SandboxFusion's timeouts and memory go over the server's defaults. A value over the
    server's cap is run at the cap, with a note in the answer's ``message``, rather than
    refused: veRL's ``sandbox_fusion`` reward reads a refusal as a reward of 0.
    """
    limits = base.model_dump()
    limits["timeout_s"] = request.run_timeout
    limits["cpu_time_s"] = None
    limits["build_timeout_s"] = request.compile_timeout
    if request.memory_limit_MB > 0:
        limits["memory_mb"] = request.memory_limit_MB
    notes = []
    for field, name, unit in CLAMPED:
        cap = (caps or {}).get(name)
        if cap is not None and limits[name] > cap:
            notes.append(
                f"{field} {getattr(request, field):g}{unit} is over this server's cap: "
                f"run with {cap:g}{unit}"
            )
            limits[name] = int(cap) if name == "memory_mb" else cap
    return limits, notes


def files_of(workspace: Workspace | None) -> dict[str, str]:
    """The files fetched back, base64, as SandboxFusion answers them."""
    if workspace is None:
        return {}
    return {path: base64.b64encode(data).decode() for path, data in workspace.fetched.items()}


def _return_code(test: TestResult) -> int:
    if test.exit_code is not None:
        return test.exit_code
    if test.signal is not None:
        return -test.signal  # how a killed child's status reads in Python's subprocess
    return 1


def to_response(result: Result, language: str, stdout: str | None) -> RunCodeResponse:
    """SandboxFusion's answer for the result of a one-case stdin/stdout run.

    Args:
        result: The verification's result.
        language: The language it ran as (a name of this SDK).
        stdout: The program's whole stdout, when it ran (from the ``observe`` callback).
    """
    if result.status is Status.SANDBOX_ERROR:
        return sandbox_error(result.feedback)
    compiled = language in COMPILED
    build = result.compile
    compile_result = None
    if build is not None:
        compile_result = CommandRunResult(
            status="TimeLimitExceeded" if build.timed_out else "Finished",
            execution_time=build.wall_s,
            return_code=None if build.timed_out else (build.exit_code or 0),
            stdout=build.stdout,
            stderr=build.stderr,
        )
    test = result.tests[0] if result.tests else None
    if result.status in (Status.SYNTAX_ERROR, Status.NO_CODE, Status.COMPILE_ERROR) and (
        build is None or build.exit_code != 0 or build.timed_out
    ):
        # Found before the program ran: SandboxFusion's compiler (compiled languages) or
        # interpreter (the others) would have failed with this message.
        message = (test.message if test is not None else "") or result.feedback
        failed = CommandRunResult(
            status="Finished", execution_time=0.0, return_code=1, stdout="", stderr=message
        )
        if compiled:
            if compile_result is None or compile_result.return_code == 0:
                compile_result = failed
            return RunCodeResponse(status="Failed", compile_result=compile_result)
        if test is not None and test.exit_code is not None:
            # The interpreter ran and failed (Python's compile errors are found inside).
            failed = CommandRunResult(
                status="Finished",
                execution_time=test.wall_s,
                return_code=_return_code(test),
                stdout=clean_text(stdout or ""),
                stderr=test.stderr or message,
            )
        return RunCodeResponse(status="Failed", run_result=failed)
    assert test is not None  # every other status comes from a test that ran
    if test.status is Status.TIMEOUT:
        run = CommandRunResult(
            status="TimeLimitExceeded",
            execution_time=test.wall_s,
            stdout=clean_text(stdout or ""),
            stderr=test.stderr,
        )
        return RunCodeResponse(
            status="Failed", message=test.message, compile_result=compile_result, run_result=run
        )
    # passed or failed: the program exited 0 (the comparison with "" does not matter);
    # runtime_error, memory_limit, output_limit: it exited otherwise or was killed.
    ran_clean = test.status in (Status.PASSED, Status.FAILED)
    code = 0 if ran_clean else _return_code(test)
    if code == 0 and not ran_clean:
        code = 1  # stopped at a limit with a clean exit status: still a failure
    run = CommandRunResult(
        status="Finished",
        execution_time=test.wall_s,
        return_code=code,
        stdout=clean_text(stdout or ""),
        stderr=test.stderr,
    )
    return RunCodeResponse(
        status="Success" if code == 0 else "Failed",
        # SandboxFusion leaves it empty unless its sandbox failed; ours says what happened.
        message="" if ran_clean else test.message,
        compile_result=compile_result,
        run_result=run,
    )
