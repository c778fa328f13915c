"""Every language passes the same case table, on the real toolchains, in the sandbox."""

from __future__ import annotations

import pytest

import verifiers
from verifiers import registry
from verifiers.runtimes import LocalRuntime
from verifiers.testing.cases import Case, case_tables, missing_kinds, table_kinds

from ..conftest import need

TABLES = case_tables()
CASES = [(lang, case) for lang, table in TABLES.items() for case in table]


def toolchain_ready(language: str) -> None:
    lang = registry.get_language(language)
    probe = getattr(lang, "toolchain", None)
    try:
        if callable(probe):
            probe()
    except verifiers.VerifierError as err:
        need(False, f"{language} toolchain unavailable: {err}")


@pytest.mark.parametrize("language", sorted(TABLES))
def test_table_covers_every_kind(language: str) -> None:
    assert not missing_kinds(TABLES[language], table_kinds()[language])


def test_every_registered_language_has_a_table() -> None:
    assert set(registry.language_names()) == set(TABLES)
    assert all(TABLES.values())


@pytest.mark.parametrize(
    ("language", "case"), CASES, ids=[f"{lang}-{c.kind}:{c.name}" for lang, c in CASES]
)
def test_case(runtime: LocalRuntime, language: str, case: Case) -> None:
    toolchain_ready(language)
    # Every test runs: a case's verdict and pass count are over all of its tests.
    result = verifiers.score(
        language,
        case.completion,
        case.tests,
        limits=case.limits,
        runtime=runtime,
        stop_on_failure=False,
    )
    assert result.status is case.expected, result.feedback
    if case.passed is not None:
        assert result.passed == case.passed
    assert len(result.tests) == result.total
    assert 0.0 <= result.score <= 1.0
    assert result.infra_error is False
