"""The Python a local sandbox sees: the interpreter, its standard library, and chosen packages.

A sandbox needs the interpreter that runs the agent and Python programs, its standard
library, and the packages the languages offer to programs (``numpy`` for Python programs,
``duckdb`` and ``psycopg`` for SQL, ``regex`` and ``google-re2`` for regular expressions):
each language lists them (``python_packages``). It does not need the rest of the virtual
environment the SDK runs in (gigabytes of training libraries, the SDK itself, its tools),
nor anything else of the interpreter's installation. So instead of binding the interpreter's
directories whole, the runtime binds:

* the interpreter binary and its shared library, and the standard library directory (with
  the installation's own ``site-packages`` hidden under an empty file system);
* in a virtual environment, its ``pyvenv.cfg`` and the ``python`` links of its ``bin``;
* for each package offered, and each package it requires, only that distribution's own
  top-level entries of ``site-packages`` (its modules, ``.libs`` and metadata).

The layout is asked of the interpreter itself (it may be another one than the SDK's), once.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

# Run in the sandbox's interpreter: where its parts are, and the entries of the requested
# distributions and their requirements (extras excluded), by distribution.
_DISCOVER = r"""
import json, os, re, sys, sysconfig
import importlib.metadata as md
wanted = json.loads(sys.argv[1])
paths = sysconfig.get_paths()
site = {os.path.realpath(p) for p in {paths["purelib"], paths["platlib"]} if p}
found, missing, seen = {}, [], set()
queue = list(wanted)
while queue:
    name = queue.pop()
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    seen.add(key)
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        missing.append(name)
        continue
    top = set()
    for file in dist.files or ():
        full = os.path.realpath(str(dist.locate_file(file)))
        for root in site:
            if full.startswith(root + os.sep):
                parts = full[len(root) + 1 :].split(os.sep)
                # The shared __pycache__ holds other modules' code too: its own files only.
                depth = 2 if parts[0] == "__pycache__" and len(parts) > 1 else 1
                top.add(os.path.join(root, *parts[:depth]))
    found[key] = sorted(top)
    for req in dist.requires or ():
        if "extra ==" in req or "extra==" in req:
            continue
        dep = re.split(r"[\s<>=!~;\[(]", req.strip(), maxsplit=1)[0]
        if dep:
            queue.append(dep)
exe = os.path.abspath(sys.executable)
print(json.dumps({
    "prefix": sys.prefix, "base_prefix": sys.base_prefix, "executable": exe,
    "real_executable": os.path.realpath(exe), "stdlib": paths["stdlib"],
    "platstdlib": paths["platstdlib"], "site": sorted(site),
    "libdir": sysconfig.get_config_var("LIBDIR") or "",
    "ldlibrary": sysconfig.get_config_var("INSTSONAME") or "",
    "packages": found, "missing": sorted(missing),
}))
"""


@dataclass(frozen=True)
class SandboxPython:
    """What to bind (read-only, at the same paths) and what to hide, for one interpreter.

    Attributes:
        binds: Host files and directories of the interpreter, bound at the same path.
        links: Symbolic links to create (path, target): a virtual environment's ``python``.
        hidden: Directories covered by an empty file system (installation ``site-packages``).
        packages: Distribution -> the entries bound for it (for ``verifiers doctor``).
        missing: Requested distributions this interpreter does not have.
    """

    binds: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]
    packages: dict[str, tuple[str, ...]]
    missing: tuple[str, ...]

    @property
    def entries(self) -> tuple[str, ...]:
        """The packages' entries of ``site-packages``, bound (after ``hidden``) at the same path."""
        return tuple(sorted({e for entries in self.packages.values() for e in entries}))

    def describe(self) -> str:
        """One line: which packages programs can import."""
        names = ", ".join(sorted(self.packages)) or "none"
        text = f"packages for programs: {names}"
        if self.missing:
            text += f" (not installed: {', '.join(self.missing)})"
        return text


def discover(executable: str, packages: Iterable[str]) -> SandboxPython:
    """Ask ``executable`` where its parts are, and lay out what a sandbox binds of it.

    Raises:
        OSError, subprocess.SubprocessError, ValueError: The interpreter did not answer.
    """
    done = subprocess.run(
        [executable, "-s", "-c", _DISCOVER, json.dumps(sorted(set(packages)))],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    info = json.loads(done.stdout)
    binds: list[str] = [info["real_executable"]]
    links: list[tuple[str, str]] = []
    hidden: list[str] = []
    if info["ldlibrary"] and info["libdir"]:
        shared = os.path.join(info["libdir"], info["ldlibrary"])
        if os.path.exists(shared):
            binds.append(os.path.realpath(shared))
    for key in ("stdlib", "platstdlib"):
        path = info[key]
        if path and os.path.isdir(path):
            binds.append(path)
            inner = os.path.join(path, "site-packages")
            if os.path.isdir(inner):
                hidden.append(inner)
    prefix = info["prefix"]
    if prefix != info["base_prefix"]:
        config = os.path.join(prefix, "pyvenv.cfg")
        if os.path.isfile(config):
            binds.append(config)
        exe = info["executable"]
        if exe != info["real_executable"]:
            links.append((exe, info["real_executable"]))
    for site in info["site"]:
        if site not in hidden and os.path.isdir(site):
            hidden.append(site)  # an empty site-packages, then the chosen entries on it
    found = {k: tuple(v) for k, v in info["packages"].items()}
    return SandboxPython(
        binds=tuple(dict.fromkeys(binds)),
        links=tuple(links),
        hidden=tuple(dict.fromkeys(hidden)),
        packages=found,
        missing=tuple(info["missing"]),
    )
