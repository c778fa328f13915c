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
from verifiers.errors import (
    RuntimeUnavailableError,
    SandboxError,
    SpecError,
    UnknownNameError,
    VerifierError,
)
from verifiers.languages.base import CodeVerifier
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
    "ascore",
    "ascore_batch",
    "close_idle_sandboxes",
    "get_verifier",
    "parse_tests",
    "score",
    "score_batch",
]
