"""Assertions the reward-hack batteries share: what a forgery's result must never be."""

from __future__ import annotations

from verifiers import Status
from verifiers.results import Result


def not_forged(result: Result) -> None:
    """No test passed, and the program's failure was not made the sandbox's."""
    assert result.passed == 0 and result.score == 0.0, (result.status, result.feedback)
    assert result.status is not Status.SANDBOX_ERROR, result.feedback


def refused_by_the_build(result: Result, language: str) -> None:
    """The compiler refused the program on its declared signature (``<language>/signature``)."""
    not_forged(result)
    assert result.status is Status.FAILED, result.feedback
    assert result.compile is not None and result.compile.exit_code != 0, "refused by the build"
    assert f"(rule {language}/signature)" in result.feedback, result.feedback
    assert f"{language}/signature" in (result.hack_suspected or ""), result.hack_suspected
