"""Runtimes: where programs run. Each one executes :class:`~verifiers.program.Step` s in a sandbox.

``local`` (the default) is a bubblewrap sandbox on this machine; ``remote`` sends whole
verifications to a verification service (``verifiers serve``).
"""

from verifiers.runtimes.local import LocalRuntime
from verifiers.runtimes.remote import RemoteRuntime

__all__ = ["LocalRuntime", "RemoteRuntime"]
