"""The property suite any verifier must pass: :func:`check_verifier`.

For model-controlled input a verifier never raises and always returns a consistent
:class:`~verifiers.Result`; verdicts of deterministic programs repeat; malformed specs
raise :class:`~verifiers.SpecError`; nothing leaks (descriptors, processes, temporary
entries). Hypothesis drives it: a failure raises with the shrunk example in its notes.

    from verifiers import get_verifier
    from verifiers.testing.properties import check_verifier

    report = check_verifier(get_verifier("python"), max_examples=30)
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from verifiers.errors import SpecError
from verifiers.protocols import Verifier
from verifiers.results import Result, Status, overall_status
from verifiers.scoring import Tally, resolve_policy
from verifiers.testing.resources import open_fds, processes, start_ticks, tmp_entries
from verifiers.testing.strategies import (
    PROGRAM_LANGUAGES,
    SUM_TESTS,
    completions,
    malformed_specs,
    programs,
    valid_specs,
)

#: Limits of every verification the suite runs: short, so that generated infinite loops
#: cost little.
LIMITS = {"timeout_s": 1.0}

#: How long resources may take to settle after the last verification (sandboxes being
#: reset or stopped off the caller's path).
SETTLE_S = 10.0


@dataclass
class CheckReport:
    """What :func:`check_verifier` ran."""

    language: str
    verifications: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    duration_s: float = 0.0


def check_result(result: Any, policy: Any = None) -> None:
    """Assert the invariants of one result (raises AssertionError naming the broken one)."""
    assert isinstance(result, Result), f"expected a Result, got {type(result).__name__}"
    assert 0 <= result.passed <= result.total <= result.tests_available, (
        f"passed={result.passed} total={result.total} available={result.tests_available}"
    )
    assert len(result.tests) == result.total, (
        f"{len(result.tests)} test results, total={result.total}"
    )
    assert result.passed == sum(t.status is Status.PASSED for t in result.tests)
    assert sorted(t.index for t in result.tests) == sorted({t.index for t in result.tests})
    expected_rate = result.passed / result.total if result.total else 0.0
    assert abs(result.pass_rate - expected_rate) < 1e-9, "pass_rate is not passed/total"
    if result.status is Status.PASSED:
        assert result.total > 0 and result.passed == result.total, "passed with failing tests"
    else:
        stages = (Status.NO_CODE, Status.SYNTAX_ERROR, Status.COMPILE_ERROR, Status.SANDBOX_ERROR)
        if result.status not in stages and result.total:
            assert result.status is overall_status([t.status for t in result.tests]), (
                f"status {result.status} does not follow the tests' statuses"
            )
    assert result.infra_error == (result.status is Status.SANDBOX_ERROR)
    name, fn = resolve_policy(policy if policy is not None else result.policy or None)
    tally = Tally(result.status, result.passed, result.total, result.format_ok, 0)
    if name in ("binary", "partial"):
        assert result.score == float(fn(tally)), f"score {result.score} != policy {name}"
        assert 0.0 <= result.score <= 1.0
    else:
        assert -1.0 <= result.score <= 1.0


def _settings(max_examples: int) -> settings:
    return settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _settled(baseline: tuple[int, int, int], since: int, close: Any) -> tuple[int, int, int]:
    deadline = time.monotonic() + SETTLE_S
    while True:
        close()
        now = (open_fds(), processes(since).descendants, tmp_entries())
        if all(a <= b for a, b in zip(now, baseline, strict=True)):
            return now
        if time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def check_verifier(
    verifier: Verifier,
    *,
    max_examples: int = 25,
    seed: int | None = 0,
    language: str | None = None,
) -> CheckReport:
    """Run the property suite on ``verifier`` with real programs (raises on a violation).

    Args:
        verifier: Any :class:`~verifiers.Verifier` (``get_verifier(...)`` or your own).
        max_examples: Examples per property (the suite runs three properties, and the
            determinism property scores each program twice).
        seed: Seed of the generation (None: a new one each run).
        language: The language whose programs to generate (default: ``verifier.name``).

    Returns:
        A :class:`CheckReport` of what ran.

    Raises:
        AssertionError: A property does not hold; the shrunk example is in the notes.
    """
    from verifiers.api import close_idle_sandboxes

    started = time.perf_counter()
    lang = language or verifier.name
    report = CheckReport(lang)
    since = start_ticks()

    def record(result: Result) -> None:
        report.verifications += 1
        report.statuses[result.status.value] += 1

    def seeded(fn: Any) -> Any:
        return hypothesis_seed(seed)(fn) if seed is not None else fn

    # Warm up, so that what is created once per process (caches, pools) is in the baseline.
    record(verifier.score(f"```{lang}\n\n```", SUM_TESTS, limits=LIMITS))
    close_idle_sandboxes()
    baseline = (open_fds(), processes(since).descendants, tmp_entries())

    @seeded
    @_settings(max_examples)
    @given(completions(lang), valid_specs(lang))
    def model_input_never_raises(completion: str, tests: Any) -> None:
        result = verifier.score(completion, tests, limits=LIMITS)
        check_result(result)
        record(result)

    model_input_never_raises()

    if lang in PROGRAM_LANGUAGES:

        @seeded
        @_settings(max_examples)
        @given(programs(lang))
        def programs_get_their_verdicts(program: Any) -> None:
            first = verifier.score(program.completion, SUM_TESTS, limits=LIMITS)
            check_result(first)
            record(first)
            assert first.status in program.expected, (
                f"{program.kind}: got {first.status}, expected one of "
                f"{sorted(s.value for s in program.expected)}\n{first.feedback}"
            )
            # Timeouts are not run twice: the limit makes them, and they cost the most.
            if program.deterministic and first.status is not Status.TIMEOUT:
                again = verifier.score(program.completion, SUM_TESTS, limits=LIMITS)
                record(again)
                assert [t.status for t in again.tests] == [t.status for t in first.tests], (
                    f"{program.kind}: verdicts differ between runs"
                )

        programs_get_their_verdicts()

    @seeded
    @_settings(max(5, max_examples // 2))
    @given(malformed_specs(), st.sampled_from(("", "print(1)", "```\nx\n```")))
    def malformed_specs_raise(tests: Any, completion: str) -> None:
        try:
            result = verifier.score(completion, tests, limits=LIMITS)
        except SpecError as err:
            assert err.field and err.problem, "a SpecError must name the field and the problem"
            return
        raise AssertionError(f"malformed tests {tests!r} gave {result.status}, not a SpecError")

    malformed_specs_raise()

    fds, procs, tmp = _settled(baseline, since, close_idle_sandboxes)
    assert fds <= baseline[0], f"open descriptors grew from {baseline[0]} to {fds}"
    assert procs <= baseline[1], f"processes below this one grew from {baseline[1]} to {procs}"
    assert tmp <= baseline[2], f"temporary verifiers* entries grew from {baseline[2]} to {tmp}"
    report.duration_s = time.perf_counter() - started
    return report


__all__ = ["CheckReport", "check_result", "check_verifier"]
