"""Runtimes: where programs run. Each one executes :class:`~verifiers.program.Step` s in a sandbox.

``local`` (the default) is a bubblewrap sandbox on this machine; ``docker`` runs each
program in a container of a verifiers image (needs ``pip install 'verifiers-sdk[docker]'``);
``remote`` sends whole verifications to a verification service (``verifiers serve``).
"""

from verifiers.runtimes.docker import DockerRuntime
from verifiers.runtimes.local import LocalRuntime
from verifiers.runtimes.remote import RemoteRuntime

__all__ = ["DockerRuntime", "LocalRuntime", "RemoteRuntime"]
