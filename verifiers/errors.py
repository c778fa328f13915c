"""Exceptions raised by the SDK.

Failures of model-written code are never exceptions: they are statuses in a
:class:`~verifiers.results.Result`. Exceptions are for mistakes of the caller
(a malformed test spec, an unknown language) and for machinery that cannot work
on this host (no sandbox available).
"""

from __future__ import annotations


class VerifierError(Exception):
    """Base class of every exception the SDK raises on purpose."""


class SpecError(VerifierError, ValueError):
    """A test specification (or another user input) is malformed.

    The message names the offending field, for example
    ``tests.outputs: expected one output per input (3 inputs, 2 outputs)``.
    """

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class UnknownNameError(VerifierError, KeyError):
    """A language or runtime name is not registered."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = known
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}")

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class RuntimeUnavailableError(VerifierError, RuntimeError):
    """No sandbox of the requested kind can run on this host.

    The message says what is missing and how to install it.
    """


class SandboxError(VerifierError, RuntimeError):
    """The sandbox machinery failed while running a program.

    Raised inside the SDK; at the public boundary it becomes the status
    ``sandbox_error`` with ``Result.infra_error`` set, never a model failure.
    """
