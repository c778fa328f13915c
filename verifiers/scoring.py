"""Outcomes to reward: scoring policies, result assembly and feedback text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifiers.errors import SpecError
from verifiers.results import Result, Status, StepResult, TestResult, excerpt, overall_status


@dataclass(frozen=True)
class Tally:
    """What a policy sees: the program status and the per-test counts."""

    status: Status
    passed: int
    total: int
    format_ok: bool


Policy = Callable[[Tally], float]


def binary(t: Tally) -> float:
    """1.0 when every selected test passed, else 0.0."""
    return 1.0 if t.status is Status.PASSED else 0.0


def partial(t: Tally) -> float:
    """The fraction of all selected tests that passed."""
    return t.passed / t.total if t.total else 0.0


POLICIES: dict[str, Policy] = {"binary": binary, "partial": partial}
DEFAULT_POLICY = "binary"


def register_policy(name: str, policy: Policy) -> None:
    """Add a named scoring policy (a function of :class:`Tally` returning a float in [0, 1])."""
    POLICIES[name] = policy


def resolve_policy(name: str | None) -> tuple[str, Policy]:
    """The policy for a name (default ``binary``); raises SpecError for an unknown one."""
    key = name or DEFAULT_POLICY
    try:
        return key, POLICIES[key]
    except KeyError:
        raise SpecError("policy", f"unknown policy {key!r}; known: {sorted(POLICIES)}") from None


def select_tests(n: int, max_tests: int | None, key: str) -> list[int]:
    """Which tests run: all of them, or ``max_tests`` chosen deterministically.

    The choice is a pseudo-random sample seeded by ``key`` (a hash of the
    tests), so that the same tests are always picked for the same problem and
    the sample is not biased towards the first tests. Indices come back sorted.
    """
    if max_tests is None or max_tests >= n:
        return list(range(n))
    if max_tests < 1:
        raise SpecError("max_tests", f"must be at least 1, got {max_tests}")
    import random

    return sorted(random.Random(key).sample(range(n), max_tests))


def assemble(
    *,
    tests: Sequence[TestResult],
    stage_status: Status | None,
    stage_message: str,
    tests_available: int,
    policy_name: str,
    policy: Policy,
    format_ok: bool,
    code: str | None,
    language: str,
    runtime: str,
    duration_s: float,
    compile_step: StepResult | None = None,
) -> Result:
    """Build the :class:`Result` from per-test outcomes."""
    total = len(tests)
    passed = sum(1 for t in tests if t.status is Status.PASSED)
    status = stage_status or overall_status([t.status for t in tests])
    if status is Status.PASSED and total == 0:
        status = Status.FAILED
    tally = Tally(status=status, passed=passed, total=total, format_ok=format_ok)
    score = float(policy(tally))
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"policy {policy_name!r} returned {score}, outside [0, 1]")
    return Result(
        status=status,
        score=score,
        pass_rate=passed / total if total else 0.0,
        passed=passed,
        total=total,
        tests_available=tests_available,
        tests=list(tests),
        compile=compile_step,
        format_ok=format_ok,
        code=code,
        language=language,
        runtime=runtime,
        policy=policy_name,
        duration_s=round(duration_s, 6),
        feedback=feedback(status, stage_message, tests, total),
        infra_error=status is Status.SANDBOX_ERROR,
    )


_LIMIT_WORDS = {
    Status.TIMEOUT: "exceeded the time limit",
    Status.MEMORY_LIMIT: "exceeded the memory limit",
    Status.OUTPUT_LIMIT: "exceeded the output limit",
}


def feedback(status: Status, stage_message: str, tests: Sequence[TestResult], total: int) -> str:
    """A short text a model could use to repair its code."""
    if status is Status.PASSED:
        return f"All {total} tests passed."
    if stage_message:
        return stage_message
    first = next((t for t in tests if t.status is status), None)
    if first is None:
        return str(status)
    passed = sum(1 for t in tests if t.passed)
    head = f"{passed}/{total} tests passed. Test {first.index + 1} "
    if status is Status.FAILED:
        lines = [head + "failed (wrong answer)."]
        if first.message:
            lines.append(first.message)
        if first.input:
            lines.append(f"Input:\n{excerpt(first.input, 1000)[0]}")
        if first.expected:
            lines.append(f"Expected:\n{excerpt(first.expected, 1000)[0]}")
        if first.actual or first.expected:
            lines.append(f"Got:\n{excerpt(first.actual, 1000)[0]}")
        return "\n".join(lines)
    if status in _LIMIT_WORDS:
        text = head + _LIMIT_WORDS[status] + "."
        if first.message:
            text += f" {first.message}"
        if first.input:
            text += f"\nInput:\n{excerpt(first.input, 500)[0]}"
        return text
    text = head + f"ended with {status.value.replace('_', ' ')}."
    if first.message:
        text += f"\n{excerpt(first.message, 1500)[0]}"
    elif first.stderr:
        text += f"\n{excerpt(first.stderr, 1500)[0]}"
    return text
