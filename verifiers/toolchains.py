"""Toolchain artefacts built once at set-up time, used offline at run time.

* Rust crates: programs commonly ``use rand``, ``regex`` or ``md5`` (every
  HumanEval-X Rust record does). :func:`build_rust_crates` builds a set of crates
  with cargo (crates.io is reachable at set-up time) into a directory of rlibs
  and writes a manifest; the Rust language links every program against it with
  ``--extern``, never touching the network.
* Go: a build cache warmed with testify and its dependencies, mounted read-only
  in the sandbox, so that a ``go test -c`` of a HumanEval-X program compiles only
  the program (0.4 s instead of 6.6 s on a cold cache).

Everything lives under ``$VERIFIERS_CACHE_DIR`` (default ``~/.cache/verifiers``),
one directory per toolchain version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from verifiers.errors import RuntimeUnavailableError
from verifiers.program import Toolchain

#: Crates every Rust program may use. rand 0.7 because the tests of HumanEval-X call its
#: two-argument ``gen_range``. Add or change crates with
#: ``verifiers toolchains build --rust-crate NAME=VERSION``.
DEFAULT_RUST_CRATES = {"rand": "0.7", "regex": "1", "md5": "0.7"}


def cache_dir() -> Path:
    """Where built toolchain artefacts live."""
    base = os.environ.get("VERIFIERS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "verifiers"
    )
    return Path(base)


def _version(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip().splitlines()[0]


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in ".-" else "_" for c in text)[:80]


# --- Rust --------------------------------------------------------------------------------


def rust_sysroot(rustc: str = "rustc") -> Path:
    """The toolchain directory of ``rustc`` (its real binary is ``bin/rustc`` there)."""
    done = subprocess.run(
        [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
    )
    return Path(done.stdout.strip())


def rust_crates_dir(rustc_version: str) -> Path:
    """Directory of the crates built for one rustc version."""
    return cache_dir() / "rust-crates" / _slug(rustc_version)


def rust_crates_manifest(rustc_version: str) -> dict[str, Any] | None:
    """The built crates for this rustc: ``{"deps": dir, "externs": {name: rlib}}``, or None."""
    path = rust_crates_dir(rustc_version) / "manifest.json"
    try:
        manifest: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not all(Path(p).is_file() for p in manifest.get("externs", {}).values()):
        return None
    return manifest


def build_rust_crates(crates: dict[str, str] | None = None, cargo: str = "cargo") -> Path:
    """Build crates (name -> version requirement) for the current rustc.

    Returns:
        The path of the manifest the Rust language reads.
    """
    crates = {**DEFAULT_RUST_CRATES, **(crates or {})}
    rustc = shutil.which("rustc") or "rustc"
    sysroot = rust_sysroot(rustc)
    real_rustc = str(sysroot / "bin" / "rustc")
    version = _version([real_rustc, "--version"])
    target = rust_crates_dir(version)
    target.mkdir(parents=True, exist_ok=True)
    project = target / "project"
    project.mkdir(exist_ok=True)
    deps = "\n".join(f'{name} = "{req}"' for name, req in sorted(crates.items()))
    (project / "Cargo.toml").write_text(
        '[package]\nname = "verifiers-crates"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{deps}\n'
    )
    (project / "lib.rs").write_text("")
    env = {**os.environ, "RUSTC": real_rustc, "CARGO_TARGET_DIR": str(target / "target")}
    done = subprocess.run(
        [cargo, "build", "--release", "--message-format=json", "--quiet"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cargo build of {sorted(crates)} failed:\n{done.stderr[-3000:]}")
    externs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("reason") != "compiler-artifact":
            continue
        name = message["target"]["name"].replace("-", "_")
        if name.replace("_", "-") in crates or name in crates:
            for filename in message["filenames"]:
                if filename.endswith(".rlib"):
                    externs[name] = filename
    missing = {c.replace("-", "_") for c in crates} - set(externs)
    if missing:
        raise RuntimeError(f"cargo built no rlib for {sorted(missing)}")
    manifest = {
        "rustc": version,
        "crates": crates,
        "deps": str(target / "target" / "release" / "deps"),
        "externs": externs,
    }
    path = target / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2))
    return path


# --- Go ----------------------------------------------------------------------------------

#: Build settings shared by the warm-up and by every sandboxed Go build: a cache
#: entry is only reused under the same settings.
GO_ENV = {
    "GO111MODULE": "off",
    "GOPATH": "/usr/share/gocode",
    "CGO_ENABLED": "0",
    "GOFLAGS": "-trimpath",
    "GOPROXY": "off",
    "GOTOOLCHAIN": "local",
}

_GO_WARMUP = """package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWarmup(t *testing.T) {
	assert.Equal(t, 1, 1)
}
"""


def go_cache_dir(go_version: str) -> Path:
    """The warmed build cache for one Go version."""
    return cache_dir() / "go-build" / _slug(go_version)


def build_go_cache(go: str = "go") -> Path:
    """Warm a Go build cache with testify (and the standard library) for read-only use."""
    version = _version([go, "version"])
    target = go_cache_dir(version)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="verifiers-go-") as work:
        Path(work, "warmup_test.go").write_text(_GO_WARMUP)
        env = {**os.environ, **GO_ENV, "GOCACHE": str(target), "HOME": work}
        done = subprocess.run(
            [go, "test", "-c", "-vet=off", "-o", os.path.join(work, "warmup.test"), "."],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"go could not build a testify program ({done.stderr.strip()[-2000:]}); install "
            "golang-go and golang-github-stretchr-testify-dev"
        )
    # The sandbox user only reads it.
    for root, dirs, files in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    return target


# --- the host's toolchains, as the local runtime provides them -------------------------------

_host_cache: dict[tuple[str, str, str], Toolchain] = {}


def _which(explicit: str | None, name: str) -> str | None:
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else shutil.which(explicit)
    return shutil.which(name)


def _bin_paths(binary: str) -> tuple[str, ...]:
    """The installation directory of a binary outside ``/usr`` (``/opt/x/bin/x`` -> ``/opt/x``)."""
    real = os.path.realpath(binary)
    prefix = os.path.dirname(os.path.dirname(real))
    return () if real.startswith("/usr/") else (prefix,)


def host_toolchain(name: str, path: str | None = None) -> Toolchain:
    """A logical toolchain (``node``, ``go``, ``rust``) resolved on this host.

    Args:
        name: The toolchain.
        path: Its main binary (default: found on ``PATH``).

    Raises:
        RuntimeUnavailableError: The toolchain is missing or does not run (with what to install).
    """
    # PATH is part of the key: a tool installed (or a PATH fixed) later is found then.
    key = (name, path or "", os.environ.get("PATH", ""))
    found = _host_cache.get(key)
    if found is None:
        found = _host_cache[key] = _resolve_host(name, path)
    return found


def _resolve_host(name: str, path: str | None) -> Toolchain:
    from verifiers.languages.common import toolchain_version

    if name == "node":
        node = _which(path, "node")
        if not node:
            raise RuntimeUnavailableError(
                "node not found: install Node.js 18 or newer (apt-get install nodejs)"
            )
        version = toolchain_version([node, "--version"])
        return Toolchain(
            "node",
            {"{node}": node},
            f"host node {version}",
            _bin_paths(node),
            f"node {version} at {node}",
        )
    if name == "go":
        go = _which(path, "go")
        if not go:
            raise RuntimeUnavailableError("go not found: apt-get install golang-go")
        version = toolchain_version([go, "version"])
        cache = go_cache_dir(version)
        warmed = cache.is_dir()
        return Toolchain(
            "go",
            {"{go}": go, "{go_cache}": str(cache) if warmed else "/tmp/go-build"},
            f"host {version}",
            (*_bin_paths(go), *((str(cache),) if warmed else ())),
            f"{version} at {go}; build cache "
            + ("warmed" if warmed else "not warmed (run: verifiers toolchains build)"),
        )
    if name == "rust":
        rustc = _which(path, "rustc")
        if not rustc:
            raise RuntimeUnavailableError(
                "rustc not found: install Rust (rustup or apt-get install rustc)"
            )
        try:
            sysroot = rust_sysroot(rustc)
        except (OSError, subprocess.SubprocessError) as err:
            raise RuntimeUnavailableError(f"{rustc} --print sysroot failed: {err}") from err
        real = str(sysroot / "bin" / "rustc")
        version = toolchain_version([real, "--version"])
        manifest = rust_crates_manifest(version)
        paths = [str(sysroot)]
        deps = "/nonexistent-rust-crates"
        crates = "none built (run: verifiers toolchains build)"
        if manifest:
            deps = str(manifest["deps"])
            paths.append(str(Path(deps).parent.parent.parent))
            crates = ", ".join(sorted(manifest["externs"]))
        externs = json.dumps(manifest and manifest["externs"], sort_keys=True)
        return Toolchain(
            "rust",
            {"{rustc}": real, "{rust_deps}": deps},
            f"host {version}; crates {externs}",
            tuple(paths),
            f"{version} at {real}; crates: {crates}",
        )
    raise RuntimeUnavailableError(f"unknown toolchain {name!r}")
