"""Runtimes: where programs run. Each one executes :class:`~verifiers.program.Step` s in a sandbox.

``local`` (the default) is a bubblewrap sandbox on this machine.
"""

from verifiers.runtimes.local import LocalRuntime

__all__ = ["LocalRuntime"]
