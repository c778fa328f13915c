"""Outcomes to reward: scoring policies, result assembly and feedback text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifiers.errors import SpecError
from verifiers.results import (
    Result,
    Status,
    StepResult,
    TestResult,
    clean_text,
    excerpt,
    overall_status,
)


@dataclass(frozen=True)
class Tally:
    """What a policy sees.

    Attributes:
        status: The program's status.
        passed: Selected tests that passed.
        total: Selected tests.
        format_ok: The code came from a closed fenced block.
        completion_chars: Length of the completion, in characters.
    """

    status: Status
    passed: int
    total: int
    format_ok: bool
    completion_chars: int = 0

    @property
    def pass_rate(self) -> float:
        """The share of selected tests that passed (0 without tests)."""
        return self.passed / self.total if self.total else 0.0

    @property
    def compiled(self) -> bool:
        """Whether there was code and it got past the parser and the compiler."""
        return self.status not in _NOT_BUILT


_NOT_BUILT = frozenset(
    {Status.NO_CODE, Status.SYNTAX_ERROR, Status.COMPILE_ERROR, Status.SANDBOX_ERROR}
)
Policy = Callable[[Tally], float]


def binary(t: Tally) -> float:
    """1.0 when every selected test passed, else 0.0."""
    return 1.0 if t.status is Status.PASSED else 0.0


def partial(t: Tally) -> float:
    """The fraction of all selected tests that passed."""
    return t.pass_rate


def layered(format_weight: float = 0.2, compile_weight: float = 0.3) -> Policy:
    """Partial rewards for the steps towards a solution.

    ``reward = 1`` when every test passed; otherwise
    ``format_weight * format_ok + compile_weight * compiled + (1 - format_weight - compile_weight)
    * pass_rate``. ``format_weight <= 0.2`` and ``compile_weight <= 0.3``, so the tests always
    carry at least half of the reward and format never outweighs them.
    """
    if not 0 <= format_weight <= 0.2:
        raise SpecError("policy.format_weight", f"must be in [0, 0.2], got {format_weight}")
    if not 0 <= compile_weight <= 0.3:
        raise SpecError("policy.compile_weight", f"must be in [0, 0.3], got {compile_weight}")
    tests_weight = 1.0 - format_weight - compile_weight

    def policy(t: Tally) -> float:
        if t.status is Status.PASSED:
            return 1.0
        return (
            format_weight * t.format_ok + compile_weight * t.compiled + tests_weight * t.pass_rate
        )

    policy.__name__ = f"layered(format={format_weight:g}, compile={compile_weight:g})"
    return policy


#: Default penalties of :func:`penalized`: failures that waste the sandbox's time cost more.
DEFAULT_PENALTIES = {
    Status.RUNTIME_ERROR: -0.1,
    Status.TIMEOUT: -0.2,
    Status.MEMORY_LIMIT: -0.2,
    Status.OUTPUT_LIMIT: -0.2,
    Status.NO_CODE: -0.1,
}


def penalized(base: Policy = partial, penalties: dict[Status, float] | None = None) -> Policy:
    """``base`` plus a (negative) penalty for the program's status, clipped to [-1, 1]."""
    table = dict(DEFAULT_PENALTIES if penalties is None else penalties)
    for status, value in table.items():
        if not -1.0 <= value <= 0.0:
            raise SpecError(f"policy.penalties.{status}", f"must be in [-1, 0], got {value}")

    def policy(t: Tally) -> float:
        return max(-1.0, min(1.0, base(t) + table.get(t.status, 0.0)))

    policy.__name__ = f"penalized({getattr(base, '__name__', 'base')})"
    return policy


def length_penalty(base: Policy = binary, budget_chars: int = 4000, weight: float = 0.1) -> Policy:
    """``base`` minus ``weight * min(1, max(0, chars - budget) / budget)``, clipped to [-1, 1].

    Nothing changes up to ``budget_chars`` characters; the penalty grows linearly up
    to ``weight`` at twice the budget.
    """
    if budget_chars < 1 or not 0 <= weight <= 1:
        raise SpecError("policy", "length_penalty needs budget_chars >= 1 and weight in [0, 1]")

    def policy(t: Tally) -> float:
        over = max(0, t.completion_chars - budget_chars) / budget_chars
        return max(-1.0, min(1.0, base(t) - weight * min(1.0, over)))

    policy.__name__ = f"length_penalty({getattr(base, '__name__', 'base')}, {budget_chars})"
    return policy


POLICIES: dict[str, Policy] = {
    "binary": binary,
    "partial": partial,
    "layered": layered(),
    "penalized": penalized(),
    "length_penalty": length_penalty(),
}
DEFAULT_POLICY = "binary"


def stops_at_first_failure(policy: Policy) -> bool:
    """Whether a program's run may end at its first failing test under ``policy``.

    Only for :func:`binary`: one failure decides its reward, so the tests after it would
    change nothing (``Options.stop_on_failure`` overrides this).
    """
    return policy is binary


def register_policy(name: str, policy: Policy) -> None:
    """Add a named scoring policy (a function of :class:`Tally` returning a float in [-1, 1])."""
    POLICIES[name] = policy


def resolve_policy(policy: str | Policy | None) -> tuple[str, Policy]:
    """A policy from a name (default ``binary``) or a callable; SpecError for an unknown name."""
    if callable(policy):
        return getattr(policy, "__name__", "custom"), policy
    key = policy or DEFAULT_POLICY
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
    completion_chars: int = 0,
) -> Result:
    """Build the :class:`Result` from per-test outcomes."""
    total = len(tests)
    passed = sum(1 for t in tests if t.status is Status.PASSED)
    status = stage_status or overall_status([t.status for t in tests])
    if status is Status.PASSED and total == 0:
        status = Status.FAILED
    tally = Tally(status, passed, total, format_ok, completion_chars)
    score = float(policy(tally))
    if not -1.0 <= score <= 1.0:
        raise ValueError(f"policy {policy_name!r} returned {score}, outside [-1, 1]")
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
        code=clean_text(code) if code is not None else None,
        language=language,
        runtime=runtime,
        policy=policy_name,
        duration_s=round(duration_s, 6),
        feedback=clean_text(feedback(status, stage_message, tests, total)),
        infra_error=status is Status.SANDBOX_ERROR,
        hack_suspected=next(
            (f"test {t.index}: {t.hack_suspected}" for t in tests if t.hack_suspected), None
        ),
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
    text = _first_failure(status, tests, total)
    not_run = [t for t in tests if t.not_run]
    if not_run:
        text += f"\n{len(not_run)} tests not run: {not_run[0].message.removeprefix('not run: ')}"
    return text


def _first_failure(status: Status, tests: Sequence[TestResult], total: int) -> str:
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
