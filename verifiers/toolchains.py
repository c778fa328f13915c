"""What every toolchain declaration shares: finding tools on this host, their versions, caches.

A language declares its toolchains itself (:class:`verifiers.program.ToolchainSpec`: the
placeholders, how this host resolves them, how the Docker images install them, what to build
once at set-up); this module holds only what those declarations have in common, so that no
table here names a language.

Artefacts built at set-up time (Rust crates, a warm Go build cache) live under
``$VERIFIERS_CACHE_DIR`` (default ``~/.cache/verifiers``), one directory per toolchain version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verifiers.errors import RuntimeUnavailableError
from verifiers.program import Toolchain, ToolchainSpec


def cache_dir() -> Path:
    """Where built toolchain artefacts live."""
    base = os.environ.get("VERIFIERS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "verifiers"
    )
    return Path(base)


def slug(text: str) -> str:
    """``text`` as a directory name (a version string, say)."""
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in text)[:80]


def tool_version(argv: list[str]) -> str:
    """The first line a tool prints for its version.

    Raises:
        RuntimeUnavailableError: It cannot run, or fails (with what it printed).
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise RuntimeUnavailableError(f"{argv[0]}: {err}") from err
    if done.returncode != 0:
        raise RuntimeUnavailableError(f"{' '.join(argv)} failed: {done.stderr.strip()[:300]}")
    text = (done.stdout or done.stderr).strip()
    if not text:
        raise RuntimeUnavailableError(f"{' '.join(argv)} printed no version")
    return text.splitlines()[0]


def which(explicit: str | None, name: str) -> str | None:
    """``explicit`` if it is an executable (or a name on ``PATH``), else ``name`` on ``PATH``."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else shutil.which(explicit)
    return shutil.which(name)


def install_dirs(binary: str) -> tuple[str, ...]:
    """The installation directory of a binary outside ``/usr`` (``/opt/x/bin/x`` -> ``/opt/x``).

    A runtime that shares the host's files exposes it (``/usr`` is there anyway).
    """
    real = os.path.realpath(binary)
    prefix = os.path.dirname(os.path.dirname(real))
    return () if real.startswith("/usr/") else (prefix,)


def require(explicit: str | None, name: str, hint: str) -> str:
    """A tool's path (see :func:`which`), or RuntimeUnavailableError with ``hint``."""
    found = which(explicit, name)
    if not found:
        raise RuntimeUnavailableError(f"{explicit or name} not found: {hint}")
    return found


class HostCache:
    """Host resolutions of toolchains, once per (toolchain, pinned path, ``PATH``).

    ``PATH`` is part of the key: a tool installed (or a ``PATH`` fixed) later is found then.
    """

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, str], Toolchain] = {}
        self._lock = threading.Lock()

    def get(self, name: str, path: str | None, resolve: Callable[[], Toolchain]) -> Toolchain:
        """The cached resolution, or ``resolve()`` (which may raise) remembered."""
        key = (name, path or "", os.environ.get("PATH", ""))
        with self._lock:
            found = self._found.get(key)
        if found is None:
            found = resolve()
            with self._lock:
                self._found[key] = found
        return found


#: The process's host resolutions (toolchain specs memoise through it).
HOST = HostCache()


def binary_toolchain(
    name: str,
    binary: str,
    placeholder: str,
    version_argv: tuple[str, ...],
    hint: str,
    image: Any = None,
) -> ToolchainSpec:
    """The declaration of a toolchain that is one binary found on ``PATH`` (``node``, ``javac``).

    Args:
        name: The toolchain's name.
        binary: The executable's name.
        placeholder: Its placeholder (``{node}``).
        version_argv: Arguments that print its version (``("--version",)``).
        hint: What to install when it is missing.
        image: Its :class:`~verifiers.program.ImageRecipe`.
    """

    def host(path: str | None) -> Toolchain:
        def resolve() -> Toolchain:
            found = require(path, binary, hint)
            version = tool_version([found, *version_argv])
            return Toolchain(
                name,
                {placeholder: found},
                f"host {binary} {version}",
                install_dirs(found),
                f"{version} at {found}",
            )

        return HOST.get(name, path, resolve)

    return ToolchainSpec(name, (placeholder,), host, image)


def make_readable(root: Path) -> None:
    """Let every user read (and traverse) ``root``: sandboxed programs read it as another uid."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)
