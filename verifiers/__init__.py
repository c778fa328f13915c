"""verifiers: decide whether model-written code is right by running it, safely and fast.

    >>> import verifiers
    >>> r = verifiers.score("python", completion, tests)
    >>> r.status, r.score, r.passed, r.total

See ``docs/quickstart.md``. The distribution is ``verifiers-sdk``; the import name
is ``verifiers``.
"""

from verifiers.api import (
    ascore,
    ascore_batch,
    close_idle_sandboxes,
    get_verifier,
    score,
    score_batch,
)
from verifiers.core import CodeVerifier
from verifiers.errors import (
    RuntimeUnavailableError,
    SandboxError,
    SpecError,
    UnknownNameError,
    VerifierError,
)
from verifiers.limits import Limits
from verifiers.protocols import Language, Runtime, Session, Verifier
from verifiers.result_cache import ResultCache
from verifiers.results import STATUS_PRECEDENCE, Result, Status, StepResult, TestResult
from verifiers.specs import (
    AssertListTests,
    AssertScriptTests,
    CallTests,
    CompareOptions,
    ExpressionCase,
    ExpressionTests,
    StdioCase,
    StdioTests,
    TestSpec,
    parse_tests,
)

__version__ = "0.1.0"

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from verifiers.difftest import adifferential, augment_tests, differential

# Differential testing needs hypothesis: imported on first use, not with the package.
_LAZY = {"differential", "adifferential", "augment_tests"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module("verifiers.difftest"), name)
    raise AttributeError(f"module 'verifiers' has no attribute {name!r}")


__all__ = [
    "STATUS_PRECEDENCE",
    "AssertListTests",
    "AssertScriptTests",
    "CallTests",
    "CodeVerifier",
    "CompareOptions",
    "ExpressionCase",
    "ExpressionTests",
    "Language",
    "Limits",
    "Result",
    "ResultCache",
    "Runtime",
    "RuntimeUnavailableError",
    "SandboxError",
    "Session",
    "SpecError",
    "Status",
    "StdioCase",
    "StdioTests",
    "StepResult",
    "TestResult",
    "TestSpec",
    "UnknownNameError",
    "Verifier",
    "VerifierError",
    "__version__",
    "adifferential",
    "ascore",
    "ascore_batch",
    "augment_tests",
    "close_idle_sandboxes",
    "differential",
    "get_verifier",
    "parse_tests",
    "score",
    "score_batch",
]
