"""A pytest plugin for the property suite.

Add ``pytest_plugins = ["verifiers.testing.pytest_plugin"]`` to a ``conftest.py``
for the fixture ``verifier_properties``:
:func:`~verifiers.testing.properties.check_verifier` with the example count of
``--verifiers-examples`` (or ``VERIFIERS_FUZZ_EXAMPLES``; default 25)::

    def test_my_verifier(verifier_properties):
        verifier_properties(MyVerifier())
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from verifiers.testing.properties import CheckReport, check_verifier


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--verifiers-examples``."""
    parser.addoption(
        "--verifiers-examples",
        type=int,
        default=None,
        help="examples per property of the verifier property suite (default 25)",
    )


@pytest.fixture
def verifier_properties(request: pytest.FixtureRequest) -> Callable[..., CheckReport]:
    """``check_verifier`` with this run's example count."""
    option = request.config.getoption("--verifiers-examples")
    examples = option or int(os.environ.get("VERIFIERS_FUZZ_EXAMPLES", "25"))

    def run(verifier: Any, **kw: Any) -> CheckReport:
        kw.setdefault("max_examples", examples)
        return check_verifier(verifier, **kw)

    return run
